/* A minimal counting preload, for cross-checking papshim's report: counts
 * the C calls of MPI_Allreduce, MPI_Reduce and MPI_Allgather per rank and
 * prints them at MPI_Finalize as "count rank=R allreduce=A reduce=B
 * allgather=C".  It forwards to the next definition (dlsym RTLD_NEXT), so
 * LD_PRELOAD=count_calls.so:libpapshim.so counts in the same run as papshim.
 * Build: mpicc -shared -fPIC count_calls.c -o count_calls.so -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long n_allreduce, n_reduce, n_allgather;

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int MPI_Allreduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  ++n_allreduce;
  return NEXT("MPI_Allreduce", int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm))(s, r, c, t, o, comm);
}
int MPI_Reduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm) {
  ++n_reduce;
  return NEXT("MPI_Reduce", int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm))(s, r, c, t, o,
                                                                                                  root, comm);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm) {
  ++n_allgather;
  return NEXT("MPI_Allgather", int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm))(
      s, sc, st, r, rc, rt, comm);
}
int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "count rank=%d allreduce=%ld reduce=%ld allgather=%ld\n", rank, n_allreduce, n_reduce, n_allgather);
  return NEXT("MPI_Finalize", int (*)(void))();
}
