// Recent schedules of forced algorithms, keyed by their decision inputs: the
// same inputs give the same schedule, so a repeated call skips the build.
// Bounded in bytes (kCacheBytes): schedules at large P are big, and a run
// with many shapes must not keep them all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "algorithms/catalog.h"

namespace papshim {

// A hash of the inputs that decide a schedule (also used by PAPSHIM_CHECK).
std::uint64_t params_hash(Algo algo, const ScheduleParams& p);

// The schedule for (algo, p), built or found; nullptr with `why_not` set
// when the generator refuses the inputs.  Thread safe.
std::shared_ptr<const Schedule> cached_schedule(Algo algo, const ScheduleParams& p, std::string& why_not);

// Bytes held by the cache now, and its bound.
std::size_t cached_schedule_bytes();
constexpr std::size_t kScheduleCacheBytes = std::size_t{64} << 20;

}  // namespace papshim
