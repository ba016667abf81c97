// 64-bit FNV-1a, the one hash of decision inputs, configuration values and
// call sites: cheap, stable across processes and runs (unlike std::hash),
// so ranks can compare hashes to check that they agree.  And splitmix64's
// finaliser, for well-mixed seeded draws.
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

// splitmix64's finaliser: a well-mixed 64-bit value from any input (every
// output bit depends on every input bit), the same on every rank and run.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace papshim
