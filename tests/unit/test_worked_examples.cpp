// The worked examples of the PRR/SLT seed (prr-slt-allreduce.txt, section 4,
// figures 6 and 8), run through the simulator with the real generators.
//
// Works as follows.  Each test builds the schedule the seed draws, with
// P = 4 and process 0 late, and simulates it in tau units
// (SimCost::tau_steps(1)).  The figures' totals are max exit time minus the
// earliest arrival (0 here).
//
// What the figures say and what the model gives:
//   figure 8 (0 late by 2 tau)   ring 8, PRR 7
//   figure 6 (0 late by 4 tau)   linear tree 14, SLT 12
// Serial ports (the default, one message per port and direction at a time):
// ring 8, PRR 9, linear tree 13, SLT 11.  Unlimited ports: ring 8, PRR 7,
// linear tree 10, SLT 8.  No single port model gives all four numbers:
//   - PRR 7 needs the late process to take in several segments at once.  In
//     the PRR plan of figure 8 (slices 0-2 start at the first process and
//     end at the late one, slice 3 ends at the first) all four slices must
//     enter the late process, which arrives at 2.  With one incoming message
//     at a time the fourth enters at 5 at the earliest, and its final value
//     still has to travel three hops around the ring: 9.  So 7 holds only if
//     transfers into one process overlap, i.e. a pure latency model.
//   - Linear tree 14 cannot come from the figure 5 listing in any model: the
//     late process starts at 4, sends its P = 4 segments one per tau, and the
//     last one needs 2P - 2 = 6 more hops: 4 + 3 + 6 = 13 with serial ports,
//     less without.  SLT likewise gives 11.  The figure presumably draws one
//     more hop or step; the saving SLT brings, 2 tau, is the same.
// The serial model is kept as the default because it also reproduces the
// seed's measurements (table 3, P = 48, one process late): SLT clearly
// slower than ring when nobody is late, PRR equal to ring, and both ahead of
// ring by a bounded amount once the delay is large.  The latency model
// predicts SLT beating ring with balanced arrivals, which the measurements
// contradict.
#include <gtest/gtest.h>

#include <vector>

#include "algorithms/prr.h"
#include "algorithms/ring_allreduce.h"
#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "algorithms/slt.h"

namespace papshim {
namespace {

using Builder = Schedule (*)(const ScheduleParams&);

ScheduleParams one_late(int P, int late, double delay) {
  ScheduleParams p;
  p.nprocs = P;
  p.arrival.assign(static_cast<std::size_t>(P), 0.0);
  p.arrival[static_cast<std::size_t>(late)] = delay;
  p.tau = 1.0;
  return p;
}

SimResult run(Builder build, const ScheduleParams& p, bool serial = true) {
  SimCost cost = SimCost::tau_steps(1.0);
  cost.serial_ports = serial;
  return simulate(build(p), p.arrival, cost);
}

double total(Builder build, const ScheduleParams& p, bool serial) {
  const SimResult r = run(build, p, serial);
  EXPECT_TRUE(r.ok) << r.error;
  return r.max_exit;
}

TEST(WorkedExamples, Figure8RingAndPrr) {
  const ScheduleParams p = one_late(4, 0, 2.0);
  EXPECT_DOUBLE_EQ(total(build_ring_allreduce, p, true), 8.0);
  EXPECT_DOUBLE_EQ(total(build_ring_allreduce, p, false), 8.0);
  EXPECT_DOUBLE_EQ(total(build_prr, p, false), 7.0);  // the figure's 7 tau
  EXPECT_DOUBLE_EQ(total(build_prr, p, true), 9.0);   // see the header
}

TEST(WorkedExamples, Figure6LinearTreeAndSlt) {
  const ScheduleParams p = one_late(4, 0, 4.0);
  const double lt = total(build_linear_tree, p, true), slt = total(build_slt, p, true);
  EXPECT_DOUBLE_EQ(lt, 13.0);
  EXPECT_DOUBLE_EQ(slt, 11.0);
  EXPECT_DOUBLE_EQ(lt - slt, 14.0 - 12.0);  // the figure's saving
  EXPECT_DOUBLE_EQ(total(build_linear_tree, p, false), 10.0);
  EXPECT_DOUBLE_EQ(total(build_slt, p, false), 8.0);
}

// Balanced arrivals: ring takes 2(P - 1) steps, PRR is the ring, the linear
// tree pushes P segments through a 2P - 2 hop pipeline.
TEST(WorkedExamples, BalancedArrivals) {
  for (int P = 2; P <= 9; ++P) {
    const ScheduleParams p = one_late(P, 0, 0.0);
    EXPECT_DOUBLE_EQ(total(build_ring_allreduce, p, true), 2.0 * (P - 1)) << "P=" << P;
    EXPECT_DOUBLE_EQ(total(build_prr, p, true), 2.0 * (P - 1)) << "P=" << P;
    EXPECT_DOUBLE_EQ(total(build_slt, p, true), (P - 1) + 2.0 * (P - 1)) << "P=" << P;
  }
}

// Table 3 of the seed, P = 48, process 1 late, mean elapsed time.
TEST(WorkedExamples, Table3Shape) {
  auto mean = [](Builder b, double delay) {
    const SimResult r = run(b, one_late(48, 1, delay));
    EXPECT_TRUE(r.ok) << r.error;
    return r.mean_elapsed;
  };
  // Nobody late: PRR is the ring, SLT is about a quarter slower.
  EXPECT_DOUBLE_EQ(mean(build_prr, 0), mean(build_ring_allreduce, 0));
  EXPECT_GT(mean(build_slt, 0), 1.2 * mean(build_ring_allreduce, 0));
  // Late by 10 tau: PRR ahead of ring, SLT still behind.
  EXPECT_LT(mean(build_prr, 10), mean(build_ring_allreduce, 10));
  EXPECT_GT(mean(build_slt, 10), mean(build_ring_allreduce, 10));
  // Late by far more than P tau: PRR and SLT coincide and save a bounded
  // amount, the same for every large delay.
  const double save100 = mean(build_ring_allreduce, 100) - mean(build_prr, 100);
  const double save500 = mean(build_ring_allreduce, 500) - mean(build_prr, 500);
  EXPECT_DOUBLE_EQ(mean(build_prr, 100), mean(build_slt, 100));
  EXPECT_GT(save100, 0.0);
  EXPECT_NEAR(save100, save500, 1e-9);
}

}  // namespace
}  // namespace papshim
