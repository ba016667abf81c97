#include "shim/agreement.h"

#include <climits>

namespace papshim {

std::vector<bool> agree_across(MPI_Comm comm, const std::uint64_t* values, std::size_t n, std::uint64_t* max) {
  std::vector<std::uint64_t> mine(2 * n), maxed(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    mine[2 * i] = values[i];
    mine[2 * i + 1] = ~values[i];
  }
  if (2 * n > static_cast<std::size_t>(INT_MAX) ||
      PMPI_Allreduce(mine.data(), maxed.data(), static_cast<int>(2 * n), MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return {};
  std::vector<bool> same(n);
  for (std::size_t i = 0; i < n; ++i) {
    same[i] = maxed[2 * i] == mine[2 * i] && maxed[2 * i + 1] == mine[2 * i + 1];
    if (max != nullptr) max[i] = maxed[2 * i];
  }
  return same;
}

}  // namespace papshim
