// Works as follows: dispatch() takes the arrival time, finds the
// communicator's context, decides (forced algorithm or auto), checks that the
// algorithm can run this call (falls back to native otherwise, with the
// reason counted in the report), builds or reuses the schedule, optionally
// verifies the consistency invariant (PAPSHIM_CHECK), executes it, and
// records the call.  Every input of the decision is identical on all ranks
// of the communicator: the call's arguments (count, type size, op, root,
// size), the job-wide configuration (checked at MPI_Init) and the arrival
// vector (all zeros until the predictor provides one).
#include "shim/dispatch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/executor.h"
#include "algorithms/selector.h"
#include "config/log.h"
#include "shim/callsite.h"
#include "shim/clock.h"
#include "shim/comm_context.h"
#include "shim/runtime.h"
#include "predictor/helper_thread.h"
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

struct Decision {
  Algo algo = Algo::Native;
  std::string fallback;  // non-empty: the requested algorithm could not run
};

const std::string& setting_for(Collective c) {
  const Config& cfg = runtime().cfg;
  return c == Collective::Allreduce ? cfg.allreduce : c == Collective::Reduce ? cfg.reduce : cfg.allgather;
}

// Arguments MPI would reject go to PMPI untouched, so its error handling is
// what the user sees.  Every test here is identical on all ranks of a valid
// call.
bool arguments_plain(const CallArgs& a, const CommContext& ctx) {
  if (a.count < 0 || a.type == MPI_DATATYPE_NULL) return false;
  if (a.coll == Collective::Allgather) return a.sendtype != MPI_DATATYPE_NULL || a.sendbuf == MPI_IN_PLACE;
  if (a.op == MPI_OP_NULL) return false;
  if (a.coll == Collective::Reduce && (a.root < 0 || a.root >= ctx.size)) return false;
  return true;
}

std::uint64_t fnv(std::uint64_t h, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

std::uint64_t params_hash(Algo algo, const ScheduleParams& p) {
  std::uint64_t h = 1469598103934665603ull;
  const int head[] = {static_cast<int>(algo), p.nprocs, p.root, p.nseg};
  h = fnv(h, head, sizeof head);
  h = fnv(h, &p.count, sizeof p.count);
  h = fnv(h, &p.tau, sizeof p.tau);
  return fnv(h, p.arrival.data(), p.arrival.size() * sizeof(double));
}

// A few recent schedules; the same decision inputs give the same schedule.
std::shared_ptr<const Schedule> cached_schedule(Algo algo, const ScheduleParams& p, std::string& why_not) {
  static std::mutex mu;
  static std::unordered_map<std::uint64_t, std::shared_ptr<const Schedule>> cache;
  const std::uint64_t key = params_hash(algo, p);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  BuildResult r = build_schedule(algo, p);
  if (!r.schedule) {
    why_not = r.reason;
    return nullptr;
  }
  auto s = std::make_shared<const Schedule>(std::move(*r.schedule));
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 64) cache.clear();
  cache.emplace(key, s);
  return s;
}

// PAPSHIM_CHECK: every rank must hold the same decision inputs.
bool inputs_agree(const CommContext& ctx, Algo algo, const ScheduleParams& p, std::uint64_t bytes) {
  std::uint64_t h = fnv(params_hash(algo, p), &bytes, sizeof bytes);
  std::uint64_t v[2] = {h, ~h}, mx[2] = {0, 0};
  if (PMPI_Allreduce(v, mx, 2, MPI_UINT64_T, MPI_MAX, ctx.priv) != MPI_SUCCESS) return false;
  return mx[0] == v[0] && mx[1] == v[1];
}

int type_size(MPI_Datatype t) {
  int s = 0;
  PMPI_Type_size(t, &s);
  return s;
}

// Open MPI 4.1's vectorised op component saturates MPI_SUM of 8- and 16-bit
// integers on long runs but wraps on short ones, so its result depends on
// how a vector is cut.  Calls that may meet it stay native: the user gets
// exactly what the library would have given.
bool holds_small_integers(MPI_Datatype t, int depth = 0) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (depth > 8 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return true;
  if (combiner == MPI_COMBINER_NAMED) {
    for (MPI_Datatype s : {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_INT8_T, MPI_UINT8_T, MPI_SHORT,
                           MPI_UNSIGNED_SHORT, MPI_INT16_T, MPI_UINT16_T})
      if (t == s) return true;
    return false;
  }
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  if (PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return true;
  bool found = false;
  for (MPI_Datatype sub : types) {
    found = found || holds_small_integers(sub, depth + 1);
    int sni = 0, sna = 0, snd = 0, scomb = 0;
    PMPI_Type_get_envelope(sub, &sni, &sna, &snd, &scomb);
    if (scomb != MPI_COMBINER_NAMED) PMPI_Type_free(&sub);
  }
  return found;
}

// Why this call cannot run an algorithm of papshim's; empty when it can.
// Every test reads only inputs identical on all ranks.
std::string ineligible(const CallArgs& a, const CommContext& ctx, bool needs_commutative) {
  if (ctx.size == 1) return "communicator of size 1";
  if (a.count == 0) return "count 0";
  if (needs_commutative) {
    int commute = 0;
    PMPI_Op_commutative(a.op, &commute);
    if (!commute) return "non-commutative op";
  }
#if defined(OPEN_MPI) && OPEN_MPI
  if (a.coll != Collective::Allgather && a.op == MPI_SUM && holds_small_integers(a.type))
    return "8/16-bit integer sum (library saturates)";
#endif
  return "";
}

struct Decided {
  Decision d;
  ScheduleParams params;
  std::shared_ptr<const Schedule> sched;
  bool by_auto = false;  // auto mode ran the cost model for this call
  bool ready = false;    // ... and the helper thread had the decision ready
  double predicted = 0;  // the cost model's mean elapsed for the pick
};

bool op_commutes(MPI_Op op) {
  int commute = 1;
  if (op != MPI_OP_NULL) PMPI_Op_commutative(op, &commute);
  return commute != 0;
}

CallShape shape_of(const CallArgs& a, int tsize) {
  CallShape s;
  s.coll = static_cast<int>(a.coll);
  s.count = a.count;
  s.type_size = tsize;
  s.root = a.coll == Collective::Reduce ? a.root : 0;
  s.commutative = a.coll == Collective::Allgather || op_commutes(a.op);
  return s;
}

SelectInput select_input(const CallShape& shape, int nprocs, const std::vector<double>& arrival,
                         const Corrections& corrections) {
  const Runtime& rt = runtime();
  SelectInput in;
  in.coll = static_cast<Collective>(shape.coll);
  in.nprocs = nprocs;
  in.root = shape.root;
  in.count = static_cast<std::size_t>(shape.count);
  in.elem_size = static_cast<std::size_t>(shape.type_size);
  in.arrival = arrival;
  in.cost = rt.cal.cost;
  in.commutative = shape.commutative;
  in.clv_segments = rt.cfg.clv_segments;
  constexpr long kNetworkTreeSegment = 32768;  // below the eager limit of Open MPI's TCP (64 KiB)
  in.tree_segsize = rt.cfg.tree_segsize >= 0 ? rt.cfg.tree_segsize : rt.multi_node ? kNetworkTreeSegment : 0;
  in.correction = corrections;
  return in;
}

Decided decide(const CallArgs& a, const CommContext& ctx, const std::optional<RoundResult>& round,
               const CallShape& shape, std::uint64_t seq) {
  Decided out;
  const std::string& name = setting_for(a.coll);
  const auto forced = algo_from_name(a.coll, name);
  if (forced && *forced == Algo::Native) return out;
  if (!forced) {  // auto
    const long bytes = static_cast<long>(shape.count) * shape.type_size;
    if (!round || bytes < runtime().cfg.min_bytes || !ineligible(a, ctx, a.coll != Collective::Allgather).empty())
      return out;
    // The helper thread may have decided already, for a call of this shape;
    // it ran the same pure function on the same inputs.
    std::shared_ptr<const Selection> sel;
    if (auto pre = ctx.pred->take_precomputed(seq); pre && pre->shape == shape && pre->selection) {
      sel = std::static_pointer_cast<const Selection>(pre->selection);
      out.ready = true;
    } else {
      sel = std::make_shared<const Selection>(
          select_algorithm(select_input(shape, ctx.size, round->arrival, round->corrections)));
    }
    if (ctx.rank == 0 && log().should_log(spdlog::level::debug))
      log().debug("{} call #{} on communicator {:#x}{}: {}", to_string(a.coll), seq, ctx.id,
                  out.ready ? " (decided ahead)" : "", format_selection(*sel));
    out.by_auto = true;
    out.predicted = sel->predicted;
    out.d.algo = sel->pick;
    out.params = sel->params;
    out.sched = sel->schedule;
    return out;
  }

  out.d.algo = *forced;
  out.d.fallback = ineligible(a, ctx, algo_info(*forced).needs_commutative);
  if (!out.d.fallback.empty()) {
    out.d.algo = Algo::Native;
    return out;
  }
  const SelectInput in =
      select_input(shape, ctx.size, round ? round->arrival : std::vector<double>(static_cast<std::size_t>(ctx.size), 0.0),
                   Corrections{});
  out.params = schedule_params_for(*forced, in);
  out.sched = cached_schedule(*forced, out.params, out.d.fallback);
  if (!out.sched) out.d.algo = Algo::Native;
  return out;
}

}  // namespace

std::shared_ptr<const void> precompute_selection(const RoundResult& round, const CallShape& shape, int nprocs) {
  // Only what decide() would consult: auto mode, calls of PAPSHIM_MIN_BYTES
  // or more.  Anything else would be helper CPU spent for nothing.
  const auto coll = static_cast<Collective>(shape.coll);
  const long bytes = static_cast<long>(shape.count) * shape.type_size;
  if (algo_from_name(coll, setting_for(coll)) || bytes < runtime().cfg.min_bytes) return nullptr;
  return std::make_shared<const Selection>(
      select_algorithm(select_input(shape, nprocs, round.arrival, round.corrections)));
}

int dispatch(const CallArgs& a) {
  Runtime& rt = runtime();
  const double arrival = common_now();
  CommContext* ctx = CommRegistry::instance().get(a.comm, rt.world_rank);
  if (ctx == nullptr) return call_native(a);  // intercommunicator or invalid
  if (!arguments_plain(a, *ctx)) return call_native(a);
  const std::uint64_t seq = ctx->seq++;
  CommRegistry::instance().set_last_used(ctx);
  const CallSite site = capture_callsite(a.ret_addr, rt.cfg.callsite_depth);
  const std::uint64_t site_id = CallSiteHash()(site) ^ static_cast<std::uint64_t>(a.coll);

  // The arrival vector of this call (identical on every rank) or nothing.
  std::optional<RoundResult> predicted_arrivals;
  if (ctx->pred) predicted_arrivals = ctx->pred->on_entry(seq, arrival);
  const double my_prediction = ctx->pred ? ctx->pred->my_prediction() : std::nan("");

  const int tsize = type_size(a.type);
  const CallShape shape = shape_of(a, tsize);
  Decided dd = decide(a, *ctx, predicted_arrivals, shape, seq);
  Decision& d = dd.d;
  std::shared_ptr<const Schedule> sched = dd.sched;
  const ScheduleParams& p = dd.params;
  if (sched && sched->max_tag() > ctx->tag_ub) {
    d.fallback = "schedule tags exceed MPI_TAG_UB";
    d.algo = Algo::Native;
    sched.reset();
  }

  int rc = MPI_SUCCESS;
  if (!sched) {
    if (!d.fallback.empty())
      log().info("{} on communicator {:#x}: {} requested, running native: {}", to_string(a.coll), ctx->id,
                 setting_for(a.coll), d.fallback);
    rc = call_native(a);
  } else {
    if (rt.cfg.check && !inputs_agree(*ctx, d.algo, p, static_cast<std::uint64_t>(tsize) * a.count)) {
      user_error(std::string("PAPSHIM_CHECK: the decision inputs of ") + to_string(a.coll) + " call #" +
                 std::to_string(seq) + " differ between ranks (count, type size, root, algorithm, arrival vector "
                 "or costs); the ranks would run different schedules. Aborting.");
      PMPI_Abort(a.comm, 3);
    }
    ExecArgs e;
    e.coll = a.coll;
    e.sendbuf = a.sendbuf;
    e.recvbuf = a.recvbuf;
    e.count = a.count;
    e.type = a.type;
    e.sendcount = a.sendcount;
    e.sendtype = a.sendtype;
    e.op = a.op;
    e.root = a.root;
    e.comm = ctx->priv;
    e.self = rt.self_priv;
    rc = execute(*sched, ctx->rank, e);
    if (rc != MPI_SUCCESS) {
      log().error("{} with {} failed with MPI error {}", to_string(a.coll), algo_info(d.algo).name, rc);
      PMPI_Comm_call_errhandler(a.comm, rc);
    }
  }
  const double exit_time = common_now();
  const std::uint64_t bytes = static_cast<std::uint64_t>(tsize) * static_cast<std::uint64_t>(a.count) *
                              (a.coll == Collective::Allgather ? static_cast<std::uint64_t>(ctx->size) : 1u);
  if (ctx->pred) {
    // Rounds are worth their messages only while the communicator carries
    // large calls: open them for 16 calls after each call of at least
    // PAPSHIM_MIN_BYTES.  Call sizes are identical on every rank, so every
    // rank opens the same rounds.
    const std::uint64_t per_rank = static_cast<std::uint64_t>(tsize) * static_cast<std::uint64_t>(a.count);
    ctx->rounds_left = per_rank >= static_cast<std::uint64_t>(rt.cfg.min_bytes) ? 16 : std::max(ctx->rounds_left - 1, 0);
    const RanDecision ran{static_cast<int>(a.coll), static_cast<int>(d.algo), dd.by_auto ? dd.predicted : 0.0};
    ctx->pred->on_exit(seq, site_id, shape, arrival, exit_time, ctx->rounds_left > 0, ran);
    if (ctx->rounds_left > 0) HelperThread::instance().round_opened(ctx->pred, ctx->size);
  }
  SiteKey key{a.coll, ctx->id, ctx->size, site};
  Stats::instance().record(key, seq, arrival, exit_time, my_prediction, bytes, algo_info(d.algo).name, d.fallback,
                           dd.by_auto, dd.ready);
  return rc;
}

}  // namespace papshim
