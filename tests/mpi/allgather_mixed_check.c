/* MPI_Allgather whose receive count and type differ between ranks with the
 * same type signature (valid MPI): even ranks receive blocks of 2m MPI_INT,
 * odd ranks blocks of m pairs (a contiguous type of 2 MPI_INT), and send
 * with the other description.  With a second argument "gaps" the odd ranks
 * receive 2m ints each followed by an unused int (a resized type, so their
 * receive buffer is not contiguous); with "permuted" they receive m
 * two-int structs whose first int lies at offset 4 and second at offset 0
 * (contiguous, but not in signature order).  Checked exactly; with
 * PAPSHIM_CHECK=1 the consistency check must accept it.
 * Usage: allgather_mixed_check [m] [gaps|permuted] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int m = argc > 1 ? atoi(argv[1]) : 4096;
  const int gaps = argc > 2 && strcmp(argv[2], "gaps") == 0;
  const int permuted = argc > 2 && strcmp(argv[2], "permuted") == 0;
  MPI_Datatype pair, spaced, swapped;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &spaced);
  MPI_Type_commit(&spaced);
  const int lengths[2] = {1, 1};
  const MPI_Aint displs[2] = {(MPI_Aint)sizeof(int), 0};
  const MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, lengths, displs, ints, &swapped);
  MPI_Type_commit(&swapped);
  const int odd_gaps = gaps && rank % 2 == 1;
  const int odd_swapped = permuted && rank % 2 == 1;
  const size_t stride = odd_gaps ? 2 : 1; /* ints per received int */
  int* in = malloc(sizeof(int) * 2 * (size_t)m);
  int* out = malloc(sizeof(int) * 2 * (size_t)m * (size_t)size * stride);
  int errors = 0;
  for (int it = 0; it < 6; ++it) {
    for (int k = 0; k < 2 * m; ++k) in[k] = rank * 1000003 + k + it;
    for (size_t k = 0; k < 2 * (size_t)m * (size_t)size * stride; ++k) out[k] = -1;
    if (rank % 2 == 0)
      MPI_Allgather(in, m, pair, out, 2 * m, MPI_INT, MPI_COMM_WORLD);
    else if (odd_gaps)
      MPI_Allgather(in, m, pair, out, 2 * m, spaced, MPI_COMM_WORLD);
    else if (odd_swapped)
      MPI_Allgather(in, m, pair, out, m, swapped, MPI_COMM_WORLD);
    else
      MPI_Allgather(in, 2 * m, MPI_INT, out, m, pair, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
      for (int k = 0; k < 2 * m; ++k) {
        /* a swapped struct holds signature ints 2j and 2j+1 the other way round */
        const size_t slot = odd_swapped ? (size_t)(k ^ 1) : (size_t)k;
        const size_t at = ((size_t)r * 2 * m + slot) * stride;
        if (out[at] != r * 1000003 + k + it) errors++;
        if (stride == 2 && out[at + 1] != -1) errors++; /* the gaps stay untouched */
      }
  }
  int all = 0;
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("allgather with mixed receive types%s: %d errors\n", gaps ? " (gaps)" : permuted ? " (permuted)" : "", all);
  MPI_Type_free(&swapped);
  MPI_Type_free(&spaced);
  MPI_Type_free(&pair);
  free(in);
  free(out);
  MPI_Finalize();
  return all != 0;
}
