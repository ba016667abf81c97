// The schedule cache stays within its byte bound whatever is put in it, and
// finds what it still holds.
#include <gtest/gtest.h>

#include <random>

#include "shim/schedule_cache.h"

namespace papshim {
namespace {

ScheduleParams prr_params(int p, unsigned seed) {
  ScheduleParams sp;
  sp.nprocs = p;
  sp.count = 1u << 20;
  sp.nseg = p;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> late(0.0, 0.05);
  for (int r = 0; r < p; ++r) sp.arrival.push_back(late(gen));
  return sp;
}

TEST(ScheduleCache, StaysWithinItsByteBound) {
  std::string why;
  auto first = cached_schedule(Algo::Prr, prr_params(256, 0), why);
  ASSERT_TRUE(first) << why;
  EXPECT_EQ(cached_schedule(Algo::Prr, prr_params(256, 0), why), first);  // found, not rebuilt
  for (unsigned seed = 1; seed <= 24; ++seed) {
    ASSERT_TRUE(cached_schedule(Algo::Prr, prr_params(256, seed), why)) << why;
    EXPECT_LE(cached_schedule_bytes(), kScheduleCacheBytes);
  }
  EXPECT_GT(cached_schedule_bytes(), kScheduleCacheBytes / 4);  // it does keep schedules
  // The oldest were evicted: asking again builds a new object.
  EXPECT_NE(cached_schedule(Algo::Prr, prr_params(256, 0), why), first);
}

}  // namespace
}  // namespace papshim
