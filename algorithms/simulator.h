// In-memory simulator for schedules: elapsed times and a symbolic data check.
//
// simulate() runs every rank's program of a Schedule as the executor would
// (the dependency rules of schedule.h), on a discrete-event clock, and checks
// that every rank ends with the data the collective promises.  It never
// touches MPI and costs O(total steps * log) for sane schedules.
//
// Time model
//   - Rank r starts at arrival[r].  Before that it does nothing: it posts no
//     receive and sends nothing.
//   - At its arrival a rank posts the receive of every RecvReduce (into a
//     temporary, as the executor does).  Any other step is posted when the
//     dependency rules of schedule.h let it start: a Send after every earlier
//     write of its segment, a RecvCopy after every earlier step of its
//     segment.
//   - A message is ready when both its Send and its receive are posted.  It
//     then needs the sender's outgoing port and the receiver's incoming port;
//     each port carries one message at a time (ports are full duplex: a rank
//     may send one message and receive another at once).  A ready message
//     starts at max(both posted, both ports free); among messages waiting for
//     a port the one that became ready first goes first (ties: lower sender
//     rank, then earlier sender step).  A transfer lasts
//     alpha + beta * bytes; the Send completes and the ports free up at its
//     end.  With SimCost::serial_ports == false the ports are unlimited and
//     every ready message starts at once (a pure latency model).
//   - A RecvCopy completes when its transfer ends.  A RecvReduce, once its
//     transfer has ended and its own dependencies are met, combines on the
//     receiver's one reduction unit (serial per rank, first come first
//     served) for gamma * bytes; only then is the segment written.
//   - A rank exits when its last step completes (at arrival if it has none).
//   Bytes of segment s: Allreduce/Reduce: the element range
//   segment_bounds(count, nseg, s) times elem_size; Allgather: one chunk of a
//   block of `count` elements (count is the per-rank block, as in CallArgs;
//   allgather_segment()).  The
//   executor skips the messages of an empty segment; the simulator still
//   charges alpha for them, so for count < nseg it errs on the slow side.
//
// The seeds' figures (prr-slt-allreduce.txt, figures 2, 6, 8) count time in
// tau, one transfer plus reduction of a segment between two processes.
// SimCost::tau_steps(tau) is that unit: alpha = tau, beta = gamma = 0.
// With P = 4 and process 0 late:
//   figure 8a ring, 2 tau late: 8 tau, in both port models (as drawn);
//   figure 8b PRR: 7 tau with unlimited ports (as drawn), 9 with serial ports:
//     the late process must take in all four slices one after the other;
//   figure 6 linear tree / SLT, 4 tau late: drawn 14 / 12, here 13 / 11 with
//     serial ports (10 / 8 unlimited): the figure 5 listing cannot take 14 in
//     any port model; the 2 tau saving is the same.
// No one model gives all four drawn numbers.  Serial ports are the default
// because they also reproduce the seed's measurements (table 3: SLT slower
// than ring when nobody is late, PRR level with it, both ahead when one
// process is late).  tests/unit/test_worked_examples.cpp has the details.
//
// Data check (symbolic)
//   Each (rank, segment) holds the multiset of ranks whose contribution it
//   contains, kept as two bit sets: "at least once" and "more than once".
//   The working buffer starts with the rank's own contribution (every
//   segment for reductions, the chunks of block `rank` only for Allgather).
//   A Send carries the sender's state when the Send is posted (the segment
//   cannot change until the Send completes); RecvReduce adds it, RecvCopy
//   replaces.
//   At the end: Allreduce: every rank and segment holds each rank exactly
//   once; Reduce: the root does; Allgather: every chunk of block b of every
//   rank is exactly {b}.
//
// Errors (SimResult::ok == false, `error` names the rank, step and segment):
// a malformed schedule (no ranks, nseg < 1, allgather with nseg not a
// multiple of P, root out of range, arrival of the wrong size), bad peer
// (out of range or self),
// bad segment, negative tag, RecvReduce in an Allgather, a send without its
// receive or the reverse, two messages with the same (source, destination,
// tag), send and receive on different segments, deadlock (steps left,
// nothing can move), wrong final data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "common/cost_figures.h"

namespace papshim {

struct SimCost {
  double alpha = 0.0;          // s per message
  double beta = 0.0;           // s per byte transferred
  double gamma = 0.0;          // s per byte reduced
  // The calibration's curve (CostFigures::transfer), which then replaces
  // alpha + beta * bytes; curve.curve_n == 0: none.
  CostFigures curve;
  std::size_t elem_size = 1;   // bytes per element
  std::size_t count = 0;       // elements (Allgather: per block)
  bool serial_ports = true;    // one message at a time per port and direction

  // The seeds' unit: every transfer (with its reduction) of a segment takes
  // `tau`, whatever its size.
  static SimCost tau_steps(double tau);
  // The measured figures (alpha, beta, gamma) for `count` elements of
  // `elem_size` bytes, serial ports.
  static SimCost from_figures(const CostFigures& figures, std::size_t elem_size, std::size_t count);

  // Bytes in segment `seg` of schedule `s`.
  std::size_t seg_bytes(const Schedule& s, int seg) const;
};

struct SimResult {
  bool ok = false;
  std::string error;             // empty when ok
  // Filled in whenever the schedule passed the static checks, also when it
  // then deadlocked (steps never done do not count) or ended with wrong data.
  std::vector<double> exit;      // per rank, same clock as the arrivals
  double mean_elapsed = 0.0;     // mean over ranks of exit - arrival
  double max_exit = 0.0;         // latest exit
};

// `arrival` has one entry per rank (schedule.programs.size()).
SimResult simulate(const Schedule& schedule, const std::vector<double>& arrival,
                   const SimCost& cost);

}  // namespace papshim
