// Schedules: what every rank does in one collective call, as data.
//
// A schedule is a pure function of the decision inputs (P, root, count,
// segment count, arrival vector, cost figures).  It never touches MPI.  The
// executor (executor.cpp) runs it with PMPI point-to-point calls; the
// simulator (simulator.cpp) runs the very same steps in memory.
//
// Terms used throughout algorithms/:
//   segment  The buffer is cut into `nseg` segments (segment_bounds() gives
//            each one's element range).  For allgather nseg is a multiple of
//            P: every block is cut into c = nseg / P chunks and segment
//            b c + q is chunk q of rank b's block (c = 1, segment b = block
//            b, for all but the straggler allgather; allgather_segment()).
//   working buffer
//            Allreduce: recvbuf.  Reduce: recvbuf on the root, a temporary
//            elsewhere.  Allgather: recvbuf.  It starts with the rank's own
//            contribution (all segments for reductions; only block `rank`
//            for allgather).
//   step     Send(seg) sends the working buffer's segment to `peer`.
//            RecvReduce(seg) receives into a temporary and combines it into
//            the working buffer (buf = incoming op buf).  RecvCopy(seg)
//            receives straight into the working buffer, replacing it.
//
// Dependencies are implied by program order, per segment, on each rank:
//   - a Send of seg waits for every earlier write (RecvReduce, RecvCopy) of
//     seg on that rank;
//   - a write of seg waits for every earlier Send and write of seg on that
//     rank to complete;
//   - the receive of a RecvReduce may be posted at once (into a temporary).
// Steps on different segments are independent.  The executor posts every
// step whose dependencies are met and advances on completions, so a step
// list that comes from a valid time-ordered schedule cannot deadlock.
//
// Tags: every message of one call between a given (sender, receiver) pair
// has its own tag, the same on both sides, in [0, max_tag()].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace papshim {

enum class StepOp : std::uint8_t { Send, RecvReduce, RecvCopy };

struct Step {
  StepOp op;
  int peer;       // rank in the communicator
  int seg;        // segment index in [0, nseg)
  int tag;        // see "Tags" above
  int round = 0;  // informational: algorithm round / step number
};

// The program of one rank.
struct RankProgram {
  std::vector<Step> steps;
};

enum class Collective : std::uint8_t { Allreduce, Reduce, Allgather };

struct Schedule {
  Collective coll = Collective::Allreduce;
  int nseg = 1;
  int root = 0;                       // meaningful for Reduce only
  std::vector<RankProgram> programs;  // one per rank, index = rank
  // The largest tag of any rank's program, set by the generators (-1:
  // unknown).  Needed because an own-program build (ScheduleParams::rank)
  // sees only one program, and the largest tag differs between ranks (e.g.
  // clairvoyant: the root takes part in the last round).  Callers that turn
  // max_tag() into a run-or-fall-back decision must take it on every rank
  // alike.
  int tag_bound = -1;
  // max(tag_bound, every tag in the filled programs): the same on every rank
  // whether it built one program or all of them.
  int max_tag() const;
};

// Inputs every generator takes.  All of them must be identical on every rank,
// so that every rank runs the same schedule (the consistency invariant: a
// rank on another schedule would wait for messages that never come; see
// shim/dispatch.cpp for where each input comes from).
struct ScheduleParams {
  int nprocs = 1;
  int root = 0;                  // Reduce only
  std::size_t count = 0;         // elements in the whole vector
  int nseg = 1;                  // segments (generators may ignore/override)
  std::vector<double> arrival;   // predicted arrival time per rank, seconds
  double tau = 1e-4;             // time of one segment transfer+reduce, s
  // Whose program to build.  -1: every rank's (the simulator and tests need
  // them all).  r >= 0: only programs[r]; the other programs stay empty but
  // programs.size() is still nprocs, so the executor (which reads only its
  // own program) is unchanged.  Generators then take time and memory in
  // proportion to rank r's steps (clairvoyant: plus its global rounds,
  // which are computed but not stored).  This field is the one input that
  // differs between ranks; programs[r] does not depend on it.
  int rank = -1;
};

// What an algorithm's segment policy (AlgoInfo::segments) sees of the
// selector's inputs: identical on every rank, so nseg is too.
struct SegmentInput {
  int nprocs = 1;
  std::size_t count = 0;   // elements (allgather: per rank)
  double whole_bytes = 0;  // the whole vector (allgather: all P blocks)
  int clv_segments = 0;    // SelectInput::clv_segments
  long tree_segsize = 0;   // SelectInput::tree_segsize
};

// True when the generator must fill programs[r] for these params.
inline bool builds_program(const ScheduleParams& p, int r) { return p.rank < 0 || p.rank == r; }

// The frame of an allreduce cut into one slice per rank (ring, PRR,
// direct): nseg = P (1 for P <= 1), P empty programs, tags below 2 * nseg.
Schedule slice_per_rank_schedule(int nprocs);
// v modulo p in [0, p), for ring neighbours.
inline int ring_mod(int v, int p) { return ((v % p) + p) % p; }
// The smallest k with 2^k >= n (0 for n <= 1): the steps of a log-step
// algorithm over n ranks.
inline int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// The largest power of two <= n (1 for n <= 1): the ranks of the halving
// and doubling steps of Rabenseifner and recursive doubling.
inline int floor_pow2(int n) {
  int p = 1;
  while (2 * p <= n) p *= 2;
  return p;
}

// Element range [first, first + n) of segment `s` when `count` elements are
// cut into `nseg` nearly equal parts (the first count % nseg get one more).
struct SegRange {
  std::size_t first;
  std::size_t n;
};
SegRange segment_bounds(std::size_t count, int nseg, int s);

// Allgather: the chunks per block of an nseg-segment schedule over `nprocs`
// ranks (nseg / nprocs, at least 1), and the element range of segment s in
// the receive buffer when each block has `count` elements.
inline int allgather_chunks(int nseg, int nprocs) { return nprocs > 0 && nseg >= nprocs ? nseg / nprocs : 1; }
SegRange allgather_segment(std::size_t count, int nprocs, int nseg, int s);

const char* to_string(StepOp op);
const char* to_string(Collective c);

}  // namespace papshim
