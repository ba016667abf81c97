// Binomial-tree reduce as a schedule.
//
// Works as follows.  Every rank has a position in the tree; position 0 is the
// root.  For the plain tree the position is the rank relative to the root,
// (rank - root) mod P; the sorted tree places ranks by predicted arrival
// (below).  For mask = 1, 2, 4, ... a rank whose position has the mask bit
// set sends its partial result to position - mask (its parent) and is done;
// otherwise, if position + mask < P, it receives the partial result of
// position + mask (a child) and combines it into its own.  After
// ceil(log2 P) levels the root holds every contribution exactly once.
//
// Terms:
//   pos    a rank's position in the tree.
//   mask   the tree level's bit; the child at level mask covers positions
//          pos + mask .. pos + 2*mask - 1 (clipped to P).
//   seg    the vector is cut into nseg segments; each segment runs the same
//          tree independently.  Steps are listed segment by segment, so the
//          executor pipelines: segment s+1 flows up while s is still being
//          combined further up the tree.  Tag of segment s is s (one message
//          per segment per child-parent pair).
#include "algorithms/binomial_reduce.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace papshim {

namespace {

// rank_at[pos] = the rank at tree position pos.
Schedule build_tree(const ScheduleParams& params, const std::vector<int>& rank_at) {
  const int nprocs = params.nprocs;
  int nseg = std::max(1, params.nseg);
  if (params.count > 0 && static_cast<std::size_t>(nseg) > params.count)
    nseg = static_cast<int>(params.count);

  Schedule sched;
  sched.coll = Collective::Reduce;
  sched.nseg = nseg;
  sched.root = params.root;
  sched.programs.resize(static_cast<std::size_t>(nprocs));
  if (nprocs > 1) sched.tag_bound = nseg - 1;

  for (int pos = 0; pos < nprocs; ++pos) {
    if (!builds_program(params, rank_at[static_cast<std::size_t>(pos)])) continue;
    auto& steps = sched.programs[static_cast<std::size_t>(rank_at[static_cast<std::size_t>(pos)])].steps;
    auto rank_of = [&](int p) { return rank_at[static_cast<std::size_t>(p)]; };
    for (int seg = 0; seg < nseg; ++seg) {
      // Combine the children, smallest subtree first, then pass it up.
      int level = 0;
      for (int mask = 1; mask < nprocs; mask *= 2, ++level) {
        if (pos & mask) {
          steps.push_back({StepOp::Send, rank_of(pos - mask), seg, seg, level});
          break;
        }
        if (pos + mask < nprocs) steps.push_back({StepOp::RecvReduce, rank_of(pos + mask), seg, seg, level});
      }
    }
  }
  return sched;
}

// Tree positions in the order the sorted tree fills them: the children of
// v, largest subtree first, each followed by its own subtree.
void fill_order(int v, int nprocs, std::vector<int>& out) {
  std::vector<int> masks;  // v's children are v + mask, as in build_tree
  for (int mask = 1; mask < nprocs && !(v & mask); mask *= 2)
    if (v + mask < nprocs) masks.push_back(mask);
  for (auto it = masks.rbegin(); it != masks.rend(); ++it) {
    out.push_back(v + *it);
    fill_order(v + *it, nprocs, out);
  }
}

}  // namespace

Schedule build_binomial_reduce(const ScheduleParams& params) {
  std::vector<int> rank_at(static_cast<std::size_t>(std::max(params.nprocs, 0)));
  for (int pos = 0; pos < params.nprocs; ++pos) rank_at[static_cast<std::size_t>(pos)] = (pos + params.root) % params.nprocs;
  return build_tree(params, rank_at);
}

std::vector<int> sorted_binomial_positions(const ScheduleParams& params) {
  const int nprocs = params.nprocs;
  std::vector<int> rank_at(static_cast<std::size_t>(std::max(nprocs, 0)));
  if (nprocs <= 0) return rank_at;
  // Arrivals closer than half a whole-vector transfer are treated as equal:
  // noise in the predictions must not reshuffle the tree from call to call
  // (on the emulated cluster, 8 ranks, 4 MiB, a tree reshuffled every call
  // by noise ran 22% slower than a fixed one).
  const bool have = params.arrival.size() == static_cast<std::size_t>(nprocs);
  double lo = INFINITY;
  for (int r = 0; have && r < nprocs; ++r)
    if (!std::isnan(params.arrival[static_cast<std::size_t>(r)]))
      lo = std::min(lo, params.arrival[static_cast<std::size_t>(r)]);
  const double width = 0.5 * params.tau * std::max(params.nseg, 1);
  auto bucket = [&](int r) -> double {
    const double t = have ? params.arrival[static_cast<std::size_t>(r)] : NAN;
    if (std::isnan(t) || !std::isfinite(lo)) return 0.0;
    return width > 0 ? std::floor((t - lo) / width) : t - lo;
  };
  // Equal buckets keep the plain tree's places: rank r's tie-break is the
  // fill index of its position in the plain tree, (r - root) mod P.
  std::vector<int> order;  // positions 1..P-1 in fill order
  fill_order(0, nprocs, order);
  std::vector<int> fill_index(static_cast<std::size_t>(nprocs), 0);
  for (std::size_t i = 0; i < order.size(); ++i) fill_index[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  std::vector<int> others;
  for (int r = 0; r < nprocs; ++r) {
    if (r == params.root) continue;
    others.push_back(r);
  }
  auto key = [&](int r) {
    return std::make_pair(bucket(r), fill_index[static_cast<std::size_t>((r - params.root + nprocs) % nprocs)]);
  };
  std::sort(others.begin(), others.end(), [&](int a, int b) { return key(a) < key(b); });
  rank_at[0] = params.root;
  for (std::size_t i = 0; i < order.size(); ++i) rank_at[static_cast<std::size_t>(order[i])] = others[i];
  return rank_at;
}

Schedule build_sorted_binomial_reduce(const ScheduleParams& params) {
  return build_tree(params, sorted_binomial_positions(params));
}

int tree_segments(const SegmentInput& in) {
  if (in.tree_segsize <= 0) return in.nprocs;
  const double n = std::ceil(in.whole_bytes / static_cast<double>(in.tree_segsize));
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxTreeSegments)));
}

}  // namespace papshim
