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
//             node's words share cache lines.  Most operations run on one
//             word at a time (a column: tree + w, step 2^shift) and stop
//             early.  A leaf holds the `hold` bits of a free (not yet sent in
//             this round) member; zero otherwise.  An inner node is the OR of
//             its children.
//   sink      kept out of the tree and checked by hand before the tree: this
//             puts it at the front of G as the rules require (the seed's
//             pseudo-root, 5.6).
// Finding a peer for a receiver i (seed 5.4.1-5.4.2): OR the siblings along
// i's leaf-to-root path (all free members but i), AND with i's bits, take the
// lowest set bit: that is the segment; descend from the root to the leftmost
// leaf having it, skipping i's own leaf.
#include "algorithms/clairvoyant.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace papshim {
namespace detail {

ClairvoyantClock clairvoyant_clock(const ScheduleParams& params) {
  const int P = params.nprocs;
  if (P < 1 || params.arrival.size() != static_cast<std::size_t>(P))
    throw std::invalid_argument("clairvoyant: arrival vector size must equal nprocs");
  if (params.root < 0 || params.root >= P) throw std::invalid_argument("clairvoyant: bad root");
  if (params.nseg < 1) throw std::invalid_argument("clairvoyant: nseg must be >= 1");
  if (!(params.tau > 0) || !std::isfinite(params.tau))
    throw std::invalid_argument("clairvoyant: round length must be positive and finite");
  for (double a : params.arrival)
    if (!std::isfinite(a)) throw std::invalid_argument("clairvoyant: arrival time not finite");

  // Arrival relative to the earliest one, in rounds: whole part K and
  // fraction f.  Beyond 2^60 rounds everything counts as "at 2^60".
  const double first = *std::min_element(params.arrival.begin(), params.arrival.end());
  const double cap = std::ldexp(1.0, 60);
  ClairvoyantClock clk;
  std::vector<double> frac(static_cast<std::size_t>(P));
  clk.whole.resize(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    double t = (params.arrival[p] - first) / params.tau;
    if (!(t < cap)) t = cap;
    const double whole = std::floor(t);
    clk.whole[p] = static_cast<std::int64_t>(whole);
    frac[p] = t - whole;
  }

  // Order by (f, rank): position and dense class of equal fractions.
  std::vector<int> by_frac(static_cast<std::size_t>(P));
  std::iota(by_frac.begin(), by_frac.end(), 0);
  std::sort(by_frac.begin(), by_frac.end(), [&](int p, int q) {
    return frac[p] != frac[q] ? frac[p] < frac[q] : p < q;
  });
  clk.frac_pos.resize(static_cast<std::size_t>(P));
  clk.frac_class.resize(static_cast<std::size_t>(P));
  for (int k = 0, cls = 0; k < P; ++k) {
    if (k > 0 && frac[by_frac[k]] != frac[by_frac[k - 1]]) ++cls;
    clk.frac_pos[by_frac[k]] = k;
    clk.frac_class[by_frac[k]] = cls;
  }

  clk.by_arrival = by_frac;
  std::stable_sort(clk.by_arrival.begin(), clk.by_arrival.end(),
                   [&](int p, int q) { return clk.whole[p] < clk.whole[q]; });
  return clk;
}

int round_limit(const ScheduleParams& params) {
  const double limit = 4.0 * params.nprocs * params.nseg + 4.0 * params.nprocs + 16;
  return limit < std::numeric_limits<int>::max() ? static_cast<int>(limit)
                                                  : std::numeric_limits<int>::max();
}

}  // namespace detail

namespace {

using Word = std::uint64_t;
constexpr int kWordBits = 64;

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
  Word* bits(int p) { return &hold_[static_cast<std::size_t>(p) * W_]; }
  Word* column(int w) { return &tree_[static_cast<std::size_t>(w)]; }
  std::size_t row(std::size_t n) const { return n << shift_; }

  void merge_group();
  void build_tree();
  int leftmost(int seg, int skip);
  void match(int i);
  void transfer(int z, int i, int seg);
  void clear_leaf(int p);
  void clear_leaf_bit(int leaf, int seg);
  void finish_round();

  const detail::ClairvoyantClock clk_;
  const int P_, N_, W_, root_;
  int m_ = 1, shift_ = 0;  // leaves in this round's tree, log2(row length)
  std::vector<std::int64_t> K_;
  std::vector<Word> hold_, tree_;
  std::vector<int> count_, fresh_, leaf_of_, proc_at_;
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
  hold_.assign(P * W_, ~Word{0});
  if (N_ % kWordBits != 0)
    for (int p = 0; p < P_; ++p) bits(p)[W_ - 1] = (Word{1} << (N_ % kWordBits)) - 1;
  tree_.assign(row(2 * static_cast<std::size_t>(most)), 0);
  count_.assign(P, N_);
  fresh_.assign(P, -1);
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
    std::copy_n(bits(q), W_, &tree_[row(m_ + at)]);
    leaf_of_[q] = at;
    proc_at_[at++] = q;
  }
  std::fill(tree_.data() + row(m_ + at), tree_.data() + row(2 * m_), Word{0});
  for (int n = m_ - 1; n >= 1; --n) {
    Word* up = &tree_[row(n)];
    const Word* left = &tree_[row(2 * n)];
    const Word* right = left + row(1);
    for (int w = 0; w < W_; ++w) up[w] = left[w] | right[w];
  }
}

// The leftmost leaf whose bit `seg` is set, other than leaf `skip` (seed
// listings 4 and 5).  The caller knows such a leaf exists.
int Generator::leftmost(int seg, int skip) {
  const Word* t = column(seg / kWordBits);
  const int b = seg % kWordBits;
  const auto m = static_cast<std::size_t>(m_);
  // Go left when the left child has the bit (branch-free: the path is
  // unpredictable).
  auto descend = [&](std::size_t n) {
    while (n < m) n = 2 * n + (((t[row(2 * n)] >> b) & 1) ^ 1);
    return n;
  };
  std::size_t n = descend(1);
  if (n - m != static_cast<std::size_t>(skip)) return static_cast<int>(n - m);
  while ((n & 1) || !((t[row(n + 1)] >> b) & 1)) n >>= 1;  // climb to a right sibling having it
  return static_cast<int>(descend(n + 1) - m);
}

// Phase 3, one receiver: smallest segment first, then the first peer (the
// sink before the tree's leaves, leaves in availability order).
void Generator::match(int i) {
  if (i == sink_) {  // the sink takes any segment a free member holds
    for (int w = 0; w < W_; ++w)
      if (const Word x = tree_[row(1) + w]) {
        const int seg = w * kWordBits + lowest_bit(x);
        transfer(proc_at_[leftmost(seg, -1)], i, seg);
        return;
      }
    return;
  }
  const Word* mine = bits(i);
  int seg = -1;
  const int at = leaf_of_[i];
  for (int w = 0; w < W_ && seg < 0; ++w) {
    if (!mine[w]) continue;
    const Word* t = column(w);
    Word others = 0;  // OR of every free member but i
    if (at < 0)
      others = t[row(1)];
    else
      for (auto n = static_cast<std::size_t>(m_ + at); n > 1; n >>= 1) others |= t[row(n ^ 1)];
    if (const Word x = others & mine[w]) seg = w * kWordBits + lowest_bit(x);
  }
  if (sink_free_) {
    const Word* s = bits(sink_);
    const int last = seg < 0 ? W_ - 1 : seg / kWordBits;
    for (int w = 0; w <= last; ++w)
      if (const Word x = s[w] & mine[w]) {
        const int sseg = w * kWordBits + lowest_bit(x);
        if (seg < 0 || sseg <= seg) {
          transfer(sink_, i, sseg);
          return;
        }
        break;
      }
  }
  if (seg >= 0) transfer(proc_at_[leftmost(seg, at)], i, seg);
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

// z has sent: zero its leaf and fix the path up, word by word, stopping as
// soon as a node does not change.
void Generator::clear_leaf(int p) {
  const auto leaf = static_cast<std::size_t>(m_ + leaf_of_[p]);
  for (int w = 0; w < W_; ++w) {
    Word* t = column(w);
    // keep = complement of the bits that vanish from the ancestors: those
    // of the leaf that no sibling subtree on the way up has.
    Word keep = ~t[row(leaf)];
    t[row(leaf)] = 0;
    for (std::size_t n = leaf; n > 1 && (keep |= t[row(n ^ 1)]) != ~Word{0}; n >>= 1)
      t[row(n >> 1)] &= keep;
  }
  leaf_of_[p] = -1;
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
