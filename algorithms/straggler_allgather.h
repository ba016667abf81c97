// Straggler allgather: while the latest rank is late the early ranks
// exchange their blocks among themselves; once it arrives only its block is
// left to spread (in chunks, through a few early ranks) and one early rank
// sends it everything it lacks.
#pragma once

#include <cstddef>

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

// The chunks per block the schedule uses for `params`: nseg / P clamped as
// above and to at most params.count (no empty chunk when avoidable).
int straggler_allgather_chunks(const ScheduleParams& params);

// Ranks sorted by predicted arrival (ties by rank): id 0 is the server,
// ids 0 .. P-2 the early ranks, id P-1 the late rank.  Chunk q of the late
// block is passed on by owner id q + 1 (id 0 when P = 2).  Segment b c + q
// is chunk q of rank b's block; every message's tag is its segment.
// Step::round: 0 the early ranks' exchange, 1 the late rank's chunks and
// the server's blocks to it, 2 the owners' chunks to the early ranks.
Schedule build_straggler_allgather(const ScheduleParams& params);

}  // namespace papshim
