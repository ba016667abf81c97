// Tests for PAPSHIM_REPRODUCIBLE (algorithms/reproducible.h): under the mode
// every allreduce and reduce schedule, and auto mode's pick, depend on the
// call's shape alone, so every element is combined the same way whatever the
// arrivals and the measured costs.
//
// Works as follows.  `trees()` plays a schedule symbolically under the
// executor's data-flow rules (schedule.h: the steps of one segment on one
// rank in program order, segments independent) and returns, per rank and
// segment, the expression tree that ends there: leaf "xq" for rank q's own
// data, "(in+own)" for a RecvReduce (the executor computes buf = incoming op
// buf), the sender's tree for a RecvCopy.  Those trees are what fixes the
// bits of a floating-point result.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/direct_allreduce.h"
#include "algorithms/reproducible.h"
#include "algorithms/ring_allreduce.h"
#include "algorithms/selector.h"
#include "algorithms/simulator.h"
#include "config/params.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using Trees = std::vector<std::vector<std::string>>;  // [rank][segment]

// The combination tree of every (rank, segment) at the end of the schedule;
// empty when the schedule cannot finish.
Trees trees(const Schedule& s) {
  const int P = static_cast<int>(s.programs.size());
  Trees val(static_cast<std::size_t>(P), std::vector<std::string>(static_cast<std::size_t>(s.nseg)));
  for (int r = 0; r < P; ++r)
    for (auto& v : val[static_cast<std::size_t>(r)]) v = "x" + std::to_string(r);
  std::map<std::tuple<int, int, int>, std::string> wire;  // (source, destination, tag) -> tree
  std::vector<std::vector<bool>> done(static_cast<std::size_t>(P));
  std::size_t left = 0;
  for (int r = 0; r < P; ++r) {
    done[static_cast<std::size_t>(r)].assign(s.programs[static_cast<std::size_t>(r)].steps.size(), false);
    left += s.programs[static_cast<std::size_t>(r)].steps.size();
  }
  for (bool progress = true; progress && left > 0;) {
    progress = false;
    for (int r = 0; r < P; ++r) {
      const auto& steps = s.programs[static_cast<std::size_t>(r)].steps;
      auto& d = done[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (d[i]) continue;
        const Step& st = steps[i];
        bool ready = true;  // every earlier step of this segment done
        for (std::size_t j = 0; j < i && ready; ++j) ready = d[j] || steps[j].seg != st.seg;
        if (!ready) continue;
        auto& v = val[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
        if (st.op == StepOp::Send) {
          wire[{r, st.peer, st.tag}] = v;
        } else {
          auto it = wire.find({st.peer, r, st.tag});
          if (it == wire.end()) continue;
          v = st.op == StepOp::RecvCopy ? it->second : "(" + it->second + "+" + v + ")";
          wire.erase(it);
        }
        d[i] = true;
        --left;
        progress = true;
      }
    }
  }
  if (left > 0) return {};
  return val;
}

// The same tree with the operands of every node sorted: equal for trees that
// associate alike and differ only in operand order.
std::string unordered(const std::string& t) {
  if (t.empty() || t[0] != '(') return t;
  int depth = 0;
  std::size_t plus = 0;
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    if (t[i] == '(') ++depth;
    if (t[i] == ')') --depth;
    if (t[i] == '+' && depth == 0) plus = i;
  }
  std::string a = unordered(t.substr(1, plus - 1)), b = unordered(t.substr(plus + 1, t.size() - plus - 2));
  if (b < a) std::swap(a, b);
  return "(" + a + "+" + b + ")";
}

bool same_steps(const Schedule& x, const Schedule& y) {
  if (x.nseg != y.nseg || x.root != y.root || x.programs.size() != y.programs.size()) return false;
  for (std::size_t r = 0; r < x.programs.size(); ++r)
    if (!test_support::same_steps(x.programs[r].steps, y.programs[r].steps)) return false;
  return true;
}

SelectInput shape(Collective c, int P, std::size_t count, int root = 0) {
  SelectInput in;
  in.coll = c;
  in.nprocs = P;
  in.root = root;
  in.count = count;
  in.elem_size = 8;
  in.arrival.assign(static_cast<std::size_t>(P), 0.0);
  in.tree_segsize = 0;
  return in;
}

// Timing inputs a call may meet: arrival vectors (one rank late, each in
// turn; random; two late) and cost figures, measured corrections included.
std::vector<SelectInput> timings(const SelectInput& base, std::mt19937& rng) {
  std::vector<SelectInput> out;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int late = 0; late < base.nprocs; ++late) {
    SelectInput in = base;
    in.arrival[static_cast<std::size_t>(late)] = 0.02;
    out.push_back(in);
  }
  for (int k = 0; k < 6; ++k) {
    SelectInput in = base;
    for (auto& a : in.arrival) a = 0.05 * u(rng) * u(rng);
    in.arrival[rng() % in.arrival.size()] += 0.03 * k;
    in.cost = {1e-6 + 1e-4 * u(rng), 1e-11 + 1e-8 * u(rng), 1e-11 + 1e-9 * u(rng)};
    for (Algo a : {Algo::Native, Algo::Prr, Algo::Slt, Algo::Clairvoyant, Algo::SortedBinomial,
                   Algo::DirectAllreduce, Algo::Binomial})
      in.correction.set_own(in.coll, a, 0.2 + 3 * u(rng));
    out.push_back(in);
  }
  return out;
}

// Every algorithm of collective `c`, from the catalog.
std::vector<Algo> every(Collective c) {
  std::vector<Algo> out;
  for (const AlgoInfo* a : algorithms_for(c)) out.push_back(a->algo);
  return out;
}

Schedule build(Algo a, const SelectInput& in) {
  BuildResult b = build_schedule(a, schedule_params_for(a, in));
  EXPECT_TRUE(b.schedule) << algo_info(a).name << ": " << b.reason;
  return b.schedule ? *b.schedule : Schedule{};
}

// Every forced algorithm: under the mode the same schedule, step for step,
// whatever the arrivals and costs; so the same combination trees.
TEST(Reproducible, SchedulesIgnoreArrivalsAndCosts) {
  std::mt19937 rng(5);
  for (int P : {2, 3, 5, 8, 13}) {
    for (Collective c : {Collective::Allreduce, Collective::Reduce}) {
      for (int root : {0, P - 1}) {
        if (c == Collective::Allreduce && root != 0) continue;
        SelectInput base = shape(c, P, 1000, root);
        base.reproducible = true;
        for (Algo a : every(c)) {
          const Schedule ref = build(a, base);
          const Trees ref_trees = trees(ref);
          ASSERT_FALSE(ref_trees.empty()) << algo_info(a).name << " P=" << P;
          for (const SelectInput& in : timings(base, rng)) {
            const Schedule s = build(a, in);
            EXPECT_TRUE(same_steps(ref, s)) << algo_info(a).name << " P=" << P << " root=" << root;
            EXPECT_EQ(trees(s), ref_trees) << algo_info(a).name << " P=" << P;
          }
        }
      }
    }
  }
}

// Without the mode the arrival-aware algorithms really do combine in an order
// that follows the arrivals (what the mode is for).
TEST(Reproducible, WithoutTheModeTreesFollowArrivals) {
  std::mt19937 rng(6);
  const int P = 5;
  for (Algo a : {Algo::Prr, Algo::Slt, Algo::Clairvoyant, Algo::SortedBinomial}) {
    const Collective c = algo_info(a).coll;
    SelectInput base = shape(c, P, 1000);
    base.cost = {1e-6, 1e-9, 1e-9};
    std::set<Trees> seen;
    for (const SelectInput& in : timings(base, rng)) {
      const Trees t = trees(build(a, in));
      const int holder = 0;  // allreduce: any rank; reduce: the root
      seen.insert(Trees{t[holder]});
    }
    EXPECT_GT(seen.size(), 1u) << algo_info(a).name;
  }
}

// Each rank of an allreduce ends with the same tree; the direct allreduce
// combines slice j as the chain j, j+1, ..., j-1, the ring's chain with the
// operands of each node swapped.
TEST(Reproducible, DirectAllreduceCombinesTheRingsChains) {
  for (int P = 1; P <= 12; ++P) {
    ScheduleParams p;
    p.nprocs = P;
    p.count = 100;
    const Schedule direct = build_direct_allreduce(p), ring = build_ring_allreduce(p);
    const Trees td = trees(direct), tr = trees(ring);
    ASSERT_FALSE(td.empty()) << P;
    ASSERT_FALSE(tr.empty()) << P;
    for (int j = 0; j < direct.nseg; ++j) {
      std::string chain = "x" + std::to_string(j % P);
      for (int k = 1; k < P; ++k) chain = "(x" + std::to_string((j + k) % P) + "+" + chain + ")";
      for (int r = 0; r < P; ++r) {
        EXPECT_EQ(td[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)], chain) << "P=" << P << " r=" << r;
        EXPECT_EQ(unordered(tr[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)]), unordered(chain))
            << "P=" << P << " r=" << r;
      }
    }
  }
}

// The direct allreduce in the simulator: with one rank late by much more than
// a message, the others finish their share ahead and two hops remain, while
// the ring still runs 2(P-1) dependent steps after the late arrival.
TEST(Reproducible, DirectAllreduceAbsorbsALateRank) {
  const int P = 8;
  ScheduleParams p;
  p.nprocs = P;
  p.count = 8;
  std::vector<double> arrival(P, 0.0);
  arrival[3] = 100.0;
  SimCost cost = SimCost::tau_steps(1.0);
  cost.serial_ports = false;
  cost.count = 8;
  const SimResult d = simulate(build_direct_allreduce(p), arrival, cost);
  const SimResult r = simulate(build_ring_allreduce(p), arrival, cost);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(d.max_exit, 102.0);
  EXPECT_GT(r.max_exit, 100.0 + P);
}

// Auto mode under the mode: the pick and its schedule depend on the shape
// only, never on arrivals, costs or corrections.
TEST(Reproducible, AutoPicksByShapeAlone) {
  std::mt19937 rng(7);
  struct Case {
    Collective c;
    int P;
    Algo pick;
  };
  for (const Case& k : {Case{Collective::Allreduce, 5, Algo::DirectAllreduce},
                        Case{Collective::Allreduce, kDirectMaxProcs, Algo::DirectAllreduce},
                        Case{Collective::Allreduce, kDirectMaxProcs + 1, Algo::RingAllreduce},
                        Case{Collective::Reduce, 5, Algo::Binomial}, Case{Collective::Reduce, 8, Algo::Binomial}}) {
    SelectInput base = shape(k.c, k.P, 4096, k.P - 1);
    base.reproducible = true;
    const Selection ref = select_algorithm(base);
    EXPECT_EQ(ref.pick, k.pick) << ref.why;
    ASSERT_TRUE(ref.schedule);
    for (const SelectInput& in : timings(base, rng)) {
      const Selection s = select_algorithm(in);
      EXPECT_EQ(s.pick, ref.pick);
      ASSERT_TRUE(s.schedule);
      EXPECT_TRUE(same_steps(*s.schedule, *ref.schedule));
      EXPECT_EQ(s.params.arrival, ref.params.arrival);
      EXPECT_EQ(s.params.tau, ref.params.tau);
      EXPECT_EQ(s.params.nseg, ref.params.nseg);
    }
  }
}

TEST(Reproducible, NativeWhereNothingCanRun) {
  SelectInput in = shape(Collective::Allreduce, 5, 4096);
  in.reproducible = true;
  in.arrival[2] = 1.0;
  in.commutative = false;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  in.commutative = true;
  in.count = 0;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  in = shape(Collective::Reduce, 1, 4096);
  in.reproducible = true;
  EXPECT_EQ(select_algorithm(in).pick, Algo::Native);
  // A missing prediction changes nothing either.
  in = shape(Collective::Allreduce, 5, 4096);
  in.reproducible = true;
  in.arrival.clear();
  EXPECT_EQ(select_algorithm(in).pick, Algo::DirectAllreduce);
}

// Segment counts come from the shape and the configuration, with or without
// the mode; the timing inputs of the schedule are constants.
TEST(Reproducible, TimingFreeParameters) {
  std::vector<Algo> reductions = every(Collective::Allreduce);
  for (Algo a : every(Collective::Reduce)) reductions.push_back(a);
  for (Algo a : reductions) {
    for (long segsize : {0L, 24L, 32768L}) {
      SelectInput in = shape(algo_info(a).coll, 6, 100000);
      in.tree_segsize = segsize;
      in.arrival = {0.0, 0.5, 0.1, 0.0, 2.0, 0.3};
      in.cost = {1e-3, 1e-6, 1e-6};
      const ScheduleParams plain = schedule_params_for(a, in);
      in.reproducible = true;
      const ScheduleParams fixed = schedule_params_for(a, in);
      EXPECT_EQ(fixed.nseg, plain.nseg) << algo_info(a).name;
      EXPECT_EQ(fixed.arrival, std::vector<double>(6, 0.0)) << algo_info(a).name;
      in.cost = {2e-6, 1e-10, 1e-10};
      EXPECT_EQ(schedule_params_for(a, in).tau, fixed.tau) << algo_info(a).name;
      EXPECT_GT(fixed.tau, 0.0);
    }
  }
}

// Allgather combines nothing: the mode leaves its selection alone.
TEST(Reproducible, AllgatherUnchanged) {
  SelectInput in = shape(Collective::Allgather, 8, 1 << 14);
  in.elem_size = 4;
  in.arrival[3] = 0.02;
  in.cost = {10e-6, 0.1e-9, 0.03e-9};
  const Selection plain = select_algorithm(in);
  in.reproducible = true;
  const Selection fixed = select_algorithm(in);
  EXPECT_EQ(fixed.pick, plain.pick);
  EXPECT_EQ(fixed.table.size(), plain.table.size());
  EXPECT_EQ(schedule_params_for(Algo::Sparbit, in).arrival[3], 0.02);
}

// The parameter: 0 by default, the usual boolean spellings, job-wide (so the
// consistency check at MPI_Init compares it across ranks).
TEST(Reproducible, Parameter) {
  auto parse = [](const char* value) {
    return parse_config([value](const char* n) -> const char* {
      return std::string(n) == "PAPSHIM_REPRODUCIBLE" ? value : nullptr;
    });
  };
  EXPECT_FALSE(parse(nullptr).reproducible);
  EXPECT_TRUE(parse("1").reproducible);
  EXPECT_TRUE(parse("yes").reproducible);
  EXPECT_FALSE(parse("0").reproducible);
  EXPECT_THROW(parse("2"), ConfigError);
  EXPECT_TRUE(is_job_wide("PAPSHIM_REPRODUCIBLE"));
  const Config c = parse("on");
  EXPECT_NE(std::find(c.values.begin(), c.values.end(), std::make_pair(std::string("PAPSHIM_REPRODUCIBLE"),
                                                                       std::string("1"))),
            c.values.end());
  EXPECT_NE(describe_params().find("PAPSHIM_REPRODUCIBLE"), std::string::npos);
  EXPECT_NE(parse_config([](const char* n) -> const char* {
              return std::string(n) == "PAPSHIM_ALLREDUCE" ? "direct" : nullptr;
            }).allreduce,
            "auto");
}

}  // namespace
}  // namespace papshim
