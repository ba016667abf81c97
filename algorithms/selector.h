// Auto mode: a cost model predicts each candidate algorithm's mean elapsed
// time for the predicted arrival vector and picks the cheapest.
//
// Works as follows.  The catalog's rows (catalog.h) say what auto mode
// weighs: the native models and the arrival-aware candidates of the
// collective, in table order, each within its limits (communicator size,
// a spread to act on).  Every one's mean elapsed time for the arrival
// vector and the measured cost figures (Hockney alpha + beta * bytes per
// message, gamma per reduced byte) comes from its row's closed form
// (algorithms/cost_model.h, O(P log P)), or, with SelectInput::simulate and
// for Clairvoyant (no closed form; a candidate only up to
// kClairvoyantSimMaxP ranks), from running its schedule in the simulator.
// Only the pick's schedule is built, and only rank SelectInput::rank's
// program when that is set.  The MPI
// library's own algorithm ("native") is modelled by the classical
// arrival-blind algorithms it uses (the rows of role NativeModel: ring or
// Rabenseifner for allreduce, binomial tree for reduce, ring, Bruck or
// recursive doubling for allgather), taking the cheaper.  An arrival-aware candidate must remove at
// least `margin` of the time native spends above the lower bound (and two
// message latencies, and for allreduce a quarter of one whole-vector
// transfer) to be chosen, so a balanced job keeps the library's tuned
// algorithm, unless it is on trial (kTrialCalls) and the trials so far
// left room in their budget (kTrialBudget).  Every model is
// multiplied by the measured corrections (SelectInput::correction), so a
// candidate that measured faster than native on trial wins on what it
// measured.  For allreduce and reduce, when the predicted spread is below
// half a message time, or within the ranks' prediction noise, the arrivals
// are taken as balanced: native is weighed against the candidates that need
// no spread (reduce: the sorted binomial tree, which Open MPI's reduce may
// not be; allreduce: PRR, a ring of pipelined slices), on equal arrivals;
// allgather weighs Sparbit alone (the straggler allgather is a candidate
// only when the spread is not balanced).
// Everything here is a pure function
// of inputs that are identical on every rank.  The model of native: when the
// library is known (SelectInput::library), what its own rules run for the
// call, in the closed form of that algorithm with its log P messages
// (native_model.h); otherwise, and for reduce, the cheaper of the
// classical arrival-blind algorithms above.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/call_shape.h"
#include "algorithms/catalog.h"
#include "algorithms/cost_learner.h"
#include "algorithms/native_model.h"
#include "algorithms/node_map.h"
#include "algorithms/schedule.h"
#include "common/cost_figures.h"

namespace papshim {

// Until a candidate has run kTrialCalls calls (algorithms/cost_learner.h)
// it is on trial: predicted with the common factor alone, and run when
// predicted no slower than native by more than the margin, once native has
// taught the common factor kNativeCallsBeforeTrials calls (so that the trial
// measures the candidate against native, not against the bare model).
constexpr int kNativeCallsBeforeTrials = 2;

struct SelectInput {
  Collective coll = Collective::Allreduce;
  int nprocs = 1;
  int root = 0;
  std::size_t count = 0;       // elements (allgather: per rank)
  std::size_t elem_size = 4;   // bytes per element
  std::vector<double> arrival; // predicted, one per rank, any time origin
  CostFigures cost;
  bool commutative = true;
  MpiLibrary library = MpiLibrary::Unknown;  // whose rules native runs (native_model.h)
  int clv_segments = 0;        // 0: chosen here
  long tree_segsize = 32768;   // binomial trees: bytes per segment (0: P segments)
  double margin = 0.10;
  // The scatter of the ranks' prediction errors (seconds; RoundResult::noise):
  // a predicted spread below kNoiseSpreads of it is taken as balanced.  NaN
  // (not measured yet): no spread is acted on, native runs.
  double noise = 0;
  // Measured / modelled time, from the shim's own executions: per
  // collective a common factor learned from every call times one per
  // arrival-aware algorithm, and their call counts (all 1 and 0 untaught).
  CostLearner correction;
  // PAPSHIM_REPRODUCIBLE: for allreduce and reduce, schedule_params_for()
  // drops arrivals and costs and select_algorithm() picks by shape alone
  // (algorithms/reproducible.h).
  bool reproducible = false;
  // This process's rank: the pick's schedule holds only its program
  // (ScheduleParams::rank).  -1: every rank's program.
  int rank = -1;
  // true: predict every candidate by simulating its whole schedule (the
  // oracle; tests), instead of the closed forms.  O(P^2) and more.
  bool simulate = false;
  // The job spans several hosts, so messages cross a network: rows that
  // incast there (AlgoInfo::one_host_only) are not weighed.
  bool network = false;
};

// Independent errors of this median absolute deviation put the range of P
// predicted arrivals at a few times it (4.2 at P = 8, 5.2 at P = 16 for
// normal errors), balanced or not.
constexpr double kNoiseSpreads = 4.0;

struct Candidate {
  Algo algo;
  double predicted = 0;  // mean elapsed, seconds (closed form or simulated, times the correction)
  bool native_model = false;
  double correction = 1;
  bool simulated = false;  // predicted by the simulator, not a closed form
  // The library's own algorithm this entry models (algo is Native then),
  // or None: a catalog row.
  NativeAlgorithm native_algorithm = NativeAlgorithm::None;
};

struct Selection {
  Algo pick = Algo::Native;
  double predicted = 0;             // the pick's predicted mean elapsed (0: not modelled)
  double native_predicted = 0;      // native's (the cheapest model of it; 0: not modelled)
  std::string why;                  // one line: the reason for the pick
  std::vector<Candidate> table;     // every candidate considered
  double spread = 0;                // predicted arrival spread, seconds
  double message_time = 0;          // one transfer of the whole vector
  ScheduleParams params;            // for the pick, when not native
  std::shared_ptr<const Schedule> schedule;  // the pick's schedule
};

// Parameters (segments from the row's policy, tau) an algorithm gets for
// this input; timing-free under in.reproducible (make_timing_free).
ScheduleParams schedule_params_for(Algo a, const SelectInput& in);

// Under in.reproducible, for allreduce and reduce: reproducible_selection().
Selection select_algorithm(const SelectInput& in);

// The candidate table as text (PAPSHIM_LOG_LEVEL=debug).
std::string format_selection(const Selection& s);

// The job-wide settings a selection reads besides the call and its round:
// identical on every rank (checked at MPI_Init) and fixed after the start-up
// calibration.
struct SelectPolicy {
  std::array<bool, 3> auto_mode{};  // by Collective: no forced algorithm
  long min_bytes = 0;               // PAPSHIM_MIN_BYTES
  CostFigures cost;                 // calibrated at MPI_Init
  int clv_segments = 0;             // PAPSHIM_CLV_SEGMENTS (0: chosen by the selector)
  long tree_segsize = 0;            // binomial trees' segment bytes, resolved (0: P segments)
  bool reproducible = false;        // PAPSHIM_REPRODUCIBLE
  MpiLibrary library = MpiLibrary::Unknown;  // the MPI library, from MPI_Get_library_version
  bool network = false;             // the job spans several hosts (SelectInput::network)
  // Whether auto mode weighs a call of `bytes` per rank (allgather: per
  // block) on collective `c`: the one place of PAPSHIM_MIN_BYTES.
  bool weighs(Collective c, long long bytes) const {
    return auto_mode[static_cast<std::size_t>(c)] && bytes >= min_bytes;
  }
};

// Whether collective `c`'s schedules run between hosts on a communicator
// with several ranks on each of several hosts: the reductions do (the
// hierarchy reduces within each host first); allgather runs between all
// ranks.
inline bool runs_between_hosts(Collective c) { return c != Collective::Allgather; }

// The selector's input for a call of `shape` on `nprocs` ranks, `rank`
// this process's: `arrival` (one per rank, or empty: none), the learned
// factors and the prediction noise of its round.  `hosts` non-null: the
// schedule runs between them, one per host, each arriving with its latest
// rank.
SelectInput make_select_input(const SelectPolicy& policy, const CallShape& shape, int nprocs, int rank,
                              const std::vector<double>& arrival, const CostLearner& learned, const NodeMap* hosts,
                              double noise);

// Auto mode's selection for a call ahead of it (the helper thread, as soon
// as the call's round completed), or nullptr where auto mode would not
// weigh the call; `hosts`: the communicator's (null: one host), applied
// as runs_between_hosts() says.
std::shared_ptr<const Selection> select_ahead(const SelectPolicy& policy, const CallShape& shape, int nprocs,
                                              int rank, const std::vector<double>& arrival,
                                              const CostLearner& learned, const NodeMap* hosts, double noise);

}  // namespace papshim
