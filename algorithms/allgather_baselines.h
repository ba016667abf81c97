// Baseline allgather schedules: ring, Bruck, recursive doubling.
//
// Each builder takes params.nprocs only; nseg == P, Send and RecvCopy only,
// every rank receives each other rank's block exactly once, in its own slot
// (no final rotation), and Step::round is the algorithm step.
#pragma once

#include <optional>

#include "algorithms/schedule.h"

namespace papshim {

// P - 1 steps; in step s rank r passes block (r - s) mod P to r + 1.
Schedule build_ring_allgather(const ScheduleParams& params);

// ceil(log2 P) steps with distances 1, 2, 4, ...; each step's message is
// split into one Send/RecvCopy per block.  Any P.
Schedule build_bruck_allgather(const ScheduleParams& params);

// log2 P pairwise exchanges with r XOR 2^s.  Only for P a power of two:
// returns std::nullopt otherwise (the caller falls back and says so).
std::optional<Schedule> build_recursive_doubling_allgather(
    const ScheduleParams& params);
// Why recursive doubling cannot run on `nprocs` ranks; nullptr when it can.
const char* recursive_doubling_size_check(int nprocs);

}  // namespace papshim
