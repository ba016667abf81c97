// The arrival model of one communicator: this rank's phase history (SMA and
// edge estimates), the message it publishes for a round, and, from a
// complete round's messages, the arrival vector and the prediction noise,
// identical on every rank.
//
// Anchored phases (predictor/history.h).  Each message also carries the
// rank's exit from the previous call, its phase from the anchor (SMA) and
// whether it found that history the steadier one; phases and edges are
// taken from the anchor for all ranks when most prefer it, else from each
// rank's own exit (AnchorUse, predicted_arrival below).  The anchor, the
// latest of those exits, is the same on every rank once the round is
// complete, and so is the vector built from it.
//
// Noise.  Each message carries the rank's last error (its arrival minus its
// prediction); how far those scatter around their common part, over the
// last rounds, says which predicted spreads are noise (noise()).  Until
// kNoiseRounds rounds have measured a scatter the noise is not known, and
// auto acts on no spread: the first predictions of a communicator rest on
// one or two calls of history (on the emulated cluster the start-up put
// 90 to 230 ms between the ranks' second and third calls, a spread that
// never came again).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "predictor/history.h"
#include "predictor/round_message.h"

namespace papshim {

// Rounds that must have measured the ranks' error scatter before the noise
// is known (ArrivalModel::noise).
constexpr std::size_t kNoiseRounds = 2;

// Which estimates a round takes from its anchor, the same for all ranks.
//
// Edges and SMA phases are each measured from one start for all ranks,
// decided by vote: a phase that really began after both (a barrier after
// the call) biases either start differently, and mixing them would turn the
// difference, e.g. how much later one rank left the last call than another,
// into a spread nobody has.  Edges start at the anchor unless most ranks
// that sent one found their own exits the steadier start (a rank that
// cannot tell yet does not object): from the anchor, what a start misses is
// the same for every rank, while own exits differ by as much as the last
// call let ranks leave apart (a reduce's leaves long before its root).
// SMA phases measure whole phases: from the anchor only when more than
// half of all ranks found those the steadier.
struct AnchorUse {
  bool edges = false;   // extrapolate edges from the anchor (edges_from_anchor)
  bool phases = false;  // SMA phases from the anchor (phases_from_anchor)
};
// One rank's arrival from its round message and the round's anchor (the
// latest exit; NaN: unknown): its edge extrapolated from the anchor, else
// its anchored phase after the anchor (as `use` says, when it has them),
// else its own prediction.
double predicted_arrival(const RoundMessage& msg, double anchor, const AnchorUse& use);
// Whether the round takes SMA phases from the anchor: more than half of all
// ranks sent an anchored phase and found those the steadier ones.
bool phases_from_anchor(const RoundMessage* msgs, int nranks);
// Whether the round's edges are extrapolated from the anchor: some rank
// sent an edge and fewer than half of those found their own exits the
// steadier start.  `msgs` holds `nranks` messages.
bool edges_from_anchor(const RoundMessage* msgs, int nranks);
// The median absolute deviation of the ranks' last errors from their median
// (finite ones; the upper median of an even count), or NaN with fewer than
// two: the same on every rank, from the same messages.
double error_scatter(const RoundMessage* msgs, int nranks);
// The largest deviation of a rank's last error from their median (NaN as
// above): how far the last call's arrivals strayed from the prediction,
// apart from what every rank shares.
double error_reach(const RoundMessage* msgs, int nranks);

class ArrivalModel {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

 public:
  explicit ArrivalModel(int window);

  // The exit of call `seq` at site `site`: its phase history, and how long
  // the call took (published with the next round).
  void on_call(std::uint64_t seq, std::uint64_t site, double arrival, double exit);
  std::optional<std::uint64_t> expected_next_site() const { return history_.expected_next_site(); }

  // This rank's message for the open round: `value` its predicted arrival,
  // with its anchored phase (SMA) or edge (edge mode) when it has one.
  RoundMessage message(double value, double anchored_phase = kNaN, double edge_time = kNaN,
                       double edge_fraction = kNaN) const;
  // SMA mode, at the exit of the previous call: the message's value and
  // anchored phase (NaN: none yet).
  double sma_value() const;
  double sma_anchored_phase() const;
  // Edge mode: the value published at papshim_edge(fraction) at time `t`,
  // extrapolated from this rank's own exit; nothing without an exit or for
  // a fraction outside (0, 1].
  std::optional<double> edge_value(double t, double fraction) const;

  // A complete round of call `seq`: its arrival vector, anchor and noise.
  void on_round(std::uint64_t seq, const RoundMessage* msgs, int nranks);
  const std::vector<double>& arrival() const { return arrival_; }
  bool vector_valid() const;  // every arrival finite
  // RoundResult::noise: the median over the last five rounds of the error
  // scatter (NaN: not known yet, fewer than kNoiseRounds rounds measured
  // one).
  double noise() const { return noise_; }

  // The entry of a call: nothing predicted (no_prediction), or the round's
  // prediction for `rank` (entered), whose error against `arrival` goes out
  // with the next round.
  void no_prediction() { my_prediction_ = kNaN; }
  void entered(int rank, double arrival);
  double my_prediction() const { return my_prediction_; }

 private:
  PhaseHistory history_;
  double last_elapsed_ = 0;
  double my_prediction_ = kNaN;
  double last_error_ = kNaN;      // arrival - my_prediction_ at the last predicted call (NaN: none yet)
  double noise_ = kNaN;           // noise(), updated by every completed round
  std::array<double, 5> scatters_{};  // the last rounds' error scatters, a ring
  std::size_t scatter_count_ = 0;     // how many were ever stored
  std::vector<double> arrival_;   // of the last complete round
  double anchor_ = 0;             // ... its anchor (NaN: none)
  std::uint64_t anchor_seq_ = ~0ull;
};

}  // namespace papshim
