// Tests for the reduce trees: the binomial reduce schedule and the sorted
// binomial tree.
//
// Every schedule is checked by the independent symbolic checker of
// support/schedule_check.h, in program order and under the executor's
// data-flow rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms/binomial_reduce.h"
#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using test_support::params_for;
using test_support::random_arrivals;

std::string check_both(const Schedule& s) { return test_support::check_schedule_both(s); }

// --------------------------------------------------------- binomial reduce --

TEST(BinomialReduce, CorrectForEveryRootUpTo70Ranks) {
  for (int P = 1; P <= 70; ++P)
    for (int root = 0; root < P; ++root)
      for (int nseg : {1, 3}) {
        auto p = params_for(P);
        p.root = root;
        p.nseg = nseg;
        auto s = build_binomial_reduce(p);
        ASSERT_EQ(s.nseg, nseg);
        ASSERT_EQ(s.root, root);
        EXPECT_EQ(check_both(s), "") << "P=" << P << " root=" << root << " nseg=" << nseg;
      }
}

TEST(BinomialReduce, SegmentCountClampedToCount) {
  auto p = params_for(4);
  p.count = 2;
  p.nseg = 8;
  EXPECT_EQ(build_binomial_reduce(p).nseg, 2);
  p.nseg = 0;
  EXPECT_EQ(build_binomial_reduce(p).nseg, 1);
}

// -------------------------------------------------- sorted binomial reduce --

TEST(SortedBinomialReduce, PositionsArePermutationWithRootOnTop) {
  for (int P = 1; P <= 40; ++P)
    for (int root : {0, P / 2, P - 1}) {
      auto p = params_for(P);
      p.root = root;
      p.arrival = random_arrivals(P, static_cast<unsigned>(P * 7 + root));
      auto pos = sorted_binomial_positions(p);
      ASSERT_EQ(pos.size(), static_cast<std::size_t>(P));
      EXPECT_EQ(pos[0], root);
      auto sorted = pos;
      std::sort(sorted.begin(), sorted.end());
      for (int r = 0; r < P; ++r) EXPECT_EQ(sorted[static_cast<std::size_t>(r)], r) << "P=" << P;
    }
}

TEST(SortedBinomialReduce, CorrectForEveryRootAndRandomArrivals) {
  for (int P = 1; P <= 40; ++P)
    for (int root = 0; root < P; ++root)
      for (int nseg : {1, 3}) {
        auto p = params_for(P);
        p.root = root;
        p.nseg = nseg;
        p.arrival = random_arrivals(P, static_cast<unsigned>(P * 131 + root * 7 + nseg));
        auto s = build_sorted_binomial_reduce(p);
        ASSERT_EQ(s.nseg, nseg);
        EXPECT_EQ(check_both(s), "") << "P=" << P << " root=" << root << " nseg=" << nseg;
      }
}

// Every rank that receives (except the root) arrives no later than the
// children it receives from: a child never waits for an absent parent.
TEST(SortedBinomialReduce, ParentsArriveBeforeTheirChildren) {
  for (int P = 2; P <= 40; ++P) {
    auto p = params_for(P);
    p.root = P / 3;
    p.nseg = 1;
    p.tau = 0;  // exact order
    p.arrival = random_arrivals(P, static_cast<unsigned>(P));
    const auto s = build_sorted_binomial_reduce(p);
    for (int r = 0; r < P; ++r) {
      if (r == p.root) continue;
      for (const Step& st : s.programs[static_cast<std::size_t>(r)].steps) {
        if (st.op != StepOp::RecvReduce) continue;
        EXPECT_LE(p.arrival[static_cast<std::size_t>(r)], p.arrival[static_cast<std::size_t>(st.peer)])
              << "P=" << P << " parent " << r << " child " << st.peer;
      }
    }
  }
}

// Arrivals within half a whole-vector transfer of each other (prediction
// noise) give exactly the plain binomial tree, call after call.
TEST(SortedBinomialReduce, NoiseKeepsThePlainTree) {
  for (int P = 1; P <= 40; ++P)
    for (int root : {0, P / 2, P - 1}) {
      auto p = params_for(P);
      p.root = root;
      p.tau = 1.0;
      p.nseg = 2;  // bucket width 1.0 > the spread of random_arrivals
      p.arrival = random_arrivals(P, static_cast<unsigned>(P + root));
      const auto pos = sorted_binomial_positions(p);
      for (int v = 0; v < P; ++v) EXPECT_EQ(pos[static_cast<std::size_t>(v)], (v + root) % P) << "P=" << P;
      const Schedule sorted = build_sorted_binomial_reduce(p), plain = build_binomial_reduce(p);
      for (int r = 0; r < P; ++r) {
        const auto& a = sorted.programs[static_cast<std::size_t>(r)].steps;
        const auto& b = plain.programs[static_cast<std::size_t>(r)].steps;
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].op == b[i].op && a[i].peer == b[i].peer);
      }
    }
}

// One late rank sends straight to the root and to nobody else, and the
// root is the only rank that receives from it; in rank order the late rank 3
// of 8 sits under rank 2, which has to wait for it.
TEST(SortedBinomialReduce, LateRankSendsStraightToTheRoot) {
  auto p = params_for(8);
  p.nseg = 4;
  p.count = 64;
  p.tau = 1.0;  // bucket width 2: rank 3 is late, the others are level
  p.arrival[3] = 5.0;
  p.arrival[6] = 1.5;
  const auto s = build_sorted_binomial_reduce(p);
  for (const Step& st : s.programs[3].steps) {
    EXPECT_EQ(st.op, StepOp::Send);
    EXPECT_EQ(st.peer, 0);
  }
  for (int r = 1; r < 8; ++r)
    for (const Step& st : s.programs[static_cast<std::size_t>(r)].steps) EXPECT_NE(st.peer, 3) << "rank " << r;
  // Mean elapsed in the simulator: only the root waits for the late rank.
  const SimCost cost = SimCost::tau_steps(1.0);
  const SimResult sorted = simulate(s, p.arrival, cost);
  const SimResult plain = simulate(build_binomial_reduce(p), p.arrival, cost);
  ASSERT_TRUE(sorted.ok && plain.ok) << sorted.error << plain.error;
  EXPECT_LT(sorted.mean_elapsed, plain.mean_elapsed);
}

}  // namespace
}  // namespace papshim
