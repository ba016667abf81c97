// One intercepted collective's arguments, as the application passed them:
// packed by the wrappers (shim/wrappers.cpp, shim/fortran.cpp), read by
// dispatch and its checks, and run by the executor (algorithms/executor.h),
// which takes the private duplicate it runs on separately.
#pragma once

#include <mpi.h>

#include "algorithms/schedule.h"

namespace papshim {

struct CallArgs {
  Collective coll = Collective::Allreduce;
  const void* sendbuf = nullptr;          // MPI_IN_PLACE allowed
  void* recvbuf = nullptr;                // NULL allowed on non-root ranks of a reduce
  int count = 0;                          // reductions: count; allgather: recvcount
  MPI_Datatype type = MPI_DATATYPE_NULL;  // reductions: datatype; allgather: recvtype
  int sendcount = 0;                      // allgather only
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;  // allgather only
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;          // the application's communicator
  void* ret_addr = nullptr;               // the application's call site
};

}  // namespace papshim
