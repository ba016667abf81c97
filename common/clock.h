// The clock every layer uses: monotonic seconds, plus the test-only per-rank
// offset (PAPSHIM_TEST_CLOCK_OFFSET_US, set once at MPI_Init) that emulates
// hosts whose clocks disagree.
#pragma once

#include <time.h>

namespace papshim {

inline double g_clock_offset_s = 0;

inline double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec) + g_clock_offset_s;
}

}  // namespace papshim
