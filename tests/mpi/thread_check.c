/* Threads running collectives at the same time, each on its own
 * communicator (MPI_THREAD_MULTIPLE): allreduce, reduce (rotating root) and
 * allgather of a non-contiguous type, with imbalanced arrivals, checked
 * exactly at every iteration.
 *   thread_check [threads] [iterations] [count]
 * Exit 0 when every result is exact; a hang is caught by the test timeout. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size, g_iters, g_count;
static int g_errors;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

struct job {
  int id;
  MPI_Comm comm;
};

static void fail(int id, int it, const char* what, double got, double want) {
  pthread_mutex_lock(&g_mu);
  if (g_errors++ < 10)
    fprintf(stderr, "rank %d thread %d iteration %d: %s got %g expected %g\n", g_rank, id, it, what, got, want);
  pthread_mutex_unlock(&g_mu);
}

/* Integer-valued doubles: every summation order gives the exact result. */
static double value(int rank, int i, int it, int id) { return (double)((rank + 1) * 3 + i % 7 + it + id); }

static void* run(void* arg) {
  const struct job* j = arg;
  const int n = g_count;
  double* in = malloc(sizeof(double) * (size_t)n);
  double* out = malloc(sizeof(double) * (size_t)n);
  /* Allgather block: every other int of 2*m ints (a vector type). */
  const int m = n / 4 + 1;
  int* gin = malloc(sizeof(int) * 2 * (size_t)m);
  int* gout = malloc(sizeof(int) * 2 * (size_t)m * (size_t)g_size);
  MPI_Datatype strided;
  MPI_Type_vector(m, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  for (int it = 0; it < g_iters; ++it) {
    /* One rank late, a different one per iteration and per thread. */
    if ((it + j->id) % g_size == g_rank) usleep(2000 + 1000 * (unsigned)j->id);
    for (int i = 0; i < n; ++i) in[i] = value(g_rank, i, it, j->id);
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, j->comm);
    for (int i = 0; i < n; ++i) {
      double want = 0;
      for (int r = 0; r < g_size; ++r) want += value(r, i, it, j->id);
      if (out[i] != want) { fail(j->id, it, "allreduce", out[i], want); break; }
    }
    const int root = it % g_size;
    memset(out, 0, sizeof(double) * (size_t)n);
    MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_MAX, root, j->comm);
    if (g_rank == root)
      for (int i = 0; i < n; ++i) {
        const double want = value(g_size - 1, i, it, j->id);
        if (out[i] != want) { fail(j->id, it, "reduce", out[i], want); break; }
      }
    for (int k = 0; k < 2 * m; ++k) gin[k] = k % 2 ? -1 : g_rank * 100000 + k / 2 + it;
    for (int k = 0; k < 2 * m * g_size; ++k) gout[k] = -2;
    MPI_Allgather(gin, 1, strided, gout, m, MPI_INT, j->comm);
    for (int r = 0; r < g_size; ++r)
      for (int k = 0; k < m; ++k) {
        const int got = gout[r * m + k], want = r * 100000 + k + it;
        if (got != want) { fail(j->id, it, "allgather", got, want); r = g_size; break; }
      }
  }
  MPI_Type_free(&strided);
  free(in), free(out), free(gin), free(gout);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int nthreads = argc > 1 ? atoi(argv[1]) : 3;
  g_iters = argc > 2 ? atoi(argv[2]) : 40;
  g_count = argc > 3 ? atoi(argv[3]) : 4096;
  if (provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    MPI_Finalize();
    return 1;
  }
  struct job jobs[16];
  pthread_t tids[16];
  for (int t = 0; t < nthreads && t < 16; ++t) {
    jobs[t].id = t;
    MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
  }
  for (int t = 0; t < nthreads && t < 16; ++t) pthread_create(&tids[t], NULL, run, &jobs[t]);
  for (int t = 0; t < nthreads && t < 16; ++t) pthread_join(tids[t], NULL);
  for (int t = 0; t < nthreads && t < 16; ++t) MPI_Comm_free(&jobs[t].comm);
  int errors = 0;
  MPI_Allreduce(&g_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("thread_check: %d threads x %d iterations, %d errors\n", nthreads, g_iters, errors);
  MPI_Finalize();
  return errors != 0;
}
