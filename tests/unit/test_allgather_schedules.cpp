// Tests for the Sparbit, ring, Bruck and recursive doubling allgather
// schedules (the binomial reduce trees: test_reduce_schedules.cpp).
//
// Every schedule is checked by the independent symbolic checker of
// support/schedule_check.h, in program order and under the executor's
// data-flow rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/allgather_baselines.h"
#include "algorithms/binomial_reduce.h"
#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "algorithms/sparbit.h"
#include "support/schedule_check.h"

namespace papshim {
namespace {

using test_support::check_schedule;
using test_support::check_schedule_both;
using test_support::CheckModel;
using test_support::params_for;

std::string check_both(const Schedule& s) { return check_schedule_both(s); }

// Sends per round of one rank's program.
std::vector<int> sends_per_round(const Schedule& s, int rank) {
  std::vector<int> out;
  for (const Step& st : s.programs[static_cast<std::size_t>(rank)].steps) {
    if (st.op != StepOp::Send) continue;
    if (static_cast<int>(out.size()) <= st.round) out.resize(static_cast<std::size_t>(st.round) + 1, 0);
    ++out[static_cast<std::size_t>(st.round)];
  }
  return out;
}

// ---------------------------------------------------------------- checker --

TEST(ScheduleChecker, RejectsBrokenSchedules) {
  auto base = build_ring_allgather(params_for(5));
  ASSERT_EQ(check_both(base), "");

  auto wrong_block = base;  // forwards a block it does not hold yet
  wrong_block.programs[2].steps[0].seg = 4;
  wrong_block.programs[3].steps[1].seg = 4;
  EXPECT_NE(check_both(wrong_block), "");

  auto dropped = base;  // one receive missing
  dropped.programs[1].steps.pop_back();
  EXPECT_NE(check_both(dropped), "");

  auto swapped = base;  // every rank receives before its first send:
  for (auto& p : swapped.programs) std::swap(p.steps[0], p.steps[1]);
  EXPECT_NE(check_schedule(swapped, CheckModel::InOrder), "");     // a cycle in time
  EXPECT_EQ(check_schedule(swapped, CheckModel::DataFlow), "");  // independent segments

  Schedule cycle;  // each rank's send waits for the other's send
  cycle.coll = Collective::Reduce;
  cycle.programs.resize(2);
  cycle.programs[0].steps = {{StepOp::RecvReduce, 1, 0, 0}, {StepOp::Send, 1, 0, 1}};
  cycle.programs[1].steps = {{StepOp::RecvReduce, 0, 0, 1}, {StepOp::Send, 0, 0, 0}};
  EXPECT_NE(check_schedule(cycle, CheckModel::InOrder), "");
  EXPECT_NE(check_schedule(cycle, CheckModel::DataFlow), "");

  auto reduce = build_binomial_reduce([] {
    auto p = params_for(6);
    p.nseg = 2;
    return p;
  }());
  ASSERT_EQ(check_both(reduce), "");
  reduce.programs[0].steps.erase(reduce.programs[0].steps.begin());  // lose a child
  EXPECT_NE(check_both(reduce), "");
}

// --------------------------------------------------------------- sparbit --

TEST(Sparbit, CorrectForUpTo70Ranks) {
  for (int P = 1; P <= 70; ++P) EXPECT_EQ(check_both(build_sparbit(params_for(P))), "") << "P=" << P;
}

TEST(Sparbit, CorrectForLargeRanks) {
  for (int P : {127, 128, 129, 257, 513})
    EXPECT_EQ(check_schedule(build_sparbit(params_for(P)), CheckModel::InOrder), "") << "P=" << P;
}

TEST(Sparbit, TransfersPerStep) {
  EXPECT_TRUE(build_sparbit(params_for(1)).programs.at(0).steps.empty());
  const std::map<int, std::vector<int>> expected = {
      {2, {1}}, {5, {1, 1, 2}}, {6, {1, 1, 3}}, {7, {1, 2, 3}}, {8, {1, 2, 4}}};
  for (const auto& [P, per_step] : expected) {
    auto s = build_sparbit(params_for(P));
    for (int r = 0; r < P; ++r) EXPECT_EQ(sends_per_round(s, r), per_step) << "P=" << P << " r=" << r;
  }
}

// After distance d, rank r holds exactly (r - j*d) mod P for j < ceil(P/d);
// it sends only blocks it holds to r + d and receives from r - d, and the
// sender's Send with the same tag carries the same block.  Every rank for
// P <= 256; above that (2 million steps per schedule) a sample of ranks.
void check_sparbit_rank(int P, int r) {
  int L = 0;
  while ((1 << L) < P) ++L;
  const RankProgram prog = sparbit_program(P, r);
  std::vector<char> held(static_cast<std::size_t>(P), 0);
  held[r] = 1;
  int nheld = 1, max_tag = -1;
  std::size_t i = 0;
  for (int round = 0; round < L; ++round) {
    const int d = 1 << (L - 1 - round), want = (P + d - 1) / d;
    const int to = (r + d) % P, from = (r - d + P) % P;
    std::vector<int> sent_to_me(static_cast<std::size_t>(P), -1);  // tag -> block
    for (const Step& st : sparbit_program(P, from).steps)
      if (st.op == StepOp::Send && st.peer == r) sent_to_me[st.tag] = st.seg;
    for (; i < prog.steps.size() && prog.steps[i].round == round; ++i) {
      const Step& st = prog.steps[i];
      max_tag = std::max(max_tag, st.tag);
      if (st.op == StepOp::Send) {
        ASSERT_EQ(st.peer, to) << "P=" << P;
        ASSERT_TRUE(held[st.seg]) << "P=" << P << " r=" << r;
        continue;
      }
      ASSERT_EQ(st.peer, from) << "P=" << P;
      ASSERT_EQ(sent_to_me[st.tag], st.seg) << "P=" << P << " r=" << r;
      const int dist = (r - st.seg + P) % P;
      ASSERT_TRUE(dist % d == 0 && dist / d < want && !held[st.seg]) << "P=" << P;
      held[st.seg] = 1;
      ++nheld;
    }
    ASSERT_EQ(nheld, want) << "P=" << P << " r=" << r << " d=" << d;
  }
  ASSERT_EQ(i, prog.steps.size()) << "P=" << P;
  ASSERT_EQ(max_tag, P - 2) << "P=" << P;
}

TEST(Sparbit, InvariantUpTo1025) {
  for (int P = 2; P <= 1025; ++P) {
    if (P <= 256) {
      for (int r = 0; r < P; ++r) check_sparbit_rank(P, r);
    } else {
      for (int r : {0, 1, P / 3, P / 2, P - 2, P - 1}) check_sparbit_rank(P, r);
    }
    if (HasFatalFailure()) return;
  }
}

TEST(Sparbit, WholeScheduleMatchesPerRankPrograms) {
  for (int P : {1, 2, 7, 64, 100}) {
    const Schedule s = build_sparbit(params_for(P));
    ASSERT_EQ(static_cast<int>(s.programs.size()), P);
    for (int r = 0; r < P; ++r) {
      const auto& a = s.programs[static_cast<std::size_t>(r)].steps;
      const auto b = sparbit_program(P, r).steps;
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(a[i].op == b[i].op && a[i].peer == b[i].peer && a[i].seg == b[i].seg &&
                    a[i].tag == b[i].tag && a[i].round == b[i].round);
    }
  }
}

// -------------------------------------------------------------- baselines --

TEST(RingAllgather, CorrectForUpTo70Ranks) {
  for (int P = 1; P <= 70; ++P)
    EXPECT_EQ(check_both(build_ring_allgather(params_for(P))), "") << "P=" << P;
}

TEST(BruckAllgather, CorrectForUpTo70Ranks) {
  for (int P = 1; P <= 70; ++P) {
    auto s = build_bruck_allgather(params_for(P));
    EXPECT_EQ(check_both(s), "") << "P=" << P;
    int rounds = 0;
    while ((1 << rounds) < P) ++rounds;
    EXPECT_EQ(static_cast<int>(sends_per_round(s, 0).size()), rounds) << "P=" << P;
  }
}

TEST(RecursiveDoublingAllgather, PowersOfTwoOnly) {
  for (int P = 1; P <= 70; ++P) {
    auto s = build_recursive_doubling_allgather(params_for(P));
    const bool pow2 = (P & (P - 1)) == 0;
    ASSERT_EQ(s.has_value(), pow2) << "P=" << P;
    if (pow2) {
      EXPECT_EQ(check_both(*s), "") << "P=" << P;
    }
  }
  EXPECT_TRUE(build_recursive_doubling_allgather(params_for(1024)).has_value());
}

TEST(AllgatherSchedules, TagsAreSmall) {
  for (int P = 2; P <= 70; ++P) {
    EXPECT_EQ(build_sparbit(params_for(P)).max_tag(), P - 2);
    EXPECT_EQ(build_ring_allgather(params_for(P)).max_tag(), P - 2);
    EXPECT_EQ(build_bruck_allgather(params_for(P)).max_tag(), P - 2);
  }
}

// ------------------------------------------------------------- simulator --

// The shared simulator agrees on the data, and in its pure latency model
// (every ready message starts at once, tau per message) the logarithmic
// algorithms take at most ceil(log2 P) tau (exactly, for a power of two) and
// the ring P - 1 tau.
TEST(AllgatherSchedules, SimulatorAgreesAndCountsSteps) {
  const double tau = 1.0;
  SimCost latency = SimCost::tau_steps(tau);
  latency.serial_ports = false;
  const SimCost ports = SimCost::tau_steps(tau);
  for (int P = 1; P <= 70; ++P) {
    int L = 0;
    while ((1 << L) < P) ++L;
    const std::vector<double> zero(static_cast<std::size_t>(P), 0.0);
    struct Case { const char* name; std::optional<Schedule> s; double steps; };
    auto reduce = params_for(P);
    reduce.root = P / 2;
    reduce.nseg = 1;
    std::vector<Case> cases;
    cases.push_back({"sparbit", build_sparbit(params_for(P)), double(L)});
    cases.push_back({"ring", build_ring_allgather(params_for(P)), double(P - 1)});
    cases.push_back({"bruck", build_bruck_allgather(params_for(P)), double(L)});
    cases.push_back({"recursive_doubling", build_recursive_doubling_allgather(params_for(P)),
                     double(L)});
    cases.push_back({"binomial", build_binomial_reduce(reduce), double(L)});
    for (const auto& c : cases) {
      if (!c.s) continue;
      const SimResult lat = simulate(*c.s, zero, latency);
      ASSERT_TRUE(lat.ok) << c.name << " P=" << P << ": " << lat.error;
      // Data flow lets a step whose blocks need no forwarding run early, so
      // a non-power-of-two P may beat the step count.
      if ((P & (P - 1)) == 0 || std::string(c.name) == "ring")
        EXPECT_DOUBLE_EQ(lat.max_exit, c.steps * tau) << c.name << " P=" << P;
      else
        EXPECT_LE(lat.max_exit, c.steps * tau) << c.name << " P=" << P;
      const SimResult ser = simulate(*c.s, zero, ports);
      ASSERT_TRUE(ser.ok) << c.name << " P=" << P << ": " << ser.error;
      EXPECT_GE(ser.max_exit, lat.max_exit) << c.name << " P=" << P;
    }
  }
}

// With serial ports every block is its own message, so an allgather costs
// at least P - 1 tau on every rank: Sparbit and Bruck need the executor to
// combine a step's blocks to keep their logarithmic latency.
TEST(AllgatherSchedules, SimulatorSerialPortsPerBlock) {
  for (int P : {5, 6, 7, 8, 16, 33}) {
    const std::vector<double> zero(static_cast<std::size_t>(P), 0.0);
    const SimCost ports = SimCost::tau_steps(1.0);
    const SimResult sp = simulate(build_sparbit(params_for(P)), zero, ports);
    const SimResult ring = simulate(build_ring_allgather(params_for(P)), zero, ports);
    const SimResult br = simulate(build_bruck_allgather(params_for(P)), zero, ports);
    ASSERT_TRUE(sp.ok && ring.ok && br.ok);
    EXPECT_DOUBLE_EQ(ring.max_exit, P - 1.0) << "P=" << P;
    EXPECT_GE(sp.max_exit, P - 1.0) << "P=" << P;
    EXPECT_GE(br.max_exit, P - 1.0) << "P=" << P;
  }
}

}  // namespace
}  // namespace papshim
