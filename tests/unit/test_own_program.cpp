// Own-program builds (ScheduleParams::rank) and the algorithm table.
//
// An own-program build must give programs[rank] exactly as the full build
// does, leave every other program empty, keep programs.size() == P and
// report the full build's max_tag() (dispatch decides run-or-native from it
// on every rank alike).  Checked for every table entry:
//   - every rank, all P up to 24 and a sample of P up to 256;
//   - a few ranks at P = 1024 (against the full build);
//   - a few ranks at P = 4096: against the full build where that is small
//     (the reduce trees and clairvoyant), else against the own programs of
//     their peers (every message has its matching receive, same segment and
//     tag), as the full build of an O(P^2)-step schedule would not fit.
// The table tests: every entry builds for P = 1..9 and passes the checker's
// and the simulator's data-flow rules; every name the parameters accept
// builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/schedule.h"
#include "algorithms/simulator.h"
#include "config/params.h"
#include "support/schedule_check.h"

namespace papshim {

// Test names show the algorithm, not a pointer (found by argument-dependent
// lookup, so it lives in papshim itself).
void PrintTo(const AlgoInfo* i, std::ostream* os);
void PrintTo(const AlgoInfo* i, std::ostream* os) { *os << to_string(i->coll) << ' ' << i->name; }

namespace {

std::vector<const AlgoInfo*> every_algorithm() {
  std::vector<const AlgoInfo*> all;
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather})
    for (const AlgoInfo* i : algorithms_for(c)) all.push_back(i);
  return all;
}

std::string algo_name(const AlgoInfo* i) { return std::string(to_string(i->coll)) + "_" + i->name; }

ScheduleParams params(const AlgoInfo& info, int P, int pattern, unsigned seed) {
  std::mt19937 rng(seed);
  ScheduleParams p;
  p.nprocs = P;
  p.count = 64 * static_cast<std::size_t>(P);
  p.nseg = info.coll == Collective::Reduce ? 1 + static_cast<int>(seed % 5) : P;
  p.root = info.coll == Collective::Reduce ? static_cast<int>(seed % static_cast<unsigned>(P)) : 0;
  p.arrival = test_support::arrival_pattern(P, pattern, rng);
  p.tau = pattern % 2 == 0 ? 1.0 : 0.37;
  return p;
}

int scanned_max_tag(const Schedule& s) {
  int m = 0;
  for (const auto& prog : s.programs)
    for (const Step& st : prog.steps) m = std::max(m, st.tag);
  return m;
}

// The own-program build for `rank` against the full build `full`.
void expect_own_matches(const AlgoInfo& info, ScheduleParams p, const Schedule& full, int rank,
                        const std::string& what) {
  p.rank = rank;
  const BuildResult own = build_schedule(info.algo, p);
  ASSERT_TRUE(own.schedule) << what << ": " << own.reason;
  const Schedule& s = *own.schedule;
  ASSERT_EQ(s.programs.size(), full.programs.size()) << what;
  EXPECT_EQ(s.nseg, full.nseg) << what;
  EXPECT_EQ(s.coll, full.coll) << what;
  EXPECT_EQ(s.root, full.root) << what;
  EXPECT_EQ(s.max_tag(), scanned_max_tag(full)) << what << " rank " << rank;
  for (std::size_t r = 0; r < s.programs.size(); ++r) {
    if (static_cast<int>(r) == rank)
      EXPECT_TRUE(test_support::same_steps(s.programs[r].steps, full.programs[r].steps)) << what << " rank " << rank;
    else
      EXPECT_TRUE(s.programs[r].steps.empty()) << what << " rank " << rank << ": program " << r << " filled";
  }
}

class TableEntry : public ::testing::TestWithParam<const AlgoInfo*> {};

TEST_P(TableEntry, OwnProgramEqualsFullBuildEveryRank) {
  const AlgoInfo& info = *GetParam();
  std::vector<int> sizes;
  for (int P = 1; P <= 24; ++P) sizes.push_back(P);
  for (int P : {31, 32, 33, 47, 64, 100, 128, 129, 200, 256}) sizes.push_back(P);
  const bool slow = info.algo == Algo::ClairvoyantLinear;  // O(|G|^2 N) per round and build
  for (int P : sizes) {
    const int patterns = P <= 24 ? 7 : 2;
    for (int pattern = 0; pattern < patterns; ++pattern) {
      const ScheduleParams p = params(info, P, pattern, static_cast<unsigned>(P * 31 + pattern));
      const BuildResult full = build_schedule(info.algo, p);
      if (!full.schedule) {
        ASSERT_EQ(info.algo, Algo::RecursiveDoubling) << full.reason;
        continue;
      }
      std::ostringstream what;
      what << info.name << " P=" << P << " pattern " << pattern;
      for (int r = 0; r < P; ++r) {
        if (slow && P > 64 && r % 16 != 0 && r != P - 1 && r != p.root) continue;
        expect_own_matches(info, p, *full.schedule, r, what.str());
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(TableEntry, OwnProgramEqualsFullBuildAt1024) {
  const AlgoInfo& info = *GetParam();
  const int P = 1024;
  for (int pattern : {0, 3}) {
    const ScheduleParams p = params(info, P, pattern, 1024u + static_cast<unsigned>(pattern));
    const BuildResult full = build_schedule(info.algo, p);
    ASSERT_TRUE(full.schedule) << info.name << ": " << full.reason;
    for (int r : {0, 1, 511, 1023, p.root}) {
      expect_own_matches(info, p, *full.schedule, r, std::string(info.name) + " P=1024");
      if (HasFailure()) return;
    }
  }
}

// Rank `rank`'s own program against its peers' own programs: every Send has
// one matching receive at the peer (same segment and tag) and back.
void expect_consistent_with_peers(const AlgoInfo& info, ScheduleParams p, int rank, const std::string& what) {
  p.rank = rank;
  const BuildResult own = build_schedule(info.algo, p);
  ASSERT_TRUE(own.schedule) << what << ": " << own.reason;
  const auto& mine = own.schedule->programs[static_cast<std::size_t>(rank)].steps;
  using Msg = std::tuple<int, int, int, int>;  // from, to, seg, tag
  std::multiset<Msg> from_me, to_me;
  std::set<int> peers;
  for (const Step& st : mine) {
    peers.insert(st.peer);
    if (st.op == StepOp::Send)
      from_me.insert({rank, st.peer, st.seg, st.tag});
    else
      to_me.insert({st.peer, rank, st.seg, st.tag});
  }
  std::multiset<Msg> peer_sends, peer_recvs;
  for (int q : peers) {
    ScheduleParams pq = p;
    pq.rank = q;
    const BuildResult other = build_schedule(info.algo, pq);
    ASSERT_TRUE(other.schedule) << what;
    EXPECT_EQ(other.schedule->max_tag(), own.schedule->max_tag()) << what << " ranks " << rank << ", " << q;
    for (const Step& st : other.schedule->programs[static_cast<std::size_t>(q)].steps) {
      if (st.peer != rank) continue;
      if (st.op == StepOp::Send)
        peer_sends.insert({q, rank, st.seg, st.tag});
      else
        peer_recvs.insert({rank, q, st.seg, st.tag});
    }
  }
  EXPECT_TRUE(from_me == peer_recvs) << what << " rank " << rank << ": sends without matching receives";
  EXPECT_TRUE(to_me == peer_sends) << what << " rank " << rank << ": receives without matching sends";
}

TEST_P(TableEntry, OwnProgramAt4096) {
  const AlgoInfo& info = *GetParam();
  if (info.algo == Algo::ClairvoyantLinear) GTEST_SKIP() << "O(P^2 N) per round: covered up to P = 1024";
  const int P = 4096;
  const ScheduleParams p = params(info, P, 3, 4096u);
  const bool small_full = info.coll == Collective::Reduce;  // O(P N) steps in all
  if (small_full) {
    const BuildResult full = build_schedule(info.algo, p);
    ASSERT_TRUE(full.schedule) << info.name << ": " << full.reason;
    for (int r : {0, 1, 2047, 4095, p.root}) expect_own_matches(info, p, *full.schedule, r, "P=4096");
    return;
  }
  // The full build would not fit: check against the peers' own programs.
  // Allreduce/allgather ranks talk to O(P) peers (direct) or O(log P) or 2:
  // a few ranks suffice.
  const bool many_peers = info.algo == Algo::DirectAllreduce || info.algo == Algo::Straggler;
  for (int r : many_peers ? std::vector<int>{1} : std::vector<int>{0, 1, 2047, 4095})
    expect_consistent_with_peers(info, p, r, std::string(info.name) + " P=4096");
}

TEST_P(TableEntry, BuildsAndPassesDataFlowCheckForSmallP) {
  const AlgoInfo& info = *GetParam();
  for (int P = 1; P <= 9; ++P)
    for (int pattern = 0; pattern < 7; ++pattern) {
      const ScheduleParams p = params(info, P, pattern, static_cast<unsigned>(100 + P * 7 + pattern));
      const BuildResult b = build_schedule(info.algo, p);
      if (info.algo == Algo::RecursiveDoubling && (P & (P - 1)) != 0) {
        EXPECT_FALSE(b.schedule) << "P=" << P;
        EXPECT_FALSE(b.reason.empty());
        continue;
      }
      ASSERT_TRUE(b.schedule) << info.name << " P=" << P << ": " << b.reason;
      EXPECT_EQ(static_cast<int>(b.schedule->programs.size()), P);
      EXPECT_EQ(test_support::check_schedule(*b.schedule, test_support::CheckModel::DataFlow), "")
          << info.name << " P=" << P << " pattern " << pattern;
      SimCost cost = SimCost::tau_steps(1.0);
      cost.count = 3 * static_cast<std::size_t>(b.schedule->nseg);
      const SimResult res = simulate(*b.schedule, p.arrival, cost);
      EXPECT_TRUE(res.ok) << info.name << " P=" << P << " simulator: " << res.error;
    }
}

INSTANTIATE_TEST_SUITE_P(Catalog, TableEntry, ::testing::ValuesIn(every_algorithm()),
                         [](const ::testing::TestParamInfo<const AlgoInfo*>& i) { return algo_name(i.param); });

TEST(Catalog, TableIsConsistent) {
  std::set<std::pair<int, std::string>> names;
  for (const AlgoInfo& i : all_algorithms()) {
    EXPECT_TRUE(names.insert({static_cast<int>(i.coll), i.name}).second) << "duplicate " << i.name;
    EXPECT_EQ(&algo_info(i.algo), &i) << i.name;
    EXPECT_NE(std::string(i.description), "") << i.name;
    EXPECT_EQ(i.build == nullptr, i.algo == Algo::Native) << i.name;
    if (i.algo != Algo::Native) {
      EXPECT_EQ(algo_from_name(i.coll, i.name), i.algo) << i.name;
    }
  }
  EXPECT_FALSE(build_schedule(Algo::Native, test_support::params_for(4)).schedule);
  for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather}) {
    EXPECT_EQ(algo_from_name(c, "native"), Algo::Native);
    EXPECT_FALSE(algo_from_name(c, "auto"));
    EXPECT_FALSE(algorithms_for(c).empty());
    for (const AlgoInfo* i : algorithms_for(c)) EXPECT_EQ(i->coll, c);
  }
}

// Every algorithm name the PAPSHIM_<COLLECTIVE> parameters accept is in the
// table and builds; every table entry is accepted.
TEST(Catalog, EveryAcceptedNameBuilds) {
  const std::map<std::string, Collective> params_of = {{"PAPSHIM_ALLREDUCE", Collective::Allreduce},
                                                       {"PAPSHIM_REDUCE", Collective::Reduce},
                                                       {"PAPSHIM_ALLGATHER", Collective::Allgather}};
  int seen = 0;
  for (const ParamSpec& spec : param_specs()) {
    const auto it = params_of.find(spec.name);
    if (it == params_of.end()) continue;
    ++seen;
    const Collective c = it->second;
    std::set<std::string> accepted;
    for (const std::string& name : spec.choices) {
      if (name == "auto" || name == "native") continue;
      accepted.insert(name);
      const auto a = algo_from_name(c, name);
      ASSERT_TRUE(a) << spec.name << "=" << name << " is not in the algorithm table";
      ScheduleParams p = test_support::params_for(8);
      p.arrival.assign(8, 0.0);
      const BuildResult b = build_schedule(*a, p);
      EXPECT_TRUE(b.schedule) << spec.name << "=" << name << ": " << b.reason;
    }
    std::set<std::string> table;
    for (const AlgoInfo* i : algorithms_for(c)) table.insert(i->name);
    EXPECT_EQ(accepted, table) << spec.name;
  }
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace papshim
