// The straggler allgather: its chunk counts, its message pattern, every
// count, size and arrival pattern, each rank's own program, and where it
// stands against Sparbit and the ring with one rank late (simulated).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/selector.h"
#include "algorithms/simulator.h"
#include "algorithms/straggler_allgather.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using test_support::late_rank;
using test_support::same_steps;

// An allgather of 128 Ki floats per block on P ranks over 1 Gbit/s-like
// links (alpha 50 us, beta 8 ns/B), everyone on time.
SelectInput gigabit_allgather(int P) {
  SelectInput in;
  in.coll = Collective::Allgather;
  in.nprocs = P;
  in.count = 1 << 17;  // floats per block
  in.elem_size = 4;
  in.cost = {50e-6, 8e-9, 0.3e-9};
  in.arrival.assign(static_cast<std::size_t>(P), 0.0);
  return in;
}

double block_time(const SelectInput& in) { return in.cost.alpha + in.cost.beta * 4.0 * static_cast<double>(in.count); }

// Algorithm a's simulated mean elapsed time on `in` (serial ports).
double simulated_mean(Algo a, const SelectInput& in) {
  const ScheduleParams p = schedule_params_for(a, in);
  const BuildResult b = build_schedule(a, p);
  EXPECT_TRUE(b.schedule) << b.reason;
  if (!b.schedule) return 0.0;
  const SimResult r = simulate(*b.schedule, p.arrival, SimCost::from_figures(in.cost, in.elem_size, in.count));
  EXPECT_TRUE(r.ok) << r.error;
  return r.mean_elapsed;
}

TEST(StragglerAllgather, ChunkCounts) {
  // 512 KiB blocks at P = 8: 16 chunks of 32 KiB wanted, one per owner (6).
  EXPECT_EQ(straggler_allgather_segments(8, 512.0 * 1024), 8 * 6);
  EXPECT_EQ(straggler_allgather_segments(8, 64.0 * 1024), 8 * 2);
  EXPECT_EQ(straggler_allgather_segments(8, 100.0), 8);
  EXPECT_EQ(straggler_allgather_segments(64, 1e12), 64 * kStragglerAllgatherMaxChunks);
  EXPECT_EQ(straggler_allgather_segments(4096, 1e12), 4096 * 2);
  EXPECT_EQ(straggler_allgather_segments(10000, 1e12), 10000);
  EXPECT_EQ(straggler_allgather_segments(2, 1e12), 2);
  EXPECT_EQ(straggler_allgather_segments(3, 1e12), 3);
  EXPECT_EQ(straggler_allgather_segments(1, 1e12), 1);
  ScheduleParams p = late_rank(8, 0, 0.0, 1000, 48);
  EXPECT_EQ(straggler_allgather_chunks(p), 6);
  p.count = 4;  // no empty chunk
  EXPECT_EQ(straggler_allgather_chunks(p), 4);
  p.count = 0;
  EXPECT_EQ(straggler_allgather_chunks(p), 1);
  p.count = 1000;
  p.nseg = 7;  // not a multiple of P: the hint rounds down, at least 1
  EXPECT_EQ(straggler_allgather_chunks(p), 1);
  p.nseg = 8000;
  EXPECT_EQ(straggler_allgather_chunks(p), 6);
}

// P = 5, rank 2 late, 3 chunks: the early ranks exchange whole blocks (3
// messages each way per pair); rank 2 sends chunk q to the (q+1)-th
// earliest, which passes it to the other three early ranks; the earliest
// (rank 0) sends rank 2 the four early blocks, 12 messages.
TEST(StragglerAllgather, MessagePattern) {
  ScheduleParams p = late_rank(5, 2, 0.05, 300, 15);
  const Schedule s = build_straggler_allgather(p);
  ASSERT_EQ(s.nseg, 15);
  EXPECT_EQ(s.coll, Collective::Allgather);
  EXPECT_EQ(s.tag_bound, 14);
  std::map<std::pair<int, int>, int> msgs;  // (from, to) -> messages
  for (int r = 0; r < 5; ++r)
    for (const Step& st : s.programs[static_cast<std::size_t>(r)].steps)
      if (st.op == StepOp::Send) ++msgs[{r, st.peer}];
  const int early[] = {0, 1, 3, 4};  // by arrival, ties by rank
  for (int a : early)
    for (int b : early)
      if (a != b) {
        // Phase 1, plus the chunk the owner a passes on (owners: 1, 3, 4).
        const int passes = a != 0 ? 1 : 0;
        EXPECT_EQ((msgs[{a, b}]), 3 + passes) << a << "->" << b;
      }
  EXPECT_EQ((msgs[{0, 2}]), 12);
  for (int a : {1, 3, 4}) EXPECT_EQ((msgs[{a, 2}]), 0) << a;
  for (int o : {1, 3, 4}) EXPECT_EQ((msgs[{2, o}]), 1) << o;
  EXPECT_EQ((msgs[{2, 0}]), 0);
  // The late rank receives every early chunk from the server only.
  int from_server = 0;
  for (const Step& st : s.programs[2].steps)
    if (st.op == StepOp::RecvCopy) from_server += st.peer == 0 ? 1 : -100;
  EXPECT_EQ(from_server, 12);
}

TEST(StragglerAllgather, EveryCountSizeAndArrival) {
  std::mt19937 rng(47);
  for (int P = 1; P <= 41; P += (P < 10 ? 1 : 8)) {
    for (std::size_t count : {0ul, 1ul, 2ul, 3ul, 7ul, 100ul, 4097ul}) {
      for (int pattern = 0; pattern < 4; ++pattern) {
        ScheduleParams p;
        p.nprocs = P;
        p.count = count;
        p.nseg = P * (1 + static_cast<int>(rng() % 10)) + static_cast<int>(rng() % 3);
        p.arrival = test_support::arrival_pattern(P, pattern, rng);
        const Schedule s = build_straggler_allgather(p);
        const std::string what = "P=" + std::to_string(P) + " count=" + std::to_string(count) +
                                 " pattern=" + std::to_string(pattern);
        ASSERT_EQ(static_cast<int>(s.programs.size()), P) << what;
        EXPECT_EQ(s.nseg % std::max(P, 1), 0) << what;
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::DataFlow), "") << what;
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::InOrder), "") << what;
        SimCost cost = SimCost::tau_steps(1.0);
        cost.count = count;
        const SimResult r = simulate(s, p.arrival, cost);
        EXPECT_TRUE(r.ok) << what << ": " << r.error;
        EXPECT_LE(s.max_tag(), s.nseg - 1) << what;
        if (pattern != 1) continue;
        for (int rank = 0; rank < P; ++rank) {
          ScheduleParams own = p;
          own.rank = rank;
          const Schedule o = build_straggler_allgather(own);
          EXPECT_TRUE(same_steps(o.programs[static_cast<std::size_t>(rank)].steps,
                                 s.programs[static_cast<std::size_t>(rank)].steps))
              << what << " rank " << rank;
          EXPECT_EQ(o.max_tag(), s.max_tag()) << what;
          EXPECT_EQ(o.nseg, s.nseg) << what;
        }
      }
    }
  }
}

// One of P ranks late on 1 Gbit/s-like links, 512 KiB blocks, late by more
// than the early ranks' exchange takes (2 P blocks): the early ranks leave
// about two block transfers after it arrives where Sparbit and the ring
// keep them for most of P-1, so the mean elapsed time drops; the late rank
// still takes in P-1 blocks.  Serial ports.
TEST(StragglerAllgather, AheadOfSparbitWithOneRankLate) {
  for (int P : {4, 8, 16}) {
    SelectInput in = gigabit_allgather(P);
    const double block = block_time(in);
    const double D = 2 * P * block;
    in.arrival[1] = D;
    auto mean = [&](Algo a) { return simulated_mean(a, in); };
    const double wait = (P - 1.0) / P * D;
    const double straggler = mean(Algo::StragglerAllgather) - wait;
    const double sparbit = mean(Algo::Sparbit) - wait, ring = mean(Algo::RingAllgather) - wait;
    // Early ranks: 2 to 3 blocks; the late rank and the server: P-1.
    EXPECT_LT(straggler, ((P - 2) * 3.0 + 2.0 * (P - 1)) / P * block) << P;
    EXPECT_LT(straggler, sparbit - 0.5 * block) << P;
    EXPECT_LT(straggler, ring - (P <= 4 ? 0.25 : 2.0) * block) << P;
    std::printf("  P %2d, one rank late by %.1f ms: after the wait straggler %.1f, sparbit %.1f, ring %.1f ms\n", P,
                1e3 * D, 1e3 * straggler, 1e3 * sparbit, 1e3 * ring);
  }
}

// Two or three ranks about equally late: the plan's late group simulates
// no slower than a group of 1 or of those k by more than 5%;
// every schedule of either group is correct and each rank's own program is
// the full build's.  A group of two where it pays (below); a second rank
// much earlier than the last stays early.
TEST(StragglerAllgather, SmallLateGroup) {
  for (int P : {5, 8, 13, 16}) {
    for (int k : {2, 3}) {
      if (k > (P - 1) / 2) continue;  // the group's limit
      for (std::size_t count : {3ul, 100ul, 1ul << 17}) {
        const int nseg = straggler_allgather_segments(P, 4.0 * static_cast<double>(count));
        ScheduleParams p = late_rank(P, 1, 0.05, count, nseg);
        for (int j = 1; j < k; ++j) p.arrival[static_cast<std::size_t>(P - j)] = 0.05 - 0.0001 * j;
        p.tau = 1e-3;
        const StragglerAllgatherPlan plan = straggler_allgather_plan(p);
        const std::string what =
            "P=" + std::to_string(P) + " k=" + std::to_string(k) + " count=" + std::to_string(count);
        EXPECT_EQ(plan.m + plan.late, P) << what;
        SimCost cost = SimCost::tau_steps(1e-3);
        cost.count = count;
        double mean[3];
        for (int g : {0, 1, 2}) {
          StragglerAllgatherPlan alt = plan;
          alt.late = g == 0 ? plan.late : g == 1 ? 1 : k;
          alt.m = P - alt.late;
          const Schedule s = build_straggler_allgather(p, alt);
          const std::string which = what + " group " + std::to_string(alt.late);
          EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::DataFlow), "") << which;
          EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::InOrder), "") << which;
          const SimResult r = simulate(s, p.arrival, cost);
          EXPECT_TRUE(r.ok) << which << ": " << r.error;
          mean[g] = r.mean_elapsed;
        }
        EXPECT_LE(mean[0], 1.05 * std::min(mean[1], mean[2])) << what << ": the plan's group " << plan.late;
        const Schedule s = build_straggler_allgather(p);
        for (int rank = 0; rank < P; ++rank) {
          ScheduleParams own = p;
          own.rank = rank;
          EXPECT_TRUE(same_steps(build_straggler_allgather(own).programs[static_cast<std::size_t>(rank)].steps,
                                 s.programs[static_cast<std::size_t>(rank)].steps))
              << what << " rank " << rank;
        }
      }
    }
  }
  ScheduleParams p = late_rank(8, 1, 0.05, 1 << 17, 48);
  p.arrival[2] = 0.01;  // 40 ms before the last: phase 1 has time
  p.tau = 1e-3;
  EXPECT_EQ(straggler_allgather_plan(p).late, 1);
  p.arrival[2] = 0.0499;
  EXPECT_EQ(straggler_allgather_plan(p).late, 2);

  // Two of 8 late on 1 Gbit/s-like links, 512 KiB blocks: a group of two,
  // ahead of Sparbit by more than a block transfer.
  SelectInput in = gigabit_allgather(8);
  const double block = block_time(in), D = 16 * block;
  in.arrival[2] = in.arrival[5] = D;
  auto mean = [&](Algo a) { return simulated_mean(a, in); };
  ScheduleParams sp = schedule_params_for(Algo::StragglerAllgather, in);
  EXPECT_EQ(straggler_allgather_plan(sp).late, 2);
  const double two = mean(Algo::StragglerAllgather), sparbit = mean(Algo::Sparbit);
  EXPECT_LT(two, sparbit - block);
  const double wait = 6.0 / 8.0 * D;
  std::printf("  two of 8 late by %.1f ms: after the wait straggler %.1f ms, sparbit %.1f ms\n", 1e3 * D,
              1e3 * (two - wait), 1e3 * (sparbit - wait));
}

// Auto mode: with one of 8 ranks 50 ms late it is the allgather pick (its
// own program only); with balanced arrivals it is not weighed at all.
TEST(StragglerAllgather, AutoPicksItForOneVeryLateRankOnly) {
  SelectInput in = gigabit_allgather(8);
  in.arrival[3] = 0.05;
  in.rank = 3;
  const Selection s = select_algorithm(in);
  EXPECT_EQ(s.pick, Algo::StragglerAllgather) << format_selection(s);
  ASSERT_TRUE(s.schedule);
  EXPECT_EQ(s.schedule->nseg, 48);
  EXPECT_EQ(s.schedule->programs[3].steps.size(), 6u + 7u * 6u);  // the late rank's own program only
  EXPECT_TRUE(s.schedule->programs[0].steps.empty());
  in.simulate = true;
  EXPECT_EQ(select_algorithm(in).pick, Algo::StragglerAllgather);
  in.arrival.assign(8, 0.0);
  for (bool sim : {false, true}) {
    in.simulate = sim;
    const Selection b = select_algorithm(in);
    for (const Candidate& c : b.table) EXPECT_NE(c.algo, Algo::StragglerAllgather) << format_selection(b);
  }
  // Above kStragglerAllgatherAutoMaxP ranks it is not weighed either.
  in.simulate = false;
  in.nprocs = 2 * kStragglerAllgatherAutoMaxP;
  in.count = 1 << 13;
  in.arrival.assign(static_cast<std::size_t>(in.nprocs), 0.0);
  in.arrival[3] = 0.5;
  const Selection big = select_algorithm(in);
  for (const Candidate& c : big.table) EXPECT_NE(c.algo, Algo::StragglerAllgather) << format_selection(big);
  EXPECT_FALSE(big.table.empty());
}

}  // namespace
}  // namespace papshim
