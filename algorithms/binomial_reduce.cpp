// Binomial-tree reduce as a schedule.
//
// Works as follows.  Ranks are renumbered relative to the root,
// rel = (rank - root) mod P, so the root is rel 0.  For mask = 1, 2, 4, ...
// a rank whose rel has the mask bit set sends its partial result to rel - mask
// (its parent) and is done; otherwise, if rel + mask < P, it receives the
// partial result of rel + mask (a child) and combines it into its own.  After
// ceil(log2 P) levels the root holds every contribution exactly once.
//
// Terms:
//   rel    rank relative to the root.
//   mask   the tree level's bit; the child at level mask covers the relative
//          ranks rel + mask .. rel + 2*mask - 1 (clipped to P).
//   seg    the vector is cut into nseg segments; each segment runs the same
//          tree independently.  Steps are listed segment by segment, so the
//          executor pipelines: segment s+1 flows up while s is still being
//          combined further up the tree.  Tag of segment s is s (one message
//          per segment per child-parent pair).
#include "algorithms/binomial_reduce.h"

#include <algorithm>

namespace papshim {

Schedule build_binomial_reduce(const ScheduleParams& params) {
  const int nprocs = params.nprocs;
  int nseg = std::max(1, params.nseg);
  if (params.count > 0 && static_cast<std::size_t>(nseg) > params.count)
    nseg = static_cast<int>(params.count);

  Schedule sched;
  sched.coll = Collective::Reduce;
  sched.nseg = nseg;
  sched.root = params.root;
  sched.programs.resize(static_cast<std::size_t>(nprocs));

  for (int r = 0; r < nprocs; ++r) {
    auto& steps = sched.programs[static_cast<std::size_t>(r)].steps;
    const int rel = (r - params.root + nprocs) % nprocs;
    auto abs_rank = [&](int rel_peer) { return (rel_peer + params.root) % nprocs; };
    for (int seg = 0; seg < nseg; ++seg) {
      // Combine the children, smallest subtree first, then pass it up.
      int level = 0;
      for (int mask = 1; mask < nprocs; mask *= 2, ++level) {
        if (rel & mask) {
          steps.push_back({StepOp::Send, abs_rank(rel - mask), seg, seg, level});
          break;
        }
        if (rel + mask < nprocs)
          steps.push_back({StepOp::RecvReduce, abs_rank(rel + mask), seg, seg, level});
      }
    }
  }
  return sched;
}

}  // namespace papshim
