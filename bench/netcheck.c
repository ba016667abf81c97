/* netcheck: what limits a collective on this cluster, the links or the
 * cores.  Run with one rank per host, without papshim (scripts/cluster.sh
 * check does both and reads the answer).
 *
 *   netcheck [BYTES [REPS]]      defaults: 1048576 bytes (1 MiB), 7 reps
 *
 * Four measurements, each the median over REPS iterations after one
 * warm-up, each iteration started by a barrier and timed as the longest
 * any rank took:
 *
 *   pair      rank 0 sends BYTES to rank 1 and back: half the round trip,
 *             one transfer over an idle network (the seeds' delta);
 *   exchange  ranks 0 and 1 send BYTES to each other at once (both link
 *             directions busy, the rest idle);
 *   ring      every rank sends BYTES to its right neighbour and receives
 *             from its left one at once: every link direction carries what
 *             it carried in the exchange, so on a network-bound cluster
 *             ring takes what exchange takes, and on a CPU-bound one longer
 *             (the cores move P times the bytes);
 *   allreduce MPI_Allreduce of BYTES of floats (MPI_SUM), the library's own.
 *
 * Rank 0 prints one line:
 *
 *   netcheck ranks=P bytes=B reps=R pair_ms=... exchange_ms=... ring_ms=... allreduce_ms=...
 *
 * Exit code 0, 1 on a wrong allreduce result, 2 on bad arguments or fewer
 * than two ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum phase { PAIR, EXCHANGE, RING, ALLREDUCE };

/* One iteration of `ph`; returns this rank's time in seconds. */
static double run_once(enum phase ph, int rank, int size, long bytes, char* sbuf, char* rbuf) {
  const int n = (int)bytes;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  switch (ph) {
    case PAIR:
      if (rank == 0) {
        MPI_Send(sbuf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(rbuf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
      return rank == 0 ? 0.5 * (MPI_Wtime() - t0) : 0.0;
    case EXCHANGE:
      if (rank < 2)
        MPI_Sendrecv(sbuf, n, MPI_BYTE, 1 - rank, 3, rbuf, n, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
      break;
    case RING:
      MPI_Sendrecv(sbuf, n, MPI_BYTE, (rank + 1) % size, 4, rbuf, n, MPI_BYTE, (rank + size - 1) % size, 4,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    case ALLREDUCE:
      MPI_Allreduce(sbuf, rbuf, n / (int)sizeof(float), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
  }
  return MPI_Wtime() - t0;
}

/* Median over reps of the longest rank's time (milliseconds; rank 0). */
static double measure(enum phase ph, int reps, int rank, int size, long bytes, char* sbuf, char* rbuf) {
  double* t = malloc(sizeof(double) * (size_t)reps);
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  run_once(ph, rank, size, bytes, sbuf, rbuf); /* warm-up: connections, registration */
  for (int i = 0; i < reps; i++) {
    const double mine = run_once(ph, rank, size, bytes, sbuf, rbuf);
    MPI_Reduce(&mine, &t[i], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  const double m = rank == 0 ? 1e3 * median(t, reps) : 0.0;
  free(t);
  return m;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? strtol(argv[1], NULL, 10) : 1L << 20;
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  if (size < 2 || bytes < (long)sizeof(float) || bytes > (1L << 30) || reps < 1 || argc > 3) {
    if (rank == 0)
      fprintf(stderr,
              "usage: netcheck [BYTES [REPS]] on 2 or more ranks (BYTES 4 .. 2^30, REPS >= 1; got %d ranks)\n",
              size);
    MPI_Finalize();
    return 2;
  }
  bytes -= bytes % (long)sizeof(float);
  char* sbuf = malloc((size_t)bytes);
  char* rbuf = malloc((size_t)bytes);
  if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 1);
  /* Small integers as floats: the allreduce's sum is exact in any order. */
  float* f = (float*)sbuf;
  const long nf = bytes / (long)sizeof(float);
  for (long i = 0; i < nf; i++) f[i] = (float)((i + rank) % 7);
  memset(rbuf, 0, (size_t)bytes);

  const double pair = measure(PAIR, reps, rank, size, bytes, sbuf, rbuf);
  const double exchange = measure(EXCHANGE, reps, rank, size, bytes, sbuf, rbuf);
  const double ring = measure(RING, reps, rank, size, bytes, sbuf, rbuf);
  const double allreduce = measure(ALLREDUCE, reps, rank, size, bytes, sbuf, rbuf);

  int bad = 0;
  const float* r = (const float*)rbuf;
  for (long i = 0; i < nf && !bad; i++) {
    long want = 0;
    for (int q = 0; q < size; q++) want += (i + q) % 7;
    bad = r[i] != (float)want;
  }
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0) {
    if (anybad) fprintf(stderr, "netcheck: MPI_Allreduce gave a wrong sum\n");
    printf("netcheck ranks=%d bytes=%ld reps=%d pair_ms=%.2f exchange_ms=%.2f ring_ms=%.2f allreduce_ms=%.2f\n",
           size, bytes, reps, pair, exchange, ring, allreduce);
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
