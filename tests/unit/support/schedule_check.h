// Test support for the schedule tests: independent symbolic checkers of a
// schedule and reproducible arrival generators.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim::test_support {

// How a checker runs a schedule.
//   InOrder   every rank runs its steps strictly in program order; a Send is
//             buffered and returns at once, a receive waits for its message.
//             Finishing shows that program order is a valid time order.
//   DataFlow  the executor's rules (schedule.h): steps posted once their
//             per-segment dependencies are done, a RecvReduce's receive at
//             once, a Send once the previous send to its peer is done, and
//             it completes when its receive is posted (rendezvous).
enum class CheckModel { InOrder, DataFlow };

// "" when the schedule is well formed, finishes under `model` and leaves the
// right data; otherwise the first problem found.  Allreduce schedules must
// leave every contribution exactly once in every segment of every rank, and
// the same reduction tree on all ranks; allgather schedules block b == {b}
// everywhere; reduce schedules every contribution at the root.
std::string check_schedule(const Schedule& s, CheckModel model);

// check_schedule under InOrder, then DataFlow: the first problem found.
std::string check_schedule_both(const Schedule& s);

// Parameters for `nprocs` ranks: 4 elements per rank, one segment per rank,
// equal arrivals.
ScheduleParams params_for(int nprocs);

// Parameters for `nprocs` ranks, all on time but rank `late`, late by
// `delay` seconds.
ScheduleParams late_rank(int nprocs, int late, double delay, std::size_t count, int nseg);

// Whether two programs have the same steps (op, peer, segment, tag, round).
bool same_steps(const std::vector<Step>& x, const std::vector<Step>& y);

// Random arrivals in [0, 1) from a fixed seed: the same on every run.
std::vector<double> random_arrivals(int P, unsigned seed);

// Arrival patterns, in units of tau = 1, by `pattern % 7`: equal, one late,
// two late, uniform, integer (many ties), reversed, spread far beyond P tau.
std::vector<double> arrival_pattern(int P, int pattern, std::mt19937& rng);

}  // namespace papshim::test_support
