// Binomial-tree reduce to an arbitrary root, optionally pipelined over
// segments.
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// Uses params.nprocs, params.root, params.count and params.nseg.  The
// schedule's nseg is max(1, params.nseg), capped at params.count when count
// is positive (no empty segments).  Send and RecvReduce only.
//
// The combination order is a rotation of the rank order (relative ranks) and
// children are combined as "incoming op own", so the op must be commutative;
// the caller sends non-commutative ops elsewhere.
Schedule build_binomial_reduce(const ScheduleParams& params);

}  // namespace papshim
