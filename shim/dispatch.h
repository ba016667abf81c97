// Dispatch: one intercepted collective, packed in CallArgs, goes to the
// algorithm chosen for it, or to PMPI when the shim cannot handle it.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "algorithms/schedule.h"
#include "predictor/predictor.h"

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
// The helper thread's precompute callback (auto mode's cost model).
std::shared_ptr<const void> precompute_selection(const RoundResult& round, const CallShape& shape, int nprocs,
                                                 int rank);
// Never throws: nothing leaves through the C interface.
int dispatch(const CallArgs& a) noexcept;

}  // namespace papshim
