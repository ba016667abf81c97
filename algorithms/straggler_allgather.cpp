// Straggler allgather as a schedule.
//
// Works as follows.  Ranks are sorted by predicted arrival (ties by rank);
// the last one, L, is late, the other m = P-1 are early, and id 0 (the
// earliest) is the server.  Every block is cut into c chunks (segments), so
// nseg = P c.
//   phase 1  (while L is late) a direct exchange among the early ranks:
//            early id i sends its block to ids i+1, i+2, ... (mod m) and
//            takes in the others' from i-1, i-2, ...  Afterwards every
//            early rank holds every early block.
//   phase 2  (as L arrives) L sends chunk q of its block to owner id q+1,
//            which passes it on to the other early ranks; the server sends
//            L every early block, its own first, then by arrival.
// After L arrives an early rank takes in one block (L's, in chunks from the
// owners) where a ring or Sparbit still has all of L's work and its block
// to move; an owner passes its chunk to m-1 ranks, (m-1)/c of a block, so
// up to about P = 10 the early ranks leave one to two block transfers after
// L (at larger P the passes grow with P/c: selector.cpp weighs the schedule
// up to kStragglerAllgatherAutoMaxP ranks).  L and the server leave after
// the P-1 blocks L must take in, which bounds any allgather.
//
// Executor order (schedule.h): every receive is posted at once, so the
// server's phase-1 receives and its sends to L overlap; a send to L waits
// for the server's copy of that chunk and, sends to one peer going one at a
// time, for the sends to L listed before it; an owner's sends of its chunk
// go to different peers and start together.  Chunks are byte ranges
// (executor.cpp, "Allgather chunks").  Program order is a valid time order: on
// the server a block's receive comes before its send to L, on an owner the
// chunk's receive before its sends.
//
// Message count: an early rank sends its block to m-1 peers (c messages
// each), like the direct allreduce's O(P) exchange and Sparbit's one block
// per message; the server adds (P-1) c messages to L.
//
// Degenerate sizes: P = 1 has no steps; P = 2 has no phase 1: the server
// owns L's only chunk.  A count below c gets c = count chunks (count 0: one
// empty chunk, both sides skip it).
#include "algorithms/straggler_allgather.h"

#include <algorithm>
#include <cmath>

#include "algorithms/arrival_order.h"

namespace papshim {

namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// The most chunks P ranks use: one per owner, m - 1 = P - 2 of them, and
// P c at most kStragglerAllgatherMaxSegments.
int max_chunks(int nprocs) {
  return std::max(1, std::min({nprocs - 2, kStragglerAllgatherMaxChunks, kStragglerAllgatherMaxSegments / nprocs}));
}

}  // namespace

int straggler_allgather_segments(int nprocs, double block_bytes) {
  if (nprocs <= 1) return 1;
  const double c = std::ceil(block_bytes / kStragglerAllgatherChunkBytes);
  const int chunks = std::isfinite(c) ? static_cast<int>(std::clamp(c, 1.0, static_cast<double>(max_chunks(nprocs)))) : 1;
  return chunks * nprocs;
}

int straggler_allgather_chunks(const ScheduleParams& params) {
  const int P = params.nprocs;
  if (P <= 1) return 1;
  int c = std::clamp(params.nseg / P, 1, max_chunks(P));
  if (params.count < sz(c)) c = static_cast<int>(std::max<std::size_t>(params.count, 1));
  return c;
}

namespace {

struct Plan {
  std::vector<int> order;  // ranks by predicted arrival
  int P = 1, m = 0, c = 1;
  int rank(int id) const { return order[sz(id)]; }
  int seg(int id, int q) const { return rank(id) * c + q; }
  int owner(int q) const { return m >= 2 ? q + 1 : 0; }
  int late() const { return P - 1; }
};

void early_program(const Plan& p, int i, std::vector<Step>& out) {
  const int m = p.m, c = p.c, L = p.late();
  // Phase 1: the own block to every other early rank, theirs in.
  for (int d = 1; d < m; ++d)
    for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank((i + d) % m), p.seg(i, q), p.seg(i, q), 0});
  for (int d = 1; d < m; ++d) {
    const int src = ring_mod(i - d, m);
    for (int q = 0; q < c; ++q) out.push_back({StepOp::RecvCopy, p.rank(src), p.seg(src, q), p.seg(src, q), 0});
  }
  // Phase 2: the late block's chunks, each from its owner or, on the
  // owner, from L and then on to the other early ranks.
  for (int q = 0; q < c; ++q) {
    const int s = p.seg(L, q);
    if (p.owner(q) != i) {
      out.push_back({StepOp::RecvCopy, p.rank(p.owner(q)), s, s, 2});
      continue;
    }
    out.push_back({StepOp::RecvCopy, p.rank(L), s, s, 1});
    for (int d = 1; d < m; ++d) out.push_back({StepOp::Send, p.rank((i + d) % m), s, s, 2});
  }
  // The server: every early block to L, its own first.
  if (i == 0)
    for (int j = 0; j < m; ++j)
      for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank(L), p.seg(j, q), p.seg(j, q), 1});
}

void late_program(const Plan& p, std::vector<Step>& out) {
  const int L = p.late();
  for (int q = 0; q < p.c; ++q) out.push_back({StepOp::Send, p.rank(p.owner(q)), p.seg(L, q), p.seg(L, q), 1});
  for (int j = 0; j < p.m; ++j)
    for (int q = 0; q < p.c; ++q) out.push_back({StepOp::RecvCopy, p.rank(0), p.seg(j, q), p.seg(j, q), 1});
}

}  // namespace

Schedule build_straggler_allgather(const ScheduleParams& params) {
  const int P = params.nprocs;
  Schedule sched;
  sched.coll = Collective::Allgather;
  sched.programs.resize(sz(std::max(P, 0)));
  sched.nseg = std::max(P, 1);
  if (P <= 1) return sched;
  Plan plan;
  plan.order = arrival_order(params);
  plan.P = P;
  plan.m = P - 1;
  plan.c = straggler_allgather_chunks(params);
  sched.nseg = P * plan.c;
  sched.tag_bound = sched.nseg - 1;
  for (int id = 0; id < P; ++id) {
    const int rank = plan.rank(id);
    if (!builds_program(params, rank)) continue;
    auto& steps = sched.programs[sz(rank)].steps;
    if (id == plan.late())
      late_program(plan, steps);
    else
      early_program(plan, id, steps);
  }
  return sched;
}

}  // namespace papshim
