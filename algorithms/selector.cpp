#include "algorithms/selector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "algorithms/cost_model.h"
#include "algorithms/reproducible.h"
#include "algorithms/simulator.h"

namespace papshim {

namespace {

double whole_bytes(const SelectInput& in) {
  const double per = static_cast<double>(in.count) * static_cast<double>(in.elem_size);
  return in.coll == Collective::Allgather ? per * in.nprocs : per;
}

// The rows auto mode weighs in `role` on these inputs, in table order.
// `balanced`: the arrivals are balanced, so the rows that act only on a
// spread are left out.
std::vector<const AlgoInfo*> weighed(const SelectInput& in, AutoRole role, bool balanced) {
  std::vector<const AlgoInfo*> out;
  for (const AlgoInfo* a : algorithms_for(in.coll)) {
    if (a->role != role || (balanced && a->needs_spread) || (in.network && a->one_host_only)) continue;
    if (a->auto_max_procs > 0 && in.nprocs > a->auto_max_procs) continue;
    if (a->size_check != nullptr && a->size_check(in.nprocs) != nullptr) continue;
    out.push_back(a);
  }
  return out;
}

// The arrivals relative to the earliest.
std::vector<double> relative_arrivals(const SelectInput& in) {
  std::vector<double> t = in.arrival;
  const double lo = in.arrival.empty() ? 0.0 : *std::min_element(in.arrival.begin(), in.arrival.end());
  for (auto& x : t) x -= lo;
  return t;
}

}  // namespace

ScheduleParams schedule_params_for(Algo a, const SelectInput& in) {
  ScheduleParams p;
  p.nprocs = in.nprocs;
  p.root = in.coll == Collective::Reduce ? in.root : 0;
  p.count = in.count;
  p.arrival = relative_arrivals(in);
  const SegmentPolicy segments = algo_info(a).segments;
  p.nseg = segments == nullptr
               ? in.nprocs
               : segments(SegmentInput{in.nprocs, in.count, whole_bytes(in), in.clv_segments, in.tree_segsize});
  const double seg_bytes = whole_bytes(in) / p.nseg;
  p.tau = in.cost.transfer(seg_bytes) + (in.coll == Collective::Allgather ? 0.0 : in.cost.gamma * seg_bytes);
  if (reproducible_applies(in)) make_timing_free(p, in);
  return p;
}

namespace {

// The reason while the ranks' prediction errors are not known: native runs,
// modelled, so that its calls teach the common factor.
constexpr const char* kNoiseUnknown = "no usable prediction yet: the ranks' prediction errors are not measured yet";

// Inputs no candidate can improve on: the reason, or "" to go on.  Sets
// `balanced` when the arrivals are balanced; for reductions that is then the
// reason (no other applies).  Allgather goes on either way: Sparbit does not
// act on arrivals and is chosen on measured cost whatever the spread, and
// only the straggler allgather needs a spread.
const char* screen(const SelectInput& in, Selection& s, bool& balanced) {
  balanced = false;
  const std::size_t P = static_cast<std::size_t>(in.nprocs);
  s.message_time = in.cost.transfer(whole_bytes(in));
  if (in.arrival.size() == P && P > 0) {
    const auto [lo, hi] = std::minmax_element(in.arrival.begin(), in.arrival.end());
    s.spread = *hi - *lo;
  }
  const bool finite = std::all_of(in.arrival.begin(), in.arrival.end(), [](double t) { return std::isfinite(t); });
  if (in.nprocs < 2 || in.count == 0 || in.arrival.size() != P || !finite || !std::isfinite(s.spread))
    return "no usable prediction";
  if (in.coll != Collective::Allgather && !in.commutative) return "non-commutative op";
  if (!(in.noise >= 0)) return kNoiseUnknown;
  const char* why = "";
  if (s.spread < 0.5 * s.message_time)
    why = "balanced: predicted spread below half a message time";
  else if (s.spread < kNoiseSpreads * in.noise)
    why = "balanced within the prediction error: predicted spread below 4 times the scatter of the ranks' errors";
  balanced = *why != '\0';
  return in.coll == Collective::Allgather ? "" : why;
}

// Whether algorithm `a` is still on trial on these inputs' communicator:
// it has run fewer than kTrialCalls calls (identical on every rank, as the
// factors are).
bool on_trial(const SelectInput& in, Algo a) {
  if (is_native(a)) return false;
  return in.correction.calls(in.coll, a) < kTrialCalls;
}

// Whether native's calls have taught the collective's common factor often
// enough for a trial to be measured against it.
bool native_measured(const SelectInput& in) {
  return in.correction.calls(in.coll, Algo::Native) >= kNativeCallsBeforeTrials;
}

// The measured correction of algorithm `a`'s model: the collective's
// common factor (native's calls teach it, whatever ran until native has
// run) times the algorithm's own
// (1 until taught, and for native).  While `a` is on trial its own factor
// rests on too few calls to judge it by (one may be an outlier): the common
// factor alone.
double correction_for(const SelectInput& in, Algo a) {
  const bool own = !is_native(a) && !on_trial(in, a);
  return in.correction.common(in.coll) * (own ? in.correction.own(in.coll, a) : 1.0);
}

// A candidate's predicted mean elapsed time (closed form, or the simulator
// with in.simulate or where there is none), or nullopt when it cannot run
// these inputs.
std::optional<double> predict(const SelectInput& in, const ArrivalSummary& summary, Algo a, const ScheduleParams& p,
                              bool& simulated) {
  simulated = false;
  if (!in.simulate)
    if (auto v = closed_form_mean_elapsed(a, in.coll, p, in.elem_size, in.cost, summary)) return v;
  simulated = true;
  BuildResult b = build_schedule(a, p);
  if (!b.schedule) return std::nullopt;
  const SimResult r = simulate(*b.schedule, p.arrival, SimCost::from_figures(in.cost, in.elem_size, in.count));
  if (!r.ok) return std::nullopt;
  return r.mean_elapsed;
}

// How much faster than native an arrival-aware pick must be predicted.
double needed_gain(const SelectInput& in, const Selection& s, double native_cost) {
  // The part of native's time an algorithm can remove: above the lower bound
  // (allreduce, allgather: every rank waits for the last arrival, then one
  // message time; reduce: early ranks may leave, so all of it).
  double floor = 0;
  if (in.coll != Collective::Reduce) {
    const double last = *std::max_element(in.arrival.begin(), in.arrival.end());
    for (double a : in.arrival) floor += (last - a) / static_cast<double>(in.nprocs);
    floor += s.message_time;
  }
  // ... and, for allreduce, at least a quarter of one whole-vector
  // transfer: smaller predicted gains are within what the model cannot
  // resolve there.  Reduce has no floor, so the share of native's whole
  // time is margin enough (on the emulated cluster the quarter transfer
  // kept the sorted binomial tree out where it ran 1.4 times faster than
  // native); for allgather what a trial measured against native is what a
  // candidate gains (on the emulated cluster Sparbit, which does not act on
  // arrivals, ran 1.25 times faster than native, measured 1.2 times on
  // trial, and the quarter kept it out), and the straggler allgather is
  // weighed only on arrivals that are not balanced.
  const double quarter = in.coll == Collective::Allreduce ? 0.25 * s.message_time : 0.0;
  return std::max({2.0 * in.cost.alpha, quarter, in.margin * std::max(native_cost - floor, 0.0)});
}

// Builds the pick's schedule (only this rank's program when known) and says
// why; native when it is not worth it or cannot be built.  A pick predicted
// within the margin of native, either side, runs while it is on trial once
// native has been measured: the models of the trees and of native can miss
// in opposite directions (on the emulated cluster, reduce with random
// lateness: the sorted binomial tree predicted as fast as native ran twice
// as fast, its leaves leaving as soon as the network's buffers took their
// data; with nobody late, Open MPI's reduce of 4 MiB ran 2.5 times slower
// than the binomial tree its model is), and a few calls teach its factor
// what it really costs against native (one could be an outlier), as long
// as the trials' cost stays within the budget (kTrialBudget).  `best`
// is the cheapest candidate, predicted at `best_cost` (nullptr: none); s.pick
// is native until the schedule is built.
void build_pick_or_keep_native(const SelectInput& in, Selection& s, const AlgoInfo* best, double best_cost,
                               double native_cost) {
  const double gain = needed_gain(in, s, native_cost);
  const bool clear_win = best_cost < native_cost - gain;
  const bool trial_due = !clear_win && best_cost <= native_cost + gain && best != nullptr &&
                         on_trial(in, best->algo) && native_measured(in);
  const bool trial = trial_due && in.correction.trial_allowed(in.coll);
  if (best != nullptr && (clear_win || trial)) {
    s.params = schedule_params_for(best->algo, in);
    s.params.rank = in.rank;
    BuildResult b = build_schedule(best->algo, s.params);
    if (b.schedule) s.schedule = std::make_shared<const Schedule>(std::move(*b.schedule));
  }
  if (s.schedule) {
    s.pick = best->algo;
    s.predicted = best_cost;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s predicted %.1f us vs native %.1f us%s", best->name, 1e6 * best_cost,
                  1e6 * native_cost, clear_win ? "" : "; within the margin, on trial to measure it");
    s.why = buf;
  } else {
    s.why = s.params.nprocs > 1 ? std::string(best->name) + ": schedule not built"
            : trial_due         ? std::string(best->name) + " within the margin; its trial waits for the trial budget"
                                : "no candidate beats native by the margin";
    s.schedule.reset();
    s.params = ScheduleParams{};
    s.predicted = std::isfinite(native_cost) ? native_cost : 0.0;
  }
}

// Predicts native's models and `candidates` (in this order; the first of
// equally cheap candidates wins) on `in` and builds the cheapest when it is
// worth it.  s.pick is native on entry.
Selection choose(const SelectInput& in, Selection s, const std::vector<const AlgoInfo*>& candidates) {
  double native_cost = INFINITY;
  const ArrivalSummary summary = summarize_arrivals(relative_arrivals(in));
  auto run = [&](Algo a, bool native_model) -> std::optional<double> {
    const ScheduleParams p = schedule_params_for(a, in);
    bool simulated = false;
    const auto t = predict(in, summary, a, p, simulated);
    if (!t) return std::nullopt;
    const double f = correction_for(in, native_model ? Algo::Native : a);
    s.table.push_back({a, *t * f, native_model, f, simulated});
    if (native_model) native_cost = std::min(native_cost, *t * f);
    return *t * f;
  };
  const double bytes = static_cast<double>(in.count) * static_cast<double>(in.elem_size);
  const NativeAlgorithm library_algo =
      native_algorithm(in.library, in.coll, in.nprocs, bytes, in.count, in.commutative);
  if (library_algo != NativeAlgorithm::None) {
    const double f = correction_for(in, Algo::Native);
    const double t = (summary.last - summary.mean +
                      native_balanced_time(in.library, library_algo, in.nprocs, bytes, in.cost)) * f;
    s.table.push_back({Algo::Native, t, true, f, false, library_algo});
    native_cost = t;
  } else {
    for (const AlgoInfo* a : weighed(in, AutoRole::NativeModel, false)) run(a->algo, true);
  }
  const AlgoInfo* best = nullptr;
  double best_cost = INFINITY;
  for (const AlgoInfo* a : candidates) {
    const auto c = run(a->algo, false);
    if (c && *c < best_cost) {
      best_cost = *c;
      best = a;
    }
  }
  s.native_predicted = std::isfinite(native_cost) ? native_cost : 0.0;
  build_pick_or_keep_native(in, s, best, best_cost, native_cost);
  return s;
}

}  // namespace

Selection select_algorithm(const SelectInput& in) {
  if (reproducible_applies(in)) return reproducible_selection(in);
  Selection s;
  bool balanced = false;
  s.why = screen(in, s, balanced);
  if (s.why.empty()) return choose(in, std::move(s), weighed(in, AutoRole::Candidate, balanced));
  if (s.why == kNoiseUnknown) {  // native only, but modelled: its calls teach the common factor
    s = choose(in, std::move(s), {});
    s.why = kNoiseUnknown;
    return s;
  }
  // A balanced reduction still has rivals to native: the candidates that do
  // not need a spread (the sorted binomial tree, on equal arrivals the tree
  // native's model is, which Open MPI's reduce may well not run; PRR, on
  // equal arrivals a ring whose slices are pipelined, which on a network
  // of several hosts can beat the library's own).  They are judged on what
  // they measured against native, on trial and within the trial budget,
  // never on a spread that is noise.
  if (!balanced) return s;
  const std::string why = s.why;
  SelectInput flat = in;
  flat.arrival.assign(flat.arrival.size(), 0.0);
  s = choose(flat, std::move(s), weighed(flat, AutoRole::Candidate, true));
  s.why = why + "; " + s.why;
  return s;
}

std::string format_selection(const Selection& s) {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "spread %.1f us, one message %.1f us -> %s (%s)", 1e6 * s.spread,
                1e6 * s.message_time, algo_info(s.pick).name, s.why.c_str());
  out += line;
  for (const auto& c : s.table) {
    std::string name = algo_info(c.algo).name;
    if (c.native_algorithm != NativeAlgorithm::None) name += std::string(": ") + to_string(c.native_algorithm);
    std::snprintf(line, sizeof line, "\n    %-28s %12.1f us  x%.2f measured%s%s", name.c_str(), 1e6 * c.predicted,
                  c.correction, c.native_model ? "  (model of native)" : "", c.simulated ? "  (simulated)" : "");
    out += line;
  }
  return out;
}

SelectInput make_select_input(const SelectPolicy& policy, const CallShape& shape, int nprocs, int rank,
                              const std::vector<double>& arrival, const CostLearner& learned, const NodeMap* hosts,
                              double noise) {
  SelectInput in;
  in.coll = shape.coll;
  in.nprocs = hosts ? hosts->nnodes : nprocs;
  in.rank = hosts ? hosts->node_index : rank;  // only this rank's program of the pick is built
  in.root = hosts ? hosts->node_of[static_cast<std::size_t>(shape.root)] : shape.root;
  in.count = static_cast<std::size_t>(shape.count);
  in.elem_size = static_cast<std::size_t>(shape.type_size);
  if (hosts && !arrival.empty()) in.arrival = hosts->latest(arrival);
  else if (hosts) in.arrival.assign(static_cast<std::size_t>(hosts->nnodes), 0.0);
  else in.arrival = arrival;
  in.cost = policy.cost;
  in.commutative = shape.commutative;
  in.library = policy.library;
  in.network = policy.network;
  in.clv_segments = policy.clv_segments;
  in.tree_segsize = policy.tree_segsize;
  in.correction = learned;
  in.noise = noise;
  in.reproducible = policy.reproducible;  // timing-free schedules (algorithms/reproducible.h)
  return in;
}

std::shared_ptr<const Selection> select_ahead(const SelectPolicy& policy, const CallShape& shape, int nprocs,
                                              int rank, const std::vector<double>& arrival,
                                              const CostLearner& learned, const NodeMap* hosts, double noise) {
  if (!policy.weighs(shape.coll, shape.bytes())) return nullptr;  // helper CPU spent for nothing
  return std::make_shared<const Selection>(select_algorithm(make_select_input(
      policy, shape, nprocs, rank, arrival, learned, runs_between_hosts(shape.coll) ? hosts : nullptr, noise)));
}

}  // namespace papshim
