// Works as follows: dispatch() takes the arrival time, finds the
// communicator's context, sends calls with arguments MPI would reject to
// PMPI, and runs the rest as one straight pipeline: screen the call (what no
// schedule may run), make the communicator's state when the call needs it
// (the private duplicate and its hosts), gather the decision's inputs once
// (shim/decision.h), optionally verify that every rank holds the same
// (PAPSHIM_CHECK), decide once, run the schedule or the library's own
// collective, and record the call.  Every input of the decision is
// identical on all ranks of the communicator: the call's arguments (count,
// type size, op, root, size), the job-wide configuration (checked at
// MPI_Init) and the arrival vector (all zeros until the predictor provides
// one).
#include "shim/dispatch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/executor.h"
#include "algorithms/selector.h"
#include "config/log.h"
#include "predictor/helper_thread.h"
#include "predictor/stall_watch.h"
#include "shim/agreement.h"
#include "shim/call_checks.h"
#include "shim/callsite.h"
#include "common/clock.h"
#include "common/ticks.h"
#include "shim/comm_context.h"
#include "shim/decision.h"
#include "shim/hierarchy.h"
#include "shim/runtime.h"
#include "shim/schedule_cache.h"
#include "shim/stats.h"

namespace papshim {

int call_native(const CallArgs& a) {
  switch (a.coll) {
    case Collective::Allreduce: return PMPI_Allreduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm);
    case Collective::Reduce: return PMPI_Reduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, a.comm);
    case Collective::Allgather:
      return PMPI_Allgather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.comm);
  }
  return MPI_ERR_INTERN;
}

namespace {

// PAPSHIM_CHECK: every rank must hold the same decision inputs.
bool inputs_agree(const CommContext& ctx, const DecisionInputs& in) {
  const std::uint64_t h = fnv1a_word(inputs_hash(in), ctx.pred ? ctx.pred->state_fingerprint() : 0);
  const std::vector<bool> same = agree_across(ctx.priv, &h, 1);
  return !same.empty() && same[0];
}

bool op_commutes(MPI_Op op) {
  int commute = 1;
  if (op != MPI_OP_NULL) PMPI_Op_commutative(op, &commute);
  return commute != 0;
}

// Allgather: the receive count and type may differ between ranks as long as
// the type signatures match, so its shape is in bytes per block.
CallShape shape_of(const CallArgs& a, int tsize) {
  CallShape s;
  s.coll = a.coll;
  s.count = a.count;
  s.type_size = tsize;
  if (a.coll == Collective::Allgather) {
    const long long block = static_cast<long long>(a.count) * tsize;
    s.count = block > 0x7fffffff ? 0x7fffffff : static_cast<int>(block);
    s.type_size = 1;
  }
  s.root = a.coll == Collective::Reduce ? a.root : 0;
  s.commutative = a.coll == Collective::Allgather || op_commutes(a.op);
  return s;
}

// A schedule between hosts shows in the report as "<algorithm>@hosts".
const char* reported_name(Algo a, bool between_hosts) {
  if (!between_hosts) return algo_info(a).name;
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const AlgoInfo& info : all_algorithms()) {
      const auto i = static_cast<std::size_t>(info.algo);
      if (v.size() <= i) v.resize(i + 1);
      v[i] = std::string(info.name) + "@hosts";
    }
    return v;
  }();
  return names[static_cast<std::size_t>(a)].c_str();
}

// The call in the stall watch (PAPSHIM_STALL_SECONDS) from its entry to its
// exit; nothing when the watch is off.
class StallEntry {
 public:
  StallEntry(const CommContext& ctx, Collective c, std::uint64_t seq, double arrival, const CallSite& site)
      : on_(StallWatch::instance().limit() > 0) {
    if (!on_) return;
    call_.arrival = arrival;
    call_.seq = seq;
    call_.collective = to_string(c);
    call_.comm_size = ctx.size;
    call_.rank = ctx.rank;
    call_.site = &site;
    StallWatch::instance().enter(&call_);
  }
  ~StallEntry() {
    if (on_) StallWatch::instance().leave(&call_);
  }
  void round(const std::optional<RoundResult>& r) {
    if (on_ && r) StallWatch::instance().set_round(&call_, &r->arrival);
  }
  StallEntry(const StallEntry&) = delete;
  StallEntry& operator=(const StallEntry&) = delete;

 private:
  bool on_;
  StallWatch::Call call_;
};

// Runs the schedule; the call's error, if any, goes through the user's
// error handler as the library's own would.
int run_schedule(const CallArgs& a, const CommContext& ctx, const Decision& d, bool between_hosts) {
  const int rc = between_hosts ? run_hierarchical(a, ctx.rank, *ctx.hier, *d.sched)
                               : execute(*d.sched, ctx.rank, a, ctx.priv);
  if (rc == kExecNoMemory) {
    // The other ranks are already running the schedule: running native here
    // would leave both sides waiting.  Stop with the reason instead.
    user_error(std::string("cannot allocate the scratch memory of ") + to_string(a.coll) + " (" +
               std::to_string(a.count) + " elements, algorithm " + algo_info(d.pick).name +
               "); free memory or run this collective native (PAPSHIM_" + to_string(a.coll) + "=native)");
    PMPI_Abort(a.comm, MPI_ERR_NO_MEM);
  }
  if (rc != MPI_SUCCESS) {
    log().warn("{} with {} failed with MPI error {}", to_string(a.coll), algo_info(d.pick).name, rc);
    PMPI_Comm_call_errhandler(a.comm, rc);
  }
  return rc;
}

// Marks the running collective for the helper thread (collective_begins).
struct InCollective {
  InCollective() { HelperThread::instance().collective_begins(); }
  ~InCollective() { HelperThread::instance().collective_ends(); }
  InCollective(const InCollective&) = delete;
  InCollective& operator=(const InCollective&) = delete;
};

// The predictor's part at the exit of a call, and the call's statistics.
void after_call(const CallArgs& a, CommContext& ctx, const Decision& d, bool between_hosts, const CallShape& shape,
                const CallSite& site, std::uint64_t seq, double arrival, double my_prediction, int tsize) {
  const double exit_time = common_now();
  const std::uint64_t per_rank = static_cast<std::uint64_t>(tsize) * static_cast<std::uint64_t>(a.count);
  const std::uint64_t bytes = per_rank * (a.coll == Collective::Allgather ? static_cast<std::uint64_t>(ctx.size) : 1u);
  if (ctx.pred) {
    const std::uint64_t site_id = CallSiteHash()(site) ^ static_cast<std::uint64_t>(a.coll);
    const RanDecision ran{a.coll,
                          d.algo(),
                          d.by_auto ? d.predicted : 0.0,
                          d.by_auto || d.sched != nullptr,
                          d.by_auto && is_native(d.algo()),
                          d.by_auto ? d.native_predicted : 0.0};
    if (ctx.pred->on_exit(seq, site_id, shape, arrival, exit_time, per_rank, ran))
      HelperThread::instance().round_opened(ctx.pred, ctx.size, ctx.rank, ctx.hier ? ctx.hier->map : nullptr);
  }
  SiteKey key{a.coll, ctx.local_id, ctx.size, site};
  Stats::instance().record(key, ctx.id, seq, arrival, exit_time, my_prediction, bytes,
                           reported_name(d.algo(), between_hosts && d.sched), d.fallback, d.by_auto, d.ready,
                           d.sched ? d.gain : 0.0);
}

// A call papshim only passes through: nothing predicts on its communicator
// or samples it (no private duplicate yet), and the setting runs it native
// whatever the arrivals (forced native, or auto below PAPSHIM_MIN_BYTES).
// Every rank of the communicator sees the same.
// With the stall watch on, every call goes the full way (it registers there).
bool passes_through(const CallArgs& a, const CommContext& ctx, int tsize) {
  if (ctx.pred || ctx.has_private() || StallWatch::instance().limit() > 0) return false;
  return setting_screen(a.coll, static_cast<long long>(a.count) * tsize) != nullptr;
}

// The pass-through: native call, and its statistics as a few adds.  `rc` is
// set as soon as the call ran, so a failure of the bookkeeping after it
// never runs the call twice (dispatch()).
void pass_through(const CallArgs& a, CommContext& ctx, int tsize, std::optional<int>& rc) {
  ctx.seq++;
  CommRegistry::instance().set_last_used(&ctx);
  const CallSite site = capture_callsite(a.ret_addr, runtime().cfg.callsite_depth);
  const std::uint64_t t0 = ticks();
  rc = call_native(a);
  const std::uint64_t t1 = ticks();
  const std::uint64_t per_rank = static_cast<std::uint64_t>(tsize) * static_cast<std::uint64_t>(a.count);
  const std::uint64_t bytes = per_rank * (a.coll == Collective::Allgather ? static_cast<std::uint64_t>(ctx.size) : 1u);
  // A thread moved to a core whose counter lags: count the call, not a wrapped time.
  Stats::record_pass_through(ctx.row_of(a.coll, site), t1 > t0 ? t1 - t0 : 0, bytes);
}

// `rc` is set once the call ran (natively or by a schedule).
void dispatch_call(const CallArgs& a, std::optional<int>& rc) {
  CommContext* ctx = CommRegistry::instance().get(a.comm);
  if (ctx == nullptr || erroneous_arguments(a, ctx->rank, ctx->size)) {
    rc = call_native(a);
    return;
  }
  const int tsize = type_size(a.type);
  if (passes_through(a, *ctx, tsize)) {
    pass_through(a, *ctx, tsize, rc);
    return;
  }
  const double arrival = common_now();
  const std::uint64_t seq = ctx->seq++;
  CommRegistry::instance().set_last_used(ctx);
  const CallSite site = capture_callsite(a.ret_addr, runtime().cfg.callsite_depth);
  const CallShape shape = shape_of(a, tsize);
  // The arrival vector of this call (identical on every rank) or nothing;
  // declared first, so it outlives the stall watch's pointer to it.
  std::optional<RoundResult> predicted_arrivals;
  StallEntry stall(*ctx, a.coll, seq, arrival, site);
  if (ctx->pred) predicted_arrivals = ctx->pred->on_entry(seq, arrival);
  stall.round(predicted_arrivals);
  const double my_prediction = ctx->pred ? ctx->pred->my_prediction() : std::nan("");

  // Screen, make the communicator's state, gather the inputs, decide once.
  std::string screened_out = screen(shape, ineligible(a, ctx->size, needs_commutative(a.coll)));
  Decision d;
  bool between_hosts = false;
  if (screened_out.empty() && needs_private(a.coll) && !CommRegistry::instance().ensure_private(*ctx)) {
    d.run_native("no private communicator (the MPI library refused a duplicate)");
  } else {
    const DecisionInputs in = decision_inputs(shape, ctx->size, ctx->rank, std::move(screened_out),
                                              predicted_arrivals, ctx->hier ? ctx->hier->map.get() : nullptr);
    if (runtime().cfg.check && ctx->has_private() && !inputs_agree(*ctx, in)) {
      user_error(std::string("PAPSHIM_CHECK: the decision inputs of ") + to_string(a.coll) + " call #" +
                 std::to_string(seq) + " differ between ranks (count, type size, root, setting, screen, arrival "
                 "vector, learned costs, costs, or the prediction rounds' state: which calls get a round); the "
                 "ranks would run different schedules or rounds. Aborting.");
      PMPI_Abort(a.comm, 3);
    }
    std::shared_ptr<const Selection> ahead;
    if (ctx->pred && in.predicting && in.has_round && in.screened_out.empty() && !in.reproducible)
      if (auto pre = ctx->pred->take_precomputed(seq); pre && pre->shape == shape) ahead = pre->selection;
    d = decide(in, std::move(ahead), seq, ctx->id);
    between_hosts = in.between_hosts;
  }
  if (d.sched && d.sched->max_tag() > ctx->tag_ub)
    d.run_native("schedule tags exceed MPI_TAG_UB (less the prediction rounds' tags)");

  if (!d.sched && !d.fallback.empty())
    log().info("{} on communicator {:#x}: {} requested, running native: {}", to_string(a.coll), ctx->id,
               setting_for(a.coll), d.fallback);
  {
    const InCollective marked;
    rc = d.sched ? run_schedule(a, *ctx, d, between_hosts) : call_native(a);
  }
  after_call(a, *ctx, d, between_hosts, shape, site, seq, arrival, my_prediction, tsize);
}

}  // namespace

int dispatch(const CallArgs& a) noexcept {
  std::optional<int> rc;
  try {
    dispatch_call(a, rc);
    return *rc;
  } catch (const std::exception& e) {
    // Nothing may leave through the C interface.  Before the call ran it
    // still runs natively; after, only the bookkeeping was lost.
    log().error("{}: internal error ({}){}", to_string(a.coll), e.what(),
                rc ? "; the call itself completed" : "; running the call native");
    return rc ? *rc : call_native(a);
  }
}

}  // namespace papshim
