// The shim's clock: monotonic seconds, plus the test-only per-rank offset
// (PAPSHIM_TEST_CLOCK_OFFSET_US) that emulates hosts whose clocks disagree.
#pragma once

#include <time.h>

namespace papshim {

extern double g_clock_offset_s;

inline double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec) + g_clock_offset_s;
}

}  // namespace papshim
