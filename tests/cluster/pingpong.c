/* pingpong.c - transfer time of a large message between rank 0 and rank 1.
 *
 *   pingpong [BYTES [REPS]]      defaults: 4194304 bytes (4 MiB), 15 reps
 *
 * Rank 0 sends BYTES to rank 1, which sends BYTES back; the transfer time of
 * one iteration is half the round trip.  Two warm-up iterations are not
 * counted.  Rank 0 prints one line:
 *
 *   pingpong bytes=4194304 reps=15 median_ms=... min_ms=... max_ms=... MBps=...
 *
 * where MBps = bytes / median (10^6 bytes per second).  Any further ranks
 * only take part in the final barrier.  Exit code 0 on success, 2 on bad
 * arguments or fewer than two ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, size;
    long bytes = 4L << 20;
    int reps = 15;
    const int warmup = 2;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        bytes = atol(argv[1]);
    if (argc > 2)
        reps = atoi(argv[2]);
    if (size < 2 || bytes <= 0 || bytes > (1L << 30) || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: pingpong [BYTES [REPS]] with at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    char names[2][MPI_MAX_PROCESSOR_NAME];
    int len;
    memset(names, 0, sizeof names);
    MPI_Get_processor_name(names[0], &len);
    if (rank == 1)
        MPI_Send(names[0], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Recv(names[1], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    char *buf = malloc((size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!buf || !t) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank, (size_t)bytes);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        int peer = 1 - rank;
        for (int i = -warmup; i < reps; i++) {
            double t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
            if (i >= 0)
                t[i] = (MPI_Wtime() - t0) / 2.0;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        if (strcmp(names[0], names[1]) == 0)
            fprintf(stderr, "pingpong: warning: ranks 0 and 1 share host %s\n", names[0]);
        printf("pingpong bytes=%ld reps=%d median_ms=%.3f min_ms=%.3f max_ms=%.3f MBps=%.1f hosts=%s,%s\n",
               bytes, reps, med * 1e3, t[0] * 1e3, t[reps - 1] * 1e3, bytes / med / 1e6,
               names[0], names[1]);
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
