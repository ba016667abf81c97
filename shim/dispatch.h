// Dispatch: one intercepted collective, packed in CallArgs, goes to the
// algorithm chosen for it, or to PMPI when the shim cannot handle it.
#pragma once

#include <mpi.h>

#include "algorithms/schedule.h"

namespace papshim {

struct CallArgs {
  Collective coll;
  const void* sendbuf;
  void* recvbuf;
  int count;              // reductions: count; allgather: recvcount
  MPI_Datatype type;      // reductions: datatype; allgather: recvtype
  int sendcount;          // allgather only
  MPI_Datatype sendtype;  // allgather only
  MPI_Op op;
  int root;
  MPI_Comm comm;
  void* ret_addr;         // the application's call site
};

int call_native(const CallArgs& a);
int dispatch(const CallArgs& a);

}  // namespace papshim
