// Ring allreduce: reduce-scatter then allgather around the ring of ranks
// (Thakur, Rabenseifner and Gropp 2005; figure 2 of the PRR/SLT seed).
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// nseg == P (params.nseg is ignored); only params.nprocs is read.
// 2(P - 1) steps of one send and one receive per rank (Step::round).
Schedule build_ring_allreduce(const ScheduleParams& params);

}  // namespace papshim
