// Tests for the schedule simulator (algorithms/simulator.h).
//
// Works as follows.  The fixtures at the top build tiny schedules by hand:
// ring allreduce, the seed's linear tree allreduce (figure 5, in any process
// order), a direct reduce (everyone sends to the root), a chain reduce and a
// ring allgather.  Correct ones must simulate with the exact times the
// model gives (unit tau, so the arithmetic is exact); broken copies (a
// contribution missing or doubled, a stray send or receive, a tag used
// twice, a dependency cycle, bad fields) must fail with an error that names
// the rank and step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/simulator.h"

namespace papshim {
namespace {

// --- fixtures ----------------------------------------------------------------

Schedule blank(Collective c, int P, int nseg, int root = 0) {
  Schedule s;
  s.coll = c;
  s.nseg = nseg;
  s.root = root;
  s.programs.resize(static_cast<std::size_t>(P));
  return s;
}

void add(Schedule& s, int rank, StepOp op, int peer, int seg, int tag) {
  s.programs[static_cast<std::size_t>(rank)].steps.push_back(Step{op, peer, seg, tag, 0});
}

int mod(int a, int p) { return ((a % p) + p) % p; }

// Reduce-scatter then allgather around the ring; rank r ends the first phase
// with segment r + 1 complete.
Schedule ring_allreduce(int P) {
  Schedule s = blank(Collective::Allreduce, P, P);
  for (int r = 0; r < P; ++r) {
    const int next = mod(r + 1, P), prev = mod(r - 1, P);
    for (int k = 0; k < P - 1; ++k) {
      add(s, r, StepOp::Send, next, mod(r - k, P), k);
      add(s, r, StepOp::RecvReduce, prev, mod(r - k - 1, P), k);
    }
    for (int k = 0; k < P - 1; ++k) {
      add(s, r, StepOp::Send, next, mod(r + 1 - k, P), P - 1 + k);
      add(s, r, StepOp::RecvCopy, prev, mod(r - k, P), P - 1 + k);
    }
  }
  return s;
}

// The seed's linear tree (figure 5): order[0] -> order[1] -> ... reduces
// segment after segment, the last one sends the result to order[0], which
// passes it on up to order[P-2].  Sorted by arrival this is SLT.
Schedule chain_allreduce(const std::vector<int>& order) {
  const int P = static_cast<int>(order.size());
  Schedule s = blank(Collective::Allreduce, P, P);
  for (int id = 0; id < P; ++id) {
    const int me = order[static_cast<std::size_t>(id)];
    const int next = order[static_cast<std::size_t>(mod(id + 1, P))];
    const int prev = order[static_cast<std::size_t>(mod(id - 1, P))];
    for (int i = 0; i < P; ++i) {
      if (id != 0) add(s, me, StepOp::RecvReduce, prev, i, i);
      add(s, me, StepOp::Send, next, i, id == P - 1 ? P + i : i);
    }
    for (int i = 0; i < P; ++i) {
      if (id != P - 1) add(s, me, StepOp::RecvCopy, prev, i, P + i);
      if (id < P - 2) add(s, me, StepOp::Send, next, i, P + i);
    }
  }
  return s;
}

// Every other rank sends every segment straight to the root.
Schedule direct_reduce(int P, int root, int nseg) {
  Schedule s = blank(Collective::Reduce, P, nseg, root);
  for (int r = 0; r < P; ++r)
    for (int seg = 0; seg < nseg; ++seg) {
      if (r == root) continue;
      add(s, r, StepOp::Send, root, seg, seg);
      add(s, root, StepOp::RecvReduce, r, seg, seg);
    }
  return s;
}

// 0 -> 1 -> ... -> P-1 (the root), one segment.
Schedule chain_reduce(int P) {
  Schedule s = blank(Collective::Reduce, P, 1, P - 1);
  for (int r = 0; r < P; ++r) {
    if (r > 0) add(s, r, StepOp::RecvReduce, r - 1, 0, 0);
    if (r < P - 1) add(s, r, StepOp::Send, r + 1, 0, 0);
  }
  return s;
}

// Rank r forwards block r - k to r + 1 in step k.
Schedule ring_allgather(int P) {
  Schedule s = blank(Collective::Allgather, P, P);
  for (int r = 0; r < P; ++r)
    for (int k = 0; k < P - 1; ++k) {
      add(s, r, StepOp::Send, mod(r + 1, P), mod(r - k, P), k);
      add(s, r, StepOp::RecvCopy, mod(r - 1, P), mod(r - k - 1, P), k);
    }
  return s;
}

std::vector<double> zeros(int P) { return std::vector<double>(static_cast<std::size_t>(P), 0.0); }

SimCost tau(bool serial = true) {
  SimCost c = SimCost::tau_steps(1.0);
  c.serial_ports = serial;
  return c;
}

// The error of a run that must fail, or a marker when it passed.
std::string error_of(const Schedule& s, std::vector<double> arrival = {}) {
  if (arrival.empty()) arrival = zeros(static_cast<int>(s.programs.size()));
  const SimResult r = simulate(s, arrival, tau());
  return r.ok ? "<passed>" : r.error;
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

// --- correct schedules ---------------------------------------------------------

TEST(Simulator, RingAllreduceBalancedTakesTwoPMinusTwoSteps) {
  for (int P = 2; P <= 9; ++P) {
    const SimResult r = simulate(ring_allreduce(P), zeros(P), tau());
    ASSERT_TRUE(r.ok) << "P=" << P << ": " << r.error;
    EXPECT_DOUBLE_EQ(r.max_exit, 2.0 * (P - 1)) << "P=" << P;
    EXPECT_DOUBLE_EQ(r.mean_elapsed, 2.0 * (P - 1)) << "P=" << P;
    ASSERT_EQ(r.exit.size(), static_cast<std::size_t>(P));
  }
}

// Figure 8a of the PRR/SLT seed: P = 4, process 0 two tau late: 8 tau.
TEST(Simulator, RingAllreduceOneLateMatchesFigure8a) {
  for (bool serial : {true, false}) {
    const SimResult r = simulate(ring_allreduce(4), {2, 0, 0, 0}, tau(serial));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_DOUBLE_EQ(r.max_exit, 8.0) << "serial=" << serial;
  }
}

// Figure 6 shape: P = 4, process 0 four tau late.  The plain linear tree has
// it first in the pipeline, the sorted one last.  The model gives 13 and 11
// tau with serial ports; the figure's caption says 14 and 12 (see
// test_worked_examples.cpp): the same 2 tau saving.
TEST(Simulator, LinearTreeVersusSortedLinearTree) {
  const std::vector<double> late0 = {4, 0, 0, 0};
  const SimResult lt = simulate(chain_allreduce({0, 1, 2, 3}), late0, tau());
  const SimResult slt = simulate(chain_allreduce({1, 2, 3, 0}), late0, tau());
  ASSERT_TRUE(lt.ok) << lt.error;
  ASSERT_TRUE(slt.ok) << slt.error;
  EXPECT_DOUBLE_EQ(lt.max_exit, 13.0);
  EXPECT_DOUBLE_EQ(slt.max_exit, 11.0);
  // Balanced, P segments through a 2P-2 hop pipeline: (P-1) + (2P-2).
  const SimResult bal = simulate(chain_allreduce({0, 1, 2, 3, 4}), zeros(5), tau());
  ASSERT_TRUE(bal.ok) << bal.error;
  EXPECT_DOUBLE_EQ(bal.max_exit, 4.0 + 8.0);
}

TEST(Simulator, DirectReduceSerialisesOnTheRootsIncomingPort) {
  const SimResult r = simulate(direct_reduce(5, 2, 3), zeros(5), tau());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.exit[2], 12.0);  // 4 senders x 3 segments, one at a time
  // Oldest ready first, ties by sender rank: rank 0 leaves first.
  EXPECT_DOUBLE_EQ(r.exit[0], 3.0);
  EXPECT_DOUBLE_EQ(r.exit[1], 6.0);
  EXPECT_DOUBLE_EQ(r.exit[3], 9.0);
  EXPECT_DOUBLE_EQ(r.exit[4], 12.0);
  EXPECT_DOUBLE_EQ(r.mean_elapsed, (3 + 6 + 12 + 9 + 12) / 5.0);
  // Unlimited ports: everything moves at once.
  const SimResult u = simulate(direct_reduce(5, 2, 3), zeros(5), tau(false));
  ASSERT_TRUE(u.ok) << u.error;
  EXPECT_DOUBLE_EQ(u.max_exit, 1.0);
}

TEST(Simulator, ChainReduceOnlyTheRootNeedsEverything) {
  const SimResult r = simulate(chain_reduce(6), {0, 0, 0, 10, 0, 0}, tau());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.exit[0], 1.0);
  EXPECT_DOUBLE_EQ(r.exit[2], 11.0);  // its send waits for rank 3 to arrive
  EXPECT_DOUBLE_EQ(r.exit[5], 13.0);
  EXPECT_DOUBLE_EQ(r.max_exit, 13.0);
}

TEST(Simulator, RingAllgather) {
  for (int P = 2; P <= 7; ++P) {
    const SimResult r = simulate(ring_allgather(P), zeros(P), tau());
    ASSERT_TRUE(r.ok) << "P=" << P << ": " << r.error;
    EXPECT_DOUBLE_EQ(r.max_exit, P - 1.0);
  }
}

TEST(Simulator, SingleRankWithNoStepsExitsAtArrival) {
  const SimResult r = simulate(blank(Collective::Allreduce, 1, 1), {3.5}, tau());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.exit[0], 3.5);
  EXPECT_DOUBLE_EQ(r.mean_elapsed, 0.0);
}

// alpha + beta * bytes per transfer, gamma * bytes per combine, combines
// serial on the receiver; bytes follow segment_bounds().
TEST(Simulator, HockneyCostsAndSerialReduction) {
  Schedule s = direct_reduce(3, 0, 3);  // count 10 -> segments of 4, 3, 3
  SimCost c;
  c.alpha = 1;
  c.beta = 0.25;
  c.gamma = 0.5;
  c.elem_size = 2;
  c.count = 10;
  EXPECT_EQ(c.seg_bytes(s, 0), 8U);
  EXPECT_EQ(c.seg_bytes(s, 2), 6U);
  const SimResult r = simulate(s, zeros(3), c);
  ASSERT_TRUE(r.ok) << r.error;
  // Root's incoming port: rank 1 segs 0,1,2 then rank 2 segs 0,1,2, taking
  // 3, 2.5, 2.5 each: ends at 3, 5.5, 8, 11, 13.5, 16.  Combines of 4, 3, 3
  // (each 8 bytes or 6): 3-7, 7-10, 10-13, 13-17, 17-20, 20-23.
  EXPECT_DOUBLE_EQ(r.exit[1], 8.0);
  EXPECT_DOUBLE_EQ(r.exit[2], 16.0);
  EXPECT_DOUBLE_EQ(r.exit[0], 23.0);
  // Allgather segments are whole blocks of `count` elements.
  EXPECT_EQ(c.seg_bytes(ring_allgather(3), 1), 20U);
}

// A RecvReduce's receive is posted at arrival, so its transfer may happen
// long before its segment is free; a RecvCopy's receive waits.  Reduce to
// rank 1, which arrives at 5; rank 0 first sends to it, then takes a message
// from rank 2.
TEST(Simulator, RecvReduceReceivesEarlyRecvCopyDoesNot) {
  for (StepOp op : {StepOp::RecvReduce, StepOp::RecvCopy}) {
    Schedule s = blank(Collective::Reduce, 3, 1, 1);
    add(s, 0, StepOp::Send, 1, 0, 0);
    add(s, 0, op, 2, 0, 0);
    add(s, 1, StepOp::RecvReduce, 0, 0, 0);
    add(s, 1, StepOp::RecvReduce, 2, 0, 1);
    add(s, 2, StepOp::Send, 0, 0, 0);
    add(s, 2, StepOp::Send, 1, 0, 1);
    const SimResult r = simulate(s, {0, 5, 0}, tau());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_DOUBLE_EQ(r.exit[1], 7.0);  // 0->1 at 5-6, 2->1 at 6-7
    if (op == StepOp::RecvReduce) {
      EXPECT_DOUBLE_EQ(r.exit[0], 6.0);  // 2->0 at 0-1, combined at 6
      EXPECT_DOUBLE_EQ(r.exit[2], 7.0);
    } else {
      // The copy is posted at 6; rank 2's older message to rank 1 goes first.
      EXPECT_DOUBLE_EQ(r.exit[0], 8.0);
      EXPECT_DOUBLE_EQ(r.exit[2], 8.0);
    }
  }
}

// A Send carries the segment as it is when the Send starts: a later write
// does not leak into it.
TEST(Simulator, SendCarriesTheStateAtItsStart) {
  Schedule s = blank(Collective::Reduce, 3, 1, 2);
  add(s, 0, StepOp::Send, 2, 0, 0);        // {0}
  add(s, 0, StepOp::RecvReduce, 1, 0, 0);  // now {0,1}
  add(s, 1, StepOp::Send, 0, 0, 0);
  add(s, 1, StepOp::Send, 2, 0, 0);        // {1}
  add(s, 2, StepOp::RecvReduce, 0, 0, 0);
  add(s, 2, StepOp::RecvReduce, 1, 0, 0);
  EXPECT_EQ(error_of(s), "<passed>");
  // Reordered so rank 0 sends after combining: rank 1 counted twice.
  std::swap(s.programs[0].steps[0], s.programs[0].steps[1]);
  EXPECT_HAS(error_of(s), "rank 2 segment 0 holds the contribution of rank 1 more than once");
}

// --- broken schedules ----------------------------------------------------------

TEST(Simulator, MissingContribution) {
  Schedule s = ring_allreduce(4);
  // Rank 2's reduce-scatter receive becomes a copy: rank 1's partial result
  // overwrites rank 2's own data.
  s.programs[2].steps[1].op = StepOp::RecvCopy;
  EXPECT_HAS(error_of(s), "lacks the contribution of rank 2");

  Schedule d = direct_reduce(4, 0, 2);
  d.programs[3].steps.erase(d.programs[3].steps.begin() + 1);  // rank 3 drops seg 1
  auto& root = d.programs[0].steps;
  root.erase(root.begin() + 5);  // and the root its receive
  EXPECT_EQ(error_of(d), "rank 0 segment 1 lacks the contribution of rank 3");
}

TEST(Simulator, DoubledContribution) {
  Schedule s = chain_allreduce({0, 1, 2, 3});
  // Rank 1 reduces the final segment 2 instead of copying it.
  for (Step& st : s.programs[1].steps)
    if (st.op == StepOp::RecvCopy && st.seg == 2) st.op = StepOp::RecvReduce;
  EXPECT_HAS(error_of(s), "rank 1 segment 2 holds the contribution of rank");
  EXPECT_HAS(error_of(s), "more than once");

  Schedule d = direct_reduce(3, 0, 1);
  add(d, 1, StepOp::Send, 0, 0, 7);  // rank 1 sends again
  add(d, 0, StepOp::RecvReduce, 1, 0, 7);
  EXPECT_EQ(error_of(d), "rank 0 segment 0 holds the contribution of rank 1 more than once");
}

TEST(Simulator, UnmatchedSendAndReceive) {
  Schedule s = direct_reduce(3, 0, 1);
  add(s, 2, StepOp::Send, 1, 0, 4);
  EXPECT_EQ(error_of(s), "rank 2 step 1 (send seg 0 to 1 tag 4): no matching receive");

  Schedule t = direct_reduce(3, 0, 1);
  add(t, 1, StepOp::RecvReduce, 2, 0, 4);
  EXPECT_EQ(error_of(t), "rank 1 step 1 (recv_reduce seg 0 from 2 tag 4): no matching send");

  Schedule u = ring_allreduce(3);
  u.programs[1].steps[0].tag = 9;  // the receive on rank 2 still says tag 0
  const std::string e = error_of(u);
  EXPECT_TRUE(e.find("no matching") != std::string::npos) << e;
}

TEST(Simulator, SameSourceDestinationTagIsAmbiguous) {
  Schedule s = direct_reduce(3, 0, 2);
  s.programs[1].steps[1].tag = 0;  // both of rank 1's sends now use tag 0
  EXPECT_HAS(error_of(s), "rank 1 step 1 (send seg 1 to 0 tag 0): same (source, destination, tag) as rank 1 step 0");
}

TEST(Simulator, SendAndReceiveOnDifferentSegments) {
  Schedule s = direct_reduce(2, 0, 2);
  s.programs[0].steps[0].seg = 1;
  EXPECT_HAS(error_of(s), "on another segment");
}

TEST(Simulator, DeadlockCycleOfCopies) {
  // Each rank forwards segment 0 only after receiving it from the other.
  Schedule s = blank(Collective::Allreduce, 2, 1);
  add(s, 0, StepOp::RecvCopy, 1, 0, 0);
  add(s, 0, StepOp::Send, 1, 0, 1);
  add(s, 1, StepOp::RecvCopy, 0, 0, 1);
  add(s, 1, StepOp::Send, 0, 0, 0);
  const std::string e = error_of(s);
  EXPECT_HAS(e, "deadlock: 4 steps never complete; first: rank 0 step 0 (recv_copy seg 0 from 1 tag 0)");
  EXPECT_HAS(e, "its send, rank 1 step 1 (send seg 0 to 0 tag 0), is never posted");
}

TEST(Simulator, DeadlockCycleThroughReductions) {
  // The receives are posted, but each send waits for the combine before it.
  Schedule s = blank(Collective::Allreduce, 3, 1);
  for (int r = 0; r < 3; ++r) {
    add(s, r, StepOp::RecvReduce, mod(r - 1, 3), 0, 0);
    add(s, r, StepOp::Send, mod(r + 1, 3), 0, 0);
  }
  const std::string e = error_of(s);
  EXPECT_HAS(e, "deadlock: 6 steps never complete; first: rank 0 step 0 (recv_reduce seg 0 from 2 tag 0)");
  EXPECT_HAS(e, "its send, rank 2 step 1 (send seg 0 to 0 tag 0), is never posted");
}

TEST(Simulator, BadFields) {
  auto with = [](auto edit) {
    Schedule s = direct_reduce(3, 0, 2);
    edit(s.programs[2].steps[1]);
    return error_of(s);
  };
  EXPECT_EQ(with([](Step& st) { st.peer = 2; }), "rank 2 step 1 (send seg 1 to 2 tag 1): bad peer");
  EXPECT_EQ(with([](Step& st) { st.peer = 3; }), "rank 2 step 1 (send seg 1 to 3 tag 1): bad peer");
  EXPECT_EQ(with([](Step& st) { st.peer = -1; }), "rank 2 step 1 (send seg 1 to -1 tag 1): bad peer");
  EXPECT_EQ(with([](Step& st) { st.seg = 2; }), "rank 2 step 1 (send seg 2 to 0 tag 1): segment out of range");
  EXPECT_EQ(with([](Step& st) { st.tag = -3; }), "rank 2 step 1 (send seg 1 to 0 tag -3): negative tag");

  Schedule g = ring_allgather(3);
  g.programs[1].steps[1].op = StepOp::RecvReduce;
  EXPECT_EQ(error_of(g), "rank 1 step 1 (recv_reduce seg 0 from 0 tag 0): recv_reduce in an allgather");

  Schedule bad = ring_allgather(3);
  bad.nseg = 2;
  EXPECT_HAS(error_of(bad), "allgather needs nseg a multiple of P");
  Schedule root = direct_reduce(3, 0, 1);
  root.root = 3;
  EXPECT_HAS(error_of(root), "root 3 out of range");
  EXPECT_HAS(error_of(ring_allreduce(3), {0, 0}), "arrival has 2 entries for 3 ranks");
  EXPECT_EQ(error_of(Schedule{}), "schedule has no ranks");
}

TEST(Simulator, AllgatherWrongBlocks) {
  Schedule s = ring_allgather(3);
  // Rank 0 forwards block 0 again in its second step instead of block 2.
  s.programs[0].steps[2].seg = 0;
  s.programs[1].steps[3].seg = 0;
  EXPECT_HAS(error_of(s), "rank 1 block 2 lacks the contribution of rank 2");

  Schedule t = ring_allgather(3);
  // Rank 0's first send names block 2, which it does not hold yet, and
  // rank 1 stores it as block 2: block 0 never reaches rank 1.
  t.programs[0].steps[0].seg = 2;
  t.programs[1].steps[1].seg = 2;
  EXPECT_HAS(error_of(t), "rank 1 block 0 lacks the contribution of rank 0");
}

// A large schedule (P = 64 ring allreduce, 16128 steps) runs to the end;
// its speed is measured by benchmarks, not asserted here.
TEST(Simulator, LargeScheduleCompletes) {
  const Schedule s = ring_allreduce(64);
  std::vector<double> a = zeros(64);
  for (int r = 0; r < 64; ++r) a[static_cast<std::size_t>(r)] = (r * 37 % 11) * 0.5;
  const SimResult r = simulate(s, a, tau());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(r.max_exit, 2.0 * 63);
}

}  // namespace
}  // namespace papshim
