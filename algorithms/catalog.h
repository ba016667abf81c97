// The algorithm catalog: the one table of algorithms.  Each entry has its
// name, the collective it serves, whether it reorders contributions (then it
// needs a commutative op), its schedule builder and a one-line description.
// Everything else (build_schedule, name lookup, the lists config/ and
// papshim-info accept) reads this table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

enum class Algo {
  Native,
  Prr, Slt, RingAllreduce, Rabenseifner,                 // allreduce
  Clairvoyant, ClairvoyantLinear, Binomial, SortedBinomial,  // reduce
  Sparbit, RingAllgather, Bruck, RecursiveDoubling,      // allgather
  DirectAllreduce,                                       // allreduce (appended: values are keys)
  Straggler,                                             // allreduce
  StragglerAllgather,                                    // allgather
};

// Builds a schedule; nullopt when the algorithm cannot serve these inputs
// (e.g. recursive doubling on a non-power-of-two communicator).  May throw
// on bad inputs; build_schedule() catches.
using ScheduleBuilder = std::optional<Schedule> (*)(const ScheduleParams&);

struct AlgoInfo {
  Algo algo;
  const char* name;      // as in PAPSHIM_ALLREDUCE etc.
  Collective coll;
  bool needs_commutative;
  ScheduleBuilder build;     // nullptr for native (no schedule)
  const char* description;   // one line, for papshim-info and docs
};

const AlgoInfo& algo_info(Algo a);
// The algorithm called `name` for collective `c`; nullopt for "auto" and
// unknown names ("native" maps to Algo::Native).
std::optional<Algo> algo_from_name(Collective c, const std::string& name);

// Every table entry that serves collective `c`, in table order, "native"
// excluded (it serves every collective and has no schedule).  These names,
// plus "native" and "auto", are the values PAPSHIM_ALLREDUCE/REDUCE/ALLGATHER
// accept.
std::vector<const AlgoInfo*> algorithms_for(Collective c);

// The whole table, "native" first.
const std::vector<AlgoInfo>& all_algorithms();

struct BuildResult {
  std::optional<Schedule> schedule;
  std::string reason;  // why not, when schedule is empty
};

// Builds the schedule through the table.  p.nseg is a hint that the
// generators may override (PRR/SLT/ring/direct use P segments, allgather P
// blocks).  p.rank == -1 builds every rank's program; p.rank = r builds only
// programs[r] (programs.size() stays P; see ScheduleParams::rank).
BuildResult build_schedule(Algo a, const ScheduleParams& p);

}  // namespace papshim
