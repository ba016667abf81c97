// Rabenseifner allreduce as a schedule.
//
// Works as follows.  `pof2` is the largest power of two <= P and rem = P -
// pof2.  The vector is cut into nseg = pof2 segments.
//   pre step    among the first 2*rem ranks, each even rank sends its whole
//               vector to the odd rank above it, which combines it, and then
//               sits out until the post step.  The remaining pof2 ranks get
//               consecutive new ranks `nr`: odd rank r < 2*rem is r / 2, rank
//               r >= 2*rem is r - rem.
//   halving     distance d = pof2/2, ..., 2, 1: partner nr ^ d.  A rank owns
//               the segment range [lo, hi) (first all of them); it keeps the
//               half on its side of bit d (the lower half when nr & d is 0),
//               sends the other half to the partner, and combines the
//               partner's copy of the kept half.  At the end rank nr owns the
//               full sum of segment nr.
//   doubling    distance d = 1, 2, ..., pof2/2: partner nr ^ d.  Send the owned
//               range, receive the partner's (the neighbouring range of the
//               same size) and overwrite; the owned range doubles.
//   post step   each odd rank r < 2*rem sends the full result to r - 1.
// Every segment is summed at one rank and copied to the others, so all ranks
// end with the same bits.  Tags: phase * nseg + segment, phases pre 0,
// halving 1, doubling 2, post 3; each (sender, receiver) pair meets once per
// phase.  Within a step the sends come first; they read only data written in
// earlier steps, so program order is a valid time order.
#include "algorithms/rabenseifner.h"

namespace papshim {

namespace {

enum Phase { kPre = 0, kHalving = 1, kDoubling = 2, kPost = 3 };

void add_range(std::vector<Step>& steps, StepOp op, int peer, int lo, int hi, int phase, int nseg, int round) {
  for (int s = lo; s < hi; ++s) steps.push_back({op, peer, s, phase * nseg + s, round});
}

}  // namespace

Schedule build_rabenseifner(const ScheduleParams& params) {
  const int P = params.nprocs;
  int pof2 = 1, levels = 0;
  while (2 * pof2 <= P) pof2 *= 2, ++levels;
  const int rem = P - pof2;

  Schedule sched;
  sched.coll = Collective::Allreduce;
  sched.nseg = pof2;
  sched.programs.resize(static_cast<std::size_t>(P > 0 ? P : 0));
  if (P <= 1) return sched;
  const int nseg = pof2;
  auto real_rank = [&](int nr) { return nr < rem ? 2 * nr + 1 : nr + rem; };
  sched.tag_bound = (rem > 0 ? kPost : kDoubling) * nseg + nseg - 1;

  for (int r = 0; r < P; ++r) {
    if (!builds_program(params, r)) continue;
    auto& steps = sched.programs[static_cast<std::size_t>(r)].steps;

    // Pre step: even ranks below 2*rem hand their vector over and wait.
    if (r < 2 * rem && r % 2 == 0) {
      add_range(steps, StepOp::Send, r + 1, 0, nseg, kPre, nseg, 0);
      add_range(steps, StepOp::RecvCopy, r + 1, 0, nseg, kPost, nseg, 2 * levels + 1);
      continue;
    }
    if (r < 2 * rem) add_range(steps, StepOp::RecvReduce, r - 1, 0, nseg, kPre, nseg, 0);
    const int nr = r < 2 * rem ? r / 2 : r - rem;

    // Recursive halving: keep the half on our side of bit d.
    int lo = 0, hi = nseg, round = 1;
    for (int d = pof2 / 2; d >= 1; d /= 2, ++round) {
      const int peer = real_rank(nr ^ d), mid = lo + (hi - lo) / 2;
      const bool upper = (nr & d) != 0;
      if (upper) {
        add_range(steps, StepOp::Send, peer, lo, mid, kHalving, nseg, round);
        add_range(steps, StepOp::RecvReduce, peer, mid, hi, kHalving, nseg, round);
        lo = mid;
      } else {
        add_range(steps, StepOp::Send, peer, mid, hi, kHalving, nseg, round);
        add_range(steps, StepOp::RecvReduce, peer, lo, mid, kHalving, nseg, round);
        hi = mid;
      }
    }
    // Recursive doubling: swap owned ranges with the partner.
    for (int d = 1; d < pof2; d *= 2, ++round) {
      const int peer = real_rank(nr ^ d), size = hi - lo;
      const bool upper = (nr & d) != 0;
      const int plo = upper ? lo - size : hi;
      add_range(steps, StepOp::Send, peer, lo, hi, kDoubling, nseg, round);
      add_range(steps, StepOp::RecvCopy, peer, plo, plo + size, kDoubling, nseg, round);
      if (upper) lo = plo; else hi = plo + size;
    }
    // Post step: return the result to the even partner of the pre step.
    if (r < 2 * rem) add_range(steps, StepOp::Send, r - 1, 0, nseg, kPost, nseg, round);
  }
  return sched;
}

}  // namespace papshim
