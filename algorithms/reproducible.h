// PAPSHIM_REPRODUCIBLE=1: allreduce and reduce results that do not depend on
// timing.
//
// What varies without the mode.  The executor combines the segments of a
// rank in program order, so the bits of a result are fixed by the schedule
// alone; but the arrival-aware schedules are built from the predicted
// arrivals (PRR and SLT order the ranks by them, Clairvoyant pairs ranks by
// them, the sorted binomial tree places ranks by them), and auto mode picks
// among algorithms, native included, by arrivals and measured costs.  Each
// of those combines in another order, and floating-point association shows
// in the last bits.  Every rank still gets the same bits within a call.
//
// What the mode does.  Every schedule for allreduce and reduce is built from
// timing-free inputs (make_timing_free: all arrivals equal, a constant tau),
// so its structure, and with it every element's combination tree, depends on
// P, root, count and the job-wide configuration only; arrivals still decide
// *when* each step runs (the executor is data flow), never *what* it
// combines.  A forced algorithm keeps its own (timing-free) tree: PRR then
// runs the ring's data flow, SLT the linear tree in rank order, the sorted
// binomial tree the binomial tree, Clairvoyant its schedule for equal
// arrivals.  Auto mode picks by the call's shape alone
// (reproducible_selection): the direct allreduce (the ring's chains for
// large P), the binomial reduce tree.  Why those: with one rank late, the
// direct allreduce lets every owner combine everything ahead of the late
// contribution while it is late and then needs two hops, and in a fixed
// binomial tree only the late rank's ancestors wait for it; native cannot
// be mixed in, since its combination order is the MPI library's.
#pragma once

#include "algorithms/selector.h"

namespace papshim {

// True when the mode governs this input: PAPSHIM_REPRODUCIBLE and a
// reduction (allgather combines nothing; it keeps its usual selection).
bool reproducible_applies(const SelectInput& in);

// Replaces everything timing-dependent in a schedule's inputs: every arrival
// becomes 0 and tau the value of the default cost figures for this segment
// size (any positive constant gives the same structure once the arrivals are
// equal).  P, root, count and nseg are left as they are (they come from the
// call's shape and the job-wide configuration).
void make_timing_free(ScheduleParams& p, const SelectInput& in);

// Communicator sizes up to this run the direct allreduce in auto mode under
// the mode; larger ones the ring (the same chains; one message in flight each
// way per rank instead of up to 2(P-1)).
constexpr int kDirectMaxProcs = 64;

// Auto mode under the mode: the algorithm for this call's shape.  Reads
// coll, nprocs, count, commutative only; never arrivals, costs or
// corrections.
Algo reproducible_pick(const SelectInput& in);

// The Selection auto mode returns under the mode (pick, timing-free
// parameters and the schedule, from a small cache).  Same inputs of shape,
// same result, whatever in.arrival, in.cost and in.correction hold.
Selection reproducible_selection(const SelectInput& in);

}  // namespace papshim
