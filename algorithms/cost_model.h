// Closed-form cost model: each regular schedule's mean elapsed time (mean
// over ranks of exit - arrival, the quantity simulate() reports) from the
// arrival vector and the cost figures, without building or simulating the
// schedule.
//
// The simulator (simulator.h) stays the oracle: tests/unit/test_cost_model.cpp
// draws random instances and checks these forms against it.  The forms
// follow the simulator's model (Hockney alpha + beta * bytes per message,
// one message at a time per port and direction, one reduction unit per rank
// at gamma per byte).  Notation, per algorithm: s the bytes of one segment,
// t = alpha + beta * s one transfer, g = gamma * s one reduction,
// c = max(t, g), u = min(t, g); L = max(a) - mean(a), the mean wait for the
// last arrival; d = the gap between the last and the second-last arrival.
// Every form costs O(P) after one O(P log P) sort, except the reduce trees
// (O(P log P): one pass over the tree).  docs/algorithms.md, "Cost model",
// lists them.
//
// Each catalog row points at its form (AlgoInfo::closed_form); no closed
// form: Clairvoyant and its linear generator (the selector simulates them at
// small P only, kClairvoyantSimMaxP) and Native.
#pragma once

#include <optional>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/schedule.h"

namespace papshim {

struct CostFigures;

// The arrival vector, summarised once for every candidate.
struct ArrivalSummary {
  int P = 0;
  double mean = 0, last = 0, prev = 0;  // prev: the second-last arrival
  std::vector<double> sorted;           // ascending
};
ArrivalSummary summarize_arrivals(const std::vector<double>& arrival);

// What every closed form starts from.
struct CostInput {
  const ScheduleParams& p;     // the algorithm's segments, tau, arrivals, root
  const CostFigures& cost;
  const ArrivalSummary& arr;
  int P;
  double Pd;
  double L;      // mean wait for the last arrival
  double d;      // how far the last is behind the others
  double bytes;  // whole vector (allreduce, reduce) or one block (allgather)
};

// The forms, one per algorithm (docs/algorithms.md, "Cost model").
double ring_allreduce_cost(const CostInput& in);
double rabenseifner_cost(const CostInput& in);
double direct_allreduce_cost(const CostInput& in);
double prr_cost(const CostInput& in);
double slt_cost(const CostInput& in);
double straggler_cost(const CostInput& in);
double ring_allgather_cost(const CostInput& in);
double log_step_allgather_cost(const CostInput& in);  // Bruck, Sparbit, recursive doubling
double straggler_allgather_cost(const CostInput& in);
double binomial_reduce_cost(const CostInput& in);
double sorted_binomial_reduce_cost(const CostInput& in);

// Mean elapsed seconds of algorithm `a` run with `p` (its segments, tau,
// arrivals, root) for `elem_size`-byte elements and these costs, through its
// catalog row; nullopt when `a` has no closed form, does not serve `coll`
// or cannot run these inputs.
std::optional<double> closed_form_mean_elapsed(Algo a, Collective coll, const ScheduleParams& p,
                                               std::size_t elem_size, const CostFigures& cost,
                                               const ArrivalSummary& arrivals);

}  // namespace papshim
