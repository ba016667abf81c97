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

// A call nothing modelled (predicted 0) teaches and counts nothing; the own
// factors of every collective drift towards 1 all the same.
TEST(CostLearner, UnmodelledCallOnlyDrifts) {
  CostLearner f;
  f.set_own(kRd, Algo::SortedBinomial, 2.0);
  f.set_own(kAr, Algo::Prr, 0.5);
  f.set_common(kAr, 1.5);
  MeasuredCall call;
  call.algo = Algo::Prr;
  call.measured = 1e-3;
  f.learn(call);
  EXPECT_EQ(f.own(kRd, Algo::SortedBinomial), portable_pow(2.0, 0.98));
  EXPECT_EQ(f.own(kAr, Algo::Prr), portable_pow(0.5, 0.98));
  EXPECT_EQ(f.common(kAr), 1.5);
  EXPECT_EQ(f.calls(kAr, Algo::Prr), 0);
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

// A fixed sequence of calls gives the factors the learner's first form (an
// unordered_map<int, double> keyed coll * 64 + ..., updated by
// predictor.cpp's update_corrections) gave for it.  That form computed its
// powers with std::pow, the learner now with portable_pow (the same on every
// rank's CPU, portable_math.h), which agrees within 1e-14: the values below
// are the first form's, bit for bit, and must match within that.
TEST(CostLearner, SameFactorsAsTheKeyedMap) {
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
      {0x1.7414eb0abf14p+0, 2, 0x1p+0, 0, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf14p+0, 2, 0x1p+0, 1, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf14p+0, 2, 0x1.999999999999ap-1, 2, 0x1p+0, 0, 0x1p+0, 0},
      {0x1.7414eb0abf14p+0, 2, 0x1.9b6e9c9ab9a53p-1, 2, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.7414eb0abf14p+0, 2, 0x1.9d3c474a57713p-1, 3, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb07p+0, 3, 0x1.9f02acd352cb5p-1, 3, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb07p+0, 3, 0x1.74e588ba7b47cp-1, 4, 0x1p+0, 0, 0x1p+0, 1},
      {0x1.8017b17deb07p+0, 3, 0x1.7744ba52ce4f4p-1, 4, 0x1.6a09e667f3bcdp-1, 0, 0x1.6a09e667f3bccp-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1.799b864944177p-1, 4, 0x1.6a09e667f3bcdp-1, 0, 0x1.6c8e8db9f3aaep-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1.7be9f75e1a611p-1, 4, 0x1.6a09e667f3bcdp-1, 0, 0x1.6f0aaa0b9fccbp-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1.7e30191373c73p-1, 4, 0x1.6a09e667f3bcdp-1, 1, 0x1.717e424b57df9p-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1.5e962a5accf36p-1, 5, 0x1.6a09e667f3bcdp-1, 1, 0x1.73e95e573e87p-1, 2},
      {0x1.537e393197ca1p+3, 4, 0x1.61408b6a9422p-1, 5, 0x1.6a09e667f3bcdp-1, 1, 0x1.5202be194944ep-1, 3},
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
