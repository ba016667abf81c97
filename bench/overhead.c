/* Per-call cost of MPI_Allreduce on 8 bytes: an ordinary MPI program, run
 * with and without the preload to measure what the interception costs.
 * Prints the median over batches of the mean time per call (rank 0).
 *
 * usage: overhead [calls_per_batch] [batches] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int calls = argc > 1 ? atoi(argv[1]) : 2000;
  const int batches = argc > 2 ? atoi(argv[2]) : 15;
  double* t = malloc(sizeof(double) * (size_t)batches);
  double in = 1.0, out = 0.0;
  for (int i = 0; i < calls; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int b = 0; b < batches; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t[b] = (MPI_Wtime() - t0) / calls;
  }
  qsort(t, (size_t)batches, sizeof(double), cmp);
  if (rank == 0) printf("%.3f\n", 1e6 * t[batches / 2]);
  free(t);
  MPI_Finalize();
  return 0;
}
