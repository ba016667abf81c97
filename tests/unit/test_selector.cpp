// Tests for auto mode's selector (algorithms/selector.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/selector.h"

namespace papshim {
namespace {

SelectInput one_late(Collective c, double delay_s, std::size_t count = 1 << 20) {
  SelectInput in;
  in.coll = c;
  in.nprocs = 8;
  in.count = count;
  in.elem_size = 4;
  in.arrival.assign(8, 0.0);
  in.arrival[3] = delay_s;
  in.cost = {10e-6, 0.1e-9, 0.03e-9};  // measured here: shared memory
  return in;
}

// Native's calls have taught the common factor: candidates may go on trial.
void native_measured(SelectInput& in) {
  in.correction.set_calls(in.coll, Algo::Native, kNativeCallsBeforeTrials);
}

// A NaN or infinite predicted arrival anywhere (not only where min and max
// would show it) means no usable prediction: native, for every collective.
TEST(Selector, NonFiniteArrivalMeansNoPrediction) {
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather})
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
      for (std::size_t at : {0ul, 3ul, 5ul}) {
        SelectInput in = one_late(c, 0.02, 1 << 14);
        in.arrival[at] = bad;
        const Selection s = select_algorithm(in);
        EXPECT_EQ(s.pick, Algo::Native) << to_string(c) << " " << at;
        EXPECT_NE(s.why.find("no usable prediction"), std::string::npos) << s.why;
      }
}

// A balanced allreduce has one rival to native, judged on equal arrivals:
// PRR (a ring of pipelined slices), on trial once native has been measured
// and while the trial budget has room, and from then on only if it measured
// faster by the margin.
TEST(Selector, BalancedAllreduceTriesPrrAgainstNative) {
  SelectInput in = one_late(Collective::Allreduce, 0.0);
  const Selection first = select_algorithm(in);
  EXPECT_EQ(first.pick, Algo::Native) << format_selection(first);  // native not measured yet
  EXPECT_NE(first.why.find("balanced"), std::string::npos) << first.why;
  for (const auto& c : first.table) EXPECT_TRUE(c.native_model || c.algo == Algo::Prr) << algo_info(c.algo).name;
  native_measured(in);
  const Selection trial = select_algorithm(in);
  ASSERT_EQ(trial.pick, Algo::Prr) << format_selection(trial);
  EXPECT_NE(trial.why.find("balanced"), std::string::npos) << trial.why;
  EXPECT_NE(trial.why.find("on trial"), std::string::npos) << trial.why;
  ASSERT_TRUE(trial.schedule);
  for (double t : trial.params.arrival) EXPECT_EQ(t, 0.0);
  EXPECT_GT(trial.native_predicted, 0.0);
  // Trials that took 1 ms beyond native's time out of 40 ms seen: over 2%,
  // the trial waits; out of 60 ms: within it.
  in.correction.set_trial_time(Collective::Allreduce, 1e-3, 40e-3);
  const Selection waits = select_algorithm(in);
  EXPECT_EQ(waits.pick, Algo::Native) << format_selection(waits);
  EXPECT_NE(waits.why.find("trial budget"), std::string::npos) << waits.why;
  in.correction.set_trial_time(Collective::Allreduce, 1e-3, 60e-3);
  EXPECT_EQ(select_algorithm(in).pick, Algo::Prr);
  in.correction.set_calls(Collective::Allreduce, Algo::Prr, kTrialCalls);
  in.correction.set_own(Collective::Allreduce, Algo::Prr, 0.6);  // measured 0.6 times native's time
  const Selection won = select_algorithm(in);
  EXPECT_EQ(won.pick, Algo::Prr) << format_selection(won);
  EXPECT_EQ(won.why.find("on trial"), std::string::npos) << won.why;
  in.correction.set_own(Collective::Allreduce, Algo::Prr, 0.97);  // not by the margin
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
}

// The trial budget holds for a spread too: a candidate within the margin of
// native is not tried while the trials so far cost more than 2% of the time
// the learner saw.
TEST(Selector, TrialsWaitForTheBudget) {
  SelectInput in = one_late(Collective::Reduce, 0.0);
  native_measured(in);
  ASSERT_EQ(select_algorithm(in).pick, Algo::SortedBinomial);
  in.correction.set_trial_time(Collective::Reduce, 0.5e-3, 10e-3);
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  in.correction.set_trial_time(Collective::Allreduce, 0.5e-3, 10e-3);  // another collective's budget
  in.correction.set_trial_time(Collective::Reduce, 0.0, 10e-3);
  EXPECT_EQ(select_algorithm(in).pick, Algo::SortedBinomial);
}

// A balanced reduce has one rival to native, judged on equal arrivals: the
// binomial tree (sorted binomial), which goes on trial once native has been
// measured and runs from then on only if it measured faster by the margin.
TEST(Selector, BalancedReduceTriesTheTreeAgainstNative) {
  for (double noise : {0.0, 0.006}) {
    SelectInput in = one_late(Collective::Reduce, noise > 0 ? 0.020 : 0.0);  // 20 ms: within 4 x 6 ms
    in.noise = noise;
    const Selection first = select_algorithm(in);
    EXPECT_EQ(first.pick, Algo::Native) << format_selection(first);  // native not measured yet
    EXPECT_NE(first.why.find("balanced"), std::string::npos) << first.why;
    native_measured(in);
    const Selection trial = select_algorithm(in);
    ASSERT_EQ(trial.pick, Algo::SortedBinomial) << format_selection(trial);
    EXPECT_NE(trial.why.find("balanced"), std::string::npos) << trial.why;
    EXPECT_NE(trial.why.find("on trial"), std::string::npos) << trial.why;
    ASSERT_TRUE(trial.schedule);
    for (double t : trial.params.arrival) EXPECT_EQ(t, 0.0);  // never the noise's spread
    in.correction.set_calls(Collective::Reduce, Algo::SortedBinomial, kTrialCalls);
    in.correction.set_own(Collective::Reduce, Algo::SortedBinomial, 0.4);  // measured 2.5 times faster
    const Selection won = select_algorithm(in);
    EXPECT_EQ(won.pick, Algo::SortedBinomial) << format_selection(won);
    EXPECT_EQ(won.why.find("on trial"), std::string::npos) << won.why;
    in.correction.set_own(Collective::Reduce, Algo::SortedBinomial, 0.95);  // not by the margin
    EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  }
}

TEST(Selector, LateRankPicksArrivalAwareAllreduce) {
  const Selection s = select_algorithm(one_late(Collective::Allreduce, 0.020));
  EXPECT_TRUE(s.pick == Algo::Prr || s.pick == Algo::Slt) << format_selection(s);
  ASSERT_TRUE(s.schedule);
  EXPECT_GE(s.table.size(), 3u);
  for (const auto& c : s.table) EXPECT_GT(c.predicted, 0.0);
}

// A spread the ranks' own recent errors could make up is not a pattern:
// native.  The same spread predicted by accurate ranks is acted on.
TEST(Selector, SpreadWithinThePredictionErrorKeepsNative) {
  SelectInput noisy = one_late(Collective::Allreduce, 0.020);
  noisy.noise = 0.006;  // 4 x 6 ms > 20 ms
  const Selection s = select_algorithm(noisy);
  EXPECT_EQ(s.pick, Algo::Native);
  EXPECT_NE(s.why.find("prediction error"), std::string::npos) << s.why;
  noisy.noise = 0.004;  // 4 x 4 ms < 20 ms
  const Selection t = select_algorithm(noisy);
  EXPECT_NE(t.pick, Algo::Native) << format_selection(t);
}

// Before the ranks' prediction errors are measured (noise NaN) no spread is
// acted on, for every collective.
TEST(Selector, UnknownNoiseKeepsNative) {
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather}) {
    SelectInput in = one_late(c, 0.020, 1 << 16);
    in.noise = NAN;
    native_measured(in);
    const Selection s = select_algorithm(in);
    EXPECT_EQ(s.pick, Algo::Native) << to_string(c);
    EXPECT_NE(s.why.find("not measured yet"), std::string::npos) << s.why;
    EXPECT_GT(s.predicted, 0.0) << "native is modelled, so that its calls teach";
    EXPECT_EQ(s.predicted, s.native_predicted);
    in.noise = 0;
    EXPECT_NE(select_algorithm(in).pick, Algo::Native) << to_string(c);
  }
}

// On a job that spans several hosts the straggler allreduce, whose P-1
// flows into every rank incast on a switched network, is not weighed.
TEST(Selector, NoIncastingRowOnANetwork) {
  SelectInput in = one_late(Collective::Allreduce, 0.050);
  in.cost = {50e-6, 8e-9, 0.3e-9};
  auto weighs_straggler = [](const Selection& s) {
    for (const Candidate& c : s.table)
      if (c.algo == Algo::Straggler) return true;
    return false;
  };
  EXPECT_TRUE(weighs_straggler(select_algorithm(in)));
  in.network = true;
  const Selection s = select_algorithm(in);
  EXPECT_FALSE(weighs_straggler(s)) << format_selection(s);
  EXPECT_NE(s.pick, Algo::Native) << format_selection(s);  // PRR or SLT instead
}

TEST(Selector, LateRankPicksClairvoyantReduce) {
  const Selection s = select_algorithm(one_late(Collective::Reduce, 0.020));
  EXPECT_EQ(s.pick, Algo::Clairvoyant) << format_selection(s);
}

// Reduce trees are cut into PAPSHIM_TREE_SEGSIZE-byte segments, at most
// 4096, and into P segments when it is 0.
TEST(Selector, TreeSegmentsFollowTheSegmentSize) {
  SelectInput in = one_late(Collective::Reduce, 0.020);  // 4 MiB
  EXPECT_EQ(schedule_params_for(Algo::SortedBinomial, in).nseg, 128);
  EXPECT_EQ(schedule_params_for(Algo::Binomial, in).nseg, 128);
  in.tree_segsize = 100000;
  EXPECT_EQ(schedule_params_for(Algo::Binomial, in).nseg, 42);
  in.tree_segsize = 1;
  EXPECT_EQ(schedule_params_for(Algo::Binomial, in).nseg, 4096);
  in.tree_segsize = 0;
  EXPECT_EQ(schedule_params_for(Algo::SortedBinomial, in).nseg, 8);
  EXPECT_EQ(schedule_params_for(Algo::Clairvoyant, in).nseg, 8);
  in.count = 3;
  in.tree_segsize = 4;
  EXPECT_EQ(build_schedule(Algo::SortedBinomial, schedule_params_for(Algo::SortedBinomial, in)).schedule->nseg, 3);
}

// Every model carries the collective's common factor (learned from native's
// calls); an arrival-aware candidate's own factor multiplies it.
TEST(Selector, CommonFactorTimesOwnFactor) {
  SelectInput in = one_late(Collective::Reduce, 0.020);
  const Collective rd = Collective::Reduce;
  in.correction.set_common(rd, 2.0);
  in.correction.set_own(rd, Algo::SortedBinomial, 0.8);
  in.correction.set_own(rd, Algo::Clairvoyant, 3.0);  // on trial: not applied yet
  in.correction.set_calls(rd, Algo::SortedBinomial, kTrialCalls);
  in.correction.set_own(rd, Algo::Native, 5.0);  // native has no own factor: ignored
  const Selection s = select_algorithm(in);
  ASSERT_FALSE(s.table.empty());
  for (const auto& c : s.table) {
    const double expected = c.algo == Algo::SortedBinomial ? 1.6 : 2.0;
    EXPECT_DOUBLE_EQ(c.correction, expected) << algo_info(c.algo).name;
  }
}

// An arrival-aware pick predicted within the margin of native (either
// side) runs while it is on trial (fewer than kTrialCalls calls taught its
// own factor) once native has been measured, and not once it has been
// measured that often.
TEST(Selector, WithinTheMarginAPickOnTrialRuns) {
  int trials = 0;
  for (double d = 0.0002; d < 0.02; d *= 1.25) {
    SelectInput in = one_late(Collective::Allreduce, d);
    native_measured(in);
    const Selection first = select_algorithm(in);
    if (first.pick == Algo::Native || first.why.find("on trial") == std::string::npos) continue;
    ++trials;
    ASSERT_TRUE(first.schedule) << first.why;
    double native = INFINITY;
    for (const auto& c : first.table)
      if (c.native_model) native = std::min(native, c.predicted);
    EXPECT_LE(first.predicted, 1.1 * native + 0.25 * first.message_time + 2 * in.cost.alpha);
    // Before native has been measured there is nothing to try it against.
    SelectInput unmeasured = in;
    unmeasured.correction = CostLearner{};
    EXPECT_EQ(select_algorithm(unmeasured).pick, Algo::Native);
    // Measured well above its model, but fewer than kTrialCalls times:
    // still on trial, judged by the common factor alone.
    in.correction.set_own(Collective::Allreduce, first.pick, 1.5);
    in.correction.set_calls(Collective::Allreduce, first.pick, kTrialCalls - 1);
    EXPECT_EQ(select_algorithm(in).pick, first.pick);
    // Measured often enough: now judged with its own factor, not worth
    // running (another candidate on trial may get its turn).
    in.correction.set_calls(Collective::Allreduce, first.pick, kTrialCalls);
    const Selection again = select_algorithm(in);
    EXPECT_NE(again.pick, first.pick) << format_selection(again);
  }
  EXPECT_GT(trials, 0) << "no delay put an arrival-aware pick within the margin";
  // Sparbit on 5 ranks is modelled a little slower than Bruck: on trial all
  // the same, as the models may miss either way.
  SelectInput in = one_late(Collective::Allgather, 0.0, 1 << 14);
  in.nprocs = 5;
  in.arrival.assign(5, 0.0);
  native_measured(in);
  const Selection above = select_algorithm(in);
  ASSERT_EQ(above.pick, Algo::Sparbit) << format_selection(above);
  EXPECT_NE(above.why.find("on trial"), std::string::npos) << above.why;
  double native = INFINITY;
  for (const auto& c : above.table)
    if (c.native_model) native = std::min(native, c.predicted);
  EXPECT_GT(above.predicted, native);
}

TEST(Selector, NonCommutativeStaysNative) {
  SelectInput in = one_late(Collective::Allreduce, 0.020);
  in.commutative = false;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
}

TEST(Selector, MissingOrBadVectorStaysNative) {
  SelectInput in = one_late(Collective::Allreduce, 0.020);
  in.arrival.resize(3);
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  in = one_late(Collective::Allreduce, 0.020);
  in.count = 0;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
}

TEST(Selector, TableListsNativeModelsAndCandidates) {
  const Selection s = select_algorithm(one_late(Collective::Allgather, 0.020, 1 << 14));
  bool native_model = false;
  for (const auto& c : s.table) native_model = native_model || c.native_model;
  EXPECT_TRUE(native_model);
  EXPECT_NE(format_selection(s).find("sparbit"), std::string::npos);
}

TEST(Selector, SameInputsSameDecision) {
  const SelectInput in = one_late(Collective::Allreduce, 0.004);
  const Selection a = select_algorithm(in), b = select_algorithm(in);
  EXPECT_EQ(a.pick, b.pick);
  ASSERT_EQ(a.table.size(), b.table.size());
  for (std::size_t i = 0; i < a.table.size(); ++i) EXPECT_EQ(a.table[i].predicted, b.table[i].predicted);
}

// The rows' roles in auto mode, in the order the selector weighs them (the
// order breaks ties, so it is part of every decision).
TEST(Selector, AutoRolesInTableOrder) {
  auto names = [](Collective c, AutoRole role) {
    std::vector<std::string> out;
    for (const AlgoInfo* a : algorithms_for(c))
      if (a->role == role) out.emplace_back(a->name);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(Collective::Allreduce, AutoRole::NativeModel), (V{"ring", "rabenseifner"}));
  EXPECT_EQ(names(Collective::Allreduce, AutoRole::Candidate), (V{"prr", "slt", "straggler"}));
  EXPECT_EQ(names(Collective::Reduce, AutoRole::NativeModel), (V{"binomial"}));
  EXPECT_EQ(names(Collective::Reduce, AutoRole::Candidate), (V{"clairvoyant", "sorted_binomial"}));
  EXPECT_EQ(names(Collective::Allgather, AutoRole::NativeModel), (V{"ring", "bruck", "recursive_doubling"}));
  EXPECT_EQ(names(Collective::Allgather, AutoRole::Candidate), (V{"sparbit", "straggler"}));
  // Every row auto weighs has a schedule, and a closed form unless its
  // size is capped (the selector simulates it there).
  for (const AlgoInfo& a : all_algorithms()) {
    if (a.role == AutoRole::ForcedOnly) continue;
    EXPECT_NE(a.build, nullptr) << a.name;
    EXPECT_TRUE(a.closed_form != nullptr || a.auto_max_procs > 0) << a.name;
  }
}

// Recursive doubling's size limit is its row's: auto leaves it out of
// native's models on other sizes, and a forced build says why.
TEST(Selector, SizeCheckFromTheRow) {
  SelectInput in;
  in.coll = Collective::Allgather;
  in.nprocs = 6;
  in.count = 1000;
  in.arrival.assign(6, 0.0);
  in.arrival[5] = 1.0;
  for (const Candidate& c : select_algorithm(in).table) EXPECT_NE(c.algo, Algo::RecursiveDoubling);
  ScheduleParams p;
  p.nprocs = 6;
  p.count = 1000;
  p.nseg = 6;
  p.arrival.assign(6, 0.0);
  const BuildResult b = build_schedule(Algo::RecursiveDoubling, p);
  EXPECT_FALSE(b.schedule);
  EXPECT_EQ(b.reason, "recursive_doubling needs a power-of-two communicator size");
  in.nprocs = 8;
  in.arrival.assign(8, 0.0);
  in.arrival[7] = 1.0;
  bool seen = false;
  for (const Candidate& c : select_algorithm(in).table) seen = seen || c.algo == Algo::RecursiveDoubling;
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace papshim
