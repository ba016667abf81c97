// Straggler allreduce: the early ranks reduce-scatter among themselves while
// the latest rank (or a small group of late ranks) is late; once it arrives
// its vector moves once, in small chunks spread over the early ranks, each
// of which completes its slice and sends it on to everyone at once.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// Chunks per slice: at most this many, and slices are cut into chunks of
// about kStragglerChunkBytes (straggler_segments).
constexpr int kStragglerMaxChunks = 8;
constexpr double kStragglerChunkBytes = 128.0 * 1024.0;
// nseg stays at most this (tags reach 2 nseg, far below MPI_TAG_UB's floor).
constexpr int kStragglerMaxSegments = 8192;
// At most this many late ranks (and at most (P-1)/2).
constexpr int kStragglerMaxLate = 8;

// The segment count auto mode passes as ScheduleParams::nseg: P-1 slices of
// chunks of about kStragglerChunkBytes.  Depends only on P and the size, so
// it is timing-free.
int straggler_segments(int nprocs, double bytes);
// The same for auto mode's inputs (AlgoInfo::segments).
int straggler_segments_for(const SegmentInput& in);

// The chunks per slice with `owners` slices: nseg / (P-1) clamped to
// [1, kStragglerMaxChunks], at most count / owners (no empty chunk when
// avoidable) and owners * chunks at most kStragglerMaxSegments.
int straggler_chunks(const ScheduleParams& params, int owners);

// The whole structure, a function of the params alone (every rank builds the
// same).  The late group is the last `late` ranks by arrival, k in
// 1..min(kStragglerMaxLate, (P-1)/2) (at least 1), whichever a coarse model
// in units of tau * nseg predicts to end first: a second rank about as late
// as the last is better sending its vector like the last than holding up
// phase 1.  Shared with the cost model.
struct StragglerPlan {
  std::vector<int> order;  // ranks by predicted arrival, ties by rank
  int late = 1;            // order[owners .. P-1] are late
  int owners = 0;          // order[0 .. owners-1] each own one slice
  int chunks = 1;          // segments per slice
  int nseg = 1;            // owners * chunks (1 for P <= 1)
};
StragglerPlan straggler_plan(const ScheduleParams& params);

// Segment j * chunks + q is chunk q of slice j, owned by order[j].  Tags:
// a contribution to its owner (phase 1, and the late rank's) carries the
// segment, a finished chunk nseg + segment.  Step::round: 0 reduce-scatter
// among the early ranks, 1 the late rank's chunks, 2 the finished chunks.
Schedule build_straggler(const ScheduleParams& params);

}  // namespace papshim
