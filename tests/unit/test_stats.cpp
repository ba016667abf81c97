// Per-rank statistics (bounded in the length of the run and the number of
// communicators), the rank message's packing, and rank 0's merge at scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shim/report.h"
#include "shim/stats.h"

namespace papshim {
namespace {

ResolvedSite no_resolve(const std::string& key) { return {key, ""}; }

CallSite fake_site(std::uintptr_t pc) {
  CallSite c;
  c.pc[0] = reinterpret_cast<void*>(pc);
  c.depth = 1;
  return c;
}

SiteKey key_of(std::uint64_t local_comm, int size, std::uintptr_t pc, Collective op = Collective::Allreduce) {
  return SiteKey{op, local_comm, size, fake_site(pc)};
}

// One call: arrival t, 1 ms long, predicted 2 ms early.
void call(Stats& st, const SiteKey& k, std::uint64_t gid, std::uint64_t seq, double t, const char* algo = "native",
          const std::string& fallback = "") {
  st.record(k, gid, seq, t, t + 0.001, t - 0.002, 8, algo, fallback, false, false);
}

TEST(Stats, AggregatesPerSiteOverCommunicators) {
  Stats st;
  st.configure(true);
  for (int i = 0; i < 5; ++i) call(st, key_of(1, 4, 0x100), 11, static_cast<std::uint64_t>(i), i);
  for (int i = 0; i < 3; ++i) call(st, key_of(2, 4, 0x100), 12, static_cast<std::uint64_t>(i), i, "prr", "why");
  call(st, key_of(2, 2, 0x100), 13, 0, 0);  // another size: another row of the report
  const RankStats s = st.snapshot();
  ASSERT_EQ(s.sites.size(), 2u);
  const RankSite& a = s.sites[0];
  EXPECT_EQ(a.op, "allreduce");
  EXPECT_EQ(a.comm_size, 4);
  EXPECT_EQ(a.communicators, 2u);
  EXPECT_EQ(a.calls, 8u);
  EXPECT_EQ(a.bytes, 64u);
  EXPECT_EQ(a.algorithms.at("native"), 5u);
  EXPECT_EQ(a.algorithms.at("prr"), 3u);
  EXPECT_EQ(a.fallbacks.at("why"), 3u);
  EXPECT_EQ(a.predicted_calls, 8u);
  EXPECT_NEAR(a.sum_abs_error, 8 * 0.002, 1e-12);
  EXPECT_NEAR(a.sum_elapsed, 8 * 0.001, 1e-9);
  EXPECT_EQ(s.sites[1].communicators, 1u);
  EXPECT_EQ(s.samples.size(), 9u);
}

TEST(Stats, RetiredCommunicatorsAreFoldedAndStillCounted) {
  Stats st;
  st.configure(false);
  for (std::uint64_t c = 1; c <= 1000; ++c) {
    for (int i = 0; i < 3; ++i) call(st, key_of(c, 2, 0x200), 0, static_cast<std::uint64_t>(i), 0);
    call(st, key_of(c, 2, 0x300, Collective::Reduce), 0, 3, 0);
    st.retire_communicator(c);
    EXPECT_EQ(st.live_rows(), 0u);
  }
  call(st, key_of(5000, 2, 0x200), 0, 0, 0);
  call(st, key_of(5001, 2, 0x200), 0, 0, 0);
  st.retire_communicator(77777);  // never used: nothing changes
  EXPECT_EQ(st.live_rows(), 2u);
  const RankStats s = st.snapshot();
  ASSERT_EQ(s.sites.size(), 2u);
  EXPECT_EQ(s.sites[0].calls, 3002u);
  EXPECT_EQ(s.sites[0].communicators, 1002u);
  EXPECT_EQ(s.sites[0].algorithms.at("native"), 3002u);
  EXPECT_EQ(s.sites[1].op, "reduce");
  EXPECT_EQ(s.sites[1].calls, 1000u);
  EXPECT_EQ(s.sites[1].communicators, 1000u);
}

// Calls passed through (no lock, counted in ticks) join the same row as the
// recorded ones, as native calls, in seconds; a retired communicator's too.
TEST(Stats, PassThroughCallsFoldIntoTheirRow) {
  Stats st;
  st.configure(false);
  const SiteKey k = key_of(1, 4, 0x100);
  call(st, k, 0, 0, 0, "prr");
  Stats::Row* row = st.row_for(k);
  ASSERT_EQ(row, st.row_for(k));  // one row per key
  const std::uint64_t t0 = ticks();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t slow = ticks() - t0;
  Stats::record_pass_through(*row, slow, 16);
  Stats::record_pass_through(*row, 1, 16);
  const RankStats s = st.snapshot();
  ASSERT_EQ(s.sites.size(), 1u);
  EXPECT_EQ(s.sites[0].calls, 3u);
  EXPECT_EQ(s.sites[0].bytes, 8u + 32u);
  EXPECT_EQ(s.sites[0].algorithms.at("native"), 2u);
  EXPECT_EQ(s.sites[0].algorithms.at("prr"), 1u);
  // The slow call took at least the 20 ms slept, and not seconds.
  EXPECT_GE(s.sites[0].max_elapsed, 0.019);
  EXPECT_LT(s.sites[0].max_elapsed, 2.0);
  EXPECT_NEAR(s.sites[0].sum_elapsed, 0.001 + s.sites[0].max_elapsed, 1e-3);

  Stats::record_pass_through(*st.row_for(key_of(2, 4, 0x100)), 5, 8);
  st.retire_communicator(2);
  const RankStats after = st.snapshot();
  EXPECT_EQ(after.sites[0].calls, 4u);
  EXPECT_EQ(after.sites[0].communicators, 2u);
  EXPECT_EQ(after.sites[0].algorithms.at("native"), 3u);
}

TEST(Stats, SampleStaysBoundedAndIsTheSameCallsForAnyRank) {
  Stats st;
  st.configure(true);
  const std::uint64_t n = 2000000;
  for (std::uint64_t i = 0; i < n; ++i) call(st, key_of(1, 2, 0x400), 42, i, static_cast<double>(i));
  const int level = st.sample_level();
  const RankStats s = st.snapshot();
  EXPECT_LE(s.samples.size(), Stats::kSampleCapacity);
  EXPECT_GE(s.samples.size(), Stats::kSampleCapacity / 4);
  EXPECT_GE(level, 6);  // 2e6 / 2^6 > 16384
  EXPECT_EQ(s.sites[0].calls, n);
  // Exactly the calls that qualify at the level, in call order.
  std::vector<std::uint64_t> want;
  for (std::uint64_t i = 0; i < n; ++i)
    if (sampled_at(42, i, level)) want.push_back(i);
  std::vector<std::uint64_t> got;
  for (const auto& a : s.samples) got.push_back(a.seq);
  EXPECT_EQ(got, want);
}

TEST(Stats, NoSamplesWhenOffOrWithoutAGlobalId) {
  Stats off;
  off.configure(false);
  for (std::uint64_t i = 0; i < 100; ++i) call(off, key_of(1, 2, 0x500), 9, i, 0);
  EXPECT_EQ(off.sample_count(), 0u);
  EXPECT_EQ(off.snapshot().sites.at(0).calls, 100u);
  Stats unknown;
  unknown.configure(true);
  for (std::uint64_t i = 0; i < 100; ++i) call(unknown, key_of(1, 2, 0x500), 0, i, 0);
  EXPECT_EQ(unknown.sample_count(), 0u);
}

// Two ranks of one communicator; rank 1 also calls on another communicator
// and so reaches a higher level.  Merged at the highest level, every sampled
// call of the shared communicator has both arrivals.
TEST(Stats, RanksAtDifferentLevelsMergeOnTheSameCalls) {
  Stats r0, r1;
  r0.configure(true, 256);
  r1.configure(true, 256);
  const std::uint64_t n = 5000;
  for (std::uint64_t i = 0; i < n; ++i) {
    call(r0, key_of(3, 2, 0x600), 42, i, static_cast<double>(i));
    call(r1, key_of(8, 2, 0x600), 42, i, static_cast<double>(i) + 0.5);
    for (std::uint64_t j = 0; j < 4; ++j) call(r1, key_of(9, 1, 0x700), 43, 4 * i + j, 0);
  }
  ASSERT_GT(r1.sample_level(), r0.sample_level());
  const Report rep = merge_report({}, {r0.snapshot(), r1.snapshot()}, no_resolve);
  const int level = r1.sample_level();
  std::uint64_t want = 0;
  for (std::uint64_t i = 0; i < n; ++i) want += sampled_at(42, i, level) ? 1 : 0;
  const auto shared =
      std::find_if(rep.sites.begin(), rep.sites.end(), [](const ReportSite& s) { return s.comm_size == 2; });
  ASSERT_NE(shared, rep.sites.end());
  EXPECT_GT(want, 0u);
  EXPECT_EQ(shared->spread_calls, want);
  EXPECT_NEAR(shared->sum_spread, 0.5 * static_cast<double>(want), 1e-6);
  EXPECT_EQ(shared->calls_per_rank, (std::vector<std::uint64_t>{n, n}));
}

RankStats big_rank(std::uint64_t first, std::size_t sites, std::size_t samples) {
  RankStats s;
  s.level = 3;
  for (std::size_t i = 0; i < sites; ++i) {
    RankSite x;
    x.op = i % 2 ? "reduce" : "allgather";
    x.comm_size = static_cast<int>(i % 4096 + 1);
    x.key = "/opt/app/bin/solver+0x" + std::to_string(0x1000 + i) + ";/lib/x.so+0x10";
    x.communicators = 1 + i;
    x.calls = first + i;          // above 2^31 in a row
    x.bytes = (1ull << 40) + i;   // above 2^32
    x.sum_elapsed = 1e5 + static_cast<double>(i);
    x.max_elapsed = 0.5;
    x.algorithms = {{"native", first}, {"sparbit", 7}};
    if (i % 3 == 0) x.fallbacks = {{"reason with\ttab,comma=equals\nand newline", 3000000000ull}};
    x.auto_decisions = first;
    x.ready = first / 2;
    x.predicted_calls = first - 1;
    x.sum_abs_error = 1.25;
    s.sites.push_back(std::move(x));
  }
  for (std::size_t i = 0; i < samples; ++i)
    s.samples.push_back({~0ull - i, (1ull << 40) + i, 1.5 + static_cast<double>(i), 2.5, std::nan(""),
                         static_cast<std::uint32_t>(i % sites)});
  return s;
}

TEST(RankMessage, RoundTripsLargeCountsAndManySites) {
  const RankStats s = big_rank(3000000000ull, 5000, Stats::kSampleCapacity);
  const std::string bytes = pack_rank_stats(s);
  RankStats back;
  ASSERT_TRUE(unpack_rank_stats(bytes.data(), bytes.size(), back));
  EXPECT_EQ(back.level, 3);
  ASSERT_EQ(back.sites.size(), s.sites.size());
  for (std::size_t i = 0; i < s.sites.size(); ++i) {
    const auto &a = s.sites[i], &b = back.sites[i];
    ASSERT_EQ(a.op, b.op);
    ASSERT_EQ(a.comm_size, b.comm_size);
    ASSERT_EQ(a.key, b.key);
    ASSERT_EQ(a.communicators, b.communicators);
    ASSERT_EQ(a.calls, b.calls);
    ASSERT_EQ(a.bytes, b.bytes);
    ASSERT_EQ(a.sum_elapsed, b.sum_elapsed);
    ASSERT_EQ(a.algorithms, b.algorithms);
    ASSERT_EQ(a.fallbacks, b.fallbacks);
    ASSERT_EQ(a.auto_decisions, b.auto_decisions);
    ASSERT_EQ(a.ready, b.ready);
    ASSERT_EQ(a.predicted_calls, b.predicted_calls);
    ASSERT_EQ(a.sum_abs_error, b.sum_abs_error);
  }
  ASSERT_EQ(back.samples.size(), s.samples.size());
  for (std::size_t i = 0; i < s.samples.size(); ++i) {
    ASSERT_EQ(back.samples[i].comm_id, s.samples[i].comm_id);
    ASSERT_EQ(back.samples[i].seq, s.samples[i].seq);
    ASSERT_EQ(back.samples[i].arrival, s.samples[i].arrival);
    ASSERT_TRUE(std::isnan(back.samples[i].predicted));
    ASSERT_EQ(back.samples[i].site, s.samples[i].site);
  }
}

TEST(RankMessage, DamagedMessagesAreRejected) {
  const std::string bytes = pack_rank_stats(big_rank(5, 7, 9));
  RankStats out;
  for (std::size_t n = 0; n < bytes.size(); ++n)
    ASSERT_FALSE(unpack_rank_stats(bytes.data(), n, out)) << "prefix of " << n << " bytes";
  EXPECT_FALSE(unpack_rank_stats((bytes + "x").data(), bytes.size() + 1, out));
  std::string bad = bytes;
  bad[0] ^= 1;  // magic
  EXPECT_FALSE(unpack_rank_stats(bad.data(), bad.size(), out));
  bad = bytes;
  for (int i = 16; i < 24; ++i) bad[static_cast<std::size_t>(i)] = '\xff';  // site count 2^64-1: no allocation
  EXPECT_FALSE(unpack_rank_stats(bad.data(), bad.size(), out));
}

// 1024 ranks, each with a call site on the world communicator (counts above
// 2^31 on every rank) and one on its pair communicator, merged one message
// at a time as rank 0 does.
TEST(RankMessage, Merges1024RanksOneAtATime) {
  const int P = 1024;
  const std::uint64_t calls = 3000000000ull;
  const std::uint64_t world_calls = 200, pair_calls = 10;
  ReportHeader h;
  h.ranks = P;
  ReportMerger m(h, P, no_resolve);
  std::size_t max_pending = 0;
  for (int r = 0; r < P; ++r) {
    RankStats s;
    RankSite world;
    world.op = "allreduce";
    world.comm_size = P;
    world.key = "app+0x10";
    world.communicators = 1;
    world.calls = calls;
    world.bytes = 8 * calls;
    world.sum_elapsed = 1.0;
    world.algorithms = {{"native", calls}};
    RankSite pair = world;
    pair.comm_size = 2;
    pair.key = "app+0x20";
    pair.calls = pair_calls;
    pair.algorithms = {{"prr", pair_calls}};
    pair.communicators = 2;
    s.sites = {world, pair};
    for (std::uint64_t i = 0; i < world_calls; ++i)
      s.samples.push_back({1, i, static_cast<double>(i) + 1e-6 * r, 0, std::nan(""), 0});
    for (std::uint64_t i = 0; i < pair_calls; ++i)
      s.samples.push_back({1000 + static_cast<std::uint64_t>(r / 2), i, 0.25 * (r % 2), 0, std::nan(""), 1});
    const std::string msg = pack_rank_stats(s);
    RankStats back;
    ASSERT_TRUE(unpack_rank_stats(msg.data(), msg.size(), back));
    m.add_rank(r, back);
    max_pending = std::max(max_pending, m.pending_calls());
  }
  EXPECT_LE(max_pending, world_calls + pair_calls);  // rank 0 never holds more
  EXPECT_EQ(m.pending_calls(), 0u);
  const Report rep = m.finish();
  ASSERT_EQ(rep.sites.size(), 2u);
  const ReportSite& w = rep.sites[0].comm_size == P ? rep.sites[0] : rep.sites[1];
  const ReportSite& p = rep.sites[0].comm_size == P ? rep.sites[1] : rep.sites[0];
  EXPECT_EQ(w.calls, calls * P);
  EXPECT_EQ(w.bytes, 8 * calls * P);
  EXPECT_EQ(w.algorithms.at("native"), calls * P);
  EXPECT_EQ(w.calls_per_rank, std::vector<std::uint64_t>(P, calls));
  EXPECT_EQ(w.communicators, 1u);
  EXPECT_EQ(w.spread_calls, world_calls);
  EXPECT_NEAR(w.max_spread, 1023e-6, 1e-9);
  EXPECT_NEAR(w.sum_spread, world_calls * 1023e-6, 1e-6);
  EXPECT_EQ(p.communicators, 2u);
  EXPECT_EQ(p.spread_calls, pair_calls * P / 2);
  EXPECT_NEAR(p.max_spread, 0.25, 1e-12);
  const std::string json = format_json(rep);
  EXPECT_NE(json.find("\"calls\": 3072000000000"), std::string::npos);
}

// The level every rank computes from the summed weights bounds the
// distinct sampled calls rank 0 may have to track.
TEST(RankMessage, SampleLevelBoundsTheDistinctCalls) {
  const int pairs = 32;
  const std::uint64_t budget = 1u << 17;
  std::vector<std::uint64_t> total(kMaxSampleLevel + 1, 0);
  std::vector<RankStats> ranks;
  for (int r = 0; r < 2 * pairs; ++r) {
    RankStats s;
    RankSite x;
    x.op = "allreduce";
    x.comm_size = 2;
    x.key = "k";
    s.sites = {x};
    for (std::uint64_t i = 0; i < Stats::kSampleCapacity; ++i)
      s.samples.push_back({100 + static_cast<std::uint64_t>(r / 2), i, 0, 0, 0, 0});
    const auto w = sample_call_weights(s);
    for (std::size_t l = 0; l < w.size(); ++l) total[l] += w[l];
    ranks.push_back(std::move(s));
  }
  auto distinct_at = [&](int level) {
    std::set<std::pair<std::uint64_t, std::uint64_t>> calls;
    for (const auto& s : ranks)
      for (const auto& a : s.samples)
        if (sampled_at(a.comm_id, a.seq, level)) calls.insert({a.comm_id, a.seq});
    return calls.size();
  };
  EXPECT_EQ(total[0] >> kCallWeightBits, pairs * Stats::kSampleCapacity);
  const int level = choose_sample_level(total, 0, budget);
  EXPECT_GE(level, 2);  // 32 * 16384 = 4 * 2^17
  EXPECT_LE(distinct_at(level), budget + 1);
  EXPECT_GT(distinct_at(level - 1), budget);
  EXPECT_EQ(choose_sample_level(total, level + 3, budget), level + 3);  // never below the ranks' own
  // One communicator over all ranks: 16384 distinct calls, no thinning.
  std::vector<std::uint64_t> world(kMaxSampleLevel + 1, 0);
  world[0] = std::uint64_t{Stats::kSampleCapacity} << kCallWeightBits;
  EXPECT_EQ(choose_sample_level(world, 0, budget), 0);
  RankStats t = ranks[0];
  thin_samples(t, level);
  EXPECT_EQ(t.level, level);
  for (const auto& a : t.samples) EXPECT_TRUE(sampled_at(a.comm_id, a.seq, level));
}

}  // namespace
}  // namespace papshim
