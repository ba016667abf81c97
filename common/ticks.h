// A cheap interval counter for the statistics of calls papshim only passes
// through: the time-stamp counter where it runs at a constant rate on every
// core (x86-64 with an invariant TSC), else CLOCK_MONOTONIC in nanoseconds.
// Reading the TSC costs about a third of clock_gettime under a hypervisor's
// clock source.  Ticks are for differences only, converted to seconds with
// the rate measured over the run (TickRate), so no calibration delays
// startup.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace papshim {

namespace detail {
inline std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// CPUID leaf 0x80000007, EDX bit 8: the TSC is invariant (constant rate,
// runs in every power state).
inline bool invariant_tsc() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

inline const bool g_use_tsc = invariant_tsc();
}  // namespace detail

inline std::uint64_t ticks() {
#if defined(__x86_64__)
  if (detail::g_use_tsc) return __rdtsc();
#endif
  return detail::monotonic_ns();
}

// Seconds per tick, from readings of both clocks at construction and now
// (at least a millisecond apart: a shorter run waits for the rest).
class TickRate {
 public:
  TickRate() : t0_(ticks()), ns0_(detail::monotonic_ns()) {}
  double seconds_per_tick() const {
    if (!detail::g_use_tsc) return 1e-9;
    std::uint64_t dns = 0;
    while ((dns = detail::monotonic_ns() - ns0_) < 1000000) {
    }
    const std::uint64_t dt = ticks() - t0_;
    return dt > 0 ? 1e-9 * static_cast<double>(dns) / static_cast<double>(dt) : 1e-9;
  }

 private:
  std::uint64_t t0_, ns0_;
};

}  // namespace papshim
