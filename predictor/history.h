// Compute-phase history of one communicator, keyed by call site.
//
// A compute phase is the time from the exit of the previous intercepted call
// on the communicator to the arrival at this one.  Each call site keeps its
// last `window` phases; the simple moving average (SMA) of the site that is
// expected next predicts the next arrival.  The site expected next is the
// one that followed the current site last time (iterative programs repeat
// their sequence of call sites).  Pure: no MPI, no clock.
//
// Anchored phases.  Where ranks leave a collective at very different times
// (a reduce's leaves long before its root) and then meet again before they
// compute (a barrier, a broadcast from the root), the time from a rank's own
// exit to its next arrival varies with the role it had, while the time from
// the previous call's latest exit over all ranks (the anchor, known to every
// rank from the exchange) does not.  Each site also keeps those anchored
// phases; the site's estimate uses whichever of the two histories has been
// steadier (smaller mean change from one call to the next over the last
// kSteadinessSamples calls).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_map>

namespace papshim {

class PhaseHistory {
 public:
  static constexpr int kSteadinessSamples = 8;

  explicit PhaseHistory(int window) : window_(window < 1 ? 1 : window) {}

  // A call at `site` arrived at `arrival` and left at `exit` (seconds);
  // `anchor` is the latest exit of any rank from the call before (NaN when
  // unknown: no anchored phase is recorded).
  void on_call(std::uint64_t site, double arrival, double exit,
               double anchor = std::numeric_limits<double>::quiet_NaN());

  // Predicted arrival at the next call from this rank's own exit, or nothing
  // before any history.
  std::optional<double> predict_next_arrival() const;
  // The next call's phase measured from the anchor (SMA), when the anchored
  // history of the expected site is the steadier one
  // (anchored_steadier_next); nothing otherwise.
  std::optional<double> anchored_phase_next() const;
  // The same SMA whether or not it is the steadier one (the round decides
  // for all ranks at once): nothing before any anchored sample.
  std::optional<double> anchored_sma_next() const;
  // Whether the anchored history of the expected site has been the
  // steadier one (true), the own one clearly so, by half (false); nothing
  // in between or while either has fewer than three samples.
  std::optional<bool> anchored_steadier_next() const;
  std::optional<std::uint64_t> expected_next_site() const;
  std::optional<double> sma(std::uint64_t site) const;
  double last_exit() const { return last_exit_; }
  bool has_exit() const { return have_exit_; }

 private:
  struct Site {
    std::deque<double> own, anchored;  // newest last, at most max(window, kSteadinessSamples)
  };
  std::optional<double> sma_of(const std::deque<double>& q) const;
  const Site* next_site() const;  // the expected next call's site, if it has a history

  int window_;
  std::unordered_map<std::uint64_t, Site> sites_;
  std::unordered_map<std::uint64_t, std::uint64_t> successor_;
  std::uint64_t last_site_ = 0;
  double last_exit_ = 0;
  bool have_exit_ = false;
};

// Mean absolute change between consecutive samples; infinity below 3 samples.
double mean_change(const std::deque<double>& q);

}  // namespace papshim
