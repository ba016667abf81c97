// Whether the ranks of a communicator hold the same values: the one check
// behind the configuration's job-wide parameters (MPI_Init) and
// PAPSHIM_CHECK's decision inputs (every scheduled call).
//
// Works as follows.  Every rank contributes each value v and its complement
// ~v to one MPI_MAX allreduce.  The maxima equal a rank's own pair exactly
// when no rank holds a larger v and none a smaller one, i.e. when every rank
// holds the same v, and every rank reaches the same verdict.  One collective
// that every rank enters, so a disagreement can never hang the job.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace papshim {

// Per value, whether every rank of `comm` holds the same one; `max`
// (optional, n words) receives the maxima over the ranks.  Empty when the
// allreduce failed.
std::vector<bool> agree_across(MPI_Comm comm, const std::uint64_t* values, std::size_t n,
                               std::uint64_t* max = nullptr);

}  // namespace papshim
