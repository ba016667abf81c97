// Who is late (per-rank lateness and last arrivals in the report), the
// report's time series over the call index, and the stall notice's text.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "config/params.h"
#include "predictor/stall_watch.h"
#include "shim/report.h"
#include "shim/series.h"
#include "shim/stats.h"

namespace papshim {
namespace {

ResolvedSite resolve(const std::string& key) { return {"fn(" + key + ")", "app.c:7"}; }

RankSite one_site(std::uint64_t calls) {
  RankSite s;
  s.op = "allreduce";
  s.comm_size = 4;
  s.key = "/bin/app+0x10";
  s.communicators = 1;
  s.calls = calls;
  s.algorithms = {{"native", calls}};
  return s;
}

// Four ranks, `calls` calls on communicator 9: rank 2 arrives 5 ms after
// the others, rank 1 1 ms after rank 0 and 3.
std::vector<RankStats> late_rank_two(std::uint64_t calls) {
  std::vector<RankStats> ranks(4);
  const double delay[4] = {0.0, 0.001, 0.005, 0.0};
  for (int r = 0; r < 4; ++r) {
    ranks[static_cast<std::size_t>(r)].sites = {one_site(calls)};
    ranks[static_cast<std::size_t>(r)].host = "node" + std::to_string(r / 2);
    for (std::uint64_t c = 0; c < calls; ++c) {
      const double t = static_cast<double>(c) + delay[r];
      ranks[static_cast<std::size_t>(r)].samples.push_back(
          SampleRecord{9, c, t, t + 0.01, std::nan(""), 0, static_cast<std::uint32_t>(c)});
    }
  }
  return ranks;
}

TEST(Lateness, NamesTheLateRankWithItsHost) {
  ReportHeader h;
  h.ranks = 4;
  const Report r = merge_report(h, late_rank_two(10), resolve);
  ASSERT_EQ(r.sites.size(), 1u);
  const ReportSite& s = r.sites[0];
  EXPECT_EQ(s.spread_calls, 10u);
  EXPECT_NEAR(mean_lateness(s, 2), 0.005, 1e-9);
  EXPECT_NEAR(mean_lateness(s, 1), 0.001, 1e-9);
  EXPECT_NEAR(mean_lateness(s, 0), 0.0, 1e-12);
  EXPECT_EQ(s.last_calls, (std::vector<std::uint64_t>{0, 0, 10, 0}));
  EXPECT_EQ(s.lateness_calls, (std::vector<std::uint64_t>{10, 10, 10, 10}));
  EXPECT_EQ(worst_ranks(s, 3), (std::vector<std::size_t>{2, 1}));  // ranks never late left out
  EXPECT_EQ(r.hosts, (std::vector<std::string>{"node0", "node0", "node1", "node1"}));
  const std::string txt = format_text(r);
  EXPECT_NE(txt.find("latest ranks: rank 2 on node1 (5000.0 us after the earliest arrival on average, last in 10 "
                     "of 10 calls); rank 1 on node0 (1000.0 us, last in 0)\n"),
            std::string::npos)
      << txt;
  const std::string json = format_json(r);
  EXPECT_NE(json.find("\"worst\": [{\"rank\": 2, \"host\": \"node1\", \"mean_us\": 5000.000000, \"last\": 10}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"last\": [0, 0, 10, 0]"), std::string::npos);
  EXPECT_NE(json.find("\"hosts\": [\"node0\", \"node0\", \"node1\", \"node1\"]"), std::string::npos);
}

TEST(Lateness, KeepsArrivalsOnlyAtTheLatenessLevel) {
  ReportHeader h;
  h.ranks = 4;
  h.lateness_level = 2;  // about one call in four
  ReportMerger m(h, 4, resolve);
  auto ranks = late_rank_two(64);
  for (int r = 0; r < 4; ++r) m.add_rank(r, ranks[static_cast<std::size_t>(r)]);
  const Report rep = m.finish();
  const ReportSite& s = rep.sites[0];
  std::uint64_t expected = 0;
  for (std::uint64_t c = 0; c < 64; ++c) expected += sampled_at(9, c, 2) ? 1 : 0;
  EXPECT_EQ(s.lateness_calls[2], expected);
  EXPECT_LT(expected, 64u);
  EXPECT_EQ(s.last_calls[2], 64u);  // last arrivals count every spread call
  EXPECT_NEAR(mean_lateness(s, 2), 0.005, 1e-9);
}

TEST(Lateness, RecordLevelStaysWithinTheBudget) {
  RankStats s;
  s.sites = {one_site(1000)};
  for (std::uint64_t c = 0; c < 1000; ++c) s.samples.push_back(SampleRecord{5, c, 0, 0, 0, 0, 0});
  const auto counts = sample_record_counts(s);
  EXPECT_EQ(counts[0], 1000u);
  const int l = choose_record_level(counts, 1, 100);
  EXPECT_GE(l, 1);
  EXPECT_LE(counts[static_cast<std::size_t>(l)], 100u);
  EXPECT_GT(counts[static_cast<std::size_t>(l - 1)], 100u);
}

TEST(Lateness, MessageCarriesHostSeriesAndCallIndex) {
  RankStats s = late_rank_two(3)[2];
  s.sites[0].series.at(2).calls = 1;
  s.sites[0].series.at(2).algorithms["prr"] = 1;
  const std::string msg = pack_rank_stats(s);
  RankStats back;
  ASSERT_TRUE(unpack_rank_stats(msg.data(), msg.size(), back));
  EXPECT_EQ(back.host, "node1");
  EXPECT_EQ(back.samples[2].index, 2u);
  ASSERT_EQ(back.sites[0].series.buckets.size(), kSeriesBuckets);
  EXPECT_EQ(back.sites[0].series.buckets[2].algorithms.at("prr"), 1u);
  EXPECT_FALSE(unpack_rank_stats(msg.data(), msg.size() - 1, back));
}

TEST(Series, WidensAndStaysBounded) {
  RankSeries s;
  for (std::uint64_t i = 0; i < 1000; ++i) s.at(i).calls++;
  EXPECT_EQ(s.buckets.size(), kSeriesBuckets);
  EXPECT_EQ(s.width, 32u);  // 1000 calls in 32 buckets
  std::uint64_t total = 0;
  for (const auto& b : s.buckets) total += b.calls;
  EXPECT_EQ(total, 1000u);
  EXPECT_EQ(s.buckets[0].calls, 32u);
  EXPECT_EQ(s.buckets[31].calls, 1000u - 31 * 32);
}

TEST(Series, AddsSeriesOfDifferentWidths) {
  NamedSeries a, b;
  for (std::uint64_t i = 0; i < 40; ++i) a.at(i).calls++;  // width 2
  for (std::uint64_t i = 0; i < 10; ++i) b.at(i).calls++;  // width 1
  a.add(b);
  EXPECT_EQ(a.width, 2u);
  EXPECT_EQ(a.buckets[0].calls, 4u);  // calls 0, 1 of each
  EXPECT_EQ(a.buckets[5].calls, 2u);
  NamedSeries c;
  c.add(a);
  EXPECT_EQ(c.width, 2u);
  EXPECT_EQ(c.buckets[0].calls, 4u);
}

TEST(Series, StatsRecordTimeAlgorithmAndGainPerBucket) {
  Stats st;
  st.configure(false);
  CallSite site;
  site.pc[0] = reinterpret_cast<void*>(0x40);
  site.depth = 1;
  const SiteKey k{Collective::Allreduce, 1, 4, site};
  for (int i = 0; i < 100; ++i)
    st.record(k, 3, static_cast<std::uint64_t>(i), i, i + 0.002, std::nan(""), 8, i < 50 ? "native" : "prr", "",
              true, true, i < 50 ? 0.0 : 0.001);
  const RankStats s = st.snapshot();
  const NamedSeries& series = s.sites[0].series;
  EXPECT_EQ(series.width, 4u);
  EXPECT_EQ(series.buckets[0].calls, 4u);
  EXPECT_EQ(series.buckets[0].algorithms.at("native"), 4u);
  EXPECT_EQ(series.buckets[24].algorithms.at("prr"), 4u);
  EXPECT_NEAR(series.buckets[24].sum_gain, 0.004, 1e-12);
  EXPECT_NEAR(series.buckets[0].sum_elapsed, 0.008, 1e-9);
}

TEST(StallNotice, NamesTheRanksNotArrivedByTheRound) {
  StallWatch::Call c;
  c.arrival = 10.0;
  c.seq = 7;
  c.collective = "allreduce";
  c.comm_size = 4;
  c.rank = 1;
  const std::vector<double> predicted = {10.0, 10.0, 12.0, 10.1};
  c.predicted = &predicted;
  const std::string n = StallWatch::notice(c, 10.5, 5, "/bin/app+0x10");
  EXPECT_NE(n.find("rank 1 of 4 (world rank 5) has waited 0.50 s in allreduce call #7 at call site /bin/app+0x10"),
            std::string::npos)
      << n;
  EXPECT_NE(n.find("not arrived yet by the call's prediction round: rank 2 (predicted to arrive in 1.50 s)"),
            std::string::npos)
      << n;
  c.predicted = nullptr;
  EXPECT_NE(StallWatch::notice(c, 10.5, 5, "x").find("is not known"), std::string::npos);
}

TEST(StallNotice, ParameterIsOffByDefaultAndRejectsNegative) {
  const auto env = [](const char* value) {
    return [value](const char* n) -> const char* {
      return std::string(n) == "PAPSHIM_STALL_SECONDS" ? value : nullptr;
    };
  };
  EXPECT_EQ(Config().stall_seconds, 0.0);
  EXPECT_DOUBLE_EQ(parse_config(env("0.5")).stall_seconds, 0.5);
  EXPECT_THROW(parse_config(env("-1")), ConfigError);
  EXPECT_THROW(parse_config(env("soon")), ConfigError);
}

}  // namespace
}  // namespace papshim
