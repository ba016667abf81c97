// 64-bit FNV-1a, the one hash of decision inputs, configuration values and
// call sites: cheap, stable across processes and runs (unlike std::hash),
// so ranks can compare hashes to check that they agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace papshim {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

// Folds the `n` bytes at `p` into `h` (start with kFnvOffset).
inline std::uint64_t fnv1a(std::uint64_t h, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * kFnvPrime;
  return h;
}

inline std::uint64_t fnv1a(std::string_view s) { return fnv1a(kFnvOffset, s.data(), s.size()); }

// Folds one word into `h`, as a unit (call-site addresses).
inline std::uint64_t fnv1a_word(std::uint64_t h, std::uint64_t word) { return (h ^ word) * kFnvPrime; }

}  // namespace papshim
