/* allreduce_time.c - time of an MPI_Allreduce over all ranks.
 *
 *   allreduce_time [BYTES [REPS [LATE_MS [LATE_RANK]]]]
 *       defaults: 4194304 bytes (4 MiB of doubles, MPI_SUM), 11 reps,
 *                 LATE_MS 0, LATE_RANK size-1
 *
 * Each iteration starts with a barrier; every rank then times its own
 * MPI_Allreduce call (LATE_RANK first sleeps LATE_MS milliseconds, so with
 * LATE_MS > 0 the others wait for it).  An iteration's time is the longest
 * time any rank spent from leaving the barrier to leaving the allreduce
 * (the late rank's sleep included).  One warm-up iteration is not counted.
 * The result is checked on every rank.  Rank 0 prints one line:
 *
 *   allreduce bytes=... ranks=... reps=... late_ms=... median_ms=... min_ms=... max_ms=... excess_ms=...
 *
 * excess_ms = median_ms - late_ms: what the collective costs beyond the
 * imposed lateness.  Exit code 0 on success, 1 on a wrong result, 2 on bad
 * arguments. */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sleep_ms(double ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - ts.tv_sec * 1000.0) * 1e6);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    long bytes = 4L << 20;
    int reps = 11;
    double late_ms = 0.0;
    int late_rank = -1;
    const int warmup = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        bytes = atol(argv[1]);
    if (argc > 2)
        reps = atoi(argv[2]);
    if (argc > 3)
        late_ms = atof(argv[3]);
    late_rank = argc > 4 ? atoi(argv[4]) : size - 1;
    long count = bytes / (long)sizeof(double);
    if (count < 1 || bytes > (1L << 30) || reps < 1 || late_ms < 0 || late_rank < 0 ||
        late_rank >= size) {
        if (rank == 0)
            fprintf(stderr, "usage: allreduce_time [BYTES [REPS [LATE_MS [LATE_RANK]]]]\n");
        MPI_Finalize();
        return 2;
    }

    double *in = malloc(sizeof(double) * (size_t)count);
    double *out = malloc(sizeof(double) * (size_t)count);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!in || !out || !t) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < count; i++)
        in[i] = (double)(rank + 1) + (double)(i % 7);

    int bad = 0;
    for (int it = -warmup; it < reps; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == late_rank && late_ms > 0)
            sleep_ms(late_ms);
        MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double mine = MPI_Wtime() - t0, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (it >= 0)
            t[it] = slowest;
        if (it == -warmup) {
            double base = (double)size * (size + 1) / 2.0;
            for (long i = 0; i < count; i += 997) {
                double want = base + (double)size * (double)(i % 7);
                if (fabs(out[i] - want) > 1e-9 * want)
                    bad = 1;
            }
        }
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);

    if (rank == 0) {
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        printf("allreduce bytes=%ld ranks=%d reps=%d late_ms=%g late_rank=%d median_ms=%.3f "
               "min_ms=%.3f max_ms=%.3f excess_ms=%.3f%s\n",
               count * (long)sizeof(double), size, reps, late_ms, late_rank, med * 1e3,
               t[0] * 1e3, t[reps - 1] * 1e3, med * 1e3 - late_ms,
               anybad ? " RESULT-WRONG" : "");
    }
    free(in);
    free(out);
    free(t);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
