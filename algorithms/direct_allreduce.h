// Direct allreduce: every rank combines one slice of the vector from all
// ranks, then sends the finished slice to every rank (a direct reduce-scatter
// followed by a direct allgather).
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// nseg == P (params.nseg is ignored); only params.nprocs is read, so the
// schedule is the same for every arrival vector and cost.  Slice j is
// combined at rank j in the fixed order j, j+1, ..., j-1 (mod P), the order
// in which the ring allreduce combines it.  Step::round: 0 for the
// reduce-scatter, 1 for the allgather.
Schedule build_direct_allreduce(const ScheduleParams& params);

}  // namespace papshim
