/* Leaving without MPI_Finalize.
 *   exit_check exit CODE   every rank calls exit(CODE) after a few large
 *                          collectives (the helper thread is running)
 *   exit_check fork        a forked child leaves with exit(3); the parent
 *                          checks the child's status, then finalizes
 * The process must leave as it would without papshim: the same exit code,
 * no abort at static destruction. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void some_collectives(void) {
  enum { n = 16384 };
  static double in[n], out[n];
  for (int it = 0; it < 6; ++it) {
    for (int i = 0; i < n; ++i) in[i] = i + it;
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  some_collectives();
  if (argc > 1 && strcmp(argv[1], "fork") == 0) {
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) exit(3);
    int status = 0;
    waitpid(child, &status, 0);
    const int ok = WIFEXITED(status) && WEXITSTATUS(status) == 3;
    printf("rank %d: child %s\n", rank, ok ? "exited with 3" : "did not exit with 3");
    some_collectives();
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  exit(argc > 2 ? atoi(argv[2]) : 7);
}
