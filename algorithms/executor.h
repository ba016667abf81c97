// The one executor: runs a rank's program of a Schedule with PMPI_Isend /
// PMPI_Irecv on the private communicator and combines with PMPI_Reduce_local.
#pragma once

#include <mpi.h>

#include "algorithms/call_args.h"
#include "algorithms/schedule.h"

namespace papshim {

// Runs rank `rank`'s program of `s` for the call `a` on `comm`, the
// private duplicate of a.comm.  Returns MPI_SUCCESS or the first MPI error code met.  Whatever fails, the
// rank's whole program still runs (every expected message is sent and
// received), so the communicator stays usable.  kExecNoMemory, before any
// message: the scratch memory could not be had.
constexpr int kExecNoMemory = -1;
int execute(const Schedule& s, int rank, const CallArgs& a, MPI_Comm comm);

// dst <- src as a typed copy (MPI_Pack / MPI_Unpack for non-contiguous
// types, no message); the type signatures must match.
int typed_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype);

#ifdef PAPSHIM_SMPI
// SMPI build only (bench/smpi): the simulated seconds each combine charges
// per reduced byte (PMPI_Reduce_local is free in SMPI's simulated time).
void set_smpi_reduce_cost(double seconds_per_byte);
#endif

}  // namespace papshim
