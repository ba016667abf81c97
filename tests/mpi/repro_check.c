/* repro_check: do MPI_Allreduce and MPI_Reduce give the same bits whichever
 * rank is late?
 *
 *   mpiexec -n 5 repro_check LATE_RANK [ITERS [DELAY_MS [COUNT]]]
 *
 * Every iteration, after a barrier, rank LATE_RANK sleeps DELAY_MS (default
 * 20) before each of four calls: MPI_Allreduce, then MPI_Reduce to roots 0,
 * P/2 and P-1, all MPI_SUM of COUNT (default 65536) doubles.  The inputs
 * depend on the iteration, the rank and the element only, never on
 * LATE_RANK, and span magnitudes from 1e-8 to 1e8 with both signs, so every
 * change in the order of the additions shows in the last bits.  ITERS
 * (default 12) iterations give an arrival predictor enough history to
 * predict the late rank.
 *
 * Rank 0 prints one line per call site with an FNV-1a hash of its results
 * over all iterations (allreduce: rank 0's buffer; reduce: the root's), and
 * "ranks_agree yes" when in every allreduce every rank held exactly the bits
 * rank 0 held.  Run it twice with different LATE_RANK and compare the
 * output (repro_check.sh does): identical lines mean the results did not
 * depend on which rank was late.  Exit status 1 when the ranks disagreed
 * within a call, 2 on bad arguments.
 *
 * Only the timed collectives are MPI_Allreduce / MPI_Reduce; the hashes are
 * collected with point-to-point messages, so an interposed library sees just
 * those four call sites. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* A splitmix64 step: the element's value from (iteration, rank, index). */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void fill(double* v, int count, int iter, int rank) {
  static const double scale[] = {1e-8, 1e-4, 1e-1, 1.0, 3.0, 1e2, 1e5, 1e8};
  for (int i = 0; i < count; ++i) {
    const uint64_t r = mix(((uint64_t)iter << 48) ^ ((uint64_t)rank << 32) ^ (uint64_t)i);
    const double unit = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    const double sign = (r & 1) ? -1.0 : 1.0;
    v[i] = sign * (0.5 + unit) * scale[(r >> 1) & 7];
  }
}

static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: repro_check LATE_RANK [ITERS [DELAY_MS [COUNT]]]\n");
    MPI_Finalize();
    return 2;
  }
  const int late = atoi(argv[1]);
  const int iters = argc > 2 ? atoi(argv[2]) : 12;
  const double delay_ms = argc > 3 ? atof(argv[3]) : 20.0;
  const int count = argc > 4 ? atoi(argv[4]) : 65536;
  if (late < 0 || late >= size || iters < 1 || count < 1 || delay_ms < 0) {
    if (rank == 0) fprintf(stderr, "repro_check: bad arguments\n");
    MPI_Finalize();
    return 2;
  }

  enum { kCalls = 4 };
  const int roots[kCalls] = {-1, 0, size / 2, size - 1}; /* -1: allreduce */
  uint64_t hash[kCalls];
  for (int c = 0; c < kCalls; ++c) hash[c] = 1469598103934665603ull;
  int agree = 1;
  double* in = malloc(sizeof(double) * (size_t)count);
  double* out = malloc(sizeof(double) * (size_t)count);

  for (int it = 0; it < iters; ++it) {
    for (int c = 0; c < kCalls; ++c) {
      fill(in, count, it * kCalls + c, rank);
      memset(out, 0, sizeof(double) * (size_t)count);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == late) sleep_ms(delay_ms);
      if (roots[c] < 0)
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, roots[c], MPI_COMM_WORLD);

      /* The result's hash: every rank's for allreduce, the root's for reduce. */
      const uint64_t mine = fnv(1469598103934665603ull, out, sizeof(double) * (size_t)count);
      const int holder = roots[c] < 0 ? 0 : roots[c];
      uint64_t ref = mine;
      if (holder != 0) {
        if (rank == holder) MPI_Send(&mine, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(&ref, 1, MPI_UINT64_T, holder, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (roots[c] < 0) {
        if (rank != 0) {
          MPI_Send(&mine, 1, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
        } else {
          for (int q = 1; q < size; ++q) {
            uint64_t theirs = 0;
            MPI_Recv(&theirs, 1, MPI_UINT64_T, q, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (theirs != mine) {
              agree = 0;
              fprintf(stderr, "repro_check: iteration %d: rank %d's allreduce result differs from rank 0's\n", it, q);
            }
          }
        }
      }
      if (rank == 0) hash[c] = fnv(hash[c], &ref, sizeof ref);
    }
  }

  if (rank == 0) {
    for (int c = 0; c < kCalls; ++c) {
      if (roots[c] < 0)
        printf("allreduce %016llx\n", (unsigned long long)hash[c]);
      else
        printf("reduce_root%d %016llx\n", roots[c], (unsigned long long)hash[c]);
    }
    printf("ranks_agree %s\n", agree ? "yes" : "no");
    fflush(stdout);
  }
  free(in);
  free(out);
  MPI_Finalize();
  return rank == 0 && !agree ? 1 : 0;
}
