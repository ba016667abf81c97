// Straggler allgather as a schedule.
//
// Works as follows.  Ranks are sorted by predicted arrival (ties by rank);
// the last k (straggler_allgather_plan picks k, usually 1) are late, the
// other m = P-k are early.  Every block is cut into c chunks (segments), so
// nseg = P c.
//   phase 1  (while the late ranks are late) a direct exchange among the
//            early ranks: early id i sends its block to ids i+1, i+2, ...
//            (mod m) and takes in the others' from i-1, i-2, ...  Afterwards
//            every early rank holds every early block.
//   phase 2  (as the late ranks arrive) late id m+j sends chunk q of its
//            block to its owner, one of early ids k .. m-1, which passes it
//            on to the other early ranks, and its whole block to the other
//            late ranks; its server, early id j, sends it every early
//            block, its own first, then by arrival.
// With one late rank L an early rank takes in one block after L arrives
// (L's, in chunks from the owners) where a ring or Sparbit still has all of
// L's work and its block to move; an owner passes its chunk to m-1 ranks,
// (m-1)/c of a block, so up to about P = 10 the early ranks leave one to
// two block transfers after L (at larger P the passes grow with P/c:
// auto mode weighs the schedule up to kStragglerAllgatherAutoMaxP
// ranks).  L and the server leave after the P-1 blocks L must take in,
// which bounds any allgather.  With k late ranks each takes in P-1 blocks
// (m from its server, k-1 from the other late ranks) and the early ranks k
// blocks.  A second rank about as late as the last is better in the late
// group than holding up phase 1, which it would as an early rank.
//
// Executor order (schedule.h): every receive is posted at once, so a
// server's phase-1 receives and its sends to its late rank overlap; such a
// send waits for the server's copy of that chunk and, sends to one peer
// going one at a time, for the sends to that rank listed before it; an
// owner's sends of a chunk go to different peers and start together.
// Chunks are byte ranges (executor.cpp, "Allgather chunks").  Program order
// is a valid time order: on a server a block's receive comes before its
// send, on an owner a chunk's receive before its sends.
//
// Message count: an early rank sends its block to m-1 peers (c messages
// each), like the direct allreduce's O(P) exchange and Sparbit's one block
// per message; a server adds (P-k) c messages to its late rank.
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
  const double most = max_chunks(nprocs);
  const int chunks = std::isfinite(c) ? static_cast<int>(std::clamp(c, 1.0, most)) : 1;
  return chunks * nprocs;
}

int straggler_allgather_segments_for(const SegmentInput& in) {
  return straggler_allgather_segments(in.nprocs, in.whole_bytes / in.nprocs);
}

int straggler_allgather_chunks(const ScheduleParams& params) {
  const int P = params.nprocs;
  if (P <= 1) return 1;
  int c = std::clamp(params.nseg / P, 1, max_chunks(P));
  if (params.count < sz(c)) c = static_cast<int>(std::max<std::size_t>(params.count, 1));
  return c;
}

// A late group of k ranks: the early ranks' exit times and everyone's mean
// elapsed time, in the model of the cost model (one message per port and
// direction, t per chunk, T = c t per block); `a` is the arrivals by id.
//   phase 1: early id i holds every early block at F_i = max(a_i + (m-1) T,
//            a_(m-1) + d T), d = i - (m-1) mod m its place in the latest
//            early rank's sends (a_i for m = 1);
//   late id m+j takes in P-1 blocks from max(a_(m+j), F_j) on (server j's
//            m and the other late ranks' k-1); late m+j-d's block reaches it
//            at a_(m+j-d) + (1+d) T (after that rank's chunks and its blocks
//            to the late ranks before it); its own sends end at
//            a_(m+j) + k T; server j leaves with its intake,
//            max(a_(m+j), F_j) + (P-1) T;
//   owner o passes each chunk it owns, in the order they reach it (late j's
//            chunk q at a_(m+j) + (q+1) t), to the early rank d places
//            after it at G + d t, G = max(chunk there, o's port free, F_o);
//   an early rank leaves at the latest of F_i, its last chunk and its last
//            pass.
double straggler_allgather_mean(const StragglerAllgatherPlan& p, const std::vector<double>& a, double t) {
  if (p.m + p.late <= 1 || a.size() != sz(p.m + p.late)) return 0.0;
  const int P = p.m + p.late, m = p.m, k = p.late, c = p.chunks;
  const double T = c * t;
  // The latest early rank sends its block to ids m, m+1, ... (mod m) one
  // after the other: id i gets it d = i - (m-1) (mod m) blocks after it
  // arrives.
  auto F = [&](int i) {
    if (m <= 1) return a[sz(i)];
    return std::max(a[sz(i)] + (m - 1) * T, a[sz(m - 1)] + ring_mod(i - (m - 1), m) * T);
  };
  std::vector<double> leave(sz(P)), port(sz(m));
  for (int i = 0; i < m; ++i) leave[sz(i)] = port[sz(i)] = F(i);
  for (int j = 0; j < k; ++j) {
    // Its port in: P-1 blocks; out: its chunks, then its block to late
    // j+1, j+2, ... (mod k), one after the other.
    double done = std::max(std::max(a[sz(m + j)], F(j)) + (P - 1) * T, a[sz(m + j)] + k * T);
    for (int d = 1; d < k; ++d) done = std::max(done, a[sz(m + ring_mod(j - d, k))] + (1 + d) * T);
    leave[sz(m + j)] = done;
    leave[sz(j)] = std::max(leave[sz(j)], std::max(a[sz(m + j)], F(j)) + (P - 1) * T);
  }
  // Chunks in the order they reach their owners.
  struct Chunk {
    double at;
    int owner;
  };
  std::vector<Chunk> chunks;
  chunks.reserve(sz(k * c));
  for (int j = 0; j < k; ++j)
    for (int q = 0; q < c; ++q) chunks.push_back({a[sz(m + j)] + (q + 1) * t, p.owner(j, q)});
  std::stable_sort(chunks.begin(), chunks.end(), [](const Chunk& x, const Chunk& y) { return x.at < y.at; });
  for (const Chunk& ch : chunks) {
    const int o = ch.owner;
    const double G = std::max(ch.at, port[sz(o)]);
    leave[sz(o)] = std::max(leave[sz(o)], ch.at);
    for (int d = 1; d < m; ++d) leave[sz((o + d) % m)] = std::max(leave[sz((o + d) % m)], G + d * t);
    port[sz(o)] = G + std::max(m - 1, 0) * t;
    leave[sz(o)] = std::max(leave[sz(o)], port[sz(o)]);
  }
  double sum = 0;
  for (int i = 0; i < P; ++i) sum += leave[sz(i)] - a[sz(i)];
  return sum / P;
}

StragglerAllgatherPlan straggler_allgather_plan(const ScheduleParams& params) {
  StragglerAllgatherPlan plan;
  plan.order = arrival_order(params);
  const int P = params.nprocs;
  if (P <= 1) {
    plan.m = std::max(P, 0);
    plan.late = 0;
    return plan;
  }
  plan.chunks = straggler_allgather_chunks(params);
  plan.late = 1;
  plan.m = P - 1;
  // The late group: the latest rank, and before it every rank that arrives
  // closer to the last than to the first and less than P-2 block transfers
  // (tau as the chunk time, so T = c tau) before the last.  As an early
  // rank such a rank would still be sending its block to the others when
  // the last arrives (its port sends them one after the other), holding up
  // phase 1 and the servers; in the group it sends its block once to each
  // late rank and to the owners in chunks.
  const std::vector<double> a = sorted_arrivals(params, plan.order);
  const int kmax = std::min(kStragglerAllgatherMaxLate, std::max(1, (P - 1) / 2));
  const double T = params.tau * plan.chunks;
  if (kmax > 1 && T > 0 && std::isfinite(T) && std::isfinite(a.back()) && std::isfinite(a.front())) {
    const double window = (P - 2) * T;
    while (plan.late < kmax) {
      const double x = a[sz(P - 1 - plan.late)];
      if (!(a.back() - x < std::min(window, x - a.front()))) break;
      ++plan.late;
    }
    plan.m = P - plan.late;
  }
  return plan;
}

namespace {

void early_program(const StragglerAllgatherPlan& p, int i, std::vector<Step>& out) {
  const int m = p.m, c = p.chunks;
  // Phase 1: the own block to every other early rank, theirs in.
  for (int d = 1; d < m; ++d)
    for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank((i + d) % m), p.seg(i, q), p.seg(i, q), 0});
  for (int d = 1; d < m; ++d) {
    const int src = ring_mod(i - d, m);
    for (int q = 0; q < c; ++q) out.push_back({StepOp::RecvCopy, p.rank(src), p.seg(src, q), p.seg(src, q), 0});
  }
  // Phase 2: the late blocks' chunks, each from its owner or, on the owner,
  // from its late rank and then on to the other early ranks.
  for (int j = 0; j < p.late; ++j)
    for (int q = 0; q < c; ++q) {
      const int s = p.seg(m + j, q), o = p.owner(j, q);
      if (o != i) {
        out.push_back({StepOp::RecvCopy, p.rank(o), s, s, 2});
        continue;
      }
      out.push_back({StepOp::RecvCopy, p.rank(m + j), s, s, 1});
      for (int d = 1; d < m; ++d) out.push_back({StepOp::Send, p.rank((i + d) % m), s, s, 2});
    }
  // Server i (of late id m+i): every early block to it, its own first.
  if (i < p.late)
    for (int e = 0; e < m; ++e) {
      const int j = e == 0 ? i : e <= i ? e - 1 : e;  // i, then the others by arrival
      for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank(m + i), p.seg(j, q), p.seg(j, q), 1});
    }
}

void late_program(const StragglerAllgatherPlan& p, int l, std::vector<Step>& out) {
  const int m = p.m, c = p.chunks, j = l - m, P = m + p.late;
  // The own block: chunks to their owners, then whole to the other late ranks.
  for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank(p.owner(j, q)), p.seg(l, q), p.seg(l, q), 1});
  for (int d = 1; d < p.late; ++d) {
    const int to = m + (j + d) % p.late;
    for (int q = 0; q < c; ++q) out.push_back({StepOp::Send, p.rank(to), p.seg(l, q), p.seg(l, q), 1});
  }
  // Every early block from the server, the other late blocks from their ranks.
  for (int e = 0; e < m; ++e)
    for (int q = 0; q < c; ++q) out.push_back({StepOp::RecvCopy, p.rank(j), p.seg(e, q), p.seg(e, q), 1});
  for (int other = m; other < P; ++other) {
    if (other == l) continue;
    for (int q = 0; q < c; ++q) out.push_back({StepOp::RecvCopy, p.rank(other), p.seg(other, q), p.seg(other, q), 1});
  }
}

}  // namespace

Schedule build_straggler_allgather(const ScheduleParams& params) {
  return build_straggler_allgather(params, straggler_allgather_plan(params));
}

Schedule build_straggler_allgather(const ScheduleParams& params, const StragglerAllgatherPlan& plan) {
  const int P = params.nprocs;
  Schedule sched;
  sched.coll = Collective::Allgather;
  sched.programs.resize(sz(std::max(P, 0)));
  sched.nseg = std::max(P, 1);
  if (P <= 1) return sched;
  sched.nseg = P * plan.chunks;
  sched.tag_bound = sched.nseg - 1;
  for (int id = 0; id < P; ++id) {
    const int rank = plan.rank(id);
    if (!builds_program(params, rank)) continue;
    auto& steps = sched.programs[sz(rank)].steps;
    if (id >= plan.m)
      late_program(plan, id, steps);
    else
      early_program(plan, id, steps);
  }
  return sched;
}

}  // namespace papshim
