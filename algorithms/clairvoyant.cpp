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
//   leaf      a member's place in the segment tree: its position in G
//             (the sink left out).  G is in availability order, so this is
//             the seed's order by fractional arrival time with the doubled
//             index (5.4.3) and with the slots of absent processes squeezed
//             out.  Like the seed (5.4.4) the tree is rebuilt at the start
//             of every round (nearly every leaf changes anyway: senders come
//             back, P' bits return), so compact numbering costs nothing and
//             keeps the tree small: log2|G| levels instead of log2(2P).
//   tree      segment tree over m = 2^k >= |G| - 1 leaves; root at node 1,
//             leaf x at node m+x.  Node n is a row of 2^shift >= W words
//             (W = words of N bits): word w at tree[(n << shift) + w], so a
//             node's words share cache lines.  Searches run on one word at
//             a time (a column: tree + w, step 2^shift) and stop early;
//             updates of whole rows run on chunks of up to 8 words at once
//             (`by_chunks`).  A leaf holds the `hold` bits of a free (not yet
//             sent in this round) member; zero otherwise.  An inner node is
//             the OR of its children.
//   sink      kept out of the tree and checked by hand before the tree: this
//             puts it at the front of G as the rules require (the seed's
//             pseudo-root, 5.6).
//   low       per process: its `hold` words below low are zero.
// Finding a peer for a receiver i (seed 5.4.1-5.4.2): OR the siblings along
// i's leaf-to-root path (all free members but i), AND with i's bits, take the
// lowest set bit: that is the segment; the sibling on the path under which
// the leftmost other holder lies is found from the same words, and the
// holder by descending from it.
#include "algorithms/clairvoyant.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace papshim {
namespace {

using Word = std::uint64_t;
constexpr int kWordBits = 64;
constexpr int kMaxHeight = 32;  // of the tree: at most 2^31 leaves

int lowest_bit(Word x) { return __builtin_ctzll(x); }

class Generator {
 public:
  explicit Generator(const ScheduleParams& params);
  Schedule run();

 private:
  bool earlier(int p, int q) const {
    return K_[p] != K_[q] ? K_[p] < K_[q] : clk_.frac_pos[p] < clk_.frac_pos[q];
  }
  bool within(int q, int h) const {  // K_q*d + f_q <= (K_h + 1)*d + f_h
    return K_[q] != K_[h] + 1 ? K_[q] < K_[h] + 1 : clk_.frac_class[q] <= clk_.frac_class[h];
  }
  Word* bits(int p) { return &hold_[row(static_cast<std::size_t>(p))]; }
  Word* column(int w) { return &tree_[static_cast<std::size_t>(w)]; }
  std::size_t row(std::size_t n) const { return n << shift_; }

  void merge_group();
  void build_tree();
  int leftmost(int seg, std::size_t n) const;
  std::size_t start_node(const Word* path, int at, int b) const;
  void match(int i);
  void transfer(int z, int i, int seg);
  void clear_leaf(int p);
  template <int C>
  void clear_path(std::size_t leaf, int first);
  template <typename Body>
  void by_chunks(Body&& body);
  void clear_leaf_bit(int leaf, int seg);
  void finish_round();

  const detail::ClairvoyantClock clk_;
  const int P_, N_, W_, root_;
  int m_ = 1, shift_ = 0;  // leaves in this round's tree, log2(row length)
  std::vector<std::int64_t> K_;
  std::vector<Word> hold_, tree_;
  std::vector<int> count_, fresh_, leaf_of_, proc_at_;
  std::vector<int> low_;  // per process: its words below low_ are zero
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

Generator::Generator(const ScheduleParams& params)
    : clk_(detail::clairvoyant_clock(params)),
      P_(params.nprocs),
      N_(params.nseg),
      W_((params.nseg + kWordBits - 1) / kWordBits),
      root_(params.root),
      round_limit_(detail::round_limit(params)),
      own_(params.rank) {
  int most = 1;  // leaves of the largest tree: P - 1 members besides the sink
  while (most < P_) most *= 2;
  while ((1 << shift_) < W_) ++shift_;
  const auto P = static_cast<std::size_t>(P_);
  K_ = clk_.whole;
  hold_.assign(row(P), 0);
  for (int p = 0; p < P_; ++p) std::fill_n(bits(p), W_, ~Word{0});
  if (N_ % kWordBits != 0)
    for (int p = 0; p < P_; ++p) bits(p)[W_ - 1] = (Word{1} << (N_ % kWordBits)) - 1;
  tree_.assign(row(2 * static_cast<std::size_t>(most)), 0);
  count_.assign(P, N_);
  fresh_.assign(P, -1);
  low_.assign(P, 0);
  leaf_of_.assign(P, -1);
  proc_at_.assign(static_cast<std::size_t>(most), -1);
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
void Generator::merge_group() {
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

// Phase 2 (seed 5.4.3-5.4.4, 5.6): choose the sink, put every other member
// at its leaf, build the inner nodes bottom-up.
void Generator::build_tree() {
  sink_ = group_.front();
  for (int q : group_)
    if (q == root_) sink_ = root_;
  sink_free_ = true;
  leaf_of_[sink_] = -1;
  const int members = static_cast<int>(group_.size()) - 1;
  m_ = 1;
  while (m_ < members) m_ *= 2;
  int at = 0;
  for (int q : group_) {
    if (q == sink_) continue;
    std::copy_n(bits(q), row(1), &tree_[row(m_ + at)]);
    leaf_of_[q] = at;
    proc_at_[at++] = q;
  }
  std::fill(tree_.data() + row(m_ + at), tree_.data() + row(2 * m_), Word{0});
  by_chunks([&](auto width, int first) {
    for (std::size_t n = m_ - 1; n >= 1; --n) {
      Word* up = &tree_[row(n) + first];
      const Word* left = &tree_[row(2 * n) + first];
      const Word* right = left + row(1);
      for (int w = 0; w < decltype(width)::value; ++w) up[w] = left[w] | right[w];
    }
  });
}

// The leftmost leaf under node n whose bit `seg` is set (seed listings 4
// and 5).  The caller knows that node n has the bit.  Three levels per step:
// the first of the 8 nodes three levels down having the bit (independent
// loads instead of dependent ones; branch-free, as the path is
// unpredictable), then the last two levels or the last one the same way.
int Generator::leftmost(int seg, std::size_t n) const {
  const Word* t = &tree_[static_cast<std::size_t>(seg / kWordBits)];
  const int b = seg % kWordBits;
  const auto m = static_cast<std::size_t>(m_);
  auto has = [&](std::size_t x) { return static_cast<unsigned>(t[row(x)] >> b) & 1u; };
  while (4 * n < m) {
    const std::size_t c = 8 * n;
    const unsigned first4 = has(c) | has(c + 1) << 1 | has(c + 2) << 2 | has(c + 3) << 3;
    const unsigned next4 = has(c + 4) | has(c + 5) << 1 | has(c + 6) << 2 | has(c + 7) << 3;
    n = c + static_cast<std::size_t>(__builtin_ctz(first4 | next4 << 4));
  }
  if (2 * n < m) {
    const std::size_t c = 4 * n;
    n = c + static_cast<std::size_t>(
                __builtin_ctz(has(c) | has(c + 1) << 1 | has(c + 2) << 2 | has(c + 3) << 3));
  }
  if (n < m) n = 2 * n + (has(2 * n) ^ 1);
  return static_cast<int>(n - m);
}

// The node under which the leftmost leaf having bit b lies, leaf `at` left
// out, from the words of the siblings on its path up (path[k] at height k):
// leaves left of `at` lie under the left siblings, the highest of them first;
// then those under the right siblings, lowest first.
std::size_t Generator::start_node(const Word* path, int at, int b) const {
  std::size_t left = 0, right = 0;
  auto n = static_cast<std::size_t>(m_ + at);
  for (int k = 0; n > 1; ++k, n >>= 1) {
    const std::size_t s = n ^ 1;
    const bool here = (path[k] >> b) & 1;
    left = here && s < n ? s : left;
    right = here && s > n && right == 0 ? s : right;
  }
  return left != 0 ? left : right;
}

// Runs body(width, first) over the words of a row in chunks [first, first +
// width) of up to 8 words, width a compile-time constant (so that the loops
// over a chunk vectorise).
template <typename Body>
void Generator::by_chunks(Body&& body) {
  switch (const int row_words = 1 << shift_) {
    case 1: body(std::integral_constant<int, 1>{}, 0); break;
    case 2: body(std::integral_constant<int, 2>{}, 0); break;
    case 4: body(std::integral_constant<int, 4>{}, 0); break;
    default:
      for (int w = 0; w < row_words; w += 8) body(std::integral_constant<int, 8>{}, w);
  }
}

// Phase 3, one receiver: smallest segment first, then the first peer (the
// sink before the tree's leaves, leaves in availability order).
void Generator::match(int i) {
  if (i == sink_) {  // the sink takes any segment a free member holds
    for (int w = 0; w < W_; ++w)
      if (const Word x = tree_[row(1) + w]) {
        const int seg = w * kWordBits + lowest_bit(x);
        transfer(proc_at_[leftmost(seg, 1)], i, seg);
        return;
      }
    return;
  }
  const Word* mine = bits(i);
  int seg = -1;
  const int at = leaf_of_[i];
  int& low = low_[i];
  while (low < W_ && !mine[low]) ++low;
  Word path[kMaxHeight];  // the siblings' words on i's path up, by height
  for (int w = low; w < W_ && seg < 0; ++w) {
    if (!mine[w]) continue;
    const Word* t = column(w);
    Word others = 0;  // OR of every free member but i
    if (at < 0) {
      others = t[row(1)];
    } else {
      int k = 0;
      for (auto n = static_cast<std::size_t>(m_ + at); n > 1; n >>= 1)
        others |= path[k++] = t[row(n ^ 1)];
    }
    if (const Word x = others & mine[w]) seg = w * kWordBits + lowest_bit(x);
  }
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
  if (seg >= 0)
    transfer(proc_at_[leftmost(seg, at < 0 ? 1 : start_node(path, at, seg % kWordBits))], i, seg);
}

// z sends `seg` to i: record both steps and update states and tree.
void Generator::transfer(int z, int i, int seg) {
  const int w = seg / kWordBits;
  const Word bit = Word{1} << (seg % kWordBits);
  Word* mine = bits(i);
  const bool reduce = (mine[w] & bit) != 0;
  moves_.push_back({z, i, reduce ? seg : ~seg});

  bits(z)[w] &= ~bit;
  --count_[z];
  if (z == sink_)
    sink_free_ = false;
  else
    clear_leaf(z);

  if (reduce) {
    mine[w] &= ~bit;
    if (leaf_of_[i] >= 0) clear_leaf_bit(leaf_of_[i], seg);
  } else {
    ++count_[i];
  }
  fresh_[i] = seg;
}

// z has sent: zero its leaf and fix the path up (clear_path).
void Generator::clear_leaf(int p) {
  const auto leaf = static_cast<std::size_t>(m_ + leaf_of_[p]);
  by_chunks([&](auto width, int first) {
    clear_path<decltype(width)::value>(leaf, first);
  });
  leaf_of_[p] = -1;
}

// Words [first, first + C) of every row on the path: the leaf becomes zero,
// every ancestor the OR of its two children again.  A level costs a few word
// operations on the whole chunk, without a branch: stopping early where a
// row no longer changes was slower (the bits of a rare segment go up to the
// root, and the test mispredicts).
template <int C>
void Generator::clear_path(std::size_t leaf, int first) {
  Word* t = &tree_[static_cast<std::size_t>(first)];
  Word now[C] = {};  // the new row of node n
  std::fill_n(t + row(leaf), C, Word{0});
  for (std::size_t n = leaf; n > 1; n >>= 1) {
    const Word* sibling = t + row(n ^ 1);
    Word* up = t + row(n >> 1);
#pragma GCC unroll 8
    for (int w = 0; w < C; ++w) up[w] = now[w] |= sibling[w];
  }
}

// A free member received `seg` (P'): drop that bit from its leaf and from the
// ancestors that got it only from this leaf.
void Generator::clear_leaf_bit(int leaf, int seg) {
  Word* t = column(seg / kWordBits);
  const Word bit = Word{1} << (seg % kWordBits);
  auto n = static_cast<std::size_t>(m_ + leaf);
  t[row(n)] &= ~bit;
  for (; n > 1 && !(t[row(n ^ 1)] & bit); n >>= 1) t[row(n >> 1)] &= ~bit;
}

// Phase 4: P' becomes P; holders and the root advance a round, the others
// are done.
void Generator::finish_round() {
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
    if (fresh_[q] >= 0) {
      bits(q)[fresh_[q] / kWordBits] |= Word{1} << (fresh_[q] % kWordBits);
      low_[q] = std::min(low_[q], fresh_[q] / kWordBits);
      fresh_[q] = -1;
    }
    if (q != root_ && count_[q] == 0) {
      --remaining_;
    } else {
      ++K_[q];
      survivors_.push_back(q);
    }
  }
  ++round_;
}

Schedule Generator::run() {
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
      K_[h] = clk_.frac_class[next] <= clk_.frac_class[h] ? K_[next] - 1 : K_[next];
      survivors_.assign(1, h);
      merge_group();
    }
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
  return Generator(params).run();
}

}  // namespace papshim
