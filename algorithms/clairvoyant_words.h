// Bit rows for the segment-tree Clairvoyant generator (clairvoyant.cpp):
// words of 64 bits, cache-line-aligned storage, and two-word vector loads.
// Internal to the generator; no other user.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace papshim {
namespace detail {

using Word = std::uint64_t;
constexpr int kWordBits = 64;

inline int lowest_bit(Word x) { return __builtin_ctzll(x); }
inline Word bit_of(int x) { return Word{1} << (x % kWordBits); }
inline void clear_bit(Word* set, int x) { set[x / kWordBits] &= ~bit_of(x); }
inline void set_bit(Word* set, int x) { set[x / kWordBits] |= bit_of(x); }

// Sets bits [0, n) of the words at x.
inline void fill_bits(Word* x, int n) {
  std::fill_n(x, n / kWordBits, ~Word{0});
  if (n % kWordBits != 0) x[n / kWordBits] = (Word{1} << (n % kWordBits)) - 1;
}

// Two words in one vector register (SSE2, NEON), a GCC/Clang extension: the
// tree's row updates written with plain word arrays compiled to scalar and
// vector copies of the same work.  A chunk of one word (C = 1) uses the low
// half only.
typedef Word Pair __attribute__((vector_size(2 * sizeof(Word))));
template <int C>
Pair load_pair(const Word* x) {
  Pair p = {x[0], 0};
  if (C > 1) std::memcpy(&p, x, sizeof p);
  return p;
}
template <int C>
void store_pair(Word* x, Pair p) {
  if (C > 1)
    std::memcpy(x, &p, sizeof p);
  else
    x[0] = p[0];
}

// Runs body(width, first) over the words of a row of row_words words (a
// power of 2), from word `from` on (or a little before), in chunks [first,
// first + width) of up to 8 words, width a compile-time constant (so that
// the loops over a chunk vectorise).  A row of 8 words, one cache line, goes
// by whole pairs of words.
template <typename Body>
void by_chunks(int row_words, int from, Body&& body) {
  switch (row_words) {
    case 1: body(std::integral_constant<int, 1>{}, 0); break;
    case 2: body(std::integral_constant<int, 2>{}, 0); break;
    case 4: body(std::integral_constant<int, 4>{}, 0); break;
    case 8:
      switch (from / 2) {
        case 0: body(std::integral_constant<int, 8>{}, 0); break;
        case 1: body(std::integral_constant<int, 6>{}, 2); break;
        case 2: body(std::integral_constant<int, 4>{}, 4); break;
        default: body(std::integral_constant<int, 2>{}, 6);
      }
      break;
    default:
      for (int w = from / 8 * 8; w < row_words; w += 8) body(std::integral_constant<int, 8>{}, w);
  }
}

// Zero-filled words starting on a 64-byte boundary: a row of 8 words (N =
// 512) is then one cache line, not two.  (std::vector's storage is only
// 16-byte aligned.)
class LineWords {
 public:
  void assign(std::size_t n) {
    constexpr std::size_t kLine = 64 / sizeof(Word);
    store_.assign(n + kLine - 1, 0);
    const auto misalign = reinterpret_cast<std::uintptr_t>(store_.data()) % 64 / sizeof(Word);
    base_ = store_.data() + (kLine - misalign) % kLine;
  }
  Word& operator[](std::size_t i) { return base_[i]; }
  const Word& operator[](std::size_t i) const { return base_[i]; }
  Word* data() { return base_; }

 private:
  std::vector<Word> store_;
  Word* base_ = nullptr;
};

}  // namespace detail
}  // namespace papshim
