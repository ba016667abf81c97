// The executor's buffers: datatype layouts, the per-thread scratch arena
// the temporaries come from, and typed local copies.
//
// Memory.  Temporaries come from one scratch area per thread, kept between
// calls (fresh segment-sized allocations would cost an mmap, page faults and
// a munmap per segment on every call) but released after a call that needed
// more than kScratchKeep bytes, so a single huge call does not pin its
// temporaries for the rest of the run.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace papshim {
namespace detail {

constexpr std::size_t kScratchKeep = std::size_t{32} << 20;  // bytes kept between calls

struct TypeInfo {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int size = 0;
  bool plain = false;  // contiguous bytes: memcpy is exact
};

// The layout of a datatype.
TypeInfo type_info(MPI_Datatype t);

// Whether `t`'s memory is its packed form: contiguous (plain) and built
// from one predefined type by contiguous copies only.  A plain struct may
// still hold its fields in another order than its type signature.
bool in_order(MPI_Datatype t, int depth = 0);

// Bytes of n elements laid out like a user buffer of the type.
inline std::size_t bytes_for(const TypeInfo& ti, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(ti.true_extent) + (n - 1) * static_cast<std::size_t>(ti.extent);
}

// Scratch memory for the temporaries of one call at a time, kept between
// calls (one per thread: executor.cpp).
class ScratchArena {
 public:
  // False when the memory cannot be had (nothing is thrown).
  bool reserve(std::size_t bytes) {
    used_ = 0;
    if (bytes <= size_) return true;
    mem_.reset();
    size_ = 0;
    mem_.reset(new (std::nothrow) char[bytes]);
    if (!mem_) return false;
    size_ = bytes;
    return true;
  }
  // n elements of a type, addressed like a user buffer (base - true_lb).
  std::uintptr_t take(const TypeInfo& ti, std::size_t n) {
    const std::size_t bytes = (bytes_for(ti, n) + 63) & ~std::size_t{63};
    const std::uintptr_t at_ptr = reinterpret_cast<std::uintptr_t>(mem_.get()) + used_;
    used_ += bytes;
    return at_ptr - static_cast<std::uintptr_t>(ti.true_lb);
  }
  void trim() {
    if (size_ > kScratchKeep) {
      mem_.reset();
      size_ = 0;
    }
  }

 private:
  std::unique_ptr<char[]> mem_;
  std::size_t size_ = 0, used_ = 0;
};

// Element `first` of a buffer of the type at `base`.
inline void* at(std::uintptr_t base, std::size_t first, const TypeInfo& ti) {
  return reinterpret_cast<void*>(base + first * static_cast<std::uintptr_t>(ti.extent));
}

// dst <- src, a typed local copy (memmove for plain types, else through
// MPI_Pack / MPI_Unpack).
int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype);

}  // namespace detail
}  // namespace papshim
