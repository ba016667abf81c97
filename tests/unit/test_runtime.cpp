// The thread level papshim asks the MPI library for, read before the
// configuration is parsed: it must accept every spelling the parser
// accepts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

#include "shim/runtime.h"

namespace papshim {
namespace {

class ThreadLevel : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv("PAPSHIM_DISABLE");
    unsetenv("PAPSHIM_HELPER_THREAD");
  }
};

TEST_F(ThreadLevel, AsksForMultipleByDefault) {
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_SINGLE), MPI_THREAD_MULTIPLE);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_FUNNELED), MPI_THREAD_MULTIPLE);
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
  setenv("PAPSHIM_HELPER_THREAD", "No", 1);
  EXPECT_EQ(thread_level_to_request(MPI_THREAD_FUNNELED), MPI_THREAD_FUNNELED);
}

TEST(ThreadLevelReport, NeverMoreThanAskedOrGranted) {
  EXPECT_EQ(thread_level_to_report(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE), MPI_THREAD_SINGLE);
  EXPECT_EQ(thread_level_to_report(MPI_THREAD_MULTIPLE, MPI_THREAD_FUNNELED), MPI_THREAD_FUNNELED);
}

}  // namespace
}  // namespace papshim
