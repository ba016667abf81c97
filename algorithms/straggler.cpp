// Straggler allreduce as a schedule.
//
// Works as follows.  Ranks are sorted by predicted arrival (ties by rank);
// the last one, L, is the straggler, the other m = P-1 are the owners: owner
// j (the j-th earliest) owns slice j of the vector.  Each slice is cut into
// c chunks, so nseg = m c and segment j c + q is chunk q of slice j.
//   phase 1  (while L is late) a direct reduce-scatter among the owners:
//            owner i sends each chunk of slice t to owner t, for every
//            t != i (first to i-1, then i-2, ...), and combines the chunks
//            of its own slice from i+1, i+2, ..., i-1 (mod m), the order of
//            the direct allreduce.  Afterwards owner j holds slice j reduced
//            over the early ranks.
//   phase 2  (once L arrives) L sends chunk q of every slice to its owner,
//            round robin: chunk 0 of every slice, then chunk 1, ...  Owner
//            j combines L's chunk into its slice (the last contribution)
//            and sends the finished chunk to every other rank at once,
//            L included, while L's next chunk comes in.
// Every rank thus sends and receives about one vector after L arrives: L
// sends its vector and receives the result; an owner receives 1/m of the
// vector from L and (m-1)/m in finished chunks and sends its finished slice
// to P-1 = m ranks.  The pipeline needs about one chunk per owner to fill,
// 1/c of a vector transfer.  With one rank late by D the mean elapsed time
// approaches its lower bound, (P-1)/P D plus one vector transfer.
//
// Executor order (schedule.h): receives that combine are posted at once,
// so an owner takes in L's chunk q+1 while sending finished chunk q; the
// sends of a finished chunk go to different peers and run together; a
// finished chunk waits only for its own segment's combines.  Sends to one
// peer keep program order: an owner's phase-1 chunks to a peer go before
// its finished chunks.  A rank's program lists, per segment, the send of
// its own data before the copy that overwrites it, so program order is a
// valid time order.
//
// Degenerate sizes: P = 1 has no steps; P = 2 has no phase 1 (the one owner
// combines L's chunks and sends them back).  Chunks of count < nseg may be
// empty: both sides of such a message skip it.
#include "algorithms/straggler.h"

#include <algorithm>
#include <cmath>

#include "algorithms/arrival_order.h"

namespace papshim {

int straggler_segments(int nprocs, double bytes) {
  if (nprocs <= 1) return 1;
  const int m = nprocs - 1;
  const double per_slice = bytes / m;
  const double c = std::ceil(per_slice / kStragglerChunkBytes);
  const int chunks = std::isfinite(c) ? static_cast<int>(std::clamp(c, 1.0, double{kStragglerMaxChunks})) : 1;
  return std::max(1, std::min(chunks, kStragglerMaxSegments / m)) * m;
}

int straggler_chunks(const ScheduleParams& params) {
  const int P = params.nprocs;
  if (P <= 1) return 1;
  const int m = P - 1;
  int c = std::clamp(params.nseg / m, 1, kStragglerMaxChunks);
  const std::size_t per_owner = params.count / static_cast<std::size_t>(m);
  if (per_owner < static_cast<std::size_t>(c)) c = static_cast<int>(std::max<std::size_t>(per_owner, 1));
  return std::max(1, std::min(c, kStragglerMaxSegments / m));
}

StragglerPlan straggler_plan(const ScheduleParams& params) {
  StragglerPlan plan;
  plan.order = arrival_order(params);
  if (params.nprocs <= 1) return plan;
  plan.owners = params.nprocs - 1;
  plan.chunks = straggler_chunks(params);
  plan.nseg = plan.owners * plan.chunks;
  return plan;
}

namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// The program of owner id i (rank plan.order[i]).
void owner_program(const StragglerPlan& plan, int i, std::vector<Step>& out) {
  const int m = plan.owners, c = plan.chunks, nseg = plan.nseg, P = m + 1;
  const int late = plan.order[sz(m)];
  auto rank_of = [&](int id) { return plan.order[sz(id)]; };
  out.reserve(sz(2 * (m - 1) * c + c * P + (m - 1) * c));
  // Phase 1: the own copy of every other slice to its owner ...
  for (int d = 1; d < m; ++d) {
    const int t = ring_mod(i - d, m);
    for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, rank_of(t), t * c + q, t * c + q, 0});
  }
  // ... and the other owners' copies of the own slice, in a fixed order.
  for (int d = 1; d < m; ++d) {
    const int src = ring_mod(i + d, m);
    for (int q = 0; q < c; ++q) out.push_back({StepOp::RecvReduce, rank_of(src), i * c + q, i * c + q, 0});
  }
  // Phase 2, chunk by chunk: L's contribution, the finished chunk to
  // everyone (rotating the first peer between owners), the other owners'
  // finished chunks.
  for (int q = 0; q < c; ++q) {
    const int s = i * c + q;
    out.push_back({StepOp::RecvReduce, late, s, s, 1});
    for (int d = 1; d < P; ++d) out.push_back({StepOp::Send, rank_of(ring_mod(i + d, P)), s, nseg + s, 2});
    for (int d = 1; d < m; ++d) {
      const int t = ring_mod(i - d, m);
      out.push_back({StepOp::RecvCopy, rank_of(t), t * c + q, nseg + t * c + q, 2});
    }
  }
}

// The program of the late rank: every chunk to its owner, round robin, and
// the finished chunks back.
void late_program(const StragglerPlan& plan, std::vector<Step>& out) {
  const int m = plan.owners, c = plan.chunks, nseg = plan.nseg;
  out.reserve(sz(2 * nseg));
  for (int q = 0; q < c; ++q) {
    for (int j = 0; j < m; ++j) out.push_back({StepOp::Send, plan.order[sz(j)], j * c + q, j * c + q, 1});
    for (int j = 0; j < m; ++j)
      out.push_back({StepOp::RecvCopy, plan.order[sz(j)], j * c + q, nseg + j * c + q, 2});
  }
}

}  // namespace

Schedule build_straggler(const ScheduleParams& params) {
  const int P = params.nprocs;
  Schedule sched;
  sched.coll = Collective::Allreduce;
  sched.programs.resize(sz(std::max(P, 0)));
  if (P <= 1) return sched;
  const StragglerPlan plan = straggler_plan(params);
  sched.nseg = plan.nseg;
  sched.tag_bound = 2 * plan.nseg - 1;
  for (int id = 0; id < P; ++id) {
    const int rank = plan.order[sz(id)];
    if (!builds_program(params, rank)) continue;
    auto& steps = sched.programs[sz(rank)].steps;
    if (id == plan.owners)
      late_program(plan, steps);
    else
      owner_program(plan, id, steps);
  }
  return sched;
}

}  // namespace papshim
