// Tests for the Sparbit, ring, Bruck and recursive doubling allgather
// schedules and the binomial reduce schedule.
//
// Works as follows.  A small symbolic checker runs a schedule in memory.  The
// state of (rank, segment) is the multiset of contributions it holds, as a
// sorted list of origin ranks: allgather starts with {r} in segment r only,
// reduce with {r} in every segment.  A message carries the sender's list;
// RecvCopy replaces, RecvReduce merges.  Messages match by (src, dst, tag).
// Two execution models, both must finish and end with the right data:
//   eager      each rank runs its steps strictly in program order; a Send
//              returns at once (buffered), a receive blocks until its message
//              exists.  This checks that program order is a valid time order.
//   dataflow   the executor's model from schedule.h: a step is posted once its
//              per-segment dependencies are done (a RecvReduce's receive at
//              once), and a Send completes only when its receive is posted
//              (rendezvous).
// No progress with steps left means deadlock.
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

namespace papshim {
namespace {

using Content = std::vector<int>;          // sorted origin ranks
using Key = std::tuple<int, int, int>;     // (src, dst, tag)
enum class Model { Eager, Dataflow };

bool is_write(StepOp op) { return op != StepOp::Send; }

std::string where(int rank, std::size_t i, const Step& st) {
  std::ostringstream os;
  os << "rank " << rank << " step " << i << " (" << to_string(st.op)
     << " peer " << st.peer << " seg " << st.seg << " tag " << st.tag << ")";
  return os.str();
}

Content merged(const Content& a, const Content& b) {
  Content out;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class Checker {
 public:
  explicit Checker(const Schedule& s) : s_(s), P_(static_cast<int>(s.programs.size())) {}

  // "" when the schedule is well formed, runs to completion under `model`
  // and leaves the right data; otherwise the first problem found.
  std::string run(Model model) {
    if (auto err = validate(); !err.empty()) return err;
    init_buffers();
    auto err = model == Model::Eager ? run_eager() : run_dataflow();
    return err.empty() ? final_check() : err;
  }

 private:
  const Schedule& s_;
  int P_;
  std::vector<std::vector<Content>> buf_;  // [rank][seg]

  const std::vector<Step>& steps(int r) const {
    return s_.programs[static_cast<std::size_t>(r)].steps;
  }

  // Phase 1: static checks - ranges, ops, tags, one receive per send.
  std::string validate() const {
    if (s_.nseg < 1) return "nseg < 1";
    if (s_.coll == Collective::Allgather && s_.nseg != P_) return "allgather nseg != P";
    std::map<Key, int> sends, recvs;  // key -> seg
    std::map<std::pair<int, int>, int> copies;  // (rank, seg) -> RecvCopy count
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < steps(r).size(); ++i) {
        const Step& st = steps(r)[i];
        if (st.peer < 0 || st.peer >= P_ || st.peer == r) return "bad peer at " + where(r, i, st);
        if (st.seg < 0 || st.seg >= s_.nseg) return "bad seg at " + where(r, i, st);
        if (st.tag < 0) return "negative tag at " + where(r, i, st);
        if (s_.coll == Collective::Allgather && st.op == StepOp::RecvReduce)
          return "RecvReduce in allgather at " + where(r, i, st);
        const bool send = st.op == StepOp::Send;
        const Key key = send ? Key{r, st.peer, st.tag} : Key{st.peer, r, st.tag};
        if (!(send ? sends : recvs).emplace(key, st.seg).second)
          return "tag reused for one (sender, receiver) pair at " + where(r, i, st);
        if (st.op == StepOp::RecvCopy && s_.coll == Collective::Allgather &&
            (st.seg == r || ++copies[{r, st.seg}] > 1))
          return "block received twice or own block overwritten at " + where(r, i, st);
      }
    for (const auto& [key, seg] : sends) {
      auto it = recvs.find(key);
      if (it == recvs.end()) return "unmatched send " + std::to_string(std::get<0>(key)) + "->" +
                                    std::to_string(std::get<1>(key)) + " tag " +
                                    std::to_string(std::get<2>(key));
      if (it->second != seg) return "send and receive disagree on the segment";
    }
    if (sends.size() != recvs.size()) return "unmatched receive";
    return "";
  }

  void init_buffers() {
    buf_.assign(static_cast<std::size_t>(P_),
                std::vector<Content>(static_cast<std::size_t>(s_.nseg)));
    for (int r = 0; r < P_; ++r)
      for (int g = 0; g < s_.nseg; ++g)
        if (s_.coll != Collective::Allgather || g == r) buf_[r][g] = {r};
  }

  void apply(int r, const Step& st, const Content& data) {
    Content& mine = buf_[r][st.seg];
    mine = st.op == StepOp::RecvCopy ? data : merged(data, mine);
  }

  // Phase 2a: program order, buffered sends.
  std::string run_eager() {
    std::map<Key, Content> inflight;
    std::vector<std::size_t> pc(static_cast<std::size_t>(P_), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < P_; ++r)
        for (; pc[r] < steps(r).size(); ++pc[r], progress = true) {
          const Step& st = steps(r)[pc[r]];
          if (st.op == StepOp::Send) {
            if (buf_[r][st.seg].empty()) return "sends data it lacks: " + where(r, pc[r], st);
            inflight[{r, st.peer, st.tag}] = buf_[r][st.seg];
            continue;
          }
          auto it = inflight.find({st.peer, r, st.tag});
          if (it == inflight.end()) break;  // blocked on this receive
          apply(r, st, it->second);
          inflight.erase(it);
        }
    }
    for (int r = 0; r < P_; ++r)
      if (pc[r] < steps(r).size()) return "deadlock (eager): " + where(r, pc[r], steps(r)[pc[r]]);
    return "";
  }

  // Phase 2b: data flow per segment, rendezvous sends.
  enum State : int { Idle, Posted, Arrived, Done };
  std::string run_dataflow() {
    std::vector<std::vector<int>> state(static_cast<std::size_t>(P_));
    std::vector<std::vector<Content>> payload(static_cast<std::size_t>(P_));
    std::map<Key, std::pair<int, std::size_t>> recv_at;  // key -> (rank, step)
    for (int r = 0; r < P_; ++r) {
      state[r].assign(steps(r).size(), Idle);
      payload[r].resize(steps(r).size());
      for (std::size_t i = 0; i < steps(r).size(); ++i)
        if (steps(r)[i].op != StepOp::Send)
          recv_at[{steps(r)[i].peer, r, steps(r)[i].tag}] = {r, i};
    }
    // Are the earlier steps on the same segment done (writes only, or all)?
    auto earlier_done = [&](int r, std::size_t i, bool writes_only) {
      for (std::size_t j = 0; j < i; ++j) {
        const Step& e = steps(r)[j];
        if (e.seg == steps(r)[i].seg && state[r][j] != Done && (!writes_only || is_write(e.op)))
          return false;
      }
      return true;
    };
    std::size_t left = 0;
    for (int r = 0; r < P_; ++r) left += steps(r).size();
    for (bool progress = true; progress && left > 0;) {
      progress = false;
      for (int r = 0; r < P_; ++r)
        for (std::size_t i = 0; i < steps(r).size(); ++i) {
          const Step& st = steps(r)[i];
          int& cur = state[r][i];
          // Post what is ready; a RecvReduce's receive needs nothing.
          if (cur == Idle) {
            const bool ready = st.op == StepOp::Send ? earlier_done(r, i, true)
                               : st.op == StepOp::RecvCopy ? earlier_done(r, i, false)
                                                           : true;
            if (!ready) continue;
            if (st.op == StepOp::Send) {
              if (buf_[r][st.seg].empty()) return "sends data it lacks: " + where(r, i, st);
              payload[r][i] = buf_[r][st.seg];
            }
            cur = Posted;
            progress = true;
          }
          // Match a posted send with its posted receive.
          if (cur == Posted && st.op == StepOp::Send) {
            auto [rr, ri] = recv_at.at({r, st.peer, st.tag});
            int& other = state[rr][ri];
            if (other != Posted) continue;
            const Step& rs = steps(rr)[ri];
            if (rs.op == StepOp::RecvCopy) {
              apply(rr, rs, payload[r][i]);
              other = Done;
              --left;
            } else {
              payload[rr][ri] = payload[r][i];
              other = Arrived;
            }
            cur = Done;
            --left;
            progress = true;
          }
          // Combine an arrived RecvReduce once the segment is free.
          if (cur == Arrived && earlier_done(r, i, false)) {
            apply(r, st, payload[r][i]);
            cur = Done;
            --left;
            progress = true;
          }
        }
    }
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < steps(r).size(); ++i)
        if (state[r][i] != Done) return "deadlock (dataflow): " + where(r, i, steps(r)[i]);
    return "";
  }

  // Phase 3: allgather: block b == {b} everywhere; reduce: root has all.
  std::string final_check() const {
    if (s_.coll == Collective::Allgather) {
      for (int r = 0; r < P_; ++r)
        for (int b = 0; b < P_; ++b)
          if (buf_[r][b] != Content{b})
            return "rank " + std::to_string(r) + " block " + std::to_string(b) + " wrong";
      return "";
    }
    Content all(static_cast<std::size_t>(P_));
    std::iota(all.begin(), all.end(), 0);
    for (int g = 0; g < s_.nseg; ++g)
      if (buf_[s_.root][g] != all) return "root segment " + std::to_string(g) + " wrong";
    return "";
  }
};

std::string check_both(const Schedule& s) {
  Checker c(s);
  auto err = c.run(Model::Eager);
  if (!err.empty()) return err;
  return c.run(Model::Dataflow);
}

ScheduleParams params_for(int nprocs) {
  ScheduleParams p;
  p.nprocs = nprocs;
  p.count = static_cast<std::size_t>(nprocs) * 4;
  p.nseg = nprocs;
  p.arrival.assign(static_cast<std::size_t>(nprocs), 0.0);
  return p;
}

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
  EXPECT_NE(Checker(swapped).run(Model::Eager), "");     // a cycle in time
  EXPECT_EQ(Checker(swapped).run(Model::Dataflow), "");  // independent segments

  Schedule cycle;  // each rank's send waits for the other's send
  cycle.coll = Collective::Reduce;
  cycle.programs.resize(2);
  cycle.programs[0].steps = {{StepOp::RecvReduce, 1, 0, 0}, {StepOp::Send, 1, 0, 1}};
  cycle.programs[1].steps = {{StepOp::RecvReduce, 0, 0, 1}, {StepOp::Send, 0, 0, 0}};
  EXPECT_NE(Checker(cycle).run(Model::Eager), "");
  EXPECT_NE(Checker(cycle).run(Model::Dataflow), "");

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
    EXPECT_EQ(Checker(build_sparbit(params_for(P))).run(Model::Eager), "") << "P=" << P;
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

// Random arrivals from a fixed seed: the same on every run.
std::vector<double> random_arrivals(int P, unsigned seed) {
  std::vector<double> a(static_cast<std::size_t>(P));
  unsigned x = seed * 2654435761u + 1;
  for (auto& t : a) {
    x = x * 1103515245u + 12345u;
    t = static_cast<double>((x >> 8) % 1000) * 1e-3;
  }
  return a;
}

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
