// The holder index of the segment-tree Clairvoyant generator (clairvoyant.cpp):
// per segment, the slots of the processes holding it; per round, the members
// of G that may still send.  It finds a receiver's peer, the first free
// holder in G's order.  Internal to the generator.
//
// A process's slot is the position of its arrival's fraction f (frac_pos),
// fixed for the whole run.  The rows (one per segment, a bitset over the
// slots) are kept for the whole run: a transfer changes one bit.  Only
// members of G are ever looked up (through `free`), so processes not yet
// arrived need no special case: they do hold every segment.
//
// `free` has two halves: a member in the head's whole round K_h has its bit
// (`pick`) at its slot in the first, one in round K_h + 1 in the second.  G's
// window is d wide, so these are the only two rounds, and G's order by (K, f,
// rank) is the order of these bits: the members of round K_h have a larger f
// than the head (or an equal f and a larger rank), so their slots follow the
// head's.  This is the seed's doubled index (5.4.3), here for `free` only:
// both halves are matched against the same row.
#pragma once

#include <stdexcept>
#include <vector>

#include "algorithms/clairvoyant_words.h"

namespace papshim {
namespace detail {

class HolderIndex {
 public:
  // Every process holds every segment at the start.
  HolderIndex(int nprocs, int nseg) : row_words_((nprocs + kWordBits - 1) / kWordBits) {
    rows_.assign(static_cast<std::size_t>(nseg) * static_cast<std::size_t>(row_words_));
    for (int seg = 0; seg < nseg; ++seg) fill_bits(row(seg), nprocs);
    free_.assign(2 * static_cast<std::size_t>(row_words_) + 1, 0);  // + a word kept 0
    words_.resize(2 * static_cast<std::size_t>(row_words_) + 8);
  }

  void drop(int seg, int slot) { clear_bit(row(seg), slot); }
  void add(int seg, int slot) { set_bit(row(seg), slot); }

  // A member's pick: its slot, in the second half if it is a round behind
  // the head (whole round K_h + 1).
  int pick(int slot, bool behind) const { return slot + (behind ? row_words_ * kWordBits : 0); }

  // This round's members, added in G's order (so by increasing pick), the
  // sink as not free; then seal().  Only the words of `free` holding members
  // are listed in `words_` and scanned: G may be small and P large.
  void begin_round() {
    for (std::size_t k = 0; k < used_; ++k) free_[static_cast<std::size_t>(words_[k].free_word)] = 0;
    used_ = 0;
  }
  void add_member(int pick, bool is_free) {
    const int w = pick / kWordBits;
    if (used_ == 0 || words_[used_ - 1].free_word != w)
      words_[used_++] = {w, w < row_words_ ? w : w - row_words_};
    if (is_free) set_bit(free_.data(), pick);
  }
  void seal() {  // up to a whole block of 8: entries on the word of free kept 0
    for (std::size_t k = used_; k < used_ + 7; ++k) words_[k] = {2 * row_words_, 0};
  }
  void set_busy(int pick) { clear_bit(free_.data(), pick); }

  // The slot of the first free member in G's order holding `seg`, the one
  // with pick `skip` left out (-1: none): the first bit set in free and in
  // the row, both halves of free against the same row.  The caller knows
  // that there is one.
  int first_free_holder(int seg, int skip) {
    Word* skipped = skip < 0 ? nullptr : &free_[static_cast<std::size_t>(skip / kWordBits)];
    const Word saved = skipped != nullptr ? *skipped : 0;
    if (skipped != nullptr) *skipped &= ~bit_of(skip);  // cheaper than a test per word
    const int found = first_common(row(seg));
    if (skipped != nullptr) *skipped = saved;
    if (found < 0) throw std::logic_error("clairvoyant: holder index out of step with the tree");
    return found;
  }

 private:
  struct Where {
    int free_word, row_word;
  };
  Word* row(int seg) { return &rows_[static_cast<std::size_t>(seg) * static_cast<std::size_t>(row_words_)]; }

  Word common(const Where& x, const Word* h) const {
    return free_[static_cast<std::size_t>(x.free_word)] & h[x.row_word];
  }

  // The first slot set in both free and h, -1: none.  Eight words at a time
  // without a branch per word: with many members the first holder lies a
  // few words in, at no predictable place, and a loop exiting there was
  // mispredicted nearly every time.
  int first_common(const Word* h) const {
    for (std::size_t k = 0; k < used_; k += 8) {
      unsigned nonzero = 0;
      for (int j = 0; j < 8; ++j) nonzero |= static_cast<unsigned>(common(words_[k + j], h) != 0) << j;
      if (nonzero != 0) {
        const Where& x = words_[k + static_cast<std::size_t>(__builtin_ctz(nonzero))];
        return x.row_word * kWordBits + lowest_bit(common(x, h));
      }
    }
    return -1;
  }

  const int row_words_;       // words of P bits
  LineWords rows_;            // per segment: its holders' slots
  std::vector<Word> free_;    // halves for rounds K_h and K_h + 1, then a 0
  std::vector<Where> words_;  // the words of free holding members, in order,
  std::size_t used_ = 0;      // used_ of them, then 7 on the 0 word
};

}  // namespace detail
}  // namespace papshim
