#include "shim/decision.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string_view>

#include "common/hash.h"
#include "config/log.h"
#include "shim/runtime.h"
#include "shim/schedule_cache.h"

namespace papshim {

const std::string& setting_for(Collective c) {
  const Config& cfg = runtime().cfg;
  return c == Collective::Allreduce ? cfg.allreduce : c == Collective::Reduce ? cfg.reduce : cfg.allgather;
}

namespace {

// The forced algorithm of each collective (none: auto), by Collective.
std::array<std::optional<Algo>, 3> g_forced;

SelectPolicy g_policy;

// The hosts a schedule of collective `c` runs between, or nullptr: between
// all ranks.
const NodeMap* hosts_for(Collective c, const NodeMap* nodes) { return runs_between_hosts(c) ? nodes : nullptr; }

SelectInput select_input(const CallShape& shape, int nprocs, int rank, const std::vector<double>& arrival,
                         const CostLearner& learned, const NodeMap* nodes, double noise = 0) {
  return make_select_input(g_policy, shape, nprocs, rank, arrival, learned, nodes, noise);
}

// Native's predicted time minus the pick's, for the report (0 for native).
double estimated_gain(const Selection& sel) {
  if (is_native(sel.pick) || !(sel.predicted > 0) || !(sel.native_predicted > 0)) return 0;
  return sel.native_predicted - sel.predicted;
}

// Auto mode on a call it weighs: the selection (the helper's, when it has
// one) and what it says.
Decision decide_auto(const DecisionInputs& in, std::shared_ptr<const Selection> ahead, std::uint64_t seq,
                     std::uint64_t comm_id) {
  Decision out;
  // PAPSHIM_REPRODUCIBLE=1: reductions run the schedule fixed by the call's
  // shape, with or without a prediction (algorithms/reproducible.h); with
  // the predictor off auto stays native as documented.
  if (in.reproducible) {
    const Selection sel = select_algorithm(in.select);
    out.pick = sel.pick;
    out.params = sel.params;
    out.sched = sel.schedule;
    return out;
  }
  if (!in.has_round) return out;
  out.ready = ahead != nullptr;
  const std::shared_ptr<const Selection> sel =
      ahead ? std::move(ahead) : std::make_shared<const Selection>(select_algorithm(in.select));
  if (in.select.rank == 0 && log().should_log(spdlog::level::trace)) {
    const double first = *std::min_element(in.select.arrival.begin(), in.select.arrival.end());
    std::string ms;
    for (double t : in.select.arrival) ms += fmt::format(" {:.1f}", 1e3 * (t - first));
    log().trace("{} call #{}: predicted arrivals{} (ms after the first):{}", to_string(in.shape.coll), seq,
                in.between_hosts ? " of the hosts" : "", ms);
  }
  if (in.select.rank == 0 && log().should_log(spdlog::level::debug))
    log().debug("{} call #{} on communicator {:#x}{}, prediction error scatter {:.1f} us: {}", to_string(in.shape.coll),
                seq, comm_id, out.ready ? " (decided ahead)" : "", 1e6 * in.select.noise, format_selection(*sel));
  out.by_auto = true;
  out.predicted = sel->predicted;
  out.native_predicted = sel->native_predicted;
  out.gain = estimated_gain(*sel);
  out.pick = sel->pick;
  out.params = sel->params;
  out.sched = sel->schedule;
  return out;
}

// A forced algorithm: its schedule for these inputs, built or cached.
Decision decide_forced(const DecisionInputs& in, Algo forced) {
  Decision out;
  out.params = schedule_params_for(forced, in.select);
  out.params.rank = in.select.rank;  // build this rank's program only
  out.sched = cached_schedule(forced, out.params, out.fallback);
  out.pick = forced;
  return out;
}

std::uint64_t mix_double(std::uint64_t h, double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fnv1a_word(h, bits);
}

}  // namespace

const std::optional<Algo>& forced_algo(Collective c) { return g_forced[static_cast<std::size_t>(c)]; }

void configure_decisions() {
  const Runtime& rt = runtime();
  SelectPolicy p;
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather}) {
    g_forced[static_cast<std::size_t>(c)] = algo_from_name(c, setting_for(c));
    p.auto_mode[static_cast<std::size_t>(c)] = !g_forced[static_cast<std::size_t>(c)];
  }
  p.min_bytes = rt.cfg.min_bytes;
  p.cost = rt.cal.cost;
  p.clv_segments = rt.cfg.clv_segments;
  constexpr long kNetworkTreeSegment = 32768;  // below the eager limit of Open MPI's TCP (64 KiB)
  p.tree_segsize = rt.cfg.tree_segsize >= 0 ? rt.cfg.tree_segsize : rt.multi_node ? kNetworkTreeSegment : 0;
  p.reproducible = rt.cfg.reproducible;
  p.network = rt.multi_node;
  // The same library on every rank: ranks of one job cannot run different ones.
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  PMPI_Get_library_version(version, &len);
  len = std::clamp(len, 0, static_cast<int>(sizeof version) - 1);
  p.library = library_from_version(std::string_view(version, static_cast<std::size_t>(len)));
  g_policy = p;
}

const SelectPolicy& select_policy() { return g_policy; }

const char* setting_screen(Collective c, long long bytes) {
  const auto& forced = forced_algo(c);
  if (forced) return is_native(*forced) ? "native by setting" : nullptr;
  return g_policy.weighs(c, bytes) ? nullptr : "below PAPSHIM_MIN_BYTES";
}

bool needs_commutative(Collective c) {
  const auto& forced = forced_algo(c);
  return forced ? algo_info(*forced).needs_commutative : c != Collective::Allgather;
}

std::string screen(const CallShape& shape, std::string eligibility) {
  const char* why = setting_screen(shape.coll, shape.bytes());
  return why ? std::string(why) : eligibility;
}

bool needs_private(Collective c) {
  const auto& forced = forced_algo(c);
  return forced || runtime().cfg.predictor != PredictorMode::Off;
}

DecisionInputs decision_inputs(const CallShape& shape, int nprocs, int rank, std::string screened_out,
                               const std::optional<RoundResult>& round, const NodeMap* hosts) {
  const Collective c = shape.coll;
  DecisionInputs in;
  in.shape = shape;
  in.forced = forced_algo(c);
  in.screened_out = std::move(screened_out);
  in.predicting = !in.forced && runtime().cfg.predictor != PredictorMode::Off;
  in.has_round = round.has_value();
  in.reproducible = in.predicting && runtime().cfg.reproducible && c != Collective::Allgather;
  if (!in.screened_out.empty()) return in;
  if (in.reproducible) {
    // Timing-free: no arrivals, no learned costs, between all ranks.
    in.select = select_input(shape, nprocs, rank, {}, CostLearner{}, nullptr);
    return in;
  }
  const NodeMap* nodes = hosts_for(c, hosts);
  in.between_hosts = nodes != nullptr;
  if (in.forced) {
    // Forced algorithms act on the arrivals when there are some, never on
    // learned costs.
    in.select = select_input(shape, nprocs, rank,
                             round ? round->arrival : std::vector<double>(static_cast<std::size_t>(nprocs), 0.0),
                             CostLearner{}, nodes);
  } else if (round) {
    in.select = select_input(shape, nprocs, rank, round->arrival, round->corrections, nodes, round->noise);
  } else {
    in.select = select_input(shape, nprocs, rank, {}, CostLearner{}, nodes);
  }
  return in;
}

Decision decide(const DecisionInputs& in, std::shared_ptr<const Selection> ahead, std::uint64_t seq,
                std::uint64_t comm_id) {
  if (!in.screened_out.empty()) {
    Decision out;
    // A forced algorithm that cannot run says why; auto's screen is its
    // normal course, not a fallback.
    if (in.forced && !is_native(*in.forced)) out.fallback = in.screened_out;
    return out;
  }
  if (in.forced) return decide_forced(in, *in.forced);
  if (!in.predicting) return Decision{};
  return decide_auto(in, std::move(ahead), seq, comm_id);
}

std::uint64_t inputs_hash(const DecisionInputs& in) {
  std::uint64_t h = kFnvOffset;
  auto word = [&h](std::uint64_t w) { h = fnv1a_word(h, w); };
  word(static_cast<std::uint64_t>(in.shape.coll));
  word(static_cast<std::uint64_t>(in.shape.count));
  word(static_cast<std::uint64_t>(in.shape.type_size));
  word(static_cast<std::uint64_t>(in.shape.root));
  word(in.shape.commutative);
  word(in.forced ? static_cast<std::uint64_t>(*in.forced) : ~0ull);
  h = fnv1a(h, in.screened_out.data(), in.screened_out.size());
  word(in.predicting);
  word(in.has_round);
  word(in.between_hosts);
  word(in.reproducible);
  const SelectInput& s = in.select;  // all but s.rank
  word(static_cast<std::uint64_t>(s.coll));
  word(static_cast<std::uint64_t>(s.nprocs));
  word(static_cast<std::uint64_t>(s.root));
  word(s.count);
  word(s.elem_size);
  word(s.arrival.size());
  for (double t : s.arrival) h = mix_double(h, t);
  h = mix_double(h, s.cost.alpha);
  h = mix_double(h, s.cost.beta);
  h = mix_double(h, s.cost.gamma);
  word(static_cast<std::uint64_t>(s.cost.curve_n));
  for (int i = 0; i < s.cost.curve_n; ++i) {
    h = mix_double(h, s.cost.curve_bytes[static_cast<std::size_t>(i)]);
    h = mix_double(h, s.cost.curve_time[static_cast<std::size_t>(i)]);
  }
  word(static_cast<std::uint64_t>(s.library));
  word(s.commutative);
  word(static_cast<std::uint64_t>(s.clv_segments));
  word(static_cast<std::uint64_t>(s.tree_segsize));
  h = mix_double(h, s.margin);
  h = mix_double(h, s.noise);
  word(s.correction.fingerprint());  // the learned factors and counts
  word(s.reproducible);
  word(s.simulate);
  word(s.network);
  return h;
}

}  // namespace papshim
