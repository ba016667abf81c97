/* An ordinary MPI program with an imbalanced iterative loop: every step each
 * rank "computes" (sleeps), one rank longer than the others, then the ranks
 * combine their results with MPI_Allreduce (or, with the op "reduce",
 * MPI_Reduce onto rank 0) and a small MPI_Reduce.  It knows nothing about
 * papshim; run it with and without LD_PRELOAD=libpapshim.so.  It checks
 * its results and prints the mean time per step in the timed collective.
 *
 * usage: imbalanced_demo [steps] [count] [late_ms] [late_rank] [allreduce|reduce]
 * Without late_rank (or with -1) the late rank moves every 10 steps. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void compute(double seconds) {
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 40;
  const int count = argc > 2 ? atoi(argv[2]) : 1 << 18;
  const double late = (argc > 3 ? atof(argv[3]) : 20.0) * 1e-3;
  const int fixed_late_rank = argc > 4 ? atoi(argv[4]) : -1;
  const char* op = argc > 5 ? argv[5] : "allreduce";
  const int reduce = strcmp(op, "reduce") == 0;
  if (!reduce && strcmp(op, "allreduce") != 0) {
    if (rank == 0) fprintf(stderr, "imbalanced_demo: the op must be allreduce or reduce, not '%s'\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  float* x = malloc(sizeof(float) * (size_t)count);
  float* sum = malloc(sizeof(float) * (size_t)count);
  double elapsed = 0, energy = 0;
  int errors = 0;
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < count; ++i) x[i] = (float)((rank + i + step) % 7);
    /* Uneven work: the late rank moves around every 10 steps, or stays. */
    const int late_rank = fixed_late_rank >= 0 ? fixed_late_rank % size : (step / 10) % size;
    compute(0.005 + (rank == late_rank ? late : 0.0));
    const double t0 = MPI_Wtime();
    if (reduce)
      MPI_Reduce(x, sum, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
      MPI_Allreduce(x, sum, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    elapsed += MPI_Wtime() - t0;
    for (int i = 0; i < count && (!reduce || rank == 0); i += 997) {
      float want = 0;
      for (int r = 0; r < size; ++r) want += (float)((r + i + step) % 7);
      if (sum[i] != want) ++errors;
    }
    double local = reduce ? (rank == 0 ? sum[0] : 0.0) : sum[0], total = 0;
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    energy += total;
  }
  double mean = 0;
  MPI_Reduce(&elapsed, &mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  int all_errors = 0;
  MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("imbalanced_demo: %d ranks, %d steps, %d floats, one rank %.0f ms late: "
           "mean time in %s %.3f ms/step, checksum %.0f, %s\n",
           size, steps, count, late * 1e3, reduce ? "MPI_Reduce" : "MPI_Allreduce", 1e3 * mean / size / steps, energy,
           all_errors ? "WRONG RESULTS" : "results exact");
  free(x);
  free(sum);
  MPI_Finalize();
  return all_errors ? 1 : 0;
}
