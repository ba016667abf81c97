// Straggler allreduce: the early ranks reduce-scatter among themselves while
// the latest rank is late; once it arrives its vector moves once, in small
// chunks spread over the early ranks, each of which completes its slice and
// sends it on to everyone at once.
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

// The segment count auto mode passes as ScheduleParams::nseg: P-1 slices of
// chunks of about kStragglerChunkBytes.  Depends only on P and the size, so
// it is timing-free.
int straggler_segments(int nprocs, double bytes);

// The chunks per slice the generator uses for these params: nseg / (P-1)
// clamped to [1, kStragglerMaxChunks], at most count / (P-1) (no empty
// chunk when avoidable) and nseg at most kStragglerMaxSegments.  Shared with
// the cost model.
int straggler_chunks(const ScheduleParams& params);

struct StragglerPlan {
  std::vector<int> order;  // ranks by predicted arrival; order[P-1] is late
  int owners = 0;          // P-1 early ranks, each owning one slice
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
