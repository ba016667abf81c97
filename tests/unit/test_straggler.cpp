// The straggler allreduce: its segment counts, its message pattern, every
// count and size, and how close it comes to the lower bound with one rank
// late (simulated).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/prr.h"
#include "algorithms/selector.h"
#include "algorithms/simulator.h"
#include "algorithms/straggler.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using test_support::late_rank;

TEST(Straggler, SegmentCounts) {
  // 4 MiB over 7 owners: 5 chunks of about 128 KiB per slice.
  EXPECT_EQ(straggler_segments(8, 4.0 * 1024 * 1024), 35);
  EXPECT_EQ(straggler_segments(8, 1000.0), 7);
  EXPECT_EQ(straggler_segments(2, 1e12), kStragglerMaxChunks);
  EXPECT_EQ(straggler_segments(1, 1e6), 1);
  EXPECT_LE(straggler_segments(4096, 1e12), kStragglerMaxSegments);
  ScheduleParams p = late_rank(8, 3, 1.0, 1 << 20, 35);
  EXPECT_EQ(straggler_chunks(p, 7), 5);
  p.nseg = 1000;  // more than the chunk limit
  EXPECT_EQ(straggler_chunks(p, 7), kStragglerMaxChunks);
  p.count = 20;  // 2 elements per owner: 2 chunks
  EXPECT_EQ(straggler_chunks(p, 7), 2);
  p.count = 3;  // fewer elements than owners: 1 chunk (some empty)
  EXPECT_EQ(straggler_chunks(p, 7), 1);
}

// The late rank sends each segment once, to its owner, and receives each
// segment once; every owner sends its finished chunks to every other rank.
TEST(Straggler, MessagePattern) {
  const int P = 8, late = 3;
  const ScheduleParams p = late_rank(P, late, 1.0, 1 << 20, 35);
  const Schedule s = build_straggler(p);
  const StragglerPlan plan = straggler_plan(p);
  ASSERT_EQ(plan.order.back(), late);
  ASSERT_EQ(s.nseg, 35);
  std::set<int> sent, copied;
  for (const Step& st : s.programs[late].steps) {
    EXPECT_EQ(st.peer, plan.order[static_cast<std::size_t>(st.seg / plan.chunks)]);
    (st.op == StepOp::Send ? sent : copied).insert(st.seg);
    EXPECT_NE(st.op, StepOp::RecvReduce);
  }
  EXPECT_EQ(sent.size(), 35u);
  EXPECT_EQ(copied.size(), 35u);
  EXPECT_EQ(s.programs[late].steps.size(), 70u);
  for (int id = 0; id < P - 1; ++id) {
    const int r = plan.order[static_cast<std::size_t>(id)];
    std::map<int, int> finished_to;  // peer -> finished chunks sent
    for (const Step& st : s.programs[static_cast<std::size_t>(r)].steps)
      if (st.op == StepOp::Send && st.tag >= s.nseg) {
        EXPECT_EQ(st.seg / plan.chunks, id);
        ++finished_to[st.peer];
      }
    EXPECT_EQ(finished_to.size(), static_cast<std::size_t>(P - 1)) << "owner " << r;
    for (const auto& [peer, n] : finished_to) EXPECT_EQ(n, plan.chunks) << "owner " << r << " to " << peer;
  }
}

TEST(Straggler, EveryCountAndSize) {
  std::mt19937 rng(31);
  for (int P = 1; P <= 33; P += (P < 9 ? 1 : 8)) {
    for (std::size_t count : {0ul, 1ul, 2ul, 5ul, 31ul, 32ul, 33ul, 1000ul, 4097ul}) {
      for (int pattern = 0; pattern < 4; ++pattern) {
        ScheduleParams p;
        p.nprocs = P;
        p.count = count;
        p.nseg = 1 + static_cast<int>(rng() % 300);
        p.arrival = test_support::arrival_pattern(P, pattern, rng);
        const Schedule s = build_straggler(p);
        const std::string what = "P=" + std::to_string(P) + " count=" + std::to_string(count);
        ASSERT_EQ(static_cast<int>(s.programs.size()), P) << what;
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::DataFlow), "") << what;
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::InOrder), "") << what;
        SimCost cost = SimCost::tau_steps(1.0);
        cost.count = count;
        const SimResult r = simulate(s, p.arrival, cost);
        EXPECT_TRUE(r.ok) << what << ": " << r.error;
        EXPECT_LE(s.max_tag(), 2 * s.nseg - 1) << what;
      }
    }
  }
}

TEST(Straggler, EqualArrivalsMakeTheHighestRankLate) {
  ScheduleParams p = late_rank(6, 0, 0.0, 600, 5);
  EXPECT_EQ(straggler_plan(p).order.back(), 5);
}

// One rank late by D: after D the straggler needs little more than one
// transfer of the vector without port limits.  With one message per port
// every port is busy for about one transfer after D and the ports wait for
// each other: still ahead of PRR (about two transfers) up to P = 8, level
// at P = 16.
TEST(Straggler, CloseToTheBoundWithOneRankLate) {
  for (int P : {4, 8, 16}) {
    SelectInput in;
    in.nprocs = P;
    in.count = 1 << 20;
    in.elem_size = 4;
    in.cost.alpha = 50e-6;
    in.cost.beta = 8e-9;
    in.cost.gamma = 0.3e-9;
    in.arrival.assign(static_cast<std::size_t>(P), 0.0);
    in.arrival[1] = 0.05;
    const double transfer = in.cost.alpha + in.cost.beta * 4.0 * (1 << 20);
    const double bound = (P - 1.0) / P * 0.05 + transfer;
    SimCost c = SimCost::from_figures(in.cost, in.elem_size, in.count);
    auto mean = [&](Algo a, bool serial) {
      c.serial_ports = serial;
      const ScheduleParams p = schedule_params_for(a, in);
      const BuildResult b = build_schedule(a, p);
      EXPECT_TRUE(b.schedule);
      const SimResult r = simulate(*b.schedule, p.arrival, c);
      EXPECT_TRUE(r.ok) << r.error;
      return r.mean_elapsed;
    };
    EXPECT_LT(mean(Algo::Straggler, false), bound + 0.25 * transfer) << P;
    if (P <= 8) {
      EXPECT_LT(mean(Algo::Straggler, true), mean(Algo::Prr, true) - 0.1 * transfer) << P;
    }
    EXPECT_LT(mean(Algo::Straggler, true), mean(Algo::Prr, true) + 0.1 * transfer) << P;
  }
}

// Two or three ranks about equally late form the late group (each sends its
// vector to the owners); a second rank much earlier than the last stays an
// owner.  Every such schedule is correct and each rank's own program is the
// full build's.
TEST(Straggler, SmallLateGroup) {
  for (int P : {5, 8, 13, 16}) {
    for (int k : {2, 3}) {
      if (k > (P - 1) / 2) continue;  // the group's limit
      for (std::size_t count : {3ul, 100ul, 1000000ul}) {
        ScheduleParams p = late_rank(P, 1, 0.05, count, straggler_segments(P, 4.0 * static_cast<double>(count)));
        for (int j = 1; j < k; ++j) p.arrival[static_cast<std::size_t>(P - j)] = 0.05 - 0.0001 * j;
        p.tau = 1e-3;
        const StragglerPlan plan = straggler_plan(p);
        const std::string what = "P=" + std::to_string(P) + " k=" + std::to_string(k) + " count=" + std::to_string(count);
        EXPECT_EQ(plan.late, k) << what;
        EXPECT_EQ(plan.owners + plan.late, P) << what;
        const Schedule s = build_straggler(p);
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::DataFlow), "") << what;
        EXPECT_EQ(test_support::check_schedule(s, test_support::CheckModel::InOrder), "") << what;
        SimCost cost = SimCost::tau_steps(1e-3);
        cost.count = count;
        EXPECT_TRUE(simulate(s, p.arrival, cost).ok) << what;
        for (int r = 0; r < P; ++r) {
          ScheduleParams own = p;
          own.rank = r;
          const Schedule o = build_straggler(own);
          EXPECT_TRUE(test_support::same_steps(o.programs[static_cast<std::size_t>(r)].steps,
                                               s.programs[static_cast<std::size_t>(r)].steps))
              << what << " rank " << r;
          EXPECT_EQ(o.max_tag(), s.max_tag()) << what;
        }
      }
    }
  }
  ScheduleParams p = late_rank(8, 1, 0.05, 1 << 20, 35);
  p.arrival[2] = 0.01;  // 40 ms before the last: phase 1 has time
  p.tau = 1e-3;
  EXPECT_EQ(straggler_plan(p).late, 1);
}

// Auto mode: with one of 8 ranks 50 ms late on 1 Gbit/s links the
// straggler is the pick, and it simulates faster than PRR; with all ranks
// on time it stays out.
TEST(Straggler, AutoPicksItForOneVeryLateRank) {
  SelectInput in;
  in.nprocs = 8;
  in.count = 1 << 20;
  in.elem_size = 4;
  in.cost = {50e-6, 8e-9, 0.3e-9};
  in.arrival.assign(8, 0.0);
  in.arrival[3] = 0.05;
  in.rank = 3;
  const Selection s = select_algorithm(in);
  EXPECT_EQ(s.pick, Algo::Straggler) << format_selection(s);
  ASSERT_TRUE(s.schedule);
  EXPECT_EQ(s.schedule->nseg, 35);
  EXPECT_EQ(s.schedule->programs[3].steps.size(), 70u);  // the late rank's own program only
  in.simulate = true;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Straggler);
  in.arrival.assign(8, 0.0);
  EXPECT_NE(select_algorithm(in).pick, Algo::Straggler);
}

}  // namespace
}  // namespace papshim
