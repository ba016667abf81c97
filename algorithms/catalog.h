// The algorithm catalog: the one table of algorithms, one row each.  A row
// is everything the rest of papshim knows about an algorithm: its name, the
// collective it serves, whether it reorders contributions (then it needs a
// commutative op), its schedule builder, the communicator sizes it cannot
// run on and why, the segments auto mode gives it, its closed-form cost, and
// its role in auto mode.  build_schedule, name lookup, the lists config/ and
// papshim-info accept, the selector and the cost model all read this table;
// adding an algorithm means its own file, its row and its tests.
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
// How many Algo values there are (they index per-algorithm state).
constexpr int kAlgoCount = static_cast<int>(Algo::StragglerAllgather) + 1;

// Builds a schedule; nullopt when the algorithm cannot serve these inputs
// (e.g. recursive doubling on a non-power-of-two communicator).  May throw
// on bad inputs; build_schedule() catches.
using ScheduleBuilder = std::optional<Schedule> (*)(const ScheduleParams&);

// Why the algorithm cannot run on `nprocs` ranks (the text follows its
// name: "needs ..."), or nullptr when it can.
using SizeCheck = const char* (*)(int nprocs);

// The segment count auto mode passes as ScheduleParams::nseg.
using SegmentPolicy = int (*)(const SegmentInput&);

// The closed-form mean elapsed time (algorithms/cost_model.h).
struct CostInput;
using ClosedForm = double (*)(const CostInput&);

// What auto mode (selector.h) does with an algorithm.  It predicts the
// native models, then the candidates, each in table order, and the first of
// equally cheap candidates wins: the order of the rows is part of every
// decision.
enum class AutoRole {
  ForcedOnly,   // never chosen by auto (PAPSHIM_ALLREDUCE=... only)
  NativeModel,  // models what the MPI library's own collective runs
  Candidate,    // arrival-aware rival to native
};

struct AlgoInfo {
  Algo algo;
  const char* name;      // as in PAPSHIM_ALLREDUCE etc.
  Collective coll;
  bool needs_commutative;
  ScheduleBuilder build;     // nullptr for native (no schedule)
  const char* description;   // one line, for papshim-info and docs
  SizeCheck size_check;      // nullptr: runs on any communicator size
  SegmentPolicy segments;    // nullptr: one segment per rank (P)
  ClosedForm closed_form;    // nullptr: none (auto simulates it, see selector.h)
  AutoRole role;
  int auto_max_procs;        // auto weighs it only up to this many ranks (0: any)
  bool needs_spread;         // auto weighs it only on arrivals that are not balanced
  // Auto weighs it only when the job runs on one host (SelectInput::network
  // false): it sends P-1 flows into a rank at once, which a switched
  // network's port queues drop (incast).
  bool one_host_only;
};

const AlgoInfo& algo_info(Algo a);
// Whether `a` is the MPI library's own collective (the "native" row).
inline bool is_native(Algo a) { return a == Algo::Native; }

// The algorithm called `name` for collective `c`; nullopt for "auto" and
// unknown names ("native" is the native row, for every collective).
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
