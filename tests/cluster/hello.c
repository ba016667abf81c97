/* hello.c - smallest useful check of the emulated cluster: every rank
 * reports its host name and address family, then all ranks take part in a
 * barrier and an allreduce whose result is verified.  Exit code 0 only if
 * the sum is right on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, len, sum = 0, quiet;
    char name[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    quiet = argc > 1 && argv[1][0] == 'q';

    MPI_Barrier(MPI_COMM_WORLD);
    int one = rank + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!quiet)
        printf("rank %d/%d on %s\n", rank, size, name);
    int ok = sum == size * (size + 1) / 2;
    if (!ok)
        fprintf(stderr, "rank %d: allreduce gave %d, expected %d\n", rank, sum,
                size * (size + 1) / 2);
    MPI_Finalize();
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
