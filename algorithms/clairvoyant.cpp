// Clairvoyant reduce, improved version (seed section 5).  Same rules and
// output as clairvoyant_linear.cpp (see clairvoyant.h); what differs is how
// each round is computed.
//
// Works as follows.  Terms used by the variable names:
//   hold      one bit per (process, segment): 1 = holds it (A or P), 0 = sent
//             it (E) or received it in this round (P'; the segment index is
//             kept in `fresh`, seed 4.2 and 5.3).  `count` = segments held,
//             P' included; a non-root with count 0 is done.
//   K         availability in whole rounds (clairvoyant.h, "Exact
//             arithmetic"); the fractional part never changes.
//   awaiting  processes not active yet, by arrival (seed 5.2: queue A).
//   G         this round's group in availability order.  The survivors of
//             the previous G keep their order (all advanced by one round) and
//             are merged with the head of `awaiting` (seed 5.2).
//   tree      segment tree over m = 2^k >= max(2, |G| - 1) leaves, rebuilt
//             every round (senders come back, P' bits return); root at node
//             1, leaf x at node m+x.  A member's `leaf` is its position in G,
//             the sink left out.  A node is a row of 2^shift >= W words (W =
//             words of N bits): its words share cache lines.  A leaf is no
//             copy but a pointer: to the `hold` row of a free (not yet sent
//             in this round) member, else to a row of zeros.  An inner node
//             is the OR of its children.  Searches run on one word at a time and stop
//             early; row updates on chunks of up to 8 words (`by_chunks`).
//   index     the holder index (clairvoyant_holders.h): per segment, the
//             `slot`s (positions by fraction f) of the processes holding it;
//             per round, the members that have not sent yet (`free`, the sink
//             left out), in G's order: member q at bit `pick`.
//   sink      kept out of the tree and of `free` and checked by hand first:
//             this puts it at the front of G as the rules require (the seed's
//             pseudo-root, 5.6).
//   low       per process: its `hold` words below low are zero.
// Finding a peer for a receiver i (seed 5.4.1-5.4.2): OR the siblings along
// i's leaf-to-root path (all free members but i), AND with i's bits, take the
// lowest set bit: that is the segment j.  The peer (`peer`) is the first set
// bit of free AND holders[j], i left out: a scan of a few words, where
// descending the tree cost a dependent load per level; in a small G, the
// first leaf holding j.
#include "algorithms/clairvoyant.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "algorithms/clairvoyant_holders.h"
#include "algorithms/clairvoyant_words.h"

namespace papshim {
namespace {

using detail::bit_of;
using detail::kWordBits;
using detail::load_pair;
using detail::lowest_bit;
using detail::Pair;
using detail::store_pair;
using detail::Word;

// Groups up to this size find peers without the holder index (see peer).
constexpr std::size_t kSmallGroup = 16;

// kShift: log2 of the row length when fixed at compile time, else -1 (see
// build_clairvoyant).
template <int kShift>
class Generator {
 public:
  explicit Generator(const ScheduleParams& params);
  Schedule run();

 private:
  bool earlier(int p, int q) const {
    return st_[p].K != st_[q].K ? st_[p].K < st_[q].K : slot(p) < slot(q);
  }
  bool within(int q, int h) const {  // K_q*d + f_q <= (K_h + 1)*d + f_h
    return st_[q].K != st_[h].K + 1 ? st_[q].K < st_[h].K + 1 : clk_.frac_class[q] <= clk_.frac_class[h];
  }
  Word* bits(int p) { return &hold_[row(static_cast<std::size_t>(p))]; }
  const Word* node(std::size_t n) const {  // a row: inner node or leaf
    return n < static_cast<std::size_t>(m_) ? &tree_[row(n)] : leaf_[n - static_cast<std::size_t>(m_)];
  }
  std::size_t row(std::size_t n) const { return n << (kShift >= 0 ? kShift : shift_); }
  int slot(int p) const { return st_[p].slot; }

  void merge_group();
  void place_members();
  void build_tree();
  Word others(int at, int w) const;
  int peer(int seg, int i);
  void match(int i);
  void transfer(int z, int i, int seg);
  void clear_leaf(int p);
  template <int C>
  void clear_path(int at, int first);
  void clear_leaf_bit(int at, int seg);
  void finish_round();

  const detail::ClairvoyantClock clk_;
  const int P_, N_, W_, root_;
  int m_ = 2, shift_ = 0;  // leaves in this round's tree, log2(row length)
  // Per process, together: a transfer touches most fields of two processes,
  // one cache line each instead of one per field.
  struct alignas(32) Proc {
    std::int64_t K;  // availability in whole rounds
    int count;       // segments held, P' included
    int fresh;       // the P' segment of this round, -1: none
    int leaf;        // leaf in the tree, -1: none (not free, or the sink)
    int low;         // its hold words below low are zero
    int pick;        // its bit in `free` (this round's members)
    int slot;        // its place in the holder index
  };
  std::vector<Proc> st_;
  detail::LineWords hold_, tree_, zero_;
  std::vector<const Word*> leaf_;  // leaf x: a member's hold row or zero_
  std::vector<int> proc_at_;       // leaf x: its member, in G's order
  bool small_ = false;             // few leaves: no holder index this round
  detail::HolderIndex index_;
  std::vector<int> proc_in_slot_;
  std::vector<int> group_, survivors_;
  struct Move {
    int from, to, seg;  // seg = ~segment for a RecvCopy
  };
  std::vector<Move> moves_;  // this round's transfers, written out at its end
  std::size_t next_awaiting_ = 0;  // index into clk_.by_arrival
  int sink_ = -1, round_ = 0, remaining_ = 0, round_limit_;
  int own_ = -1;  // params.rank: the one program to store, -1 for all
  bool sink_free_ = false;
  Schedule out_;
};

template <int kShift>
Generator<kShift>::Generator(const ScheduleParams& params)
    : clk_(detail::clairvoyant_clock(params)),
      P_(params.nprocs),
      N_(params.nseg),
      W_((params.nseg + kWordBits - 1) / kWordBits),
      root_(params.root),
      index_(params.nprocs, params.nseg),
      round_limit_(detail::round_limit(params)),
      own_(params.rank) {
  const int most = 1 << std::max(1, ceil_log2(P_));  // leaves of the largest tree: P - 1 members besides the sink
  shift_ = ceil_log2(W_);
  const auto P = static_cast<std::size_t>(P_);
  st_.resize(P);
  for (int p = 0; p < P_; ++p) st_[p] = {clk_.whole[p], N_, -1, -1, 0, -1, clk_.frac_pos[p]};
  hold_.assign(row(P));
  for (int p = 0; p < P_; ++p) detail::fill_bits(bits(p), N_);
  tree_.assign(row(static_cast<std::size_t>(most)));
  zero_.assign(row(1));
  leaf_.assign(static_cast<std::size_t>(most), zero_.data());
  proc_at_.assign(static_cast<std::size_t>(most), -1);
  proc_in_slot_.assign(P, -1);
  for (int p = 0; p < P_; ++p) proc_in_slot_[slot(p)] = p;
  out_.coll = Collective::Reduce;
  out_.nseg = N_;
  out_.root = root_;
  out_.programs.resize(P);
  // A non-root sends each of its N segments once, plus what it got by copy,
  // and receives about as often: 2N + 2 steps is enough for most ranks.
  // (Reserving costs address space only until written.)
  for (int p = 0; p < P_; ++p)
    if (own_ < 0 || own_ == p) out_.programs[p].steps.reserve(2 * static_cast<std::size_t>(N_) + 2);
}

// Phase 1 (seed 5.2, merge-and-clean): G = survivors merged with the
// awaiting processes that fall within d of the head.  Survivors always do.
template <int kShift>
void Generator<kShift>::merge_group() {
  const auto& awaiting = clk_.by_arrival;
  group_.clear();
  int head = survivors_.empty() ? -1 : survivors_.front();
  if (next_awaiting_ < awaiting.size() && (head < 0 || earlier(awaiting[next_awaiting_], head)))
    head = awaiting[next_awaiting_];
  std::size_t s = 0;
  for (;;) {
    const bool a_ok = next_awaiting_ < awaiting.size() && within(awaiting[next_awaiting_], head);
    if (a_ok && (s == survivors_.size() || earlier(awaiting[next_awaiting_], survivors_[s])))
      group_.push_back(awaiting[next_awaiting_++]);
    else if (s < survivors_.size())
      group_.push_back(survivors_[s++]);
    else
      break;
  }
}

// Phase 2a: choose the sink; mark every member but the sink free, in the
// half of `free` of its whole round.
template <int kShift>
void Generator<kShift>::place_members() {
  sink_ = group_.front();
  for (int q : group_)
    if (q == root_) sink_ = root_;
  sink_free_ = true;
  small_ = group_.size() <= kSmallGroup;
  if (small_) return;
  index_.begin_round();
  const std::int64_t head_round = st_[group_.front()].K;
  for (int q : group_) {
    st_[q].pick = index_.pick(slot(q), st_[q].K != head_round);
    index_.add_member(st_[q].pick, q != sink_);
  }
  index_.seal();
}

// Phase 2b (seed 5.4.3-5.4.4, 5.6): put every member but the sink at its
// leaf, build the inner nodes bottom-up.
template <int kShift>
void Generator<kShift>::build_tree() {
  st_[sink_].leaf = -1;
  const int members = static_cast<int>(group_.size()) - 1;
  m_ = 1 << std::max(1, ceil_log2(members));  // at least 2, so that the root is an inner node
  int at = 0;
  for (int q : group_) {
    if (q == sink_) continue;
    leaf_[at] = bits(q);
    proc_at_[at] = q;
    st_[q].leaf = at++;
  }
  std::fill(leaf_.begin() + at, leaf_.begin() + m_, zero_.data());
  detail::by_chunks(static_cast<int>(row(1)), 0, [&](auto width, int first) {
    constexpr int C = decltype(width)::value;
    for (std::size_t n = m_ - 1; n >= 1; --n) {
      const Word* left = node(2 * n) + first;
      const Word* right = node(2 * n + 1) + first;
      Word* up = &tree_[row(n) + first];
      for (int w = 0; w < C; w += 2)
        store_pair<C>(up + w, load_pair<C>(left + w) | load_pair<C>(right + w));
    }
  });
}

// Word w of the OR of every free member but the one at leaf `at` (-1: not
// in the tree): the root's word, or the siblings' words up at's path.
template <int kShift>
Word Generator<kShift>::others(int at, int w) const {
  const Word* t = &tree_[static_cast<std::size_t>(w)];
  if (at < 0) return t[row(1)];
  Word x = leaf_[static_cast<std::size_t>(at ^ 1)][w];
  for (auto n = static_cast<std::size_t>(m_ + at) >> 1; n > 1; n >>= 1) x |= t[row(n ^ 1)];
  return x;
}

// The first free member in G's order but i (the sink: -1) holding `seg`;
// the tree said that there is one.  In a small G the leaves are scanned (in
// G's order; a busy member's leaf is the zero row): cheaper than setting up
// the holder index for the round.
template <int kShift>
int Generator<kShift>::peer(int seg, int i) {
  if (!small_) return proc_in_slot_[index_.first_free_holder(seg, i < 0 ? -1 : st_[i].pick)];
  const int skip = i < 0 ? -1 : st_[i].leaf;
  for (int x = 0; x < m_; ++x)
    if (x != skip && (leaf_[static_cast<std::size_t>(x)][seg / kWordBits] & bit_of(seg))) return proc_at_[x];
  throw std::logic_error("clairvoyant: no peer where the tree had one");
}

// Phase 3, one receiver: smallest segment first, then the first peer (the
// sink before the other members, those in G's order).
template <int kShift>
void Generator<kShift>::match(int i) {
  if (i == sink_) {  // the sink takes any segment a free member holds
    for (int w = 0; w < W_; ++w)
      if (const Word x = others(-1, w)) {
        const int seg = w * kWordBits + lowest_bit(x);
        transfer(peer(seg, -1), i, seg);
        return;
      }
    return;
  }
  const Word* mine = bits(i);
  int seg = -1;
  int& low = st_[i].low;
  while (low < W_ && !mine[low]) ++low;
  for (int w = low; w < W_ && seg < 0; ++w)
    if (mine[w])
      if (const Word x = others(st_[i].leaf, w) & mine[w]) seg = w * kWordBits + lowest_bit(x);
  if (sink_free_) {
    const Word* s = bits(sink_);
    const int last = seg < 0 ? W_ - 1 : seg / kWordBits;
    for (int w = low; w <= last; ++w)
      if (const Word x = s[w] & mine[w]) {
        const int sseg = w * kWordBits + lowest_bit(x);
        if (seg < 0 || sseg <= seg) {
          transfer(sink_, i, sseg);
          return;
        }
        break;
      }
  }
  if (seg >= 0) transfer(peer(seg, i), i, seg);
}

// z sends `seg` to i: record both steps and update states and tree.
template <int kShift>
void Generator<kShift>::transfer(int z, int i, int seg) {
  const int w = seg / kWordBits;
  const Word bit = bit_of(seg);
  Word* mine = bits(i);
  const bool reduce = (mine[w] & bit) != 0;
  moves_.push_back({z, i, reduce ? seg : ~seg});

  Word* theirs = bits(z);
  while (!theirs[st_[z].low]) ++st_[z].low;  // for clear_leaf; ends at w or before
  theirs[w] &= ~bit;
  index_.drop(seg, slot(z));
  --st_[z].count;
  if (z == sink_) {
    sink_free_ = false;
  } else {
    clear_leaf(z);
    if (!small_) index_.set_busy(st_[z].pick);
  }

  if (reduce) {  // P' until the end of the round
    mine[w] &= ~bit;
    index_.drop(seg, slot(i));
    if (st_[i].leaf >= 0) clear_leaf_bit(st_[i].leaf, seg);
  } else {
    ++st_[i].count;
  }
  st_[i].fresh = seg;
}

// z has sent: its leaf becomes the zero row; fix the path up (clear_path).
template <int kShift>
void Generator<kShift>::clear_leaf(int p) {
  const int at = st_[p].leaf;
  leaf_[static_cast<std::size_t>(at)] = zero_.data();
  // Below low, p's row was zero: those words of the path stay as they are.
  detail::by_chunks(static_cast<int>(row(1)), st_[p].low, [&](auto width, int first) {
    clear_path<decltype(width)::value>(at, first);
  });
  st_[p].leaf = -1;
}

// Words [first, first + C) of every row on the path of leaf `at`, which is
// zero now: every ancestor becomes the OR of its two children again.  A
// level costs a few vector operations, without a branch: stopping early
// where a row no longer changes was slower (the bits of a rare segment go up
// to the root, and the test mispredicts).
template <int kShift>
template <int C>
void Generator<kShift>::clear_path(int at, int first) {
  static_assert(C == 1 || C % 2 == 0, "a chunk is one word or whole pairs");
  constexpr int kPairs = (C + 1) / 2;
  Word* t = &tree_[static_cast<std::size_t>(first)];
  auto n = static_cast<std::size_t>(m_ + at) >> 1;
  std::copy_n(leaf_[static_cast<std::size_t>(at ^ 1)] + first, C, t + row(n));
  Pair now[kPairs];  // the new row of node n: its parent's is now | sibling
  for (int k = 0; k < kPairs; ++k) now[k] = load_pair<C>(t + row(n) + 2 * k);
  for (; n > 1; n >>= 1) {
    const Word* sibling = t + row(n ^ 1);
    Word* up = t + row(n >> 1);
    for (int k = 0; k < kPairs; ++k) now[k] |= load_pair<C>(sibling + 2 * k);
    for (int k = 0; k < kPairs; ++k) store_pair<C>(up + 2 * k, now[k]);
  }
}

// A free member received `seg` (P'): its hold row, the leaf, has lost the
// bit already; drop it from the ancestors that got it only from this leaf.
template <int kShift>
void Generator<kShift>::clear_leaf_bit(int at, int seg) {
  const int w = seg / kWordBits;
  const Word bit = bit_of(seg);
  if (leaf_[static_cast<std::size_t>(at ^ 1)][w] & bit) return;
  Word* t = &tree_[static_cast<std::size_t>(w)];
  auto n = static_cast<std::size_t>(m_ + at) >> 1;
  t[row(n)] &= ~bit;
  for (; n > 1 && !(t[row(n ^ 1)] & bit); n >>= 1) t[row(n >> 1)] &= ~bit;
}

// Phase 4: P' becomes P; holders and the root advance a round, the others
// are done.
template <int kShift>
void Generator<kShift>::finish_round() {
  // Output, kept out of the search loop: writes to P scattered programs
  // would evict the tree from the cache.
  // An own-program build (own_ >= 0) keeps only that rank's steps.
  for (const Move& t : moves_) {
    const bool reduce = t.seg >= 0;
    const int seg = reduce ? t.seg : ~t.seg;
    if (own_ < 0 || own_ == t.from)
      out_.programs[t.from].steps.push_back({StepOp::Send, t.to, seg, round_, round_});
    if (own_ < 0 || own_ == t.to)
      out_.programs[t.to].steps.push_back(
          {reduce ? StepOp::RecvReduce : StepOp::RecvCopy, t.from, seg, round_, round_});
  }
  moves_.clear();
  survivors_.clear();
  for (int q : group_) {
    if (st_[q].fresh >= 0) {
      bits(q)[st_[q].fresh / kWordBits] |= bit_of(st_[q].fresh);
      index_.add(st_[q].fresh, slot(q));
      st_[q].low = std::min(st_[q].low, st_[q].fresh / kWordBits);
      st_[q].fresh = -1;
    }
    if (q != root_ && st_[q].count == 0) {
      --remaining_;
    } else {
      ++st_[q].K;
      survivors_.push_back(q);
    }
  }
  ++round_;
}

template <int kShift>
Schedule Generator<kShift>::run() {
  remaining_ = P_ - 1;
  while (remaining_ > 0) {
    merge_group();
    while (group_.size() == 1) {
      // Idle rounds (seed 5.1): advance the lone member to the first round
      // in which the next awaiting process joins its window.  (The root or
      // an unfinished process is always left to come.)
      if (next_awaiting_ >= clk_.by_arrival.size())
        throw std::logic_error("clairvoyant: lost track");
      const int h = group_.front(), next = clk_.by_arrival[next_awaiting_];
      st_[h].K = clk_.frac_class[next] <= clk_.frac_class[h] ? st_[next].K - 1 : st_[next].K;
      survivors_.assign(1, h);
      merge_group();
    }
    place_members();
    build_tree();
    match(sink_);
    for (int i : group_)
      if (i != sink_) match(i);
    finish_round();
    if (round_ >= round_limit_) throw std::logic_error("clairvoyant: no progress");
  }
  out_.tag_bound = round_ - 1;  // tag = round number; the last round's is the largest
  return std::move(out_);
}

}  // namespace

Schedule build_clairvoyant(const ScheduleParams& params) {
  // Rows of up to 8 words (N <= 512) get their length at compile time: a
  // node's address is computed at every level of every tree walk, and a
  // constant shift folds into the addressing (about 7% fewer instructions).
  switch (ceil_log2((params.nseg + kWordBits - 1) / kWordBits)) {
    case 0: return Generator<0>(params).run();
    case 1: return Generator<1>(params).run();
    case 2: return Generator<2>(params).run();
    case 3: return Generator<3>(params).run();
    default: return Generator<-1>(params).run();
  }
}

}  // namespace papshim
