// Clairvoyant reduce schedules: the worked examples of the seed, and a
// property test over random instances.
//
// The symbolic checker works as follows: every rank holds, per segment, a
// vector of contribution counts (one entry per rank; initially 1 for itself).
// Rounds are replayed in order: every Send of round k carries the sender's
// vector as it was at the start of round k, RecvReduce adds it to the
// receiver's, RecvCopy replaces the receiver's.  At the end the root must
// hold every rank's contribution exactly once in every segment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/clairvoyant.h"
#include "algorithms/simulator.h"

namespace papshim {
namespace {

ScheduleParams make_params(int P, int root, int N, std::vector<double> arrival, double d) {
  ScheduleParams p;
  p.nprocs = P;
  p.root = root;
  p.nseg = N;
  p.count = static_cast<std::size_t>(N);
  p.arrival = std::move(arrival);
  p.tau = d;
  return p;
}

std::string describe(const Step& s) {
  std::ostringstream o;
  o << to_string(s.op) << "(peer " << s.peer << ", seg " << s.seg << ", tag " << s.tag
    << ", round " << s.round << ")";
  return o.str();
}

// Structure checks, then the symbolic replay described at the top.
testing::AssertionResult is_correct_reduce(const Schedule& s, int P, int N, int root) {
  if (s.coll != Collective::Reduce || s.nseg != N || s.root != root ||
      s.programs.size() != static_cast<std::size_t>(P))
    return testing::AssertionFailure() << "wrong header";

  // Every step is half of a message (round, sender, receiver): sorted, each
  // Send must be followed by its receive, on the same segment.
  struct Half {
    int round, from, to, seg;
    StepOp op;
  };
  std::vector<Half> halves;
  for (int r = 0; r < P; ++r) {
    const auto& steps = s.programs[r].steps;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const Step& st = steps[k];
      if (st.peer < 0 || st.peer >= P || st.peer == r || st.seg < 0 || st.seg >= N)
        return testing::AssertionFailure() << "rank " << r << ": bad step " << describe(st);
      if (st.tag != st.round || st.round < 0)
        return testing::AssertionFailure() << "rank " << r << ": tag != round " << describe(st);
      if (k > 0 && steps[k - 1].round > st.round)
        return testing::AssertionFailure() << "rank " << r << ": rounds out of order";
      // At most one send and one receive per round, on different segments.
      for (std::size_t q = k; q-- > 0 && steps[q].round == st.round;) {
        const bool both_send = (steps[q].op == StepOp::Send) == (st.op == StepOp::Send);
        if (both_send || steps[q].seg == st.seg)
          return testing::AssertionFailure() << "rank " << r << ": clash in round " << st.round;
      }
      const bool send = st.op == StepOp::Send;
      halves.push_back({st.round, send ? r : st.peer, send ? st.peer : r, st.seg, st.op});
    }
  }
  auto key = [](const Half& h) { return std::make_tuple(h.round, h.from, h.to); };
  std::sort(halves.begin(), halves.end(), [&](const Half& a, const Half& b) {
    return std::make_tuple(a.round, a.from, a.to, a.op) < std::make_tuple(b.round, b.from, b.to, b.op);
  });
  for (std::size_t k = 0; k < halves.size(); k += 2) {
    const Half& a = halves[k];
    if (k + 1 >= halves.size() || key(halves[k + 1]) != key(a) || a.op != StepOp::Send ||
        halves[k + 1].op == StepOp::Send || halves[k + 1].seg != a.seg ||
        (k + 2 < halves.size() && key(halves[k + 2]) == key(a)))
      return testing::AssertionFailure() << "unmatched message in round " << a.round << " from "
                                         << a.from << " to " << a.to;
  }

  using Counts = std::vector<int>;
  std::vector<std::vector<Counts>> state(static_cast<std::size_t>(P),
                                         std::vector<Counts>(static_cast<std::size_t>(N)));
  for (int r = 0; r < P; ++r)
    for (int j = 0; j < N; ++j) {
      state[r][j].assign(static_cast<std::size_t>(P), 0);
      state[r][j][r] = 1;
    }
  // Round by round: take every payload of the round before applying any.
  std::vector<Counts> payload;
  for (std::size_t k = 0; k < halves.size();) {
    std::size_t end = k;
    while (end < halves.size() && halves[end].round == halves[k].round) end += 2;
    payload.clear();
    for (std::size_t x = k; x < end; x += 2) payload.push_back(state[halves[x].from][halves[x].seg]);
    for (std::size_t x = k; x < end; x += 2) {
      Counts& dst = state[halves[x].to][halves[x].seg];
      const Counts& src = payload[(x - k) / 2];
      if (halves[x + 1].op == StepOp::RecvCopy)
        dst = src;
      else
        for (int q = 0; q < P; ++q) dst[q] += src[q];
    }
    k = end;
  }
  for (int j = 0; j < N; ++j)
    for (int q = 0; q < P; ++q)
      if (state[root][j][q] != 1)
        return testing::AssertionFailure() << "root's segment " << j << " has rank " << q
                                           << "'s contribution " << state[root][j][q] << " times";
  return testing::AssertionSuccess();
}

testing::AssertionResult same_schedule(const Schedule& a, const Schedule& b) {
  if (a.programs.size() != b.programs.size() || a.nseg != b.nseg || a.root != b.root)
    return testing::AssertionFailure() << "different shape";
  for (std::size_t r = 0; r < a.programs.size(); ++r) {
    const auto& x = a.programs[r].steps;
    const auto& y = b.programs[r].steps;
    for (std::size_t k = 0; k < std::max(x.size(), y.size()); ++k) {
      if (k >= x.size() || k >= y.size())
        return testing::AssertionFailure() << "rank " << r << ": lengths " << x.size() << " vs "
                                           << y.size();
      if (x[k].op != y[k].op || x[k].peer != y[k].peer || x[k].seg != y[k].seg ||
          x[k].tag != y[k].tag || x[k].round != y[k].round)
        return testing::AssertionFailure() << "rank " << r << " step " << k << ": "
                                           << describe(x[k]) << " vs " << describe(y[k]);
    }
  }
  return testing::AssertionSuccess();
}

void expect_steps(const Schedule& s, int rank, const std::vector<Step>& want) {
  const auto& got = s.programs[rank].steps;
  ASSERT_EQ(got.size(), want.size()) << "rank " << rank;
  for (std::size_t k = 0; k < want.size(); ++k)
    EXPECT_TRUE(got[k].op == want[k].op && got[k].peer == want[k].peer &&
                got[k].seg == want[k].seg && got[k].round == want[k].round &&
                got[k].tag == want[k].round)
        << "rank " << rank << " step " << k << ": got " << describe(got[k]) << ", want "
        << describe(want[k]);
}

constexpr StepOp kSend = StepOp::Send, kReduce = StepOp::RecvReduce, kCopy = StepOp::RecvCopy;

// Seed section 4.2: P = 4, a = (0, 0, 0, 1.1), root 0, N = 4, d = 1.
TEST(Clairvoyant, WorkedCheckSeed42) {
  const auto params = make_params(4, 0, 4, {0, 0, 0, 1.1}, 1.0);
  for (const Schedule& s : {build_clairvoyant(params), build_clairvoyant_linear(params)}) {
    auto first = [&](int rank, std::size_t n) {
      Schedule t = s;
      t.programs[rank].steps.resize(std::min(n, s.programs[rank].steps.size()));
      return t;
    };
    // Round 0: p1 sends s0 to p0, p0 sends s1 to p1, p2 idles.
    // Round 1: p2 -> p0 s0, p3 -> p1 s1, then P' keeps p1 from resending s1:
    // p0 -> p2 s2 and p1 -> p3 s2.
    expect_steps(first(0, 4), 0,
                 {{kReduce, 1, 0, 0, 0}, {kSend, 1, 1, 0, 0}, {kReduce, 2, 0, 1, 1},
                  {kSend, 2, 2, 1, 1}});
    expect_steps(first(1, 4), 1,
                 {{kSend, 0, 0, 0, 0}, {kReduce, 0, 1, 0, 0}, {kReduce, 3, 1, 1, 1},
                  {kSend, 3, 2, 1, 1}});
    expect_steps(first(2, 2), 2, {{kSend, 0, 0, 1, 1}, {kReduce, 0, 2, 1, 1}});
    expect_steps(first(3, 2), 3, {{kSend, 1, 1, 1, 1}, {kReduce, 1, 2, 1, 1}});
    EXPECT_TRUE(is_correct_reduce(s, 4, 4, 0));
  }
  EXPECT_TRUE(same_schedule(build_clairvoyant(params), build_clairvoyant_linear(params)));
}

// Seed section 5.1: one segment, d = 1 ms, arrivals 0, 1, 2, 3 s.  Every
// arrival costs one communication round; the ~1000 idle rounds in between
// are skipped and get no round number.
TEST(Clairvoyant, IdleRoundsSeed51) {
  for (double scale : {1.0, 1e6}) {
    const auto params = make_params(4, 0, 1, {0, 1 * scale, 2 * scale, 3 * scale}, 1e-3);
    for (const Schedule& s : {build_clairvoyant(params), build_clairvoyant_linear(params)}) {
      expect_steps(s, 0, {{kReduce, 1, 0, 0, 0}, {kReduce, 2, 0, 1, 1}, {kReduce, 3, 0, 2, 2}});
      expect_steps(s, 1, {{kSend, 0, 0, 0, 0}});
      expect_steps(s, 2, {{kSend, 0, 0, 1, 1}});
      expect_steps(s, 3, {{kSend, 0, 0, 2, 2}});
      EXPECT_EQ(s.max_tag(), 2);
    }
  }
}

// The root returns a segment it has sent: it copies instead of reducing.
TEST(Clairvoyant, RootCopiesBack) {
  // P = 2, N = 2: p1 -> p0 s0 and p0 -> p1 s1, then p1 -> p0 s1 (copy).
  const auto params = make_params(2, 0, 2, {0, 0}, 1.0);
  const Schedule s = build_clairvoyant(params);
  expect_steps(s, 0, {{kReduce, 1, 0, 0, 0}, {kSend, 1, 1, 0, 0}, {kCopy, 1, 1, 1, 1}});
  expect_steps(s, 1, {{kSend, 0, 0, 0, 0}, {kReduce, 0, 1, 0, 0}, {kSend, 0, 1, 1, 1}});
  EXPECT_TRUE(same_schedule(s, build_clairvoyant_linear(params)));
}

// The checker itself rejects a lost contribution, a doubled one and
// unmatched messages.
TEST(Clairvoyant, CheckerCatchesErrors) {
  const auto params = make_params(5, 1, 3, {0, 0.2, 0.4, 0.4, 2.5}, 0.5);
  const Schedule good = build_clairvoyant(params);
  ASSERT_TRUE(is_correct_reduce(good, 5, 3, 1));
  // The first step with operation `op`: (rank, index).
  auto first = [&](StepOp op) {
    for (std::size_t r = 0; r < good.programs.size(); ++r)
      for (std::size_t k = 0; k < good.programs[r].steps.size(); ++k)
        if (good.programs[r].steps[k].op == op) return std::make_pair(r, k);
    ADD_FAILURE() << "no " << to_string(op);
    return std::make_pair(std::size_t{0}, std::size_t{0});
  };
  const auto [rr, kr] = first(StepOp::RecvReduce);
  const auto [rc, kc] = first(StepOp::RecvCopy);
  Schedule bad = good;
  bad.programs[rr].steps[kr].op = StepOp::RecvCopy;  // drops what was held
  EXPECT_FALSE(is_correct_reduce(bad, 5, 3, 1));
  bad = good;
  bad.programs[rc].steps[kc].op = StepOp::RecvReduce;  // adds stale data again
  EXPECT_FALSE(is_correct_reduce(bad, 5, 3, 1));
  bad = good;
  bad.programs[rr].steps[kr].seg = (bad.programs[rr].steps[kr].seg + 1) % 3;
  EXPECT_FALSE(is_correct_reduce(bad, 5, 3, 1));
  bad = good;
  bad.programs[rr].steps.erase(bad.programs[rr].steps.begin() + static_cast<long>(kr));
  EXPECT_FALSE(is_correct_reduce(bad, 5, 3, 1));
}

// The sink is moved to the front of G (seed section 2; pseudo-root, 5.6): it
// is also the first peer candidate, ahead of members that are available
// earlier.  P = 3, a = (0, 0, 0.5), root 2: in round 0 the root receives s0
// from p0 and then serves p0 itself (s1), although p1 is available earlier.
TEST(Clairvoyant, SinkIsFirstPeer) {
  const auto params = make_params(3, 2, 2, {0, 0, 0.5}, 1.0);
  const Schedule s = build_clairvoyant(params);
  expect_steps(s, 0, {{kSend, 2, 0, 0, 0}, {kReduce, 2, 1, 0, 0}, {kSend, 1, 1, 1, 1}});
  expect_steps(s, 1, {{kSend, 2, 0, 1, 1}, {kReduce, 0, 1, 1, 1}, {kSend, 2, 1, 2, 2}});
  expect_steps(s, 2, {{kReduce, 0, 0, 0, 0}, {kSend, 0, 1, 0, 0}, {kReduce, 1, 0, 1, 1},
                      {kCopy, 1, 1, 2, 2}});
  EXPECT_TRUE(same_schedule(s, build_clairvoyant_linear(params)));
  EXPECT_TRUE(is_correct_reduce(s, 3, 2, 2));
}

// Exact ties at the window's edge: a member available exactly d after the
// head, with the head's fractional part and a higher rank, comes last in G
// (availability order), not right after the head (seed 5.4.3's index rule
// taken literally).  P = 3, a = (0.5, 0, 1), d = 1, root 1: G = {p1, p0, p2}.
TEST(Clairvoyant, TieAtWindowEdge) {
  const auto params = make_params(3, 1, 3, {0.5, 0, 1}, 1.0);
  const Schedule s = build_clairvoyant(params);
  EXPECT_TRUE(same_schedule(s, build_clairvoyant_linear(params)));
  EXPECT_TRUE(is_correct_reduce(s, 3, 3, 1));
  // Round 0: root p1 (sink) takes s0 from p0, the first free member by
  // availability (p2, available at 1, comes after p0 at 0.5).
  ASSERT_FALSE(s.programs[1].steps.empty());
  EXPECT_EQ(s.programs[1].steps[0].peer, 0);
}

TEST(Clairvoyant, EdgeCases) {
  for (int N : {1, 3}) {
    const auto one = make_params(1, 0, N, {5.0}, 0.1);
    for (const Schedule& s : {build_clairvoyant(one), build_clairvoyant_linear(one)}) {
      ASSERT_EQ(s.programs.size(), 1u);
      EXPECT_TRUE(s.programs[0].steps.empty());
      EXPECT_EQ(s.coll, Collective::Reduce);
      EXPECT_EQ(s.nseg, N);
    }
  }
  // Huge spread and arrival times far from zero.
  const auto wide = make_params(5, 3, 4, {1e9, 1e9 + 1e6, 1e9 - 1e5, 1e9, 1e12}, 1e-9);
  EXPECT_TRUE(is_correct_reduce(build_clairvoyant(wide), 5, 4, 3));
  EXPECT_TRUE(same_schedule(build_clairvoyant(wide), build_clairvoyant_linear(wide)));
  const auto absurd = make_params(3, 1, 2, {-1e300, 0, 1e300}, 1e-300);
  EXPECT_TRUE(is_correct_reduce(build_clairvoyant(absurd), 3, 2, 1));
  EXPECT_TRUE(same_schedule(build_clairvoyant(absurd), build_clairvoyant_linear(absurd)));

  EXPECT_THROW(build_clairvoyant(make_params(2, 0, 1, {0}, 1)), std::invalid_argument);
  EXPECT_THROW(build_clairvoyant(make_params(2, 2, 1, {0, 0}, 1)), std::invalid_argument);
  EXPECT_THROW(build_clairvoyant(make_params(2, 0, 0, {0, 0}, 1)), std::invalid_argument);
  EXPECT_THROW(build_clairvoyant(make_params(2, 0, 1, {0, 0}, 0)), std::invalid_argument);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(build_clairvoyant_linear(make_params(2, 0, 1, {0, inf}, 1)), std::invalid_argument);
}

// Random instances: both versions agree step for step, and the schedule is a
// correct reduce.  Arrival shapes: uniform and skewed as in seed 5.7, whole
// multiples of d (exact ties at the window's edge), all equal, few clusters,
// and a huge spread.
TEST(Clairvoyant, RandomInstancesAgreeAndReduce) {
  std::mt19937_64 rng(20240611);
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0, max_rounds_over_pn = 0;
  for (int it = 0; it < 2400; ++it) {
    const int shape = it % 6;
    const int P = it < 100 ? 1 + it % 8 : pick(1, 64);
    const int N = pick(1, 64);
    double d = uni(0.001, 1.0);
    int root = pick(0, P - 1);
    std::vector<double> a(static_cast<std::size_t>(P));
    switch (shape) {
      case 0:
        for (double& x : a) x = uni(0, P + 0.1);
        break;
      case 1:  // skewed (seed 5.7): the last process late by N, root 0
        std::fill(a.begin(), a.end(), 0.0);
        a.back() = N;
        root = 0;
        break;
      case 2:
        d = 1.0 / pick(1, 4);
        for (double& x : a) x = pick(0, 6) * d;
        break;
      case 3:
        std::fill(a.begin(), a.end(), uni(-5, 5));
        break;
      case 4: {
        const double c[3] = {0, uni(0, 3), uni(0, 30)};
        for (double& x : a) x = c[pick(0, 2)] + uni(0, 0.01);
        break;
      }
      default:
        for (double& x : a) x = std::exp(uni(0, 40));
        d = std::exp(uni(-20, 0));
        break;
    }
    const auto params = make_params(P, root, N, a, d);
    const Schedule fast = build_clairvoyant(params);
    const Schedule slow = build_clairvoyant_linear(params);
    ASSERT_TRUE(same_schedule(fast, slow)) << "instance " << it << " shape " << shape;
    ASSERT_TRUE(is_correct_reduce(fast, P, N, root)) << "instance " << it << " shape " << shape;
    max_rounds_over_pn = std::max(max_rounds_over_pn, (fast.max_tag() + 1) / (P * N));
    ++checked;
  }
  EXPECT_EQ(checked, 2400);
  EXPECT_LE(max_rounds_over_pn, 1);
}

// Larger random instances (P up to 256): the segment tree then has up to 8
// levels and G often has more than 64 members, which the instances above
// never reach.  Few of them: the linear generator and the symbolic check
// grow as P^2 N per round.
TEST(Clairvoyant, LargerRandomInstancesAgree) {
  std::mt19937_64 rng(77);
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int it = 0; it < 8; ++it) {
    const int P = pick(65, 256), N = pick(1, 40), root = pick(0, P - 1);
    const double d = uni(0.05, 1.0);
    std::vector<double> a(static_cast<std::size_t>(P));
    for (double& x : a) x = it % 2 ? uni(0, P + 0.1) : pick(0, 3) * d;
    const auto params = make_params(P, root, N, a, d);
    const Schedule fast = build_clairvoyant(params);
    ASSERT_TRUE(same_schedule(fast, build_clairvoyant_linear(params))) << "instance " << it << " P=" << P;
    ASSERT_TRUE(is_correct_reduce(fast, P, N, root)) << "instance " << it << " P=" << P;
  }
}

// The general simulator runs the schedules as the executor would (data flow,
// one message per port and direction, or unlimited ports): no deadlock, and
// the root ends with every contribution once.
TEST(Clairvoyant, SimulatorAcceptsSchedules) {
  std::mt19937_64 rng(99);
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int it = 0; it < 300; ++it) {
    const int P = pick(1, 48), N = pick(1, 48), root = pick(0, P - 1);
    const double d = uni(0.001, 1.0);
    std::vector<double> a(static_cast<std::size_t>(P));
    for (double& x : a) x = it % 2 ? uni(0, P + 0.1) : pick(0, 3) * d;
    const Schedule s = build_clairvoyant(make_params(P, root, N, a, d));
    for (bool serial : {true, false}) {
      SimCost cost = SimCost::tau_steps(d);
      cost.serial_ports = serial;
      cost.count = static_cast<std::size_t>(N);
      const SimResult r = simulate(s, a, cost);
      ASSERT_TRUE(r.ok) << "instance " << it << ": " << r.error;
    }
  }
  // Seed 4.2 instance: six rounds of d = 1; the last process arrives at 1.1.
  const auto params = make_params(4, 0, 4, {0, 0, 0, 1.1}, 1.0);
  const SimResult r = simulate(build_clairvoyant(params), params.arrival, SimCost::tau_steps(1.0));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NEAR(r.exit[0], 6.1, 1e-9);
}

}  // namespace
}  // namespace papshim
