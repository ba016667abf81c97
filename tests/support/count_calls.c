/* A minimal counting preload, for cross-checking papshim's report: counts
 * the C calls of MPI_Allreduce, MPI_Reduce and MPI_Allgather per rank and
 * prints them at MPI_Finalize as "count rank=R allreduce=A reduce=B
 * allgather=C".  Build: mpicc -shared -fPIC count_calls.c -o count_calls.so */
#include <mpi.h>
#include <stdio.h>

static long n_allreduce, n_reduce, n_allgather;

int MPI_Allreduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  ++n_allreduce;
  return PMPI_Allreduce(s, r, c, t, o, comm);
}
int MPI_Reduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm) {
  ++n_reduce;
  return PMPI_Reduce(s, r, c, t, o, root, comm);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm) {
  ++n_allgather;
  return PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "count rank=%d allreduce=%ld reduce=%ld allgather=%ld\n", rank, n_allreduce, n_reduce, n_allgather);
  return PMPI_Finalize();
}
