// Ring allreduce as a schedule.
//
// Works as follows.  The vector is cut into nseg = P segments.  Rank r sends
// only to next = r + 1 and receives only from prev = r - 1 (mod P).  There are
// 2(P - 1) steps; in each a rank sends one segment and receives another.
//   reduce-scatter  step k = 0 .. P-2: send segment r - k, receive segment
//                   r - 1 - k and combine it into the own copy.  Segment j
//                   starts at rank j and collects one contribution per hop,
//                   so after P - 1 steps rank r holds the full sum of segment
//                   r + 1.
//   allgather       step k = 0 .. P-2: send segment r + 1 - k (the finished
//                   one, then each one just received), receive segment r - k
//                   and overwrite the own copy.
// Tags: segment j has tag j in the reduce-scatter and nseg + j in the
// allgather; each travels over a given (prev, next) link once per phase.
// Within a step the send comes first; it depends only on the previous step's
// receive, so program order is a valid time order.
#include "algorithms/ring_allreduce.h"

namespace papshim {

Schedule build_ring_allreduce(const ScheduleParams& params) {
  const int P = params.nprocs;
  Schedule sched = slice_per_rank_schedule(P);
  if (P <= 1) return sched;
  const int nseg = sched.nseg;

  for (int r = 0; r < P; ++r) {
    if (!builds_program(params, r)) continue;
    const int next = ring_mod(r + 1, P), prev = ring_mod(r - 1, P);
    auto& steps = sched.programs[static_cast<std::size_t>(r)].steps;
    steps.reserve(4 * static_cast<std::size_t>(P - 1));

    // Reduce-scatter: pass on the partial sum, combine the incoming one.
    for (int k = 0; k < P - 1; ++k) {
      const int out = ring_mod(r - k, P), in = ring_mod(r - 1 - k, P);
      steps.push_back({StepOp::Send, next, out, out, k});
      steps.push_back({StepOp::RecvReduce, prev, in, in, k});
    }
    // Allgather: pass on the finished segments, overwrite with incoming ones.
    for (int k = 0; k < P - 1; ++k) {
      const int out = ring_mod(r + 1 - k, P), in = ring_mod(r - k, P);
      steps.push_back({StepOp::Send, next, out, nseg + out, P - 1 + k});
      steps.push_back({StepOp::RecvCopy, prev, in, nseg + in, P - 1 + k});
    }
  }
  return sched;
}

}  // namespace papshim
