// Straggler allreduce as a schedule.
//
// Works as follows.  Ranks are sorted by predicted arrival (ties by rank);
// the last k (straggler_plan picks k, usually 1) are late, the other
// m = P-k are the owners: owner j (the j-th earliest) owns slice j of the
// vector.  Each slice is cut into c chunks, so nseg = m c and segment
// j c + q is chunk q of slice j.
//   phase 1  (while the late ranks are late) a direct reduce-scatter among
//            the owners: owner i sends each chunk of slice t to owner t,
//            for every t != i (first to i-1, then i-2, ...), and combines
//            the chunks of its own slice from i+1, i+2, ..., i-1 (mod m),
//            the order of the direct allreduce.  Afterwards owner j holds
//            slice j reduced over the early ranks.
//   phase 2  (as the late ranks arrive) each late rank sends chunk q of
//            every slice to its owner, round robin: chunk 0 of every slice,
//            then chunk 1, ... (late ranks start at different owners).
//            Owner j combines the late ranks' chunks (in arrival order, the
//            last contributions) and sends the finished chunk to every other
//            rank at once, late ranks included, while the next chunks come
//            in.
// With one late rank L every rank sends and receives about one vector after
// L arrives: L sends its vector and receives the result; an owner receives
// 1/m of the vector from L and (m-1)/m in finished chunks and sends its
// finished slice to m ranks.  The pipeline needs one round of chunks to
// fill, 1/c of a vector transfer.  With one rank late by D the mean elapsed
// time approaches its lower bound, (P-1)/P D plus one vector transfer.  With
// k late ranks an owner's ports carry (P-1)/m of a vector.
//
// Executor order (schedule.h): receives that combine are posted at once,
// so an owner takes in the next chunks while sending finished chunk q; the
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

int straggler_segments_for(const SegmentInput& in) { return straggler_segments(in.nprocs, in.whole_bytes); }

int straggler_chunks(const ScheduleParams& params, int owners) {
  const int P = params.nprocs;
  if (P <= 1 || owners < 1) return 1;
  int c = std::clamp(params.nseg / (P - 1), 1, kStragglerMaxChunks);
  const std::size_t per_owner = params.count / static_cast<std::size_t>(owners);
  if (per_owner < static_cast<std::size_t>(c)) c = static_cast<int>(std::max<std::size_t>(per_owner, 1));
  return std::max(1, std::min(c, kStragglerMaxSegments / owners));
}

namespace {

// The late group's size: the k in 1..kmax whose schedule is predicted to end
// first, in units of W = tau * nseg (about one transfer of the vector):
// phase 1 ends (m-1)/m W after the latest owner's arrival (m = P-k), and
// then every owner's ports carry (P-1)/m W, (1 + 1/c) with the fill.
// Without a usable tau or arrivals: 1.
int late_count(const ScheduleParams& params, const std::vector<double>& a) {
  const int P = params.nprocs;
  const int kmax = std::min(kStragglerMaxLate, std::max(1, (P - 1) / 2));
  const double W = params.tau * std::max(params.nseg, 1);
  if (!(W > 0.0) || !std::isfinite(W) || static_cast<int>(a.size()) != P || !std::isfinite(a.back())) return 1;
  int best = 1;
  double best_end = INFINITY;
  for (int k = 1; k <= kmax; ++k) {
    const int m = P - k;
    const double c = straggler_chunks(params, m);
    const double F1 = a[static_cast<std::size_t>(m - 1)] + (m - 1.0) / m * W;
    const double end = std::max(a.back(), F1) + (P - 1.0) / m * W * (1.0 + 1.0 / c);
    if (end < best_end) {
      best_end = end;
      best = k;
    }
  }
  return best;
}

}  // namespace

StragglerPlan straggler_plan(const ScheduleParams& params) {
  StragglerPlan plan;
  plan.order = arrival_order(params);
  if (params.nprocs <= 1) return plan;
  plan.late = late_count(params, sorted_arrivals(params, plan.order));
  plan.owners = params.nprocs - plan.late;
  plan.chunks = straggler_chunks(params, plan.owners);
  plan.nseg = plan.owners * plan.chunks;
  return plan;
}

namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// The program of owner id i (rank plan.order[i]).
void owner_program(const StragglerPlan& plan, int i, std::vector<Step>& out) {
  const int m = plan.owners, c = plan.chunks, nseg = plan.nseg, P = m + plan.late;
  auto rank_of = [&](int id) { return plan.order[sz(id)]; };
  out.reserve(sz(2 * (m - 1) * c + c * (plan.late + P - 1) + (m - 1) * c));
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
  // Phase 2, chunk by chunk: the late ranks' contributions (in arrival
  // order), the finished chunk to everyone (rotating the first peer between
  // owners), the other owners' finished chunks.
  for (int q = 0; q < c; ++q) {
    const int s = i * c + q;
    for (int l = m; l < P; ++l) out.push_back({StepOp::RecvReduce, rank_of(l), s, s, 1});
    for (int d = 1; d < P; ++d) out.push_back({StepOp::Send, rank_of(ring_mod(i + d, P)), s, nseg + s, 2});
    for (int d = 1; d < m; ++d) {
      const int t = ring_mod(i - d, m);
      out.push_back({StepOp::RecvCopy, rank_of(t), t * c + q, nseg + t * c + q, 2});
    }
  }
}

// The program of late id l: every chunk to its owner, round robin from an
// owner that depends on l (so the late ranks start at different owners),
// and the finished chunks back.
void late_program(const StragglerPlan& plan, int l, std::vector<Step>& out) {
  const int m = plan.owners, c = plan.chunks, nseg = plan.nseg;
  const int first = (l - m) * m / plan.late;
  out.reserve(sz(2 * nseg));
  for (int q = 0; q < c; ++q) {
    for (int i = 0; i < m; ++i) {
      const int j = (first + i) % m;
      out.push_back({StepOp::Send, plan.order[sz(j)], j * c + q, j * c + q, 1});
    }
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
    if (id >= plan.owners)
      late_program(plan, id, steps);
    else
      owner_program(plan, id, steps);
  }
  return sched;
}

}  // namespace papshim
