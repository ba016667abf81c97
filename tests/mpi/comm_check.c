/* Many communicators.
 *   comm_check cycle N   N times: dup, a large allreduce, free.  Resident
 *                        memory may not grow by more than 1 MiB between
 *                        cycle N/10 and the end.
 *   comm_check live N    keeps up to N communicators alive, each used by a
 *                        large allreduce, until the library refuses a
 *                        duplicate; every result must be exact and no call
 *                        may abort.
 * Exit 0 when every result is exact (and, for cycle, memory is flat). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCount = 4096 };  /* 32 KiB per rank: large enough for papshim to act */

static long rss_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
  if (f) fclose(f);
  return kib;
}

static int exact_allreduce(MPI_Comm comm, int rank, int size, int salt) {
  static double in[kCount], out[kCount];
  for (int i = 0; i < kCount; ++i) in[i] = rank + i % 3 + salt % 5;
  if (MPI_Allreduce(in, out, kCount, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) return 0;
  for (int i = 0; i < kCount; ++i)
    if (out[i] != size * (size - 1) / 2.0 + size * (i % 3 + salt % 5)) return 0;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int live = argc > 1 && strcmp(argv[1], "live") == 0;
  const int n = argc > 2 ? atoi(argv[2]) : 20000;
  int bad = 0;
  if (!live) {
    long base = 0;
    for (int c = 0; c < n; ++c) {
      MPI_Comm comm;
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      bad += !exact_allreduce(comm, rank, size, c);
      MPI_Comm_free(&comm);
      if (c == n / 10) base = rss_kib();
    }
    const long grown = rss_kib() - base;
    if (grown > 1024) bad++;
    printf("rank %d: %d cycles, resident memory grew by %ld KiB after cycle %d, %d errors\n", rank, n, grown,
           n / 10, bad);
  } else {
    const double t0 = MPI_Wtime();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm* comms = malloc(sizeof(MPI_Comm) * (size_t)n);
    int made = 0;
    for (; made < n; ++made) {
      if (MPI_Comm_dup(MPI_COMM_WORLD, &comms[made]) != MPI_SUCCESS) break;
      bad += !exact_allreduce(comms[made], rank, size, made);
    }
    if (rank == 0) fprintf(stderr, "comm_check: %d made at %.1f s\n", made, MPI_Wtime() - t0);
    for (int c = 0; c < made; ++c) bad += !exact_allreduce(comms[c], rank, size, c + 1);
    if (rank == 0) fprintf(stderr, "comm_check: used again at %.1f s\n", MPI_Wtime() - t0);
    for (int c = 0; c < made; ++c) MPI_Comm_free(&comms[c]);
    if (rank == 0) fprintf(stderr, "comm_check: freed at %.1f s\n", MPI_Wtime() - t0);
    free(comms);
    printf("rank %d: %d live communicators%s, %d errors\n", rank, made, made < n ? " (the library refused more)" : "",
           bad);
    if (rank == 0) printf("EXPECT total collective=MPI_Allreduce calls=%d\n", 2 * made);
  }
  MPI_Finalize();
  return bad != 0;
}
