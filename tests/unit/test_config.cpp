#include <gtest/gtest.h>

#include <map>
#include <string>

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

}  // namespace
}  // namespace papshim
