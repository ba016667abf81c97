// Processes re-ranked by predicted arrival, shared by the arrival-aware
// allreduce schedules (SLT, PRR).
#pragma once

#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

// order[id] = the rank whose new id is `id`: ranks sorted by predicted
// arrival, earliest first, ties by rank.  A NaN arrival sorts as +infinity.
// When params.arrival does not have one entry per rank it is ignored and the
// order is the identity.  Same input, same output on every rank.
std::vector<int> arrival_order(const ScheduleParams& params);

// The arrival of order[id], in the same order; NaN and missing values as in
// arrival_order().
std::vector<double> sorted_arrivals(const ScheduleParams& params, const std::vector<int>& order);

}  // namespace papshim
