/* MPI_Allgather whose receive count and type differ between ranks with the
 * same type signature (valid MPI): even ranks receive blocks of 2m MPI_INT,
 * odd ranks blocks of m pairs (a contiguous type of 2 MPI_INT), and send
 * with the other description.  Checked exactly; with PAPSHIM_CHECK=1 the
 * consistency check must accept it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int m = argc > 1 ? atoi(argv[1]) : 4096;
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int* in = malloc(sizeof(int) * 2 * (size_t)m);
  int* out = malloc(sizeof(int) * 2 * (size_t)m * (size_t)size);
  int errors = 0;
  for (int it = 0; it < 6; ++it) {
    for (int k = 0; k < 2 * m; ++k) in[k] = rank * 1000003 + k + it;
    if (rank % 2 == 0)
      MPI_Allgather(in, m, pair, out, 2 * m, MPI_INT, MPI_COMM_WORLD);
    else
      MPI_Allgather(in, 2 * m, MPI_INT, out, m, pair, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
      for (int k = 0; k < 2 * m; ++k)
        if (out[(size_t)r * 2 * m + k] != r * 1000003 + k + it) errors++;
  }
  int all = 0;
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("allgather with mixed receive types: %d errors\n", all);
  MPI_Type_free(&pair);
  free(in);
  free(out);
  MPI_Finalize();
  return all != 0;
}
