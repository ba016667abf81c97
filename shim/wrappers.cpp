// The C entry points.  Each wrapper is plumbing: guard against re-entry,
// pack the arguments, dispatch; everything the shim does not handle goes to
// PMPI unchanged.
#include <mpi.h>

#include "papshim.h"
#include "shim/comm_context.h"
#include "shim/dispatch.h"
#include "shim/runtime.h"

using papshim::CallArgs;
using papshim::Collective;

namespace {
bool shim_on(const papshim::ReentryGuard& g) { return g.first() && papshim::runtime().active.load(std::memory_order_relaxed); }
}  // namespace

extern "C" {

// MPI_Init is MPI_Init_thread(MPI_THREAD_SINGLE) for the application; the
// shim asks for MPI_THREAD_MULTIPLE for its helper thread.
int MPI_Init(int* argc, char*** argv) {
  papshim::ReentryGuard g;
  const int ask = papshim::thread_level_to_request(MPI_THREAD_SINGLE);
  int granted = MPI_THREAD_SINGLE;
  const int rc = ask == MPI_THREAD_SINGLE ? PMPI_Init(argc, argv) : PMPI_Init_thread(argc, argv, ask, &granted);
  if (rc == MPI_SUCCESS && g.first())
    papshim::on_init(granted, ask != MPI_THREAD_SINGLE, papshim::thread_level_to_report(MPI_THREAD_SINGLE, granted));
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  papshim::ReentryGuard g;
  const int ask = papshim::thread_level_to_request(required);
  int granted = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(argc, argv, ask, &granted);
  const int told = ask == required ? granted : papshim::thread_level_to_report(required, granted);
  if (rc == MPI_SUCCESS && g.first()) papshim::on_init(granted, ask != required, told);
  *provided = told;
  return rc;
}

// The level the application was told at initialisation, not the one the
// shim asked for on its behalf.
int MPI_Query_thread(int* provided) {
  const int rc = PMPI_Query_thread(provided);
  const papshim::Runtime& rt = papshim::runtime();
  if (rc == MPI_SUCCESS && provided && rt.initialised) *provided = rt.thread_level_told;
  return rc;
}

int MPI_Finalize(void) {
  papshim::ReentryGuard g;
  if (g.first()) papshim::on_finalize();
  return PMPI_Finalize();
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  papshim::ReentryGuard g;
  if (!shim_on(g)) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return papshim::dispatch(CallArgs{Collective::Allreduce, sendbuf, recvbuf, count, type, 0, MPI_DATATYPE_NULL, op,
                                    0, comm, __builtin_return_address(0)});
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  papshim::ReentryGuard g;
  if (!shim_on(g)) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return papshim::dispatch(CallArgs{Collective::Reduce, sendbuf, recvbuf, count, type, 0, MPI_DATATYPE_NULL, op,
                                    root, comm, __builtin_return_address(0)});
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  papshim::ReentryGuard g;
  if (!shim_on(g)) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return papshim::dispatch(CallArgs{Collective::Allgather, sendbuf, recvbuf, recvcount, recvtype, sendcount,
                                    sendtype, MPI_OP_NULL, 0, comm, __builtin_return_address(0)});
}

// Progress report of the application (PAPSHIM_PREDICTOR=edge): applies to the
// communicator of the most recent intercepted call.
void papshim_edge(double fraction) {
  papshim::ReentryGuard g;
  if (!shim_on(g)) return;
  if (auto pred = papshim::CommRegistry::instance().last_predictor()) pred->on_edge(papshim::common_now(), fraction);
}

}  // extern "C"
