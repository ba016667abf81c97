/* Ways a job ends, for the clean-stop tests (run with the preload):
 *   stop_check skew   every rank reaches MPI_Finalize at a different time
 *   stop_check abort  rank 1 calls MPI_Abort in the middle of the loop
 *   stop_check loop   loops until killed (the SIGTERM test)
 * Each iteration: a compute phase, a large MPI_Allreduce, a check. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (double)(time_t)(ms / 1000)) * 1e6)};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "skew";
  enum { N = 1 << 16 };
  static float x[N], y[N];
  for (int it = 0;; ++it) {
    if (strcmp(mode, "loop") != 0 && it == 20) break;
    for (int i = 0; i < N; ++i) x[i] = (float)(rank + i % 5);
    pause_ms(rank == it % size ? 8.0 : 2.0);
    if (strcmp(mode, "abort") == 0 && it == 10 && rank == 1) {
      fprintf(stderr, "stop_check: rank 1 aborts\n");
      MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const float want = (float)(size * (size - 1) / 2 + size * 3);
    if (y[3] != want) {
      fprintf(stderr, "stop_check: wrong result %f, expected %f\n", y[3], want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  pause_ms(300.0 * rank);  /* skew: ranks finalize at different times */
  MPI_Finalize();
  if (rank == 0) printf("stop_check: %s done\n", mode);
  return 0;
}
