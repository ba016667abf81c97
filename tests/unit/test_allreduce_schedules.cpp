// Tests for the allreduce schedules: SLT, plain linear tree, PRR, ring,
// Rabenseifner and direct.
//
// Works as follows.  A symbolic checker plays a schedule in memory.  The
// value of (rank, segment) is a `Value`: `count[q]`, how many times rank q's
// contribution is in it, and `expr`, an interned id of the reduction tree that
// produced it (leaf q for rank q's own data; RecvReduce makes the node
// (incoming, own), as the executor computes buf = incoming op buf).  A Send
// carries the sender's value when the Send is issued, RecvReduce combines it
// into the receiver's, RecvCopy replaces it.  Messages match by
// (source, destination, tag).  Two execution models:
//   in order   every rank runs its steps strictly in program order; a Send is
//              buffered and returns at once, a receive waits for its message.
//              Finishing shows that program order is a valid time order.
//   data flow  the executor's rules (schedule.h): a Send is issued once the
//              earlier writes of its segment are done, a RecvCopy once every
//              earlier step of its segment is done; a RecvReduce's receive is
//              posted at once but combines only once the earlier steps of its
//              segment are done; a Send completes when its receive is posted.
// No progress with steps left is a deadlock.  At the end every rank must hold
// every contribution exactly once in every segment, and all ranks the same
// expression (the same bits, whatever the floating-point op).
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

namespace papshim {
namespace {

struct Value {
  std::vector<int> count;
  int expr = -1;
};

using MsgKey = std::tuple<int, int, int>;  // (source, destination, tag)

std::string describe(int rank, std::size_t i, const Step& st) {
  std::ostringstream os;
  os << "rank " << rank << " step " << i << " " << to_string(st.op) << " peer " << st.peer
     << " seg " << st.seg << " tag " << st.tag;
  return os.str();
}

class SymbolicRun {
 public:
  explicit SymbolicRun(const Schedule& s) : s_(s), P_(static_cast<int>(s.programs.size())) {}

  // Empty when the schedule is well formed, finishes under the model and
  // leaves a correct allreduce; otherwise the first problem found.
  std::string check(bool in_order) {
    std::string err = validate();
    if (err.empty()) {
      reset();
      err = in_order ? run_in_order() : run_data_flow();
    }
    return err.empty() ? verify() : err;
  }

 private:
  const Schedule& s_;
  int P_;
  std::vector<std::vector<Value>> val_;            // [rank][seg]
  std::map<std::pair<int, int>, int> exprs_;       // (incoming, own) -> id
  std::map<MsgKey, std::pair<int, std::size_t>> receiver_;  // -> (rank, step)

  const std::vector<Step>& prog(int r) const { return s_.programs[static_cast<std::size_t>(r)].steps; }

  std::string validate() {
    if (s_.coll != Collective::Allreduce) return "not an allreduce";
    if (s_.nseg < 1) return "nseg < 1";
    std::map<MsgKey, int> send_seg;
    receiver_.clear();
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < prog(r).size(); ++i) {
        const Step& st = prog(r)[i];
        if (st.peer < 0 || st.peer >= P_ || st.peer == r) return "bad peer: " + describe(r, i, st);
        if (st.seg < 0 || st.seg >= s_.nseg) return "bad segment: " + describe(r, i, st);
        if (st.tag < 0) return "negative tag: " + describe(r, i, st);
        if (st.op == StepOp::Send) {
          if (!send_seg.emplace(MsgKey{r, st.peer, st.tag}, st.seg).second) return "tag reused: " + describe(r, i, st);
        } else if (!receiver_.emplace(MsgKey{st.peer, r, st.tag}, std::make_pair(r, i)).second) {
          return "tag reused: " + describe(r, i, st);
        }
      }
    if (send_seg.size() != receiver_.size()) return "sends and receives do not pair up";
    for (const auto& [key, seg] : send_seg) {
      const auto it = receiver_.find(key);
      if (it == receiver_.end()) return "send without receive";
      if (prog(it->second.first)[it->second.second].seg != seg) return "send and receive on different segments";
    }
    return "";
  }

  void reset() {
    val_.assign(static_cast<std::size_t>(P_), std::vector<Value>(static_cast<std::size_t>(s_.nseg)));
    exprs_.clear();
    for (int r = 0; r < P_; ++r)
      for (auto& v : val_[static_cast<std::size_t>(r)]) {
        v.count.assign(static_cast<std::size_t>(P_), 0);
        v.count[static_cast<std::size_t>(r)] = 1;
        v.expr = -1 - r;  // leaves are negative, nodes non-negative
      }
  }

  void receive(int r, const Step& st, const Value& in) {
    Value& mine = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
    if (st.op == StepOp::RecvCopy) {
      mine = in;
      return;
    }
    for (int q = 0; q < P_; ++q) mine.count[static_cast<std::size_t>(q)] += in.count[static_cast<std::size_t>(q)];
    const auto node = exprs_.emplace(std::make_pair(in.expr, mine.expr), static_cast<int>(exprs_.size()));
    mine.expr = node.first->second;
  }

  std::string run_in_order() {
    std::map<MsgKey, Value> buffered;
    std::vector<std::size_t> pc(static_cast<std::size_t>(P_), 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < P_; ++r) {
        std::size_t& i = pc[static_cast<std::size_t>(r)];
        while (i < prog(r).size()) {
          const Step& st = prog(r)[i];
          if (st.op == StepOp::Send) {
            buffered[{r, st.peer, st.tag}] = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
          } else {
            const auto it = buffered.find({st.peer, r, st.tag});
            if (it == buffered.end()) break;
            receive(r, st, it->second);
            buffered.erase(it);
          }
          ++i;
          moved = true;
        }
      }
    }
    for (int r = 0; r < P_; ++r)
      if (pc[static_cast<std::size_t>(r)] < prog(r).size())
        return "deadlock in order at " + describe(r, pc[static_cast<std::size_t>(r)], prog(r)[pc[static_cast<std::size_t>(r)]]);
    return "";
  }

  // Step states of the data-flow model.
  enum Phase { kWaiting, kIssued, kArrived, kDone };

  std::string run_data_flow() {
    std::vector<std::vector<Phase>> phase(static_cast<std::size_t>(P_));
    std::vector<std::vector<Value>> carried(static_cast<std::size_t>(P_));
    for (int r = 0; r < P_; ++r) {
      phase[static_cast<std::size_t>(r)].assign(prog(r).size(), kWaiting);
      carried[static_cast<std::size_t>(r)].resize(prog(r).size());
    }
    auto at = [&](int r, std::size_t i) -> Phase& { return phase[static_cast<std::size_t>(r)][i]; };
    // Are the earlier steps of the same segment done (only writes, or all)?
    auto free_before = [&](int r, std::size_t i, bool writes_only) {
      for (std::size_t j = 0; j < i; ++j) {
        const Step& e = prog(r)[j];
        if (e.seg == prog(r)[i].seg && at(r, j) != kDone && !(writes_only && e.op == StepOp::Send)) return false;
      }
      return true;
    };
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < P_; ++r)
        for (std::size_t i = 0; i < prog(r).size(); ++i) {
          const Step& st = prog(r)[i];
          Phase& ph = at(r, i);
          if (ph == kWaiting) {  // issue
            const bool ok = st.op == StepOp::RecvReduce || free_before(r, i, st.op == StepOp::Send);
            if (!ok) continue;
            if (st.op == StepOp::Send)
              carried[static_cast<std::size_t>(r)][i] = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
            ph = kIssued;
            moved = true;
          }
          if (ph == kIssued && st.op == StepOp::Send) {  // rendezvous
            const auto [rr, ri] = receiver_.at({r, st.peer, st.tag});
            if (at(rr, ri) != kIssued) continue;
            const Step& rs = prog(rr)[ri];
            if (rs.op == StepOp::RecvCopy) {
              receive(rr, rs, carried[static_cast<std::size_t>(r)][i]);
              at(rr, ri) = kDone;
            } else {
              carried[static_cast<std::size_t>(rr)][ri] = carried[static_cast<std::size_t>(r)][i];
              at(rr, ri) = kArrived;
            }
            ph = kDone;
            moved = true;
          }
          if (ph == kArrived && free_before(r, i, false)) {  // combine
            receive(r, st, carried[static_cast<std::size_t>(r)][i]);
            ph = kDone;
            moved = true;
          }
        }
    }
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < prog(r).size(); ++i)
        if (at(r, i) != kDone) return "deadlock in data flow at " + describe(r, i, prog(r)[i]);
    return "";
  }

  std::string verify() const {
    for (int g = 0; g < s_.nseg; ++g)
      for (int r = 0; r < P_; ++r) {
        const Value& v = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(g)];
        for (int q = 0; q < P_; ++q)
          if (v.count[static_cast<std::size_t>(q)] != 1)
            return "rank " + std::to_string(r) + " seg " + std::to_string(g) + " has contribution " +
                   std::to_string(q) + " " + std::to_string(v.count[static_cast<std::size_t>(q)]) + " times";
        if (v.expr != val_[0][static_cast<std::size_t>(g)].expr)
          return "ranks 0 and " + std::to_string(r) + " reduce seg " + std::to_string(g) + " differently";
      }
    return "";
  }
};

struct Builder {
  const char* name;
  std::function<Schedule(const ScheduleParams&)> build;
  int nseg_for(int P) const {  // the documented segment count
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
  };
  return all;
}

// Arrival patterns, in units of tau = 1: equal, one late, two late, uniform,
// integer (many ties), reversed, spread far beyond P tau.
std::vector<double> arrivals(int P, int pattern, std::mt19937& rng) {
  std::vector<double> a(static_cast<std::size_t>(P), 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto any = [&] { return static_cast<std::size_t>(rng() % static_cast<unsigned>(P)); };
  switch (pattern % 7) {
    case 0: break;
    case 1: a[any()] = 1.0 + 3.0 * P * u(rng); break;
    case 2: a[any()] = 2.0 * P * u(rng); a[any()] = 2.0 * P * u(rng); break;
    case 3: for (auto& x : a) x = P * u(rng); break;
    case 4: for (auto& x : a) x = static_cast<double>(rng() % 4); break;
    case 5: for (int r = 0; r < P; ++r) a[static_cast<std::size_t>(r)] = P - r; break;
    case 6: for (auto& x : a) x = 100.0 * P * u(rng) * u(rng); break;
  }
  return a;
}

void expect_correct(const Builder& b, const ScheduleParams& p, const std::string& what) {
  const Schedule s = b.build(p);
  ASSERT_EQ(static_cast<int>(s.programs.size()), p.nprocs) << what;
  EXPECT_EQ(s.nseg, b.nseg_for(p.nprocs)) << what;
  EXPECT_LE(s.max_tag(), 4 * s.nseg) << what;
  for (bool in_order : {true, false}) {
    SymbolicRun run(s);
    const std::string err = run.check(in_order);
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
    SymbolicRun a(s), b(s);
    return !a.check(true).empty() && !b.check(false).empty();
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
          SymbolicRun run(s);
          EXPECT_EQ(run.check(false), "") << label(b.name, P, a, tau);
          EXPECT_EQ(run.check(true), "") << label(b.name, P, a, tau);
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
