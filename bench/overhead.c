/* Per-call cost of MPI_Allreduce on 8 bytes: an ordinary MPI program, run
 * with and without the preload to measure what the interception costs.
 *
 * Batches of MPI_Allreduce (through the preload, when there is one) and of
 * PMPI_Allreduce (the library directly) alternate in one run, so machine
 * noise hits both alike; their difference is what the interception adds.
 * Without the preload the two are the same call and the difference shows
 * the noise floor.  Prints, on rank 0, three numbers in microseconds:
 *   <median per call of MPI_Allreduce> <median of PMPI_Allreduce> <median of the paired differences>
 * each a median over batches of the batch's mean per call.  With
 * --self the calls run on MPI_COMM_SELF (no partner: the bookkeeping alone).
 *
 * usage: overhead [--self] [calls_per_batch] [batches] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Mean seconds per call of one batch, through the preload or around it. */
static double batch(int calls, int direct, MPI_Comm comm) {
  double in = 1.0, out = 0.0;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  if (direct)
    for (int i = 0; i < calls; ++i) PMPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  else
    for (int i = 0; i < calls; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  return (MPI_Wtime() - t0) / calls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, a = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (argc > a && strcmp(argv[a], "--self") == 0) {
    comm = MPI_COMM_SELF;
    ++a;
  }
  const int calls = argc > a ? atoi(argv[a]) : 2000;
  const int batches = argc > a + 1 ? atoi(argv[a + 1]) : 15;
  if (calls < 1 || batches < 1) {
    if (rank == 0) fprintf(stderr, "overhead: calls per batch and batches must be positive\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double* through = malloc(sizeof(double) * (size_t)batches);
  double* direct = malloc(sizeof(double) * (size_t)batches);
  double* diff = malloc(sizeof(double) * (size_t)batches);
  batch(calls, 0, comm); /* warm up both paths */
  batch(calls, 1, comm);
  for (int b = 0; b < batches; ++b) {
    /* Alternate which goes first, so neither always follows the barrier's wake-up. */
    if (b % 2) {
      direct[b] = batch(calls, 1, comm);
      through[b] = batch(calls, 0, comm);
    } else {
      through[b] = batch(calls, 0, comm);
      direct[b] = batch(calls, 1, comm);
    }
    diff[b] = through[b] - direct[b];
  }
  const double d = median(diff, batches);
  if (rank == 0)
    printf("%.3f %.3f %.3f\n", 1e6 * median(through, batches), 1e6 * median(direct, batches), 1e6 * d);
  free(through);
  free(direct);
  free(diff);
  MPI_Finalize();
  return 0;
}
