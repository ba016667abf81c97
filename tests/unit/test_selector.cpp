// Tests for auto mode's selector (algorithms/selector.h).
#include <gtest/gtest.h>

#include <cmath>
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

TEST(Selector, BalancedKeepsNative) {
  const Selection s = select_algorithm(one_late(Collective::Allreduce, 0.0));
  EXPECT_EQ(s.pick, Algo::Native);
  EXPECT_NE(s.why.find("balanced"), std::string::npos) << s.why;
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

// Native's measured correction carries over to the untried sorted binomial
// tree (for reduce), and not to the other candidates.
TEST(Selector, SortedBinomialStartsFromNativeCorrection) {
  SelectInput in = one_late(Collective::Reduce, 0.020);
  in.correction[static_cast<int>(Collective::Reduce) * 64 + static_cast<int>(Algo::Native)] = 0.5;
  const Selection s = select_algorithm(in);
  for (const auto& c : s.table) {
    const double expected = c.algo == Algo::SortedBinomial || c.native_model ? 0.5 : 1.0;
    EXPECT_EQ(c.correction, expected) << algo_info(c.algo).name;
  }
  in.correction[static_cast<int>(Collective::Reduce) * 64 + static_cast<int>(Algo::SortedBinomial)] = 0.8;
  for (const auto& c : select_algorithm(in).table) {
    if (c.algo == Algo::SortedBinomial) {
      EXPECT_EQ(c.correction, 0.8);
    }
  }
  // The collective's common factor multiplies every candidate's own.
  in.correction[static_cast<int>(Collective::Reduce) * 64 + kCommonCorrection] = 2.0;
  for (const auto& c : select_algorithm(in).table) {
    const double own = c.algo == Algo::SortedBinomial ? 0.8 : c.native_model ? 0.5 : 1.0;
    EXPECT_DOUBLE_EQ(c.correction, 2.0 * own) << algo_info(c.algo).name;
  }
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

}  // namespace
}  // namespace papshim
