/* A long run of small collectives, for papshim's memory bound and report.
 *
 *   long_run [calls] [communicators]
 *
 * Makes `calls` (default 2000000) MPI_Allreduce calls of one 8-byte integer
 * on MPI_COMM_WORLD from one call site, checking every result, then (if
 * `communicators` > 0) duplicates and frees that many communicators with
 * one MPI_Allreduce on each from another site.  Prints what
 * tests/support/check_report.py checks against the report and each rank's
 * memory from /proc/self/status ("memory rank=R vmrss_kb=.. vmhwm_kb=..",
 * before MPI_Finalize, and "final_vmhwm_kb" after it, which includes what
 * MPI_Finalize needed). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long status_kb(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, strlen(field)) == 0) kb = strtol(line + strlen(field), NULL, 10);
  fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 2000000;
  const long comms = argc > 2 ? atol(argv[2]) : 0;
  int rank = 0, size = 1, dup_line = 0;
  long errors = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int world_line = __LINE__ + 3;
  for (long i = 0; i < calls; ++i) {
    long mine = rank + i % 7, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long)size * (size - 1) / 2 + (long)size * (i % 7)) ++errors;
  }
  for (long c = 0; c < comms; ++c) {
    MPI_Comm dup;
    long one = 1, n = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    dup_line = __LINE__ + 1;
    MPI_Allreduce(&one, &n, 1, MPI_LONG, MPI_SUM, dup);
    if (n != size) ++errors;
    MPI_Comm_free(&dup);
  }
  if (errors) {
    fprintf(stderr, "long_run: rank %d: %ld wrong results\n", rank, errors);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    printf("EXPECT total collective=MPI_Allreduce calls=%ld\n", calls + comms);
    if (calls > 0)
      printf("EXPECT site=world file=long_run.c line=%d collective=MPI_Allreduce calls=%ld communicators=1\n",
             world_line, calls);
    if (comms > 0)
      printf("EXPECT site=dups file=long_run.c line=%d collective=MPI_Allreduce calls=%ld communicators=%ld\n",
             dup_line, comms, comms);
  }
  printf("memory rank=%d vmrss_kb=%ld vmhwm_kb=%ld\n", rank, status_kb("VmRSS:"), status_kb("VmHWM:"));
  fflush(stdout);
  MPI_Finalize();
  printf("memory rank=%d final_vmhwm_kb=%ld\n", rank, status_kb("VmHWM:"));
  return 0;
}
