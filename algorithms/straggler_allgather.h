// Straggler allgather: while the latest rank (or a small group of late
// ranks) is late the early ranks exchange their blocks among themselves;
// once it arrives only its block is left to spread (in chunks, through a
// few early ranks) and one early rank sends it everything it lacks.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// At most this many chunks per block, of at most
// kStragglerAllgatherChunkBytes (straggler_allgather_segments).
constexpr int kStragglerAllgatherMaxChunks = 8;
constexpr double kStragglerAllgatherChunkBytes = 32.0 * 1024.0;
// And at most this many segments in all (P c, or P when P is larger), so
// that an early rank's exchange, 2 (P-2) c steps, stays within 16 Ki steps.
constexpr int kStragglerAllgatherMaxSegments = 8192;
// Auto weighs it up to this many ranks.  Beyond, every early rank posts
// sends to all the others at once (an incast the models do not see) and an
// owner passes its chunk to P-2 ranks, (P-2)/c block transfers.
constexpr int kStragglerAllgatherAutoMaxP = 64;

// The segment count auto mode passes as ScheduleParams::nseg: P blocks of c
// chunks, c = ceil(block_bytes / kStragglerAllgatherChunkBytes) clamped to
// [1, min(P - 2, kStragglerAllgatherMaxChunks, kStragglerAllgatherMaxSegments
// / P)].  Depends only on P and the block size, so it is timing-free.
int straggler_allgather_segments(int nprocs, double block_bytes);
// The same for auto mode's inputs (AlgoInfo::segments).
int straggler_allgather_segments_for(const SegmentInput& in);

// The chunks per block the schedule uses for `params`: nseg / P clamped as
// above and to at most params.count (no empty chunk when avoidable).
int straggler_allgather_chunks(const ScheduleParams& params);

// At most this many late ranks (and at most (P-1)/2).
constexpr int kStragglerAllgatherMaxLate = 8;

// The whole structure, a function of the params alone (every rank builds
// the same).  Ranks sorted by predicted arrival (ties by rank); ids
// 0 .. m-1 are early, m .. P-1 the late group of k ranks.  Early id j
// (j < k) is the server of late id m+j; chunk q of late id m+j is passed on
// by owner id k + ((j c + q) mod (m - k)) (id 0 when m = k, i.e. P = 2).
// k in 1 .. min(kStragglerAllgatherMaxLate, (P-1)/2): the latest rank and,
// before it, the ranks that arrive closer to the last than to the first and
// less than P-2 block transfers (params.tau per chunk) before the last (1
// without a usable tau or arrivals).
struct StragglerAllgatherPlan {
  std::vector<int> order;  // ranks by predicted arrival, ties by rank
  int m = 0;               // early ranks
  int late = 1;            // k
  int chunks = 1;          // c, segments per block
  int rank(int id) const { return order[static_cast<std::size_t>(id)]; }
  int seg(int id, int q) const { return rank(id) * chunks + q; }
  int owner(int j, int q) const { return m > late ? late + (j * chunks + q) % (m - late) : 0; }
};
StragglerAllgatherPlan straggler_allgather_plan(const ScheduleParams& params);

// The plan's mean elapsed time in the cost model's terms (one message per
// port and direction, `chunk_time` per chunk) for arrivals sorted
// ascending, one per id; shared with the cost model.
double straggler_allgather_mean(const StragglerAllgatherPlan& plan, const std::vector<double>& sorted_arrival,
                                double chunk_time);

// Segment b c + q is chunk q of rank b's block; every message's tag is its
// segment.  Step::round: 0 the early ranks' exchange, 1 the late ranks'
// chunks and blocks and the servers' blocks to them, 2 the owners' chunks to
// the early ranks.
Schedule build_straggler_allgather(const ScheduleParams& params);
// The same for a given plan (straggler_allgather_plan's, with `late` and
// `m` changed to compare late groups): late in 1 .. max(1, (P-1)/2).
Schedule build_straggler_allgather(const ScheduleParams& params, const StragglerAllgatherPlan& plan);

}  // namespace papshim
