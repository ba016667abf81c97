// Under SimGrid's SMPI (built with -DPAPSHIM_SMPI, bench/smpi only) two
// things differ.  SMPI completes a send below 64 KiB at once, as if the
// network had taken it, so the one-send-per-peer order above would let
// every small send of a peer onto the link together: sends there are
// synchronous (PMPI_Issend), completing when their receive has matched, as
// a large send does.  SMPI's PMPI_Waitsome is a wait for one request and
// then a test of every other, each test a switch into the simulation
// kernel, which at hundreds of ranks costs more host time than the
// messages: the loop waits with PMPI_Waitany there (the same simulated
// times; requests done at the same instant come one call after the other,
// and a request that fails fails the wait).
// And PMPI_Reduce_local costs no simulated time there, so each combine
// charges the simulated seconds per reduced byte set with
// set_smpi_reduce_cost().
#include "algorithms/executor_smpi.h"

#include "algorithms/executor.h"

#ifdef PAPSHIM_SMPI
#include <smpi/smpi.h>
#endif

namespace papshim {

#ifdef PAPSHIM_SMPI
namespace {
double g_smpi_reduce_cost = 0;  // simulated seconds per reduced byte (one per simulated rank)
}  // namespace

void set_smpi_reduce_cost(double seconds_per_byte) { g_smpi_reduce_cost = seconds_per_byte; }
#endif

namespace detail {

int post_send(const void* buf, int n, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* req) {
#ifdef PAPSHIM_SMPI
  return PMPI_Issend(buf, n, type, peer, tag, comm, req);
#else
  return PMPI_Isend(buf, n, type, peer, tag, comm, req);
#endif
}

int wait_requests(int count, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses) {
#ifdef PAPSHIM_SMPI
  *outcount = 1;
  const int rc = PMPI_Waitany(count, reqs, indices, statuses);
  if (rc == MPI_SUCCESS && indices[0] == MPI_UNDEFINED) *outcount = MPI_UNDEFINED;
  return rc;
#else
  return PMPI_Waitsome(count, reqs, outcount, indices, statuses);
#endif
}

int combine(const void* in, void* inout, int n, MPI_Datatype type, int type_size, MPI_Op op) {
  const int rc = PMPI_Reduce_local(in, inout, n, type, op);
#ifdef PAPSHIM_SMPI
  if (g_smpi_reduce_cost > 0) smpi_execute_benched(g_smpi_reduce_cost * n * type_size);
#else
  (void)type_size;
#endif
  return rc;
}


}  // namespace detail
}  // namespace papshim
