// Sparbit allgather as a schedule.
//
// Works as follows.  Every rank is the root of its own binomial tree over the
// ring of ranks, shifted so that it sits at relative rank 0; all P trees run
// at once.  The distance d halves each step: d = 2^(L-1), ..., 2, 1 with
// L = ceil(log2 P).  In the step with distance d, rank r sends to (r+d) mod P
// and receives from (r-d) mod P.
//
// Terms:
//   held   number of blocks rank r holds before the step; they are
//          (r - j*2d) mod P for j < held (held = ceil(P / 2d)).
//   excl   exclusion bit: 1 when the newest held block came from a tree in
//          which r is a leaf, so it must not be forwarded.  Closed form
//          excl = 2*ceil(P/2d) - ceil(P/d); always 0 when P is a power of two.
//   k      transfers in the step, held - excl.  Transfer t (0 <= t < k) sends
//          block (r - 2td) mod P and receives block (r - (2t+1)d) mod P.
//   base   tag of transfer 0 of the step: the transfers of all earlier
//          steps, the same on every rank, so tags are 0 .. P-2.
//
// After the step rank r holds (r - j*d) mod P for j < ceil(P/d) = 2*held -
// excl.  Every send reads the receive buffer at the block's own slot, so no
// final rotation is needed.  Blocks move as separate messages (one step each).
#include "algorithms/sparbit.h"

#include <algorithm>

namespace papshim {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }
// v mod p for -p <= v < 2p (one wrap at most).
int wrap(long v, int p) { return static_cast<int>(v < 0 ? v + p : v >= p ? v - p : v); }
int mod(long v, int p) { return static_cast<int>(((v % p) + p) % p); }

}  // namespace

RankProgram sparbit_program(int nprocs, int rank) {
  RankProgram prog;
  if (nprocs <= 1) return prog;  // the own block is already in place
  prog.steps.reserve(2 * static_cast<std::size_t>(nprocs - 1));

  // Largest power of two below P: the first distance.
  int dist = 1;
  while (2 * dist < nprocs) dist *= 2;

  int held = 1, base = 0, round = 0;
  for (; dist >= 1; dist /= 2, ++round) {
    const int excl = 2 * ceil_div(nprocs, 2 * dist) - ceil_div(nprocs, dist);
    const int k = held - excl;
    const int to = mod(rank + dist, nprocs), from = mod(rank - dist, nprocs);

    // The k sends (blocks held before the step), then the k receives, so
    // program order is the step's time order.  Blocks step back by 2d.
    const int stride = mod(2L * dist, nprocs);
    for (int t = 0, blk = rank; t < k; ++t, blk = wrap(blk - stride, nprocs))
      prog.steps.push_back({StepOp::Send, to, blk, base + t, round});
    for (int t = 0, blk = from; t < k; ++t, blk = wrap(blk - stride, nprocs))
      prog.steps.push_back({StepOp::RecvCopy, from, blk, base + t, round});
    base += k;
    held = 2 * held - excl;
  }
  return prog;
}

Schedule build_sparbit(const ScheduleParams& params) {
  Schedule sched;
  sched.coll = Collective::Allgather;
  sched.nseg = params.nprocs;
  sched.programs.reserve(static_cast<std::size_t>(std::max(params.nprocs, 0)));
  if (params.nprocs > 1) sched.tag_bound = params.nprocs - 2;
  for (int r = 0; r < params.nprocs; ++r)
    sched.programs.push_back(builds_program(params, r) ? sparbit_program(params.nprocs, r) : RankProgram{});
  return sched;
}

}  // namespace papshim
