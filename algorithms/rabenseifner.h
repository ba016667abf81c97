// Rabenseifner allreduce: recursive-halving reduce-scatter then
// recursive-doubling allgather (Rabenseifner 2004; Thakur, Rabenseifner and
// Gropp 2005), with a pre and a post step when P is not a power of two.
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// nseg == the largest power of two <= P (params.nseg is ignored); only
// params.nprocs is read.  Step::round: 0 pre step, 1..L halving, L+1..2L
// doubling, 2L+1 post step (L = log2 nseg).
Schedule build_rabenseifner(const ScheduleParams& params);

}  // namespace papshim
