// The thread level papshim asks the MPI library for, read before the
// configuration is parsed: it must accept every spelling the parser
// accepts, and follow the job's size as the launcher announces it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "predictor/round_exchange.h"
#include "shim/runtime.h"

namespace papshim {
namespace {

constexpr const char* kVariables[] = {"PAPSHIM_DISABLE", "PAPSHIM_HELPER_THREAD", "PAPSHIM_PREDICTOR",
                                      "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};

class ThreadLevel : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVariables)
      if (const char* x = std::getenv(v)) saved_.emplace_back(v, x);
    clear();
  }
  void TearDown() override {
    clear();
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  static void clear() {
    for (const char* v : kVariables) unsetenv(v);
  }
  std::vector<std::pair<std::string, std::string>> saved_;
};

// Without a launcher's word on the job's size, the rounds may need relays:
// the helper thread, and so MPI_THREAD_MULTIPLE.
TEST_F(ThreadLevel, AsksForMultipleWhenTheJobSizeIsUnknown) {
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_FUNNELED), MPI_THREAD_MULTIPLE);
  setenv("PAPSHIM_HELPER_THREAD", "AUTO", 1);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE);
}

// A job of at most kDirectMaxRanks ranks exchanges its rounds directly and
// runs inline at the application's level; a larger one gets the helper.
TEST_F(ThreadLevel, AutoFollowsTheLaunchersJobSize) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    setenv(var, std::to_string(kDirectMaxRanks).c_str(), 1);
    EXPECT_EQ(launcher_world_size(), kDirectMaxRanks) << var;
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_SINGLE) << var;
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SERIALIZED), MPI_THREAD_SERIALIZED) << var;
    setenv(var, std::to_string(kDirectMaxRanks + 1).c_str(), 1);
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE) << var;
    setenv(var, "not a number", 1);
    EXPECT_EQ(launcher_world_size(), 0) << var;
    unsetenv(var);
  }
  // The first variable found is the launcher's (mpirun inside a Slurm job).
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("SLURM_NTASKS", "64", 1);
  EXPECT_EQ(launcher_world_size(), 4);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_FUNNELED), MPI_THREAD_FUNNELED);
}

TEST_F(ThreadLevel, HelperForcedOnAsksForMultipleAtAnySize) {
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("PAPSHIM_HELPER_THREAD", "1", 1);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE);
}

TEST_F(ThreadLevel, DisabledInAnySpellingTheParserAccepts) {
  for (const char* v : {"1", "yes", "YES", "True", "TRUE", "on", "On"}) {
    setenv("PAPSHIM_DISABLE", v, 1);
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_SINGLE) << v;
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SERIALIZED), MPI_THREAD_SERIALIZED) << v;
  }
  for (const char* v : {"0", "no", "FALSE", "Off", ""}) {
    setenv("PAPSHIM_DISABLE", v, 1);
    EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE) << v;
  }
}

TEST_F(ThreadLevel, NoHelperThreadKeepsTheApplicationsLevel) {
  setenv("PAPSHIM_HELPER_THREAD", "0", 1);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_FUNNELED), MPI_THREAD_FUNNELED);
  unsetenv("PAPSHIM_HELPER_THREAD");
  // Nothing to advance without a predictor.
  setenv("PAPSHIM_PREDICTOR", "Off", 1);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_SINGLE);
}

TEST(ThreadLevelReport, NeverMoreThanAskedOrGranted) {
  EXPECT_EQ(thread_level_to_report(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE), MPI_THREAD_SINGLE);
  EXPECT_EQ(thread_level_to_report(MPI_THREAD_MULTIPLE, MPI_THREAD_FUNNELED), MPI_THREAD_FUNNELED);
}

}  // namespace
}  // namespace papshim
