// Measured corrections of the cost model: what auto learns from the calls
// papshim ran, multiplied into every prediction (SelectInput::correction,
// selector.cpp correction_for).
//
// Works as follows.  Per collective a common factor (measured / modelled
// time: most of what a model misses is the machine's, the same for every
// algorithm) is taught by native's calls, or by whatever ran until native
// has run; per arrival-aware algorithm an own factor learns what stays
// after the common one.  A call teaches from the ranks' mean elapsed time
// and the model's prediction for what ran, both identical on every rank
// (one prediction round's messages), so every rank holds the same factors.
// Call counts: how many calls an algorithm ran (its trial, kTrialCalls),
// and for native how many taught the common factor.  Factors start at 1,
// counts at 0.
//
// A verdict holds until the regime changes.  An algorithm's own factor stays
// what its calls taught it: one that measured slower than native is not
// tried again on a whim.  But it was measured against native's time then:
// when native's time, in the collective's regime factor (a slow average of
// what native's calls teach the common factor), has moved by more than
// kRegimeShift either way since the algorithm last learned, every own
// factor of the collective taught before goes back to 1 and its algorithm
// back on trial (within the trial budget, kTrialBudget).
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "algorithms/catalog.h"
#include "algorithms/schedule.h"

namespace papshim {

// Until a candidate has run this many calls it is on trial: predicted with
// the common factor alone (selector.h).
constexpr int kTrialCalls = 3;

// How far native's time (the regime factor) must move, as a ratio either
// way, before the verdicts learned against it expire.
constexpr double kRegimeShift = 1.25;

// What trials may cost: a trial call runs only while the time trial calls
// took beyond native's, summed over the communicator's calls of the
// collective, is at most this share of the time every call the learner saw
// took (CostLearner::trial_allowed).
constexpr double kTrialBudget = 0.02;

// One call as the learner sees it: identical on every rank.
struct MeasuredCall {
  Collective coll = Collective::Allreduce;
  Algo algo = Algo::Native;
  // The cost model's mean elapsed for what ran, seconds (0: not modelled:
  // the call teaches and counts nothing).
  double predicted = 0;
  // The ranks' mean elapsed time in it, seconds (NaN or <= 0: unknown).
  double measured = std::numeric_limits<double>::quiet_NaN();
  // How far its arrivals strayed from the prediction, apart from what every
  // rank shares (error_reach, predictor/arrival_model.h; NaN: unknown).
  double reach = std::numeric_limits<double>::quiet_NaN();
  // The model of native's mean elapsed for the same call, times the
  // correction it carried, seconds (0: not known).  What a trial call is
  // charged against (kTrialBudget).
  double native_predicted = 0;
};

class CostLearner {
 public:
  // Algo values index the factors: room for this many.
  static constexpr int kMaxAlgos = 32;
  static_assert(kAlgoCount <= kMaxAlgos, "an Algo value beyond the learner's room");

  // The collective's common factor (1 until taught).
  double common(Collective c) const { return of(c).common; }
  // Algorithm `a`'s own factor on collective `c` (1 until taught; always 1
  // for native, which has none).
  double own(Collective c, Algo a) const;
  // The calls `a` ran on `c` (native: the calls that taught the common
  // factor).
  std::int64_t calls(Collective c, Algo a) const;
  // Whether a candidate may run a trial call on `c`: what trial calls took
  // beyond native's predicted time (negative when they ran faster) is at
  // most kTrialBudget of the measured time of every call seen on `c`.  A
  // trial may overshoot the budget by the one call that crossed it; the
  // next waits until the calls after it have made room.  The learner sees
  // only the calls a prediction round followed (every trial call, but not
  // every native call once the rounds thin out), so the share of the
  // job's whole collective time is smaller still.
  bool trial_allowed(Collective c) const { return of(c).trial_excess <= kTrialBudget * of(c).seen; }
  // The sums behind trial_allowed: the trial calls' time beyond native's,
  // and every measured call's time, seconds.
  double trial_excess(Collective c) const { return of(c).trial_excess; }
  double seen_time(Collective c) const { return of(c).seen; }

  // Set by hand (tests).  Native has no own factor: set_own ignores it, as
  // it ignores an Algo beyond kMaxAlgos.
  void set_common(Collective c, double f) { of(c).common = f; }
  void set_own(Collective c, Algo a, double f);
  void set_calls(Collective c, Algo a, std::int64_t n);
  void set_trial_time(Collective c, double excess, double seen) {
    of(c).trial_excess = excess;
    of(c).seen = seen;
  }

  // Folds one call into the factors: its collective's common one, and the
  // own one of the arrival-aware algorithm that ran; not when its arrivals
  // strayed from the prediction by more than a tenth of its predicted time
  // (call.reach).  Counts the call towards the algorithm's trial either
  // way, and its time towards the trial budget.  A native call that moves
  // the regime factor past kRegimeShift from where an algorithm last
  // learned puts that algorithm back on trial.  The same on every rank,
  // from the same call.
  void learn(const MeasuredCall& call);

  // A hash of every factor and count (PAPSHIM_CHECK compares it across
  // ranks): equal learners give equal fingerprints.
  std::uint64_t fingerprint() const;
  // The collective's regime factor: a slow average of native's ratio of
  // measured to modelled time (1 until native has run).
  double regime(Collective c) const { return of(c).regime; }

 private:
  struct AlgoCosts {
    double own = 1.0;
    std::int64_t calls = 0;
    double regime_at = 0;  // the regime factor when `own` last learned (0: never)
  };
  struct CollectiveCosts {
    double common = 1.0;
    std::int64_t native_calls = 0;           // native's calls that taught `common`
    double regime = 1.0;                     // regime(): native's ratio, slowly
    double trial_excess = 0;                 // trial calls' measured minus native's predicted, seconds
    double seen = 0;                         // every measured call's time, seconds
    std::array<AlgoCosts, kMaxAlgos> algo{};  // by Algo value; native's slot unused
  };
  static_assert(sizeof(CollectiveCosts) == (5 + 3 * kMaxAlgos) * 8, "no padding: fingerprint() hashes the bytes");
  static constexpr int kCollectives = 3;
  static bool known(Collective c, Algo a);
  CollectiveCosts& of(Collective c) { return colls_[static_cast<std::size_t>(c)]; }
  const CollectiveCosts& of(Collective c) const { return colls_[static_cast<std::size_t>(c)]; }
  // The verdicts of `cc` learned in another regime expire (the class comment).
  static void expire_verdicts(CollectiveCosts& cc);

  std::array<CollectiveCosts, kCollectives> colls_{};
};

}  // namespace papshim
