// Sorted linear tree (SLT) allreduce and the plain linear tree it improves on
// (Proficz, "Improving all-reduce collective operations for imbalanced
// process arrival patterns", section 4.1, figure 5).
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// SLT: the processes re-ranked by predicted arrival (params.arrival, ties by
// rank) form a pipeline, the earliest first.  nseg == P (params.nseg is
// ignored); only params.nprocs and params.arrival are read.
Schedule build_slt(const ScheduleParams& params);

// The same pipeline in rank order, whatever the arrivals (figure 6a).
Schedule build_linear_tree(const ScheduleParams& params);

}  // namespace papshim
