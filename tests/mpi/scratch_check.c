/* Memory kept after one large reduce and allreduce (64 MiB of doubles per
 * rank by default): prints each rank's resident memory in the form
 * tests/support/check_memory.py reads, so the run with the preload can be
 * held to the native run's plus a bound.
 *   scratch_check [MiB] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long status_kb(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, strlen(field)) == 0) kb = strtol(line + strlen(field), NULL, 10);
  if (f) fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long mib = argc > 1 ? atol(argv[1]) : 64;
  const int n = (int)(mib * 1024 * 1024 / (long)sizeof(double));
  double* in = malloc(sizeof(double) * (size_t)n);
  double* out = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) in[i] = (double)(rank + i % 11);
  memset(out, 0, sizeof(double) * (size_t)n);
  int errors = 0;
  MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  for (int i = 0; i < n && rank == 0; ++i)
    if (out[i] != size * (size - 1) / 2.0 + size * (double)(i % 11)) errors++;
  MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i)
    if (out[i] != size * (size - 1) / 2.0 + size * (double)(i % 11)) errors++;
  printf("memory rank=%d vmrss_kb=%ld vmhwm_kb=%ld\n", rank, status_kb("VmRSS:"), status_kb("VmHWM:"));
  if (errors) printf("rank %d: %d wrong elements\n", rank, errors);
  fflush(stdout);
  free(in);
  free(out);
  MPI_Finalize();
  printf("memory rank=%d final_vmhwm_kb=%ld\n", rank, status_kb("VmHWM:"));
  return errors != 0;
}
