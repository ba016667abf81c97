#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "shim/callsite.h"
#include "shim/report.h"
#include "shim/report_writer.h"

namespace papshim {
namespace {

ResolvedSite fake_resolve(const std::string& key) { return {"fn_of(" + key + ")", "app.c:42"}; }

// A call on a known line of this file (built with -g): known_caller()
// returns the return address of its call to return_address().
[[gnu::noinline]] void* return_address() { return __builtin_return_address(0); }
int known_line = 0;
[[gnu::noinline]] void* known_caller() {
  void* ret = return_address(); known_line = __LINE__;
  return ret;
}

// One site of a rank's message.
RankSite site(const std::string& op, int size, const std::string& key, std::uint64_t calls, std::uint64_t bytes,
              double sum, double max, std::map<std::string, std::uint64_t> algos,
              std::map<std::string, std::uint64_t> falls = {}, std::uint64_t comms = 1) {
  RankSite s;
  s.op = op;
  s.comm_size = size;
  s.key = key;
  s.communicators = comms;
  s.calls = calls;
  s.bytes = bytes;
  s.sum_elapsed = sum;
  s.max_elapsed = max;
  s.algorithms = std::move(algos);
  s.fallbacks = std::move(falls);
  return s;
}

SampleRecord rec(std::uint64_t comm, std::uint64_t seq, std::uint32_t site, double arrival) {
  return {comm, seq, arrival, arrival + 0.001, std::nan(""), site};
}

TEST(Report, MergesRanksAndComputesSpread) {
  ReportHeader h;
  h.ranks = 2;
  // Both ranks: 3 allreduce calls from one site, one reduce call from
  // another (listed in a different order on rank 1).
  std::vector<RankStats> ranks(2);
  ranks[0].sites = {site("allreduce", 2, "/bin/app+0x10", 3, 24, 0.003, 0.002, {{"native", 3}}),
                    site("reduce", 2, "/bin/app+0x20", 1, 8, 0.001, 0.001, {{"prr", 1}}, {{"count 0", 1}})};
  ranks[0].samples = {rec(7, 0, 0, 1.0), rec(7, 1, 0, 2.0), rec(7, 2, 0, 3.0), rec(7, 3, 1, 4.0)};
  ranks[1].sites = {site("reduce", 2, "/bin/app+0x20", 1, 8, 0.002, 0.002, {{"native", 1}}),
                    site("allreduce", 2, "/bin/app+0x10", 3, 24, 0.006, 0.004, {{"native", 3}}, {}, 2)};
  ranks[1].samples = {rec(7, 0, 1, 1.5), rec(7, 1, 1, 2.0), rec(7, 2, 1, 3.1), rec(7, 3, 0, 4.0)};
  const Report r = merge_report(h, ranks, fake_resolve);
  ASSERT_EQ(r.sites.size(), 2u);
  const ReportSite& a = r.sites[0];  // larger total elapsed first
  EXPECT_EQ(a.op, "allreduce");
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.calls, 6u);
  EXPECT_EQ(a.calls_per_rank, (std::vector<std::uint64_t>{3, 3}));
  EXPECT_EQ(a.communicators, 2u);  // the most any one rank used
  EXPECT_EQ(a.algorithms.at("native"), 6u);
  EXPECT_EQ(a.spread_calls, 3u);
  EXPECT_NEAR(a.sum_spread, 0.5 + 0.0 + 0.1, 1e-9);
  EXPECT_NEAR(a.max_spread, 0.5, 1e-9);
  EXPECT_NEAR(a.max_elapsed, 0.004, 1e-12);
  const ReportSite& b = r.sites[1];
  EXPECT_EQ(b.algorithms.at("prr"), 1u);
  EXPECT_EQ(b.algorithms.at("native"), 1u);
  EXPECT_EQ(b.fallbacks.at("count 0"), 1u);
  EXPECT_EQ(b.file_line, "app.c:42");
  EXPECT_EQ(b.spread_calls, 1u);
  EXPECT_EQ(b.communicators, 1u);
}

TEST(Report, IncompleteCallsGiveNoSpread) {
  ReportHeader h;
  std::vector<RankStats> ranks(2);
  ranks[0].sites = {site("allgather", 2, "m+0x1", 1, 8, 0.1, 0.1, {{"native", 1}})};
  ranks[0].samples = {rec(9, 0, 0, 1.0)};
  const Report r = merge_report(h, ranks, fake_resolve);
  ASSERT_EQ(r.sites.size(), 1u);
  EXPECT_EQ(r.sites[0].spread_calls, 0u);
  EXPECT_EQ(r.sites[0].calls_per_rank, (std::vector<std::uint64_t>{1, 0}));
}

// One call made from two different sites on different ranks counts for both.
TEST(Report, OneCallFromTwoSitesCountsForBoth) {
  std::vector<RankStats> ranks(3);
  ranks[0].sites = {site("allreduce", 3, "a+0x1", 1, 8, 0.1, 0.1, {{"native", 1}})};
  ranks[1].sites = {site("allreduce", 3, "a+0x2", 1, 8, 0.1, 0.1, {{"native", 1}})};
  ranks[2].sites = ranks[1].sites;
  ranks[0].samples = {rec(5, 0, 0, 1.0)};
  ranks[1].samples = {rec(5, 0, 0, 1.25)};
  ranks[2].samples = {rec(5, 0, 0, 1.5)};
  const Report r = merge_report({}, ranks, fake_resolve);
  ASSERT_EQ(r.sites.size(), 2u);
  for (const auto& s : r.sites) {
    EXPECT_EQ(s.spread_calls, 1u) << s.key;
    EXPECT_NEAR(s.max_spread, 0.5, 1e-12) << s.key;
  }
}

TEST(Report, TextAndJsonCarryTheFields) {
  ReportHeader h;
  h.ranks = 1;
  h.mpi_library = "Test MPI";
  std::vector<RankStats> ranks(1);
  ranks[0].sites = {site("allreduce", 1, "/x/a\"b+0x10", 4, 32, 0.004, 0.002, {{"native", 4}})};
  ranks[0].samples = {rec(1, 0, 0, 0.0)};
  const Report r = merge_report(h, ranks, fake_resolve);
  const std::string txt = format_text(r), json = format_json(r);
  EXPECT_NE(txt.find("allreduce"), std::string::npos);
  EXPECT_NE(txt.find("native:4"), std::string::npos);
  EXPECT_NE(txt.find("app.c:42"), std::string::npos);
  EXPECT_NE(txt.find("1000.0"), std::string::npos);  // mean 1 ms in us
  EXPECT_EQ(txt.find("spreads:"), std::string::npos);  // no sampling note at level 0
  for (const char* field : {"\"ranks\": 1", "\"callsites\"", "\"op\": \"allreduce\"", "\"location\"",
                            "\"comm_size\": 1", "\"calls\": 4", "\"bytes\": 32", "\"mean_elapsed_us\": 1000.0",
                            "\"max_elapsed_us\": 2000.0", "\"arrival_spread_us\"", "\"spread_calls\": 1",
                            "\"arrival_sample_level\": 0", "\"communicators\": 1",
                            "\"algorithms\": {\"native\": 4}"})
    EXPECT_NE(json.find(field), std::string::npos) << field << "\n" << json;
  EXPECT_NE(json.find("a\\\"b"), std::string::npos);  // escaped quote
}

TEST(Report, TextSaysWhenNoSpreadWasMeasured) {
  std::vector<RankStats> ranks(2);
  for (auto& s : ranks) s.sites = {site("allreduce", 2, "a+0x1", 5, 40, 0.1, 0.1, {{"native", 5}})};
  const std::string txt = format_text(merge_report({}, ranks, fake_resolve));
  EXPECT_NE(txt.find("          -           -\n"), std::string::npos) << txt;
  EXPECT_NE(txt.find("arrival spread not measured"), std::string::npos) << txt;
  EXPECT_EQ(txt.find("imbalance factor"), std::string::npos) << txt;
}

TEST(Report, TextAndJsonCountTheRoundsLeftOut) {
  ReportHeader h;
  h.thread_mode = "helper thread";
  h.rounds_opened = 120;
  h.rounds_skipped = 360;
  const Report r = merge_report(h, {}, fake_resolve);
  const std::string txt = format_text(r), json = format_json(r);
  EXPECT_NE(txt.find("120 prediction rounds, 360 left out while auto kept running native"), std::string::npos)
      << txt;
  EXPECT_NE(json.find("\"rounds\": 120, \"rounds_skipped\": 360"), std::string::npos) << json;
  h.rounds_skipped = 0;  // nothing left out: no line
  EXPECT_EQ(format_text(merge_report(h, {}, fake_resolve)).find("rounds:"), std::string::npos);
}

TEST(Report, TextNotesTheSamplingLevel) {
  ReportHeader h;
  h.sample_level = 3;
  const std::string txt = format_text(merge_report(h, {}, fake_resolve));
  EXPECT_NE(txt.find("measured on 1 in 8 calls"), std::string::npos) << txt;
}

TEST(Report, TimelineIsOneJsonDocumentAcrossRanks) {
  std::vector<RankStats> ranks(2);
  for (auto& s : ranks) s.sites = {site("allreduce", 2, "a+0x1", 2, 16, 0.1, 0.1, {{"native", 2}})};
  ranks[0].samples = {rec(3, 0, 0, 10.0), rec(3, 1, 0, 11.0)};
  ranks[1].samples = {rec(3, 0, 0, 10.5)};
  ranks[1].samples[0].predicted = 10.25;
  ReportMerger m({}, 2, fake_resolve);
  std::string trace = timeline_begin();
  for (int r = 0; r < 2; ++r) {
    const auto rows = m.add_rank(r, ranks[static_cast<std::size_t>(r)]);
    std::vector<std::string> names;
    for (auto i : rows) names.push_back(timeline_site_name(m.row(i)));
    trace += timeline_rank_events(r, ranks[static_cast<std::size_t>(r)], names, 10.0, r == 0);
  }
  trace += timeline_end();
  EXPECT_EQ(trace.find(",\n,"), std::string::npos);
  EXPECT_NE(trace.find("\"name\": \"allreduce at app.c:42\", \"ts\": 1000000.000"), std::string::npos) << trace;
  EXPECT_NE(trace.find("\"predicted_ts\": 250000.000"), std::string::npos) << trace;
  EXPECT_EQ(trace.substr(trace.size() - 4), "\n]}\n");
}

// Two jobs writing the same report path: a reader only ever sees one whole
// file, never a mixture or a short one, and no temporary file is left.
TEST(Report, FilesAreReplacedWhole) {
  char dir_template[] = "/tmp/papshim_report_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, path = dir + "/papshim-report.txt";
  const std::size_t size = 1 << 20;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  auto writer = [&](char c) {
    const std::string text(size, c);
    for (int i = 0; i < 50; ++i)
      if (!write_file_atomically(path, text)) failures++;
  };
  std::thread a(writer, 'a'), b(writer, 'b');
  std::thread reader([&] {
    while (!done) {
      std::ifstream f(path, std::ios::binary);
      if (!f) continue;
      const std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (got.size() != size || got.find_first_not_of(got[0]) != std::string::npos) failures++;
    }
  });
  a.join();
  b.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.path() == path ? 1 : 100;
  EXPECT_EQ(entries, 1u);
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(write_file_atomically("/nonexistent-dir/papshim-report.txt", "x"));
}

TEST(CallSite, KeyUsesModuleAndOffset) {
  CallSite c = capture_callsite(reinterpret_cast<void*>(&fake_resolve), 1);
  const std::string key = callsite_key(c);
  std::string module;
  std::uintptr_t off = 0;
  ASSERT_TRUE(parse_frame_key(key, module, off)) << key;
  EXPECT_NE(module.find('/'), std::string::npos) << key;
  EXPECT_GT(off, 0u);
  EXPECT_FALSE(parse_frame_key("no-offset-here", module, off));
}

TEST(CallSite, DeeperStacksAddCallerFrames) {
  CallSite c = capture_callsite(__builtin_return_address(0), 3);
  EXPECT_GE(c.depth, 2);
  EXPECT_EQ(c.pc[0], __builtin_return_address(0));
  CallSite same = capture_callsite(__builtin_return_address(0), 3);
  EXPECT_TRUE(c == same);
  EXPECT_EQ(CallSiteHash()(c), CallSiteHash()(same));
}

TEST(CallSite, ResolvesFunctionNameOfThisTest) {
  // A frame inside this test binary resolves to a function with an offset.
  CallSite c = capture_callsite(reinterpret_cast<char*>(&fake_resolve) + 4, 1);
  const ResolvedSite r = resolve_callsite_key(callsite_key(c));
  EXPECT_NE(r.function.find("fake_resolve"), std::string::npos) << r.function;
  EXPECT_NE(r.function.find("+0x"), std::string::npos) << r.function;
}

TEST(CallSite, ResolvesFileAndLineOfACallInThisTest) {
  // Read from this binary's own symbol table and DWARF, no other program run.
  const ResolvedSite r = resolve_callsite_key(callsite_key(capture_callsite(known_caller(), 1)));
  EXPECT_NE(r.function.find("known_caller()+0x"), std::string::npos) << r.function;
  EXPECT_NE(r.function.find(" (papshim_unit_tests)"), std::string::npos) << r.function;
  const std::string where = "/test_report.cpp:" + std::to_string(known_line);
  ASSERT_GE(r.file_line.size(), where.size()) << r.file_line;
  EXPECT_EQ(r.file_line.compare(r.file_line.size() - where.size(), where.size(), where), 0) << r.file_line;
  // The same key again: the same answer (from the cache).
  const ResolvedSite again = resolve_callsite_key(callsite_key(capture_callsite(known_caller(), 1)));
  EXPECT_EQ(again.function, r.function);
  EXPECT_EQ(again.file_line, r.file_line);
}

TEST(CallSite, UnreadableModuleKeepsItsKey) {
  // A module that cannot be read: its name and offset, no file:line.
  const ResolvedSite r = resolve_callsite_key("/nonexistent/libgone.so+0x1234;/nonexistent/app+0x56");
  EXPECT_EQ(r.function, "libgone.so+0x1234 < app+0x56");
  EXPECT_EQ(r.file_line, "");
}

}  // namespace
}  // namespace papshim
