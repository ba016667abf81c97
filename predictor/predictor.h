// The predictor of one communicator: learns compute phases per call site,
// publishes each rank's predicted arrival for the next call, and hands every
// rank the same arrival vector at the call's entry.
//
// Works as follows, one part per job:
// - the round channel (predictor/round_channel.h) runs the rounds: round r
//   carries every rank's prediction for call r, opened at the exit of call
//   r-1 and complete at the latest at the entry of call r; why its
//   messages match up, why the wait at entry is bounded, and what happens
//   to a round at the communicator's free are explained there;
// - the round policy (predictor/round_policy.h) says which calls get one;
// - the arrival model (predictor/arrival_model.h) builds this rank's
//   message from its phase history and, from a complete round, the arrival
//   vector and the prediction noise;
// - the cost learner (algorithms/cost_learner.h) folds what the previous
//   call measured into the factors auto multiplies into its predictions.
//
// Measured costs.  Each rank's message also carries how long it spent in
// the previous call (exit - arrival).  When a round completes, every rank
// holds the same vector of those times, so the mean elapsed time of the
// previous call is known identically everywhere; compared with what the
// cost model predicted for the algorithm that ran, it updates the
// collective's common factor (from native's calls) or the algorithm's own
// (update_corrections), which auto mode multiplies into its predictions.
// A verdict holds until native's time changes (kRegimeShift).
//
// Threads.  With the helper thread (predictor/helper_thread.h) the round is
// advanced and completed by poll() as soon as the data is in (it may post
// the exchange's later steps, never the first), and the helper computes the
// decision for the call ahead of time (precompute slot).  Every method
// takes the predictor's mutex, so the helper and the application thread
// never touch the exchange at once.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "algorithms/call_shape.h"
#include "algorithms/cost_learner.h"
#include "algorithms/selector.h"
#include "config/params.h"
#include "predictor/arrival_model.h"
#include "predictor/round_channel.h"
#include "predictor/round_message.h"
#include "predictor/round_policy.h"

namespace papshim {

// The result of a complete round: predicted arrivals and corrections.
struct RoundResult {
  std::vector<double> arrival;
  CostLearner corrections;
  // How far the ranks' prediction errors scatter around their common part
  // (the median over the last five rounds of the median absolute deviation
  // of the ranks' last errors; NaN: not known yet, ArrivalModel::noise).  A predicted spread within a few
  // of these is noise, not a pattern; an error all ranks share moves no
  // one's arrival relative to the others and does not count.
  double noise = std::numeric_limits<double>::quiet_NaN();
};

// A decision computed ahead of the call: valid for call `seq` if the call
// has the shape it was computed for.
struct Precomputed {
  std::uint64_t seq = ~0ull;
  CallShape shape;
  std::shared_ptr<const Selection> selection;
};

// Folds the previous call's measured mean elapsed time (the messages'
// last_elapsed) into the factors (SelectInput::correction), as
// CostLearner::learn says, unless its arrivals strayed from the prediction
// (error_reach).  The same on every rank, from the same messages.
void update_corrections(CostLearner& factors, const RanDecision& ran, const RoundMessage* msgs, int nranks);

class Predictor {
 public:
  // `xchg`: the private duplicate the rounds run on; `tag_top`: its
  // MPI_TAG_UB (the rounds use the kRoundTags tags up to it); `min_bytes`:
  // PAPSHIM_MIN_BYTES and `quiet_skip`: PAPSHIM_QUIET_SKIP (RoundPolicy).
  Predictor(MPI_Comm xchg, int size, int rank, int tag_top, int window, PredictorMode mode, long min_bytes,
            long quiet_skip = 0);
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Entry of call `seq`, arriving at `arrival` (common time base).  Returns
  // the arrival vector (identical on every rank), or nothing when this call
  // has no complete prediction.
  std::optional<RoundResult> on_entry(std::uint64_t seq, double arrival);
  // This rank's published prediction for the current call (NaN: none).
  double my_prediction() const { return model_.my_prediction(); }
  // Exit of call `seq` of `bytes_per_rank` bytes.  Returns whether it
  // opened the round of call seq+1 (RoundPolicy).
  bool on_exit(std::uint64_t seq, std::uint64_t site, const CallShape& shape, double arrival, double exit,
               std::uint64_t bytes_per_rank, const RanDecision& ran);
  // papshim_edge(fraction) at time `t`.
  void on_edge(double t, double fraction);
  // A hash of the state that decides this rank's next rounds and what they
  // teach: the round policy (which calls get a round, the quiet rounds),
  // the round's call and the learned factors (PAPSHIM_CHECK compares it
  // across ranks at every call it checks).
  std::uint64_t state_fingerprint() const;

  // Helper thread: completes the open round if its data is in.  Returns true
  // once per round, with the vector, the round's call and its expected shape.
  // Sets `advanced` when the round's exchange moved on (left alone otherwise).
  bool poll(RoundResult& out, std::uint64_t& seq, CallShape& shape, bool& advanced);
  bool waiting() const;  // a round is open and not yet complete
  void store_precomputed(Precomputed p);
  std::optional<Precomputed> take_precomputed(std::uint64_t seq);

  // Communicator freed: starts this rank's part of the open round and waits
  // for it a bounded time.  True: nothing is outstanding, the private
  // duplicate may be freed.  False: the round is still running; park() the
  // predictor with the duplicate instead of freeing it.
  bool close();

  // Process-wide list of closed predictors whose round is still running
  // (ParkedRounds).  park() takes over `xchg` (the private duplicate) and
  // frees it once the round completes; test_parked() does so for the
  // completed ones (never blocks).  finish_all() (MPI_Finalize) completes
  // the open rounds of the `live` predictors and of the parked ones, all
  // advanced together.
  static void park(std::shared_ptr<Predictor> p, MPI_Comm xchg);
  static void test_parked() { ParkedRounds::test(); }
  static void finish_all(const std::vector<std::shared_ptr<Predictor>>& live);
  static std::size_t parked() { return ParkedRounds::count(); }
  // This process's rounds over all its communicators: opened, and left out
  // while auto kept running native (QuietRounds), for the report.
  static std::uint64_t rounds_opened() { return RoundChannel::opened(); }
  static std::uint64_t rounds_skipped() { return RoundPolicy::skipped(); }

 private:
  // Publishes this rank's part of the open round if it has not, then
  // advances it without blocking: true once nothing is outstanding (the
  // round is then over).
  bool settle();
  // Starts the exchange with this rank's message, if the round is open and
  // it has not.
  void publish(double value, double anchored_phase = std::numeric_limits<double>::quiet_NaN(),
               double edge_time = std::numeric_limits<double>::quiet_NaN(),
               double edge_fraction = std::numeric_limits<double>::quiet_NaN());
  void round_complete();  // the vector, the noise and the corrections (once per round)
  RoundResult result() const;

  mutable std::mutex mu_;
  int size_, rank_;
  PredictorMode mode_;
  RoundPolicy policy_;
  ArrivalModel model_;
  std::unordered_map<std::uint64_t, CallShape> shape_by_site_;
  CallShape next_shape_;
  RanDecision ran_;           // what ran in the call before the open round
  CostLearner corrections_;
  RoundChannel channel_;
  Precomputed pre_;
};

}  // namespace papshim
