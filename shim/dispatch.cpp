// Works as follows: dispatch() takes the arrival time, finds the
// communicator's context, sends calls with arguments MPI would reject to
// PMPI, decides (forced algorithm or auto), makes the private duplicate when
// the call needs it, checks that the schedule can run (falls back to native
// otherwise, with the reason counted in the report), optionally verifies
// the consistency invariant (PAPSHIM_CHECK), executes it, and records the
// call.  Every input of the decision is identical on all ranks of the
// communicator: the call's arguments (count, type size, op, root, size),
// the job-wide configuration (checked at MPI_Init) and the arrival vector
// (all zeros until the predictor provides one).
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

const std::string& setting_for(Collective c) {
  const Config& cfg = runtime().cfg;
  return c == Collective::Allreduce ? cfg.allreduce : c == Collective::Reduce ? cfg.reduce : cfg.allgather;
}

// The forced algorithm of each collective (none: auto), by Collective.
std::array<std::optional<Algo>, 3> g_forced;

const std::optional<Algo>& forced_algo(Collective c) { return g_forced[static_cast<std::size_t>(c)]; }

// PAPSHIM_CHECK: every rank must hold the same decision inputs.
bool inputs_agree(const CommContext& ctx, Algo algo, const ScheduleParams& p, std::uint64_t bytes) {
  const std::uint64_t h = params_hash(algo, p) ^ (bytes * 0x9e3779b97f4a7c15ull);
  const std::vector<bool> same = agree_across(ctx.priv, &h, 1);
  return !same.empty() && same[0];
}

int type_size(MPI_Datatype t) {
  int s = 0;
  PMPI_Type_size(t, &s);
  return s;
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
  s.coll = static_cast<int>(a.coll);
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

// The hosts a reduction's schedule runs between (shim/hierarchy.h), or
// nullptr: between all ranks.  Allgather always runs between all ranks.
const NodeMap* hosts_for(Collective c, const NodeMap* nodes) {
  return c == Collective::Allgather ? nullptr : nodes;
}

// `nodes` (hosts_for): the schedule runs between hosts, one per leader, each
// arriving with its latest rank.
SelectInput select_input(const CallShape& shape, int nprocs, int rank, const std::vector<double>& arrival,
                         const CostLearner& corrections, const NodeMap* nodes, double noise = 0) {
  const Runtime& rt = runtime();
  SelectInput in;
  in.coll = static_cast<Collective>(shape.coll);
  in.nprocs = nodes ? nodes->nnodes : nprocs;
  in.rank = nodes ? nodes->node_index : rank;  // only this rank's program of the pick is built
  in.root = nodes ? nodes->node_of[static_cast<std::size_t>(shape.root)] : shape.root;
  in.count = static_cast<std::size_t>(shape.count);
  in.elem_size = static_cast<std::size_t>(shape.type_size);
  if (nodes && !arrival.empty()) in.arrival = nodes->latest(arrival);
  else if (nodes) in.arrival.assign(static_cast<std::size_t>(nodes->nnodes), 0.0);
  else in.arrival = arrival;
  in.cost = rt.cal.cost;
  in.commutative = shape.commutative;
  in.clv_segments = rt.cfg.clv_segments;
  constexpr long kNetworkTreeSegment = 32768;  // below the eager limit of Open MPI's TCP (64 KiB)
  in.tree_segsize = rt.cfg.tree_segsize >= 0 ? rt.cfg.tree_segsize : rt.multi_node ? kNetworkTreeSegment : 0;
  in.correction = corrections;
  in.noise = noise;
  in.reproducible = rt.cfg.reproducible;  // PAPSHIM_REPRODUCIBLE: timing-free schedules (algorithms/reproducible.h)
  return in;
}

const NodeMap* hosts_of(Collective c, const CommContext& ctx) {
  return hosts_for(c, ctx.hier ? ctx.hier->map.get() : nullptr);
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

// What one call will do.
struct Decided {
  Algo algo = Algo::Native;
  std::string fallback;  // non-empty: the requested algorithm could not run
  ScheduleParams params;
  std::shared_ptr<const Schedule> sched;
  bool wants_private = false;  // the call needs the private duplicate (schedule or predictor)
  bool between_hosts = false;  // sched runs between hosts (shim/hierarchy.h)
  bool by_auto = false;  // auto mode ran the cost model for this call
  bool ready = false;    // ... and the helper thread had the decision ready
  double predicted = 0;  // the cost model's mean elapsed for the pick
  double gain = 0;       // native's predicted mean elapsed minus the pick's (0: native picked)
};

// Native's predicted time minus the pick's, for the report (0 for native).
double estimated_gain(const Selection& sel) {
  if (sel.pick == Algo::Native || !(sel.predicted > 0)) return 0;
  double native = INFINITY;
  for (const Candidate& c : sel.table)
    if (c.native_model) native = std::min(native, c.predicted);
  return std::isfinite(native) ? native - sel.predicted : 0.0;
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

// Auto mode considers a call: large enough, and runnable by an algorithm.
bool auto_considers(const CallArgs& a, const CommContext& ctx, const CallShape& shape) {
  const long bytes = static_cast<long>(shape.count) * shape.type_size;
  return bytes >= runtime().cfg.min_bytes && ineligible(a, ctx.size, a.coll != Collective::Allgather).empty();
}

Decided decide_auto(const CallArgs& a, CommContext& ctx, const std::optional<RoundResult>& round,
                    const CallShape& shape, std::uint64_t seq) {
  Decided out;
  if (!auto_considers(a, ctx, shape)) return out;
  out.wants_private = runtime().cfg.predictor != PredictorMode::Off;
  // PAPSHIM_REPRODUCIBLE=1: reductions run the schedule fixed by the call's
  // shape, with or without a prediction (algorithms/reproducible.h); with
  // the predictor off (wants_private false) auto stays native as documented.
  if (runtime().cfg.reproducible && a.coll != Collective::Allgather && out.wants_private) {
    const Selection sel = select_algorithm(select_input(shape, ctx.size, ctx.rank, {}, CostLearner{}, nullptr));
    out.algo = sel.pick;
    out.params = sel.params;
    out.sched = sel.schedule;
    return out;
  }
  if (!round) return out;
  // The helper thread may have decided already, for a call of this shape;
  // it ran the same pure function on the same inputs.
  std::shared_ptr<const Selection> sel;
  if (auto pre = ctx.pred->take_precomputed(seq); pre && pre->shape == shape && pre->selection) {
    sel = pre->selection;
    out.ready = true;
  } else {
    sel = std::make_shared<const Selection>(select_algorithm(
        select_input(shape, ctx.size, ctx.rank, round->arrival, round->corrections, hosts_of(a.coll, ctx),
                     round->noise)));
  }
  if (ctx.rank == 0 && log().should_log(spdlog::level::trace)) {
    const double first = *std::min_element(round->arrival.begin(), round->arrival.end());
    std::string ms;
    for (double t : round->arrival) ms += fmt::format(" {:.1f}", 1e3 * (t - first));
    log().trace("{} call #{}: predicted arrivals (ms after the first):{}", to_string(a.coll), seq, ms);
  }
  if (ctx.rank == 0 && log().should_log(spdlog::level::debug))
    log().debug("{} call #{} on communicator {:#x}{}, prediction error scatter {:.1f} us: {}", to_string(a.coll),
                seq, ctx.id, out.ready ? " (decided ahead)" : "", 1e6 * round->noise, format_selection(*sel));
  out.by_auto = true;
  out.between_hosts = hosts_of(a.coll, ctx) != nullptr;
  out.predicted = sel->predicted;
  out.gain = estimated_gain(*sel);
  out.algo = sel->pick;
  out.params = sel->params;
  out.sched = sel->schedule;
  return out;
}

Decided decide(const CallArgs& a, CommContext& ctx, const std::optional<RoundResult>& round, const CallShape& shape,
               std::uint64_t seq) {
  const auto& forced = forced_algo(a.coll);
  if (!forced) return decide_auto(a, ctx, round, shape, seq);
  Decided out;
  if (*forced == Algo::Native) return out;
  out.fallback = ineligible(a, ctx.size, algo_info(*forced).needs_commutative);
  if (!out.fallback.empty()) return out;
  const NodeMap* hosts = hosts_of(a.coll, ctx);
  const SelectInput in = select_input(
      shape, ctx.size, ctx.rank, round ? round->arrival : std::vector<double>(static_cast<std::size_t>(ctx.size), 0.0),
      CostLearner{}, hosts);
  out.params = schedule_params_for(*forced, in);
  out.params.rank = in.rank;  // build this rank's program only
  out.between_hosts = hosts != nullptr;
  out.sched = cached_schedule(*forced, out.params, out.fallback);
  out.algo = out.sched ? *forced : Algo::Native;
  out.wants_private = out.sched != nullptr;
  return out;
}

// Runs the schedule; the call's error, if any, goes through the user's
// error handler as the library's own would.
int run_schedule(const CallArgs& a, const CommContext& ctx, const Decided& d, std::uint64_t seq, int tsize) {
  Runtime& rt = runtime();
  if (rt.cfg.check && !inputs_agree(ctx, d.algo, d.params, static_cast<std::uint64_t>(tsize) * a.count)) {
    user_error(std::string("PAPSHIM_CHECK: the decision inputs of ") + to_string(a.coll) + " call #" +
               std::to_string(seq) + " differ between ranks (count, type size, root, algorithm, arrival vector "
               "or costs); the ranks would run different schedules. Aborting.");
    PMPI_Abort(a.comm, 3);
  }
  const int rc = d.between_hosts ? run_hierarchical(a, ctx.rank, *ctx.hier, *d.sched)
                                 : execute(*d.sched, ctx.rank, a, ctx.priv);
  if (rc == kExecNoMemory) {
    // The other ranks are already running the schedule: running native here
    // would leave both sides waiting.  Stop with the reason instead.
    user_error(std::string("cannot allocate the scratch memory of ") + to_string(a.coll) + " (" +
               std::to_string(a.count) + " elements, algorithm " + algo_info(d.algo).name +
               "); free memory or run this collective native (PAPSHIM_" + to_string(a.coll) + "=native)");
    PMPI_Abort(a.comm, MPI_ERR_NO_MEM);
  }
  if (rc != MPI_SUCCESS) {
    log().warn("{} with {} failed with MPI error {}", to_string(a.coll), algo_info(d.algo).name, rc);
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
void after_call(const CallArgs& a, CommContext& ctx, const Decided& d, const CallShape& shape, const CallSite& site,
                std::uint64_t seq, double arrival, double my_prediction, int tsize) {
  const double exit_time = common_now();
  const std::uint64_t per_rank = static_cast<std::uint64_t>(tsize) * static_cast<std::uint64_t>(a.count);
  const std::uint64_t bytes = per_rank * (a.coll == Collective::Allgather ? static_cast<std::uint64_t>(ctx.size) : 1u);
  if (ctx.pred) {
    const std::uint64_t site_id = CallSiteHash()(site) ^ static_cast<std::uint64_t>(a.coll);
    const RanDecision ran{static_cast<int>(a.coll), static_cast<int>(d.algo), d.by_auto ? d.predicted : 0.0,
                          d.by_auto || d.sched != nullptr,
                          d.by_auto && d.algo == Algo::Native};
    if (ctx.pred->on_exit(seq, site_id, shape, arrival, exit_time, per_rank, ran))
      HelperThread::instance().round_opened(ctx.pred, ctx.size, ctx.rank, ctx.hier ? ctx.hier->map : nullptr);
  }
  SiteKey key{a.coll, ctx.local_id, ctx.size, site};
  Stats::instance().record(key, ctx.id, seq, arrival, exit_time, my_prediction, bytes,
                           reported_name(d.algo, d.between_hosts && d.sched), d.fallback, d.by_auto, d.ready,
                           d.sched ? d.gain : 0.0);
}

// A call papshim only passes through: nothing predicts on its communicator
// or samples it (no private duplicate yet), and the setting runs it native
// whatever the arrivals (forced native, or auto below PAPSHIM_MIN_BYTES).
// Every rank of the communicator sees the same.
// With the stall watch on, every call goes the full way (it registers there).
bool passes_through(const CallArgs& a, const CommContext& ctx, int tsize) {
  if (ctx.pred || ctx.id != 0 || StallWatch::instance().limit() > 0) return false;
  const auto& forced = forced_algo(a.coll);
  if (forced) return *forced == Algo::Native;
  const long long block = static_cast<long long>(a.count) * tsize;
  return block < runtime().cfg.min_bytes;
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

  Decided d = decide(a, *ctx, predicted_arrivals, shape, seq);
  if (d.wants_private) {
    const bool had_hosts = ctx->hier != nullptr;
    if (!CommRegistry::instance().ensure_private(*ctx)) {
      d.fallback = "no private communicator (the MPI library refused a duplicate)";
      d.sched.reset();
    } else if (!had_hosts && ctx->hier) {
      d = decide(a, *ctx, predicted_arrivals, shape, seq);  // the hosts are known from this call on
    }
  }
  if (d.sched && d.sched->max_tag() > ctx->tag_ub) {
    d.fallback = "schedule tags exceed MPI_TAG_UB (less the prediction rounds' tags)";
    d.sched.reset();
  }
  if (!d.sched) {
    d.algo = Algo::Native;
    d.between_hosts = false;
  }

  if (!d.sched && !d.fallback.empty())
    log().info("{} on communicator {:#x}: {} requested, running native: {}", to_string(a.coll), ctx->id,
               setting_for(a.coll), d.fallback);
  {
    const InCollective marked;
    rc = d.sched ? run_schedule(a, *ctx, d, seq, tsize) : call_native(a);
  }
  after_call(a, *ctx, d, shape, site, seq, arrival, my_prediction, tsize);
}

}  // namespace

std::shared_ptr<const Selection> precompute_selection(const RoundResult& round, const CallShape& shape, int nprocs,
                                                      int rank, const NodeMap* nodes) {
  // Only what decide() would consult: auto mode, calls of PAPSHIM_MIN_BYTES
  // or more.  Anything else would be helper CPU spent for nothing.
  const auto coll = static_cast<Collective>(shape.coll);
  const long bytes = static_cast<long>(shape.count) * shape.type_size;
  if (forced_algo(coll) || bytes < runtime().cfg.min_bytes) return nullptr;
  return std::make_shared<const Selection>(
      select_algorithm(select_input(shape, nprocs, rank, round.arrival, round.corrections, hosts_for(coll, nodes),
                                    round.noise)));
}

void configure_dispatch() {
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather})
    g_forced[static_cast<std::size_t>(c)] = algo_from_name(c, setting_for(c));
}

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
