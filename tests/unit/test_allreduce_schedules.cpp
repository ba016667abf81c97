// Tests for the allreduce schedules: SLT, plain linear tree, PRR, ring,
// Rabenseifner, direct and straggler.
//
// Every schedule is checked by the independent symbolic checker of
// support/schedule_check.h (in program order and under the executor's
// data-flow rules: every rank must end with every contribution exactly once
// and all ranks with the same reduction tree).
// The simulator (simulator.h) runs every schedule as well, in both port models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/arrival_order.h"
#include "algorithms/direct_allreduce.h"
#include "algorithms/prr.h"
#include "algorithms/rabenseifner.h"
#include "algorithms/ring_allreduce.h"
#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "algorithms/slt.h"
#include "algorithms/straggler.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using test_support::check_schedule;
using test_support::CheckModel;

std::vector<double> arrivals(int P, int pattern, std::mt19937& rng) {
  return test_support::arrival_pattern(P, pattern, rng);
}

struct Builder {
  const char* name;
  std::function<Schedule(const ScheduleParams&)> build;
  int nseg_for(const ScheduleParams& params) const {  // the documented segment count
    const int P = params.nprocs;
    if (std::string(name) == "straggler") return straggler_plan(params).nseg;
    if (std::string(name) != "rabenseifner") return P;
    int p = 1;
    while (2 * p <= P) p *= 2;
    return p;
  }
};

const std::vector<Builder>& builders() {
  static const std::vector<Builder> all = {
      {"slt", build_slt},
      {"linear_tree", build_linear_tree},
      {"prr", build_prr},
      {"ring", build_ring_allreduce},
      {"rabenseifner", build_rabenseifner},
      {"direct", build_direct_allreduce},
      {"straggler", build_straggler},
  };
  return all;
}


void expect_correct(const Builder& b, const ScheduleParams& p, const std::string& what) {
  const Schedule s = b.build(p);
  ASSERT_EQ(static_cast<int>(s.programs.size()), p.nprocs) << what;
  EXPECT_EQ(s.nseg, b.nseg_for(p)) << what;
  EXPECT_LE(s.max_tag(), 4 * s.nseg) << what;
  for (bool in_order : {true, false}) {
    const std::string err = check_schedule(s, in_order ? CheckModel::InOrder : CheckModel::DataFlow);
    EXPECT_TRUE(err.empty()) << what << (in_order ? " in order: " : " data flow: ") << err;
  }
  for (bool serial : {true, false}) {
    SimCost cost = SimCost::tau_steps(1.0);
    cost.serial_ports = serial;
    cost.count = 3 * static_cast<std::size_t>(s.nseg);
    const SimResult res = simulate(s, p.arrival, cost);
    EXPECT_TRUE(res.ok) << what << " simulator: " << res.error;
  }
}

std::string label(const char* name, int P, const std::vector<double>& a, double tau) {
  std::ostringstream os;
  os << name << " P=" << P << " tau=" << tau << " arrival=(";
  for (double x : a) os << x << ' ';
  os << ')';
  return os.str();
}

TEST(AllreduceSchedules, CorrectForManyArrivals) {
  std::mt19937 rng(20240611);
  for (int P = 1; P <= 16; ++P)
    for (int trial = 0; trial < 42; ++trial) {
      ScheduleParams p;
      p.nprocs = P;
      p.count = 1000;
      p.arrival = arrivals(P, trial, rng);
      p.tau = trial % 3 == 0 ? 1.0 : trial % 3 == 1 ? 0.37 : 4.0;
      for (const Builder& b : builders()) {
        expect_correct(b, p, label(b.name, P, p.arrival, p.tau));
        if (HasFailure()) return;
      }
    }
}

TEST(AllreduceSchedules, CheckerCatchesBrokenSchedules) {
  ScheduleParams p;
  p.nprocs = 4;
  const Schedule good = build_ring_allreduce(p);
  auto fails = [](const Schedule& s) {
    return !check_schedule(s, CheckModel::InOrder).empty() && !check_schedule(s, CheckModel::DataFlow).empty();
  };
  Schedule s = good;  // a reduction becomes a copy: contributions lost
  s.programs[1].steps[1].op = StepOp::RecvCopy;
  EXPECT_TRUE(fails(s));
  s = good;  // a send before the receive it should forward: partial sum
  std::swap(s.programs[2].steps[1], s.programs[2].steps[2]);
  EXPECT_TRUE(fails(s));
  s = good;  // every rank receives first: nobody sends
  for (auto& prog : s.programs) std::reverse(prog.steps.begin(), prog.steps.end());
  EXPECT_TRUE(fails(s));
  s = good;  // a tag used twice on one pair
  s.programs[0].steps[2].tag = s.programs[0].steps[0].tag;
  EXPECT_TRUE(fails(s));
  s = good;  // a send and its receive dropped
  const Step dropped = s.programs[3].steps[0];
  s.programs[3].steps.erase(s.programs[3].steps.begin());
  auto& peer = s.programs[static_cast<std::size_t>(dropped.peer)].steps;
  peer.erase(std::find_if(peer.begin(), peer.end(), [&](const Step& st) {
    return st.op != StepOp::Send && st.peer == 3 && st.tag == dropped.tag;
  }));
  EXPECT_TRUE(fails(s));
}

TEST(AllreduceSchedules, OddInputsStillGiveCorrectSchedules) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int P : {2, 3, 5, 8}) {
    std::vector<std::vector<double>> odd = {
        {},                                       // no prediction
        std::vector<double>(static_cast<std::size_t>(P), nan),
        std::vector<double>(static_cast<std::size_t>(P), -1e300),
    };
    std::vector<double> with_inf(static_cast<std::size_t>(P), 0.0);
    with_inf[1] = inf;
    odd.push_back(with_inf);
    for (const auto& a : odd)
      for (double tau : {1.0, 0.0, -1.0, nan, inf}) {
        ScheduleParams p;
        p.nprocs = P;
        p.arrival = a;
        p.tau = tau;
        for (const Builder& b : builders()) {
          const Schedule s = b.build(p);
          EXPECT_EQ(check_schedule(s, CheckModel::DataFlow), "") << label(b.name, P, a, tau);
          EXPECT_EQ(check_schedule(s, CheckModel::InOrder), "") << label(b.name, P, a, tau);
        }
      }
  }
}

TEST(AllreduceSchedules, OneProcessHasNothingToDo) {
  ScheduleParams p;
  p.nprocs = 1;
  p.arrival = {3.0};
  for (const Builder& b : builders()) {
    const Schedule s = b.build(p);
    ASSERT_EQ(s.programs.size(), 1u) << b.name;
    EXPECT_TRUE(s.programs[0].steps.empty()) << b.name;
    EXPECT_EQ(s.nseg, 1) << b.name;
  }
}

TEST(AllreduceSchedules, SameInputsSameSchedule) {
  std::mt19937 rng(7);
  for (int P : {5, 12}) {
    ScheduleParams p;
    p.nprocs = P;
    p.arrival = arrivals(P, 3, rng);
    for (const Builder& b : builders()) {
      const Schedule x = b.build(p), y = b.build(p);
      for (int r = 0; r < P; ++r) {
        const auto& sx = x.programs[static_cast<std::size_t>(r)].steps;
        const auto& sy = y.programs[static_cast<std::size_t>(r)].steps;
        ASSERT_EQ(sx.size(), sy.size()) << b.name;
        for (std::size_t i = 0; i < sx.size(); ++i)
          EXPECT_TRUE(sx[i].op == sy[i].op && sx[i].peer == sy[i].peer && sx[i].seg == sy[i].seg &&
                      sx[i].tag == sy[i].tag)
              << b.name << " rank " << r << " step " << i;
      }
    }
  }
}

TEST(AllreduceSchedules, ArrivalOrderSortsWithTiesByRank) {
  ScheduleParams p;
  p.nprocs = 5;
  p.arrival = {2.0, 0.5, 2.0, std::numeric_limits<double>::quiet_NaN(), 0.5};
  EXPECT_EQ(arrival_order(p), (std::vector<int>{1, 4, 0, 2, 3}));
  p.arrival.pop_back();  // wrong size: ignored
  EXPECT_EQ(arrival_order(p), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(AllreduceSchedules, SltPipelineFollowsArrivalOrder) {
  ScheduleParams p;
  p.nprocs = 4;
  p.arrival = {4.0, 0.0, 1.0, 0.0};  // order 1, 3, 2, 0
  const Schedule s = build_slt(p);
  // The earliest process only sends in the reduce loop: P sends to the next.
  const auto& first = s.programs[1].steps;
  ASSERT_GE(first.size(), 4u);
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(first[static_cast<std::size_t>(g)].op, StepOp::Send);
    EXPECT_EQ(first[static_cast<std::size_t>(g)].peer, 3);
  }
  // The latest one receives every segment from rank 2, then returns the sums
  // to the first: no override receives.
  for (const Step& st : s.programs[0].steps) {
    EXPECT_NE(st.op, StepOp::RecvCopy);
    EXPECT_EQ(st.peer, st.op == StepOp::Send ? 1 : 2);
  }
}

TEST(AllreduceSchedules, PrrPlanOfFigure8) {
  // Process 0 is 2 tau late: new ids 0..3 are ranks 1, 2, 3, 0.
  ScheduleParams p;
  p.nprocs = 4;
  p.arrival = {2.0, 0.0, 0.0, 0.0};
  p.tau = 1.0;
  const PrrPlan plan = prr_plan(p);
  EXPECT_EQ(plan.order, (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(plan.k, (std::vector<int>{2, 2, 1, 0}));
  EXPECT_EQ(plan.sp, (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(plan.rp, (std::vector<int>{3, 3, 3, 0}));
  // Balanced arrivals: no pre-steps, slice j starts at id j (the ring).
  p.arrival = {0.0, 0.0, 0.0, 0.0};
  const PrrPlan ring = prr_plan(p);
  EXPECT_EQ(ring.k, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(ring.sp, (std::vector<int>{0, 1, 2, 3}));
}

TEST(AllreduceSchedules, PrrPlanInvariants) {
  std::mt19937 rng(99);
  for (int P = 2; P <= 16; ++P)
    for (int trial = 0; trial < 20; ++trial) {
      ScheduleParams p;
      p.nprocs = P;
      p.arrival = arrivals(P, trial, rng);
      p.tau = 0.5 + trial % 3;
      const PrrPlan plan = prr_plan(p);
      EXPECT_EQ(plan.k[static_cast<std::size_t>(P - 1)], 0);
      for (int i = 0; i + 1 < P; ++i) {
        const int ki = plan.k[static_cast<std::size_t>(i)], kn = plan.k[static_cast<std::size_t>(i + 1)];
        EXPECT_TRUE(ki == kn || ki == kn + 1);
      }
      for (int j = 0; j < P; ++j) {
        const int sp = plan.sp[static_cast<std::size_t>(j)];
        EXPECT_LE(sp, j);
        EXPECT_GE(sp + plan.k[static_cast<std::size_t>(sp)], j);
        if (j > 0) {
          EXPECT_GE(sp, plan.sp[static_cast<std::size_t>(j - 1)]);
        }
        EXPECT_EQ(plan.rp[static_cast<std::size_t>(j)], (sp + P - 1) % P);
      }
    }
}

TEST(AllreduceSchedules, RingAndPrrMessageCounts) {
  // Every rank sends and receives 2(P-1) messages in the ring; PRR moves the
  // same total, 2P(P-1).
  std::mt19937 rng(3);
  for (int P = 2; P <= 9; ++P) {
    ScheduleParams p;
    p.nprocs = P;
    p.arrival = arrivals(P, 1, rng);
    const Schedule ring = build_ring_allreduce(p), prr = build_prr(p);
    std::size_t prr_steps = 0;
    for (int r = 0; r < P; ++r) {
      EXPECT_EQ(ring.programs[static_cast<std::size_t>(r)].steps.size(), 4u * static_cast<std::size_t>(P - 1));
      prr_steps += prr.programs[static_cast<std::size_t>(r)].steps.size();
    }
    EXPECT_EQ(prr_steps, 4u * static_cast<std::size_t>(P) * static_cast<std::size_t>(P - 1));
  }
}

TEST(AllreduceSchedules, RabenseifnerStepCounts) {
  // Power of two: log2 P halving and doubling steps, P - 1 segments out and
  // in per rank.  P = 6: ranks 0 and 2 only hand over and get back.
  ScheduleParams p;
  p.nprocs = 8;
  for (const auto& prog : build_rabenseifner(p).programs) EXPECT_EQ(prog.steps.size(), 4u * 7u);
  p.nprocs = 6;
  const Schedule s = build_rabenseifner(p);
  EXPECT_EQ(s.nseg, 4);
  EXPECT_EQ(s.programs[0].steps.size(), 8u);
  EXPECT_EQ(s.programs[2].steps.size(), 8u);
  EXPECT_EQ(s.programs[1].steps.size(), 4u + 4u * 3u + 4u);
  EXPECT_EQ(s.programs[5].steps.size(), 4u * 3u);
}

}  // namespace
}  // namespace papshim
