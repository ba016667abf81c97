// The decision of one call: which algorithm runs it, and its schedule.
//
// Works as follows.  dispatch() gathers everything a decision may read into
// one DecisionInputs, once per call, after the communicator's state (the
// private duplicate and its hosts) exists; decide() reads nothing else.
// Every field but `select.rank` (whose program of the schedule to build) is
// identical on every rank of the communicator: the call's arguments, the
// job-wide settings (checked at MPI_Init), the calibrated costs and the
// predictor's round (arrivals, learned factors, noise), so every rank takes
// the same decision (the consistency invariant).  PAPSHIM_CHECK hashes
// exactly this struct (inputs_hash) and stops the job when ranks differ.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/node_map.h"
#include "algorithms/selector.h"
#include "predictor/predictor.h"

namespace papshim {

struct DecisionInputs {
  CallShape shape;  // its collective included
  std::optional<Algo> forced;  // PAPSHIM_<COLLECTIVE> names an algorithm; none: auto
  // Non-empty: why no schedule of papshim's may run this call (count 0, an
  // op a schedule cannot reorder, below PAPSHIM_MIN_BYTES in auto mode ...).
  std::string screened_out;
  bool predicting = false;   // auto mode with the predictor on (PAPSHIM_PREDICTOR)
  bool has_round = false;    // the predictor delivered this call's arrival vector
  bool between_hosts = false;  // a schedule would run between hosts (select's ranks are hosts)
  bool reproducible = false;   // PAPSHIM_REPRODUCIBLE, for a reduction
  SelectInput select;  // what the cost model and the schedule builders read
};

// What one call does.
struct Decision {
  Algo pick = Algo::Native;  // what the setting or auto chose (runs only with a schedule)
  std::string fallback;      // non-empty: the requested algorithm could not run
  ScheduleParams params;
  std::shared_ptr<const Schedule> sched;
  bool by_auto = false;   // auto mode ran the cost model for this call
  bool ready = false;     // ... and the helper thread had the decision ready
  double predicted = 0;   // the cost model's mean elapsed for the pick
  double native_predicted = 0;  // ... and for native (0: not modelled)
  double gain = 0;        // native's predicted mean elapsed minus the pick's (0: native picked)

  // What runs: the pick when it has a schedule, else the library's own.
  Algo algo() const { return sched ? pick : Algo::Native; }
  void run_native(std::string why) {
    fallback = std::move(why);
    sched.reset();
  }
};

// PAPSHIM_ALLREDUCE, PAPSHIM_REDUCE or PAPSHIM_ALLGATHER as given.
const std::string& setting_for(Collective c);
// The forced algorithm of collective `c` (none: auto), as configured.
const std::optional<Algo>& forced_algo(Collective c);
// Reads the algorithm settings and the calibrated costs once (after the
// configuration is parsed and the start-up calibration ran).
void configure_decisions();
// The job-wide part of every selection (also the helper thread's).
const SelectPolicy& select_policy();

// Why the setting alone runs a call of `bytes` per rank (allgather: per
// block) native, or nullptr: forced native, or auto below
// PAPSHIM_MIN_BYTES (the one place of that rule).  Cheap: no allocation.
const char* setting_screen(Collective c, long long bytes);

// Whether the commutativity of the op matters to what the setting of
// collective `c` may run (ineligible()'s third argument).
bool needs_commutative(Collective c);

// Why no schedule may run a call of this shape, or "": the setting runs it
// native, auto mode does not weigh its size, or `eligibility` (ineligible()'s
// verdict on the call's arguments) says so.
std::string screen(const CallShape& shape, std::string eligibility);

// Whether a call that passed the screen needs the communicator's private
// duplicate (and its hosts) before it is decided: a forced algorithm to
// build, or auto mode predicting.
bool needs_private(Collective c);

// The inputs of one call, from its screen, the communicator's hosts (null:
// one host, or no private duplicate) and the predictor's vector for this
// call, if any.
DecisionInputs decision_inputs(const CallShape& shape, int nprocs, int rank, std::string screened_out,
                               const std::optional<RoundResult>& round, const NodeMap* hosts);

// The decision, from `in` alone.  `ahead`: the helper thread's selection
// for this call, when it computed one for the same shape (the same pure
// function of the same inputs).  `seq` and `comm_id` name the call in the
// debug log.
Decision decide(const DecisionInputs& in, std::shared_ptr<const Selection> ahead, std::uint64_t seq,
                std::uint64_t comm_id);

// A hash of every field of `in` that must agree across ranks (all but the
// rank whose program is built).
std::uint64_t inputs_hash(const DecisionInputs& in);

}  // namespace papshim
