// Pre-reduced ring (PRR) allreduce (Proficz, "Improving all-reduce collective
// operations for imbalanced process arrival patterns", section 4.2, figure 7,
// with the errata noted in prr.cpp).
#pragma once

#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// Reads params.nprocs, params.arrival (predicted, one per rank) and
// params.tau (time of one segment transfer plus reduction, same unit).
// nseg == P (params.nseg is ignored).  Step::round is the hop number along
// the segment's path, 0 .. 2P-3.
Schedule build_prr(const ScheduleParams& params);

// The plan behind the schedule, in sorted ids (id 0 arrives first):
// order[id] is the rank, k[id] its pre-steps, sp[j] / rp[j] the ids where
// slice j starts and is reduced for the last time.  Exposed for tests.
struct PrrPlan {
  std::vector<int> order, k, sp, rp;
};
PrrPlan prr_plan(const ScheduleParams& params);

}  // namespace papshim
