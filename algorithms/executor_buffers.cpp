#include "algorithms/executor_buffers.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "algorithms/executor.h"

namespace papshim {
namespace detail {

TypeInfo type_info(MPI_Datatype t) {
  TypeInfo ti;
  PMPI_Type_get_extent(t, &ti.lb, &ti.extent);
  PMPI_Type_get_true_extent(t, &ti.true_lb, &ti.true_extent);
  PMPI_Type_size(t, &ti.size);
  ti.plain = ti.lb == 0 && ti.true_lb == 0 && ti.extent == ti.size && ti.true_extent == ti.size;
  return ti;
}

bool in_order(MPI_Datatype t, int depth) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (depth > 16 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) return true;
  if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) return false;
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  if (PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return false;
  if (types.size() != 1) return false;
  const MPI_Datatype inner = types[0];
  const bool ok = in_order(inner, depth + 1);
  int i2 = 0, a2 = 0, d2 = 0, c2 = 0;
  if (PMPI_Type_get_envelope(inner, &i2, &a2, &d2, &c2) == MPI_SUCCESS && c2 != MPI_COMBINER_NAMED) {
    MPI_Datatype copy = inner;
    PMPI_Type_free(&copy);  // get_contents returned a new handle for a derived type
  }
  return ok;
}

namespace {

constexpr std::size_t kCopyChunk = std::size_t{1} << 26;     // bytes per packed chunk of a typed copy

// dst <- src through MPI_Pack / MPI_Unpack (no message, nothing shared with
// other threads), in chunks of whole elements when both sides have the
// same type.
int packed_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype) {
  const TypeInfo si = type_info(stype);
  const std::size_t total = static_cast<std::size_t>(si.size) * static_cast<std::size_t>(scount);
  std::size_t chunk = static_cast<std::size_t>(scount);  // elements per pack
  if (total > kCopyChunk) {
    if (stype == dtype && scount == dcount)
      chunk = std::max<std::size_t>(1, kCopyChunk / static_cast<std::size_t>(si.size));
    else if (total > INT_MAX)
      return MPI_ERR_COUNT;  // dispatch keeps such calls native
  }
  int cap = 0;
  int rc = PMPI_Pack_size(static_cast<int>(chunk), stype, MPI_COMM_SELF, &cap);
  if (rc != MPI_SUCCESS) return rc;
  std::unique_ptr<char[]> packed(new (std::nothrow) char[static_cast<std::size_t>(cap) + 1]);
  if (!packed) return MPI_ERR_NO_MEM;
  const auto sbase = reinterpret_cast<std::uintptr_t>(src);
  const auto dbase = reinterpret_cast<std::uintptr_t>(dst);
  const TypeInfo di = stype == dtype ? si : type_info(dtype);
  for (std::size_t first = 0; first < static_cast<std::size_t>(scount) && rc == MPI_SUCCESS; first += chunk) {
    const std::size_t n = std::min(chunk, static_cast<std::size_t>(scount) - first);
    const int dn = stype == dtype ? static_cast<int>(n) : dcount;
    int pos = 0, upos = 0;
    rc = PMPI_Pack(at(sbase, first, si), static_cast<int>(n), stype, packed.get(), cap, &pos, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS)
      rc = PMPI_Unpack(packed.get(), pos, &upos, at(dbase, first, di), dn, dtype, MPI_COMM_SELF);
  }
  return rc;
}

}  // namespace

// dst <- src, a typed local copy.
int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype) {
  if (scount == 0) return MPI_SUCCESS;
  if (stype == dtype && scount == dcount) {
    const TypeInfo ti = type_info(stype);
    if (ti.plain) {
      std::memmove(dst, src, static_cast<std::size_t>(scount) * static_cast<std::size_t>(ti.size));
      return MPI_SUCCESS;
    }
  }
  return packed_copy(src, scount, stype, dst, dcount, dtype);
}

}  // namespace detail

int typed_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype) {
  return detail::local_copy(src, scount, stype, dst, dcount, dtype);
}

}  // namespace papshim
