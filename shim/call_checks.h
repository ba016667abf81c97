// Which calls papshim may run itself.  Two kinds of test, kept apart:
//
// - erroneous_arguments(): arguments the MPI library would reject on this
//   rank (MPI_IN_PLACE where it is not allowed, aliased buffers, a null
//   handle, an op not defined for the datatype ...).  Such calls go to PMPI
//   unchanged, so the user gets the library's own error through the
//   communicator's own error handler.  These tests are rank-local; in a
//   valid program they pass on every rank.
// - ineligible(): valid calls an algorithm of papshim's cannot run (size 1,
//   count 0, a non-commutative op for reordering algorithms ...).  Every
//   test reads only inputs identical on every rank of the communicator, so
//   all ranks reach the same verdict (the consistency invariant).
#pragma once

#include <mpi.h>

#include <string>

#include "shim/dispatch.h"

namespace papshim {

// Non-empty: why MPI would reject the call on this rank.
const char* erroneous_arguments(const CallArgs& a, int comm_rank, int comm_size);

// Non-empty: why this call cannot run one of papshim's algorithms.
std::string ineligible(const CallArgs& a, int comm_size, bool needs_commutative);

// The datatype's size in bytes (MPI_Type_size).
int type_size(MPI_Datatype t);

// Whether a built-in op is defined for every basic type the datatype is
// made of (user-defined ops: always).  Unknown combinations count as not
// defined, so they go to the MPI library.
bool op_defined_for(MPI_Op op, MPI_Datatype type);

}  // namespace papshim
