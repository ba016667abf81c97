// Tests for the cost learner (algorithms/cost_learner.h).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "algorithms/cost_learner.h"
#include "algorithms/portable_math.h"

namespace papshim {
namespace {

constexpr double kNaN = NAN;
constexpr Collective kAr = Collective::Allreduce, kRd = Collective::Reduce, kAg = Collective::Allgather;

// Untaught: every factor 1, every count 0; native has no own factor.
TEST(CostLearner, StartsAtOneAndZero) {
  CostLearner f;
  for (Collective c : {kAr, kRd, kAg}) {
    EXPECT_EQ(f.common(c), 1.0);
    for (int a = 0; a < CostLearner::kMaxAlgos; ++a) {
      EXPECT_EQ(f.own(c, static_cast<Algo>(a)), 1.0);
      EXPECT_EQ(f.calls(c, static_cast<Algo>(a)), 0);
    }
  }
  f.set_own(kRd, Algo::Native, 5.0);
  EXPECT_EQ(f.own(kRd, Algo::Native), 1.0);
  f.set_calls(kRd, Algo::Native, 2);  // native's count: the calls that taught the common factor
  EXPECT_EQ(f.calls(kRd, Algo::Native), 2);
  EXPECT_EQ(f.calls(kAr, Algo::Native), 0);
  f.set_own(kAg, Algo::Sparbit, 0.5);
  EXPECT_EQ(f.own(kAg, Algo::Sparbit), 0.5);
  EXPECT_EQ(f.own(kAr, Algo::Sparbit), 1.0);
}

// A call nothing modelled (predicted 0) teaches and counts nothing, and
// changes no factor.
TEST(CostLearner, UnmodelledCallTeachesNothing) {
  CostLearner f;
  f.set_own(kRd, Algo::SortedBinomial, 2.0);
  f.set_own(kAr, Algo::Prr, 0.5);
  f.set_common(kAr, 1.5);
  const std::uint64_t before = f.fingerprint();
  MeasuredCall call;
  call.algo = Algo::Prr;
  call.measured = 1e-3;
  f.learn(call);
  EXPECT_EQ(f.fingerprint(), before);
  EXPECT_EQ(f.own(kRd, Algo::SortedBinomial), 2.0);
  EXPECT_EQ(f.own(kAr, Algo::Prr), 0.5);
  EXPECT_EQ(f.calls(kAr, Algo::Prr), 0);
}

// A verdict holds while native's time holds: a candidate that measured
// twice native's time keeps its factor through any number of native calls
// at the same ratio (it is not retried), and goes back on trial once
// native's time has moved by more than kRegimeShift (here native's calls
// start to take 1.6 times as long).  The regime factor moves slowly: one
// outlier does not expire it.
TEST(CostLearner, VerdictHoldsUntilTheRegimeChanges) {
  CostLearner f;
  auto call = [](Algo a, double measured, double predicted) {
    MeasuredCall c;
    c.coll = kAr;
    c.algo = a;
    c.predicted = predicted;
    c.measured = measured;
    return c;
  };
  for (int i = 0; i < 2; ++i) f.learn(call(Algo::Native, 1e-3, 1e-3 * f.common(kAr)));
  for (int i = 0; i < kTrialCalls; ++i) f.learn(call(Algo::Prr, 2e-3, 1e-3 * f.common(kAr)));
  const double verdict = f.own(kAr, Algo::Prr);
  EXPECT_NEAR(verdict, 2.0, 1e-12);
  EXPECT_EQ(f.calls(kAr, Algo::Prr), kTrialCalls);
  for (int i = 0; i < 500; ++i) f.learn(call(Algo::Native, 1e-3, 1e-3 * f.common(kAr)));
  EXPECT_EQ(f.own(kAr, Algo::Prr), verdict);
  EXPECT_EQ(f.calls(kAr, Algo::Prr), kTrialCalls);
  f.learn(call(Algo::Native, 3e-3, 1e-3 * f.common(kAr)));  // one outlier
  EXPECT_EQ(f.calls(kAr, Algo::Prr), kTrialCalls);
  int calls = 0;
  while (f.calls(kAr, Algo::Prr) > 0 && calls < 100) {
    f.learn(call(Algo::Native, 1.6e-3, 1e-3 * f.common(kAr)));
    ++calls;
  }
  EXPECT_EQ(f.calls(kAr, Algo::Prr), 0) << "never back on trial";
  EXPECT_EQ(f.own(kAr, Algo::Prr), 1.0);
  EXPECT_GE(calls, 2);  // not at the first slower call
  EXPECT_GT(f.regime(kAr), 1.25);
}

// The trial budget: a trial call is charged what it took beyond native's
// prediction for it (negative when faster); every modelled, measured call
// counts towards the time seen.  Trials are allowed while the charge is at
// most kTrialBudget of that time.
TEST(CostLearner, TrialBudget) {
  CostLearner f;
  EXPECT_TRUE(f.trial_allowed(kAr));
  auto call = [](Algo a, double measured, double native) {
    MeasuredCall c;
    c.coll = kAr;
    c.algo = a;
    c.predicted = 1e-3;
    c.measured = measured;
    c.native_predicted = native;
    return c;
  };
  f.learn(call(Algo::Native, 1e-3, 1e-3));
  f.learn(call(Algo::Native, 1e-3, 1e-3));
  EXPECT_DOUBLE_EQ(f.seen_time(kAr), 2e-3);
  EXPECT_EQ(f.trial_excess(kAr), 0.0);
  f.learn(call(Algo::Prr, 0.8e-3, 1e-3));  // a warm-up: teaches nothing, but is charged
  EXPECT_NEAR(f.trial_excess(kAr), -0.2e-3, 1e-15);
  EXPECT_TRUE(f.trial_allowed(kAr));
  f.learn(call(Algo::Slt, 2e-3, 1e-3));  // 1 ms beyond native out of 4.8 ms seen
  EXPECT_NEAR(f.trial_excess(kAr), 0.8e-3, 1e-15);
  EXPECT_FALSE(f.trial_allowed(kAr));
  EXPECT_TRUE(f.trial_allowed(kRd));  // per collective
  // Native's calls make room: 0.8 ms is 2% of 40 ms.
  while (f.seen_time(kAr) < 39.9e-3) f.learn(call(Algo::Native, 1e-3, 1e-3));
  EXPECT_TRUE(f.trial_allowed(kAr));
  // Past its trial an algorithm's calls are not charged; unmodelled calls
  // (predicted 0) are not seen; nor is a call without a measurement.
  const double seen = f.seen_time(kAr);
  for (int i = 1; i < kTrialCalls; ++i) f.learn(call(Algo::Prr, 0.8e-3, 1e-3));
  EXPECT_NEAR(f.trial_excess(kAr), 0.4e-3, 1e-15);  // the rest of its trial, 0.2 ms faster each call
  f.learn(call(Algo::Prr, 5e-3, 1e-3));  // past its trial
  EXPECT_NEAR(f.trial_excess(kAr), 0.4e-3, 1e-15);
  MeasuredCall unmodelled = call(Algo::Native, 1e-3, 0);
  unmodelled.predicted = 0;
  f.learn(unmodelled);
  f.learn(call(Algo::Native, kNaN, 1e-3));
  EXPECT_NEAR(f.seen_time(kAr), seen + (kTrialCalls - 1) * 0.8e-3 + 5e-3, 1e-15);
}

// A fixed sequence of calls gives the factors the rules in cost_learner.h
// give for it, as computed independently of this code (a transcription of
// the rules with the platform's pow, which agrees with portable_pow within
// 1e-14).  The sequence covers native's first calls, a trial with its
// warm-up, a mispredicted call, a call nothing modelled, and the regime
// changes that put PRR (call 9, native measured 200 times its model) and
// the sorted binomial tree (call 11, reduce's first native call) back on
// trial.
TEST(CostLearner, ReplayOfTheRules) {
  struct Call {
    Collective coll;
    Algo algo;
    double predicted, measured, reach;
  };
  const std::vector<Call> calls = {
      {kAr, Algo::Native, 1e-3, 1.3e-3, kNaN},  {kAr, Algo::Native, 1.2e-3, 1.5e-3, 0},
      {kAr, Algo::Prr, 1e-3, 2e-3, kNaN},       {kAr, Algo::Prr, 1e-3, 0.8e-3, 0},
      {kRd, Algo::SortedBinomial, 2e-3, 1e-3, kNaN}, {kAr, Algo::Prr, 1e-3, 0.9e-3, 5e-4},
      {kAr, Algo::Native, 1e-3, 1.1e-3, 0},     {kAr, Algo::Prr, 1e-3, 0.7e-3, kNaN},
      {kRd, Algo::SortedBinomial, 2e-3, 1e-3, 1e-4}, {kAr, Algo::Native, 1e-3, 0.2, kNaN},
      {kAg, Algo::Sparbit, 0, 1e-3, kNaN},      {kRd, Algo::Native, 1e-3, 1e-3, kNaN},
      {kAr, Algo::Prr, 1e-3, 0.75e-3, 0},       {kRd, Algo::SortedBinomial, 2e-3, 1.2e-3, kNaN},
  };
  // After each call: allreduce's common factor and native's count, PRR's
  // own factor and count, reduce's common factor and native's count, the
  // sorted binomial tree's own factor and count.
  const double expected[][8] = {
      {0x1.4ccccccccccccp+0, 1, 0x1p+0, 0, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf140p+0, 2, 0x1p+0, 0, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf140p+0, 2, 0x1p+0, 1, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf140p+0, 2, 0x1.999999999999ap-1, 2, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf140p+0, 2, 0x1.999999999999ap-1, 2, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.7414eb0abf140p+0, 2, 0x1.999999999999ap-1, 3, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb070p+0, 3, 0x1.999999999999ap-1, 3, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb070p+0, 3, 0x1.700902fb7cfe2p-1, 4, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb070p+0, 3, 0x1.700902fb7cfe2p-1, 4, 0x1.6a09e667f3bcdp-1, 0, 0x1.6a09e667f3bccp-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1p+0, 0, 0x1.6a09e667f3bcdp-1, 0, 0x1.6a09e667f3bccp-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1p+0, 0, 0x1.6a09e667f3bcdp-1, 0, 0x1.6a09e667f3bccp-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1p+0, 0, 0x1.6a09e667f3bcdp-1, 1, 0x1p+0, 0},
      {0x1.537e393197ca1p+3, 4, 0x1p+0, 1, 0x1.6a09e667f3bcdp-1, 1, 0x1p+0, 0},
      {0x1.537e393197ca1p+3, 4, 0x1p+0, 1, 0x1.6a09e667f3bcdp-1, 1, 0x1p+0, 1},
  };
  ASSERT_EQ(calls.size(), std::size(expected));
  CostLearner f;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    f.learn(MeasuredCall{c.coll, c.algo, c.predicted, c.measured, c.reach});
    const double got[8] = {f.common(kAr),
                           static_cast<double>(f.calls(kAr, Algo::Native)),
                           f.own(kAr, Algo::Prr),
                           static_cast<double>(f.calls(kAr, Algo::Prr)),
                           f.common(kRd),
                           static_cast<double>(f.calls(kRd, Algo::Native)),
                           f.own(kRd, Algo::SortedBinomial),
                           static_cast<double>(f.calls(kRd, Algo::SortedBinomial))};
    for (int k = 0; k < 8; ++k)
      EXPECT_NEAR(got[k], expected[i][k], 1e-14 * std::fabs(expected[i][k])) << "call " << i << ", value " << k;
  }
}

}  // namespace
}  // namespace papshim
