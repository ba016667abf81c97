#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "algorithms/catalog.h"
#include "config/params.h"

namespace papshim {
namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& env) {
  try {
    parse(env);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsWhenUnset) {
  const Config c = parse({});
  EXPECT_EQ(c.allreduce, "auto");
  EXPECT_EQ(c.reduce, "auto");
  EXPECT_EQ(c.allgather, "auto");
  EXPECT_EQ(c.predictor, PredictorMode::Sma);
  EXPECT_EQ(c.sma_window, 2);
  EXPECT_FALSE(c.disable);
  EXPECT_EQ(c.report, "papshim-report");
  EXPECT_EQ(c.callsite_depth, 1);
  EXPECT_FALSE(c.check);
}

TEST(Config, AcceptsEveryListedChoice) {
  for (const auto& spec : param_specs()) {
    if (spec.type != ParamType::Choice) continue;
    for (const auto& v : spec.choices) EXPECT_NO_THROW(parse({{spec.name, v}})) << spec.name << "=" << v;
  }
  EXPECT_EQ(parse({{"PAPSHIM_ALLREDUCE", "PRR"}}).allreduce, "prr");  // case-insensitive
  EXPECT_EQ(parse({{"PAPSHIM_PREDICTOR", "edge"}}).predictor, PredictorMode::Edge);
  EXPECT_EQ(parse({{"PAPSHIM_SMA_WINDOW", "16"}}).sma_window, 16);
  EXPECT_TRUE(parse({{"PAPSHIM_DISABLE", "yes"}}).disable);
  EXPECT_EQ(parse({{"PAPSHIM_REPORT", "off"}}).report, "off");
}

TEST(Config, RejectsBadChoiceNamingVariableValueAndAccepted) {
  const std::string e = error_of({{"PAPSHIM_ALLREDUCE", "prrr"}});
  EXPECT_NE(e.find("PAPSHIM_ALLREDUCE"), std::string::npos) << e;
  EXPECT_NE(e.find("'prrr'"), std::string::npos) << e;
  EXPECT_NE(e.find("auto|native|prr|slt|ring|rabenseifner"), std::string::npos) << e;
}

TEST(Config, RejectsEveryKindOfBadValue) {
  const std::map<std::string, std::string> bad[] = {
      {{"PAPSHIM_REDUCE", "clairvoyent"}},   {{"PAPSHIM_ALLGATHER", "sparbits"}},
      {{"PAPSHIM_ALLGATHER", ""}},           {{"PAPSHIM_PREDICTOR", "ema"}},
      {{"PAPSHIM_SMA_WINDOW", "0"}},         {{"PAPSHIM_SMA_WINDOW", "abc"}},
      {{"PAPSHIM_SMA_WINDOW", "4x"}},        {{"PAPSHIM_SMA_WINDOW", "1001"}},
      {{"PAPSHIM_SMA_WINDOW", "-3"}},        {{"PAPSHIM_DISABLE", "maybe"}},
      {{"PAPSHIM_LOG_LEVEL", "verbose"}},    {{"PAPSHIM_CALLSITE_DEPTH", "0"}},
      {{"PAPSHIM_CALLSITE_DEPTH", "9"}},     {{"PAPSHIM_CHECK", "2"}},
      {{"PAPSHIM_CLV_SEGMENTS", "-1"}},      {{"PAPSHIM_REPORT", ""}},
      {{"PAPSHIM_TEST_CLOCK_OFFSET_US", "x"}},
  };
  for (const auto& env : bad) {
    const std::string e = error_of(env);
    EXPECT_NE(e.find(env.begin()->first), std::string::npos) << env.begin()->first << " -> '" << e << "'";
    EXPECT_NE(e.find("accepted"), std::string::npos) << e;
  }
}

TEST(Config, IntegerRangeInMessage) {
  const std::string e = error_of({{"PAPSHIM_SMA_WINDOW", "0"}});
  EXPECT_NE(e.find("from 1 to 1000"), std::string::npos) << e;
}

// An integer parameter that also takes a word: the word, any integer in
// range, and nothing else.
TEST(Config, TreeSegmentSizeTakesAutoOrBytes) {
  EXPECT_EQ(parse({}).tree_segsize, -1);
  EXPECT_EQ(parse({{"PAPSHIM_TREE_SEGSIZE", "AUTO"}}).tree_segsize, -1);
  EXPECT_EQ(parse({{"PAPSHIM_TREE_SEGSIZE", "0"}}).tree_segsize, 0);
  EXPECT_EQ(parse({{"PAPSHIM_TREE_SEGSIZE", "65536"}}).tree_segsize, 65536);
  for (const char* bad : {"automatic", "-1", "32k", ""}) {
    const std::string e = error_of({{"PAPSHIM_TREE_SEGSIZE", bad}});
    EXPECT_NE(e.find("accepted values: auto, or an integer from 0 to 1073741824"), std::string::npos) << e;
  }
}

TEST(Config, HelpListsEveryPublicParameter) {
  const std::string help = describe_params();
  for (const auto& spec : param_specs())
    EXPECT_EQ(help.find(spec.name) != std::string::npos, !spec.test_only) << spec.name;
}

TEST(Config, OnlyClockOffsetAndHelpMayDifferBetweenRanks) {
  EXPECT_TRUE(is_job_wide("PAPSHIM_ALLREDUCE"));
  EXPECT_TRUE(is_job_wide("PAPSHIM_SMA_WINDOW"));
  EXPECT_FALSE(is_job_wide("PAPSHIM_TEST_CLOCK_OFFSET_US"));
  EXPECT_FALSE(is_job_wide("PAPSHIM_HELP"));
}

TEST(Config, CanonicalValuesAreComparable) {
  const Config a = parse({{"PAPSHIM_ALLREDUCE", "PRR"}, {"PAPSHIM_CHECK", "yes"}});
  const Config b = parse({{"PAPSHIM_ALLREDUCE", "prr"}, {"PAPSHIM_CHECK", "1"}});
  EXPECT_EQ(a.values, b.values);
}

// A default-constructed Config holds what parse_config reads from an empty
// environment: both come from the one declaration of each parameter.
TEST(Config, DefaultConstructedHoldsTheDeclaredDefaults) {
  const Config d;
  const Config p = parse({});
  EXPECT_TRUE(d.values.empty());
  EXPECT_EQ(p.values.size(), param_specs().size());
  EXPECT_EQ(d.allreduce, p.allreduce);
  EXPECT_EQ(d.reduce, p.reduce);
  EXPECT_EQ(d.allgather, p.allgather);
  EXPECT_EQ(d.predictor, p.predictor);
  EXPECT_EQ(d.sma_window, p.sma_window);
  EXPECT_EQ(d.disable, p.disable);
  EXPECT_EQ(d.report, p.report);
  EXPECT_EQ(d.log_level, p.log_level);
  EXPECT_EQ(d.log_dir, p.log_dir);
  EXPECT_EQ(d.callsite_depth, p.callsite_depth);
  EXPECT_EQ(d.check, p.check);
  EXPECT_EQ(d.clv_segments, p.clv_segments);
  EXPECT_EQ(d.tree_segsize, p.tree_segsize);
  EXPECT_EQ(d.timeline, p.timeline);
  EXPECT_EQ(d.helper_thread, p.helper_thread);
  EXPECT_EQ(d.min_bytes, p.min_bytes);
  EXPECT_EQ(d.reproducible, p.reproducible);
  EXPECT_EQ(d.help, p.help);
  EXPECT_EQ(d.test_max_private, p.test_max_private);
  EXPECT_EQ(d.clock_offset_us, p.clock_offset_us);
  // The documented defaults.
  EXPECT_EQ(p.log_level, "warn");
  EXPECT_TRUE(p.log_dir.empty());
  EXPECT_EQ(p.clv_segments, 0);
  EXPECT_TRUE(p.timeline.empty());
  EXPECT_EQ(p.helper_thread, -1);  // auto
  EXPECT_EQ(p.min_bytes, 16384);
  EXPECT_FALSE(p.reproducible);
  EXPECT_FALSE(p.help);
  EXPECT_EQ(p.test_max_private, 0);
  EXPECT_EQ(p.clock_offset_us, 0.0);
}

// Every value is stored in its own field.
TEST(Config, EachParameterSetsItsField) {
  const Config c = parse({{"PAPSHIM_ALLREDUCE", "slt"},        {"PAPSHIM_REDUCE", "binomial"},
                          {"PAPSHIM_ALLGATHER", "bruck"},      {"PAPSHIM_PREDICTOR", "off"},
                          {"PAPSHIM_SMA_WINDOW", "7"},         {"PAPSHIM_DISABLE", "1"},
                          {"PAPSHIM_REPORT", "out/r"},         {"PAPSHIM_LOG_LEVEL", "debug"},
                          {"PAPSHIM_LOG_DIR", "/tmp/logs"},    {"PAPSHIM_CALLSITE_DEPTH", "3"},
                          {"PAPSHIM_CHECK", "on"},             {"PAPSHIM_CLV_SEGMENTS", "12"},
                          {"PAPSHIM_TREE_SEGSIZE", "4096"},    {"PAPSHIM_TIMELINE", "t.json"},
                          {"PAPSHIM_HELPER_THREAD", "0"},      {"PAPSHIM_MIN_BYTES", "0"},
                          {"PAPSHIM_REPRODUCIBLE", "true"},    {"PAPSHIM_HELP", "1"},
                          {"PAPSHIM_TEST_MAX_PRIVATE", "5"},   {"PAPSHIM_TEST_CLOCK_OFFSET_US", "-2.5e6"}});
  EXPECT_EQ(c.allreduce, "slt");
  EXPECT_EQ(c.reduce, "binomial");
  EXPECT_EQ(c.allgather, "bruck");
  EXPECT_EQ(c.predictor, PredictorMode::Off);
  EXPECT_EQ(c.sma_window, 7);
  EXPECT_TRUE(c.disable);
  EXPECT_EQ(c.report, "out/r");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.log_dir, "/tmp/logs");
  EXPECT_EQ(c.callsite_depth, 3);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.clv_segments, 12);
  EXPECT_EQ(c.tree_segsize, 4096);
  EXPECT_EQ(c.timeline, "t.json");
  EXPECT_EQ(c.helper_thread, 0);
  EXPECT_EQ(c.min_bytes, 0);
  EXPECT_TRUE(c.reproducible);
  EXPECT_TRUE(c.help);
  EXPECT_EQ(c.test_max_private, 5);
  EXPECT_EQ(c.clock_offset_us, -2.5e6);
}

// The algorithm parameters accept auto, native and exactly the catalog's
// algorithms for their collective.
TEST(Config, AlgorithmChoicesComeFromTheCatalog) {
  const std::pair<const char*, Collective> params[] = {{"PAPSHIM_ALLREDUCE", Collective::Allreduce},
                                                       {"PAPSHIM_REDUCE", Collective::Reduce},
                                                       {"PAPSHIM_ALLGATHER", Collective::Allgather}};
  for (const auto& [name, coll] : params) {
    std::vector<std::string> expected = {"auto", "native"};
    for (const AlgoInfo* a : algorithms_for(coll)) expected.emplace_back(a->name);
    const ParamSpec* spec = nullptr;
    for (const auto& p : param_specs())
      if (std::string(p.name) == name) spec = &p;
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->choices, expected) << name;
  }
}

TEST(Config, MarkdownTableHasOneRowPerPublicParameter) {
  const std::string md = params_markdown();
  std::istringstream in(md);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  std::size_t expected = 2;
  for (const auto& spec : param_specs()) {
    EXPECT_EQ(md.find(std::string("| `") + spec.name + "` |") != std::string::npos, !spec.test_only) << spec.name;
    if (!spec.test_only) ++expected;
  }
  EXPECT_EQ(rows.size(), expected);
  EXPECT_NE(md.find("| `PAPSHIM_TREE_SEGSIZE` | auto | auto, 0..2^30 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `PAPSHIM_LOG_DIR` | (stderr) | directory |"), std::string::npos) << md;
}

}  // namespace
}  // namespace papshim
