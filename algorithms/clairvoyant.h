// Clairvoyant reduce schedules (seed clairvoyant-improved.txt, sections 2,
// 4 and 5).  Pure functions: no MPI.
//
// The algorithm works as follows.  Time runs in rounds of length d (tau).
// Every (process, segment) pair has a state: the process holds data for the
// segment (A or P), has sent it away (E), or received it in the current round
// (P': held, but it may not be sent again in the same round).  A process's
// availability starts at its arrival time and grows by d every round it
// takes part in.  A process is done when it is not the root and holds no
// segment any more.  Each round:
//   1. G = the processes not yet done whose availability is at most
//      (smallest availability among them) + d, ordered by availability, ties
//      by rank.  A round where G has one member cannot communicate; it is
//      skipped, together with every following idle round (seed 5.1).
//   2. The sink is the root if it is in G, else the first of G.  The sink is
//      moved to the front of G: it receives first, and it is the first
//      candidate when a peer is looked for.
//   3. For every i in G, in that order: find the smallest segment j and the
//      first peer z in G (z != i, z has not sent in this round) such that z
//      holds j (not P') and i holds j too - except the sink, which takes any j
//      (if it has sent its own j earlier, it overwrites the stale data:
//      RecvCopy; otherwise RecvReduce).  z sends j to i: z's j becomes E,
//      i's j becomes P', z is busy for the round.
//   4. End of round: P' becomes P; every process in G that holds a segment,
//      and the root, gets availability + d; the others are done.
// The schedule ends when every non-root is done: the root then holds every
// segment, reduced over all ranks exactly once.
//
// Output: a Reduce schedule with nseg = N (params.nseg), one program per
// rank, steps in the order the transfers are decided (so by round).  Round
// numbers count communication rounds only (skipped idle rounds get no
// number), starting at 0; a transfer in round k has tag k on both sides.  A
// rank sends at most once and receives at most once per round, on two
// different segments, so (sender, receiver, tag) is unique.  Rounds number
// about N + log P with balanced arrivals but up to about P*N when arrivals
// are staggered by more than N*d: compare max_tag() with MPI_TAG_UB.
//
// Safety: the number of rounds stayed below P*N in every tested instance;
// past round_limit() (4PN + 4P + 16) a generator throws std::logic_error
// instead of looping.
//
// Exact arithmetic: availability is kept as a whole number of rounds K plus
// the arrival's fractional part f (arrival - earliest arrival = K*d + f,
// 0 <= f < d), which never changes.  Comparisons use (K, f, rank), so both
// generators take identical decisions without floating-point drift.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// The segment-tree version (seed section 5): P' kept aside, one bit per
// (process, segment), a segment tree over G's members in the seed's order
// (by fractional arrival time, wrapped at the head), merge-based generation
// of G, idle-round skipping, pseudo-root.  Throws
// std::invalid_argument on bad input (arrival.size() != nprocs, root out of
// range, nseg < 1, tau not positive and finite, arrival not finite).
Schedule build_clairvoyant(const ScheduleParams& params);

// The plain version (seed section 4 with its fixes, plus idle-round skipping
// so that widely spread arrivals cannot make it spin).  Same output as
// build_clairvoyant, step for step; used to cross-check it and as the
// benchmark's baseline.
Schedule build_clairvoyant_linear(const ScheduleParams& params);

// Auto mode's segments for both versions: clv_segments (P when 0), at most
// count, at least 1.
int clairvoyant_segments(const SegmentInput& in);

// No closed form: auto mode weighs Clairvoyant only up to this many ranks,
// where simulating it is cheap enough.
constexpr int kClairvoyantSimMaxP = 64;

namespace detail {

// Arrival times in the exact form described above, shared by both versions.
struct ClairvoyantClock {
  std::vector<std::int64_t> whole;  // K at arrival, per rank
  std::vector<int> frac_class;      // dense rank of f among distinct values
  std::vector<int> frac_pos;        // position in the order by (f, rank)
  std::vector<int> by_arrival;      // ranks ordered by (K, f, rank)
};
ClairvoyantClock clairvoyant_clock(const ScheduleParams& params);
int round_limit(const ScheduleParams& params);

}  // namespace detail
}  // namespace papshim
