// The one executor: runs a rank's program of a Schedule with PMPI_Isend /
// PMPI_Irecv on the private communicator and combines with PMPI_Reduce_local.
#pragma once

#include <mpi.h>

#include "algorithms/schedule.h"

namespace papshim {

struct ExecArgs {
  Collective coll = Collective::Allreduce;
  const void* sendbuf = nullptr;  // MPI_IN_PLACE allowed
  void* recvbuf = nullptr;        // NULL allowed on non-root ranks of a reduce
  int count = 0;                  // reductions: elements; allgather: recvcount
  MPI_Datatype type = MPI_DATATYPE_NULL;  // reductions: datatype; allgather: recvtype
  int sendcount = 0;              // allgather only
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;  // allgather only
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // the private duplicate
};

// Returns MPI_SUCCESS or the first MPI error code met.  Whatever fails, the
// rank's whole program still runs (every expected message is sent and
// received), so the communicator stays usable.  kExecNoMemory, before any
// message: the scratch memory could not be had.
constexpr int kExecNoMemory = -1;
int execute(const Schedule& s, int rank, const ExecArgs& a);

// dst <- src as a typed copy (MPI_Pack / MPI_Unpack for non-contiguous
// types, no message); the type signatures must match.
int typed_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype);

}  // namespace papshim
