#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shim/callsite.h"
#include "shim/report.h"

namespace papshim {
namespace {

ResolvedSite fake_resolve(const std::string& key) { return {"fn_of(" + key + ")", "app.c:42"}; }

// One serialised site line, as Stats::serialize_sites() writes it.
std::string line(const std::string& op, unsigned long long comm, int size, const std::string& key,
                 unsigned long long calls, unsigned long long bytes, double sum, double max, unsigned long long hash,
                 const std::string& algos, const std::string& falls = "") {
  return op + "\t" + std::to_string(comm) + "\t" + std::to_string(size) + "\t" + key + "\t" + std::to_string(calls) +
         "\t" + std::to_string(bytes) + "\t" + std::to_string(sum) + "\t" + std::to_string(max) + "\t" +
         std::to_string(hash) + "\t" + algos + "\t" + falls + "\n";
}

TEST(Report, MergesRanksAndComputesSpread) {
  ReportHeader h;
  h.ranks = 2;
  // Both ranks: 3 allreduce calls from the same site (different local
  // hashes, as with ASLR), one reduce site on rank 0 only... and rank 1.
  std::vector<std::string> texts = {
      line("allreduce", 7, 2, "/bin/app+0x10", 3, 24, 0.003, 0.002, 111, "native=3,") +
          line("reduce", 7, 2, "/bin/app+0x20", 1, 8, 0.001, 0.001, 112, "prr=1,", "count 0=1,"),
      line("allreduce", 7, 2, "/bin/app+0x10", 3, 24, 0.006, 0.004, 211, "native=3,") +
          line("reduce", 7, 2, "/bin/app+0x20", 1, 8, 0.002, 0.002, 212, "native=1,")};
  std::vector<std::vector<ArrivalRecord>> arr = {
      {{7, 0, 111, 1.0}, {7, 1, 111, 2.0}, {7, 2, 111, 3.0}, {7, 3, 112, 4.0}},
      {{7, 0, 211, 1.5}, {7, 1, 211, 2.0}, {7, 2, 211, 3.1}, {7, 3, 212, 4.0}}};
  const Report r = merge_report(h, texts, arr, fake_resolve);
  ASSERT_EQ(r.sites.size(), 2u);
  const ReportSite& a = r.sites[0];  // larger total elapsed first
  EXPECT_EQ(a.op, "allreduce");
  EXPECT_EQ(a.calls, 6u);
  EXPECT_EQ(a.calls_per_rank, (std::vector<std::uint64_t>{3, 3}));
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
}

TEST(Report, IncompleteCallsGiveNoSpread) {
  ReportHeader h;
  std::vector<std::string> texts = {line("allgather", 9, 2, "m+0x1", 1, 8, 0.1, 0.1, 5, "native=1,"), ""};
  std::vector<std::vector<ArrivalRecord>> arr = {{{9, 0, 5, 1.0}}, {}};
  const Report r = merge_report(h, texts, arr, fake_resolve);
  ASSERT_EQ(r.sites.size(), 1u);
  EXPECT_EQ(r.sites[0].spread_calls, 0u);
  EXPECT_EQ(r.sites[0].calls_per_rank, (std::vector<std::uint64_t>{1, 0}));
}

TEST(Report, TextAndJsonCarryTheFields) {
  ReportHeader h;
  h.ranks = 1;
  h.mpi_library = "Test MPI";
  std::vector<std::string> texts = {line("allreduce", 1, 1, "/x/a\"b+0x10", 4, 32, 0.004, 0.002, 9, "native=4,")};
  std::vector<std::vector<ArrivalRecord>> arr = {{{1, 0, 9, 0.0}}};
  const Report r = merge_report(h, texts, arr, fake_resolve);
  const std::string txt = format_text(r), json = format_json(r);
  EXPECT_NE(txt.find("allreduce"), std::string::npos);
  EXPECT_NE(txt.find("native:4"), std::string::npos);
  EXPECT_NE(txt.find("app.c:42"), std::string::npos);
  EXPECT_NE(txt.find("1000.0"), std::string::npos);  // mean 1 ms in us
  for (const char* field : {"\"ranks\": 1", "\"callsites\"", "\"op\": \"allreduce\"", "\"location\"",
                            "\"comm_size\": 1", "\"calls\": 4", "\"bytes\": 32", "\"mean_elapsed_us\": 1000.0",
                            "\"max_elapsed_us\": 2000.0", "\"arrival_spread_us\"", "\"algorithms\": {\"native\": 4}"})
    EXPECT_NE(json.find(field), std::string::npos) << field << "\n" << json;
  EXPECT_NE(json.find("a\\\"b"), std::string::npos);  // escaped quote
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

}  // namespace
}  // namespace papshim
