// Binomial-tree reduce to an arbitrary root, optionally pipelined over
// segments, in rank order (what MPI libraries do) or with the ranks placed in
// the tree by predicted arrival.
#pragma once

#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// Uses params.nprocs, params.root, params.count and params.nseg.  The
// schedule's nseg is max(1, params.nseg), capped at params.count when count
// is positive (no empty segments).  Send and RecvReduce only.
//
// The combination order is a rotation of the rank order (relative ranks) and
// children are combined as "incoming op own", so the op must be commutative;
// the caller sends non-commutative ops elsewhere.
Schedule build_binomial_reduce(const ScheduleParams& params);

// The same tree with the ranks placed by params.arrival (sorted binomial):
// the root stays at the top; of the root's subtrees the largest takes the
// earliest ranks and the single-rank subtree the latest, so the latest rank
// sends straight to the root and nobody else waits for it; inside every
// subtree its earliest rank is the subtree's root, so children never wait
// for a parent that has not arrived.  Arrivals less than half a
// whole-vector transfer apart (0.5 * params.tau * params.nseg) count as
// equal, and so do missing or NaN ones; equal arrivals keep the places of
// the plain tree, so a balanced call runs exactly build_binomial_reduce's
// tree.  params.tau <= 0 sorts by exact arrival.  Needs a commutative op.
Schedule build_sorted_binomial_reduce(const ScheduleParams& params);

// Auto mode's segments for both trees: tree_segsize bytes each, at most
// kMaxTreeSegments (the schedule holds nseg steps per tree edge); P when
// tree_segsize is 0.
constexpr int kMaxTreeSegments = 4096;
int tree_segments(const SegmentInput& in);

// position -> rank for build_sorted_binomial_reduce: position 0 is the root,
// the parent of position v is v with its lowest set bit cleared.
std::vector<int> sorted_binomial_positions(const ScheduleParams& params);

}  // namespace papshim
