// Compute-phase history of one communicator, keyed by call site.
//
// A compute phase is the time from the exit of the previous intercepted call
// on the communicator to the arrival at this one.  Each call site keeps its
// last `window` phases; the simple moving average (SMA) of the site that is
// expected next predicts the next arrival.  The site expected next is the
// one that followed the current site last time (iterative programs repeat
// their sequence of call sites).  Pure: no MPI, no clock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

namespace papshim {

class PhaseHistory {
 public:
  explicit PhaseHistory(int window) : window_(window < 1 ? 1 : window) {}

  // A call at `site` arrived at `arrival` and left at `exit` (seconds).
  void on_call(std::uint64_t site, double arrival, double exit);

  // Predicted arrival at the next call, or nothing before any history.
  std::optional<double> predict_next_arrival() const;
  std::optional<std::uint64_t> expected_next_site() const;
  std::optional<double> sma(std::uint64_t site) const;
  double last_exit() const { return last_exit_; }
  bool has_exit() const { return have_exit_; }

 private:
  int window_;
  std::unordered_map<std::uint64_t, std::deque<double>> phases_;
  std::unordered_map<std::uint64_t, std::uint64_t> successor_;
  std::uint64_t last_site_ = 0;
  double last_exit_ = 0;
  bool have_exit_ = false;
};

}  // namespace papshim
