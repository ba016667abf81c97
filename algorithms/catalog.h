// The algorithm catalog: names, which collective each serves, whether it
// reorders contributions (then it needs a commutative op), and one entry
// point that builds any algorithm's schedule.
#pragma once

#include <optional>
#include <string>

#include "algorithms/schedule.h"

namespace papshim {

enum class Algo {
  Native,
  Prr, Slt, RingAllreduce, Rabenseifner,                 // allreduce
  Clairvoyant, ClairvoyantLinear, Binomial, SortedBinomial,  // reduce
  Sparbit, RingAllgather, Bruck, RecursiveDoubling,      // allgather
  DirectAllreduce,                                       // allreduce (appended: values are keys)
};

struct AlgoInfo {
  Algo algo;
  const char* name;      // as in PAPSHIM_ALLREDUCE etc.
  Collective coll;
  bool needs_commutative;
};

const AlgoInfo& algo_info(Algo a);
// The algorithm called `name` for collective `c`; nullopt for "auto" and
// unknown names ("native" maps to Algo::Native).
std::optional<Algo> algo_from_name(Collective c, const std::string& name);

struct BuildResult {
  std::optional<Schedule> schedule;
  std::string reason;  // why not, when schedule is empty
};

// Builds the full schedule (every rank's program).  p.nseg is a hint that the
// generators may override (PRR/SLT/ring/direct use P segments, allgather P
// blocks).
BuildResult build_schedule(Algo a, const ScheduleParams& p);

}  // namespace papshim
