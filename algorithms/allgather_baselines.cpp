// Ring, Bruck and recursive doubling allgather as schedules.
//
// Works as follows.  Block b is rank b's contribution and always lives in
// slot b of the receive buffer (segment b), on every rank.  Each algorithm is
// a sequence of steps; in each step a rank sends some blocks it already holds
// to one peer and receives as many new blocks from one peer.  A multi-block
// message of the textbook algorithm becomes one Send/RecvCopy per block.
//
// Terms:
//   dist   the step's distance in rank space (2^s for step s).
//   cnt    blocks moved per rank in the step.
//   base   tag of the step's first block: the blocks moved in all earlier
//          steps, the same on every rank, so tags run 0 .. P-2.
// In every step each rank writes its sends before its receives, so program
// order is the step's time order.
#include "algorithms/allgather_baselines.h"

namespace papshim {
namespace {

int mod(long v, int p) { return static_cast<int>(((v % p) + p) % p); }

Schedule empty_allgather(int nprocs) {
  Schedule sched;
  sched.coll = Collective::Allgather;
  sched.nseg = nprocs;
  sched.programs.resize(static_cast<std::size_t>(nprocs));
  if (nprocs > 1) sched.tag_bound = nprocs - 2;  // tags run 0 .. P-2 (above)
  return sched;
}

std::vector<Step>& steps_of(Schedule& sched, int rank) {
  return sched.programs[static_cast<std::size_t>(rank)].steps;
}

}  // namespace

Schedule build_ring_allgather(const ScheduleParams& params) {
  const int nprocs = params.nprocs;
  Schedule sched = empty_allgather(nprocs);
  // Step s: forward the block received in step s-1 (own block at s = 0).
  // Rank by rank (each program in step order), skipping unwanted programs.
  for (int r = 0; r < nprocs; ++r) {
    if (!builds_program(params, r)) continue;
    auto& steps = steps_of(sched, r);
    for (int s = 0; s + 1 < nprocs; ++s) {
      steps.push_back({StepOp::Send, mod(r + 1, nprocs), mod(r - s, nprocs), s, s});
      steps.push_back({StepOp::RecvCopy, mod(r - 1, nprocs),
                       mod(r - s - 1, nprocs), s, s});
    }
  }
  return sched;
}

Schedule build_bruck_allgather(const ScheduleParams& params) {
  const int nprocs = params.nprocs;
  Schedule sched = empty_allgather(nprocs);
  // Before step s rank r holds blocks (r + j) mod P for j < dist.  It sends
  // the first cnt of them to r - dist and receives blocks (r + dist + j) mod P
  // from r + dist.  The last step of a non-power-of-two P moves fewer blocks.
  for (int r = 0; r < nprocs; ++r) {
    if (!builds_program(params, r)) continue;
    auto& steps = steps_of(sched, r);
    int base = 0, round = 0;
    for (int dist = 1; dist < nprocs; dist *= 2, ++round) {
      const int cnt = dist < nprocs - dist ? dist : nprocs - dist;
      for (int j = 0; j < cnt; ++j)
        steps.push_back({StepOp::Send, mod(r - dist, nprocs), mod(r + j, nprocs),
                         base + j, round});
      for (int j = 0; j < cnt; ++j)
        steps.push_back({StepOp::RecvCopy, mod(r + dist, nprocs),
                         mod(r + dist + j, nprocs), base + j, round});
      base += cnt;
    }
  }
  return sched;
}

const char* recursive_doubling_size_check(int nprocs) {
  if (nprocs < 1 || (nprocs & (nprocs - 1)) != 0) return "needs a power-of-two communicator size";
  return nullptr;
}

std::optional<Schedule> build_recursive_doubling_allgather(
    const ScheduleParams& params) {
  const int nprocs = params.nprocs;
  if (recursive_doubling_size_check(nprocs) != nullptr) return std::nullopt;
  Schedule sched = empty_allgather(nprocs);
  // Before step s rank r holds the dist blocks of its aligned group
  // (r with the low s bits cleared, plus j < dist); it swaps the whole group
  // with partner r XOR dist, which holds the neighbouring group.
  for (int r = 0; r < nprocs; ++r) {
    if (!builds_program(params, r)) continue;
    auto& steps = steps_of(sched, r);
    int round = 0;
    for (int dist = 1; dist < nprocs; dist *= 2, ++round) {
      const int partner = r ^ dist;
      const int mine = r & ~(dist - 1), theirs = partner & ~(dist - 1);
      for (int j = 0; j < dist; ++j)
        steps.push_back({StepOp::Send, partner, mine + j, dist - 1 + j, round});
      for (int j = 0; j < dist; ++j)
        steps.push_back({StepOp::RecvCopy, partner, theirs + j, dist - 1 + j, round});
    }
  }
  return sched;
}

}  // namespace papshim
