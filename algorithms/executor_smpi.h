// The executor's MPI calls that differ under SimGrid's SMPI
// (executor_smpi.cpp says how and why); elsewhere they are the plain PMPI
// calls.
#pragma once

#include <mpi.h>

namespace papshim {
namespace detail {

// PMPI_Isend (SMPI: PMPI_Issend).
int post_send(const void* buf, int n, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* req);
// PMPI_Waitsome (SMPI: PMPI_Waitany, one request per call).
int wait_requests(int count, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses);
// PMPI_Reduce_local (SMPI: plus the simulated time of set_smpi_reduce_cost()).
int combine(const void* in, void* inout, int n, MPI_Datatype type, int type_size, MPI_Op op);

}  // namespace detail
}  // namespace papshim
