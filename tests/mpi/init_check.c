/* What the application is told about threads: MPI_Init, or MPI_Init_thread
 * with the level named on the command line (single, funneled, serialized,
 * multiple); prints `provided` and MPI_Query_thread's answer on rank 0.
 * papshim asks the library for MPI_THREAD_MULTIPLE for itself, but the
 * application must see what it would see without papshim. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* names[] = {"single", "funneled", "serialized", "multiple"};
  const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
  int provided = -1, queried = -1, rank = 0;
  if (argc < 2) {
    MPI_Init(&argc, &argv);
  } else {
    int want = MPI_THREAD_SINGLE;
    for (int i = 0; i < 4; ++i)
      if (strcmp(argv[1], names[i]) == 0) want = levels[i];
    MPI_Init_thread(&argc, &argv, want, &provided);
  }
  MPI_Query_thread(&queried);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int level_index = -1;
  for (int i = 0; i < 4; ++i)
    if (queried == levels[i]) level_index = i;
  if (rank == 0)
    printf("%s: provided %d, MPI_Query_thread %s\n", argc < 2 ? "MPI_Init" : argv[1], provided,
           level_index >= 0 ? names[level_index] : "?");
  MPI_Finalize();
  return 0;
}
