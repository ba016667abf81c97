// Linear tree allreduce, plain or sorted by arrival (SLT), as a schedule.
//
// Works as follows (the figure 5 listing, run as printed).  The vector is cut
// into nseg = P segments.  `order[id]` is the rank at position `id` of the
// pipeline: the identity for the plain linear tree, ranks sorted by predicted
// arrival for SLT, so that a late process is at the end of the pipeline and
// is needed last.  `next` and `prev` are the ranks at id + 1 and id - 1
// (mod P).
//   reduce loop     for each segment s in order: id 0 sends its own s to id 1;
//                   every other id receives s from prev, combines it into its
//                   own and sends the sum to next.  The last id (P - 1) thus
//                   holds the full sum of s and sends it to id 0, wrapping
//                   around: that message is the first of the broadcast.
//   override loop   for each segment s: every id but the last receives the
//                   final s from prev and overwrites its own; ids below P - 2
//                   send it on to next (id P - 2 is the end of the chain).
// Each segment thus travels 0 -> 1 -> ... -> P-1 -> 0 -> ... -> P-2, and the
// segments follow each other down the pipeline.  Tags: reduce messages of s
// have tag s, broadcast messages nseg + s; a pair of ranks exchanges each at
// most once.  Program order is the listing's order, a valid time order.
#include "algorithms/slt.h"

#include <numeric>
#include <vector>

#include "algorithms/arrival_order.h"

namespace papshim {

namespace {

Schedule build_chain(const ScheduleParams& params, const std::vector<int>& order) {
  const int P = params.nprocs;
  Schedule sched;
  sched.coll = Collective::Allreduce;
  sched.nseg = P > 1 ? P : 1;
  sched.programs.resize(static_cast<std::size_t>(P > 0 ? P : 0));
  if (P <= 1) return sched;  // a single process already holds the result
  const int nseg = sched.nseg;
  sched.tag_bound = 2 * nseg - 1;

  for (int id = 0; id < P; ++id) {
    const int rank = order[static_cast<std::size_t>(id)];
    if (!builds_program(params, rank)) continue;
    const int next = order[static_cast<std::size_t>((id + 1) % P)];
    const int prev = order[static_cast<std::size_t>((id + P - 1) % P)];
    auto& steps = sched.programs[static_cast<std::size_t>(rank)].steps;

    // Reduce loop: receive and combine (not id 0), then pass on.  The last id
    // passes the finished sum to id 0, a broadcast message.
    for (int s = 0; s < nseg; ++s) {
      if (id != 0) steps.push_back({StepOp::RecvReduce, prev, s, s, s});
      const int tag = id == P - 1 ? nseg + s : s;
      steps.push_back({StepOp::Send, next, s, tag, s});
    }
    // Override loop: receive the final segment (not the last id, which
    // computed it) and pass it on while a later id still lacks it.
    for (int s = 0; s < nseg; ++s) {
      if (id != P - 1) steps.push_back({StepOp::RecvCopy, prev, s, nseg + s, nseg + s});
      if (id < P - 2) steps.push_back({StepOp::Send, next, s, nseg + s, nseg + s});
    }
  }
  return sched;
}

}  // namespace

Schedule build_slt(const ScheduleParams& params) {
  return build_chain(params, arrival_order(params));
}

Schedule build_linear_tree(const ScheduleParams& params) {
  std::vector<int> identity(static_cast<std::size_t>(params.nprocs > 0 ? params.nprocs : 0));
  std::iota(identity.begin(), identity.end(), 0);
  return build_chain(params, identity);
}

}  // namespace papshim
