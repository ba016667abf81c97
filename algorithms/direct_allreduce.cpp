// Direct allreduce as a schedule.
//
// Works as follows.  The vector is cut into nseg = P slices; rank j owns
// slice j.
//   reduce-scatter  every rank sends its own copy of slice j straight to rank
//                   j, for every j but itself; rank j combines the incoming
//                   copies into its own in the fixed order j+1, j+2, ...,
//                   j-1 (mod P).  Rank r is the k-th contributor of rank
//                   r-k, so it sends to r-1 first, then r-2, ..., and each
//                   owner tends to get its contributions in the order it
//                   combines them.
//   allgather       rank j sends the finished slice j to every other rank,
//                   which overwrites its own copy.
// Every element of slice j is thus combined as
//   x[j-1] op (... op (x[j+2] op (x[j+1] op x[j])))
// whatever the arrivals: the chain the ring allreduce builds for slice j
// (there as (((x[j] op x[j+1]) op x[j+2]) ...), the same bits for the
// commutative built-in operations on IEEE types).
//
// Why it suits late processes: nothing waits for anything but the
// contributions it needs.  While one rank is late every owner combines the
// contributions ahead of the late one in its order (the later ones are
// received into temporaries, and their senders move on); once the late rank
// arrives, two message hops finish the call: its slices to the owners, the
// owners' slices to everyone.  The ring needs 2(P-1) dependent hops after
// the last arrival.  The price: each rank has up to 2(P-1) messages in
// flight at once (the ring: one each way).
//
// Tags: reduce-scatter messages of slice j have tag j, allgather messages
// nseg + j; a (sender, receiver) pair exchanges each at most once.  Program
// order (reduce-scatter sends, the owner's combines, allgather sends, the
// copies) is a valid time order: a send needs only earlier writes of its
// slice, and every receive is matched by a send its peer lists earlier or
// in the same phase.
#include "algorithms/direct_allreduce.h"

namespace papshim {

Schedule build_direct_allreduce(const ScheduleParams& params) {
  const int P = params.nprocs;
  Schedule sched = slice_per_rank_schedule(P);
  if (P <= 1) return sched;
  const int nseg = sched.nseg;

  for (int r = 0; r < P; ++r) {
    if (!builds_program(params, r)) continue;
    auto& steps = sched.programs[static_cast<std::size_t>(r)].steps;
    steps.reserve(4 * static_cast<std::size_t>(P - 1));
    // Reduce-scatter: own copy of slice r-k to its owner, the k-th
    // contributor there.
    for (int k = 1; k < P; ++k) {
      const int owner = ring_mod(r - k, P);
      steps.push_back({StepOp::Send, owner, owner, owner, 0});
    }
    // Combine the own slice in the fixed order r+1, r+2, ..., r-1.
    for (int k = 1; k < P; ++k) steps.push_back({StepOp::RecvReduce, ring_mod(r + k, P), r, r, 0});
    // Allgather: the finished slice to everyone, everyone's to us.
    for (int k = 1; k < P; ++k) steps.push_back({StepOp::Send, ring_mod(r + k, P), r, nseg + r, 1});
    for (int k = 1; k < P; ++k) {
      const int owner = ring_mod(r - k, P);
      steps.push_back({StepOp::RecvCopy, owner, owner, nseg + owner, 1});
    }
  }
  return sched;
}

}  // namespace papshim
