/* Calls the MPI library rejects, under MPI_ERRORS_RETURN, each followed by
 * a valid call on the same communicator that must complete with the right
 * result.  Every rank makes each erroneous call, so the library rejects it
 * everywhere and no rank waits for another.  Prints one line per case with
 * the error class (or "ok"), so the run with the preload can be compared
 * with the run without it line by line.
 *   error_check [count]
 * Exit 0 when every valid follow-up call was exact. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int g_rank, g_size, g_bad;

static void report(const char* what, int rc) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (g_rank == 0) printf("%-40s %s (class %d)\n", what, rc == MPI_SUCCESS ? "ok" : "error", cls);
}

/* A valid allreduce and reduce on `comm`, checked exactly. */
static void follow_up(MPI_Comm comm, int n, const char* after) {
  double* in = calloc((size_t)n, sizeof(double));
  double* out = calloc((size_t)n, sizeof(double));
  for (int i = 0; i < n; ++i) in[i] = g_rank + i % 5;
  const double base = g_size * (g_size - 1) / 2.0;
  int rc = MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
  for (int i = 0; i < n && rc == MPI_SUCCESS; ++i)
    if (out[i] != base + g_size * (i % 5)) rc = MPI_ERR_OTHER;
  rc = rc == MPI_SUCCESS ? MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, g_size - 1, comm) : rc;
  for (int i = 0; i < n && rc == MPI_SUCCESS && g_rank == g_size - 1; ++i)
    if (out[i] != base + g_size * (i % 5)) rc = MPI_ERR_OTHER;
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: the valid call after '%s' failed or was wrong\n", g_rank, after);
    g_bad = 1;
  }
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* every case's line is out even if the library aborts later */
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int n = argc > 1 ? atoi(argv[1]) : 8192;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* some checks report on the world */
  double* a = malloc(sizeof(double) * (size_t)n * (size_t)g_size);
  double* b = malloc(sizeof(double) * (size_t)n * (size_t)g_size);
  for (int i = 0; i < n * g_size; ++i) a[i] = b[i] = 1.0;
  follow_up(comm, n, "start");

  report("allreduce recvbuf MPI_IN_PLACE", MPI_Allreduce(a, MPI_IN_PLACE, n, MPI_DOUBLE, MPI_SUM, comm));
  follow_up(comm, n, "allreduce recvbuf MPI_IN_PLACE");
  report("allreduce aliased buffers", MPI_Allreduce(a, a, n, MPI_DOUBLE, MPI_SUM, comm));
  follow_up(comm, n, "allreduce aliased buffers");
  report("allreduce MPI_BAND on MPI_DOUBLE", MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_BAND, comm));
  follow_up(comm, n, "allreduce MPI_BAND on MPI_DOUBLE");
#ifndef MPICH_VERSION /* MPICH 4.0.2 asserts in its own MPI_LOR on MPI_FLOAT, with or without papshim */
  report("reduce MPI_LOR on MPI_FLOAT", MPI_Reduce(a, b, n, MPI_FLOAT, MPI_LOR, 0, comm));
  follow_up(comm, n, "reduce MPI_LOR on MPI_FLOAT");
#endif
  /* The root passes MPI_IN_PLACE as recvbuf, the others as sendbuf: both
   * wrong, so every rank is rejected. */
  report("reduce MPI_IN_PLACE misplaced",
         g_rank == 0 ? MPI_Reduce(a, MPI_IN_PLACE, n, MPI_DOUBLE, MPI_SUM, 0, comm)
                     : MPI_Reduce(MPI_IN_PLACE, b, n, MPI_DOUBLE, MPI_SUM, 0, comm));
  follow_up(comm, n, "reduce MPI_IN_PLACE misplaced");
  report("reduce root out of range", MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, g_size, comm));
  follow_up(comm, n, "reduce root out of range");
  report("allgather recvbuf MPI_IN_PLACE", MPI_Allgather(a, n, MPI_DOUBLE, MPI_IN_PLACE, n, MPI_DOUBLE, comm));
  follow_up(comm, n, "allgather recvbuf MPI_IN_PLACE");
  report("allreduce negative count", MPI_Allreduce(a, b, -1, MPI_DOUBLE, MPI_SUM, comm));
  follow_up(comm, n, "allreduce negative count");
  report("allreduce MPI_OP_NULL", MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_OP_NULL, comm));
  follow_up(comm, n, "allreduce MPI_OP_NULL");

  int bad = 0;
  MPI_Allreduce(&g_bad, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (g_rank == 0) printf("follow-up calls: %s\n", bad ? "FAILED" : "all exact");
  MPI_Comm_free(&comm);
  free(a);
  free(b);
  MPI_Finalize();
  return bad;
}
