// Sparbit allgather (Loureiro et al., "Sparbit: a new logarithmic-cost and
// data locality-aware MPI Allgather algorithm", section III).
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

// Builds the Sparbit allgather schedule for params.nprocs ranks; every
// other field of `params` is ignored.  nseg == P, Send and RecvCopy only,
// ceil(log2 P) steps (Step::round), P - 1 receives per rank.
Schedule build_sparbit(const ScheduleParams& params);

// The program of one rank, programs[rank] of build_sparbit: O(P) work where
// the whole schedule is O(P^2), for executors that need only their own.
RankProgram sparbit_program(int nprocs, int rank);

}  // namespace papshim
