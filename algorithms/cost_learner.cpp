#include "algorithms/cost_learner.h"

#include <algorithm>
#include <cmath>

#include "algorithms/portable_math.h"
#include "common/hash.h"

namespace papshim {

namespace {

// Every power of a learned factor goes through here.  These factors feed
// the decisions every rank must take identically (selector.cpp
// correction_for): portable_pow rounds alike on every CPU and math library,
// where std::pow need not (portable_math.h).
double factor_pow(double x, double y) { return portable_pow(x, y); }

double clamp_factor(double f) { return std::min(std::max(f, 0.05), 50.0); }

}  // namespace

bool CostLearner::known(Collective c, Algo a) {
  return static_cast<int>(c) < kCollectives && static_cast<int>(a) >= 0 && static_cast<int>(a) < kMaxAlgos;
}

double CostLearner::own(Collective c, Algo a) const {
  if (is_native(a) || !known(c, a)) return 1.0;
  return of(c).algo[static_cast<std::size_t>(a)].own;
}

std::int64_t CostLearner::calls(Collective c, Algo a) const {
  if (!known(c, a)) return 0;
  return is_native(a) ? of(c).native_calls : of(c).algo[static_cast<std::size_t>(a)].calls;
}

void CostLearner::set_own(Collective c, Algo a, double f) {
  if (!is_native(a) && known(c, a)) of(c).algo[static_cast<std::size_t>(a)].own = f;
}

void CostLearner::set_calls(Collective c, Algo a, std::int64_t n) {
  if (!known(c, a)) return;
  if (is_native(a))
    of(c).native_calls = n;
  else
    of(c).algo[static_cast<std::size_t>(a)].calls = n;
}

void CostLearner::expire_verdicts(CollectiveCosts& cc) {
  for (std::size_t a = 1; a < cc.algo.size(); ++a) {  // from 1: native has no own factor
    AlgoCosts& ac = cc.algo[a];
    if (!(ac.regime_at > 0)) continue;
    const double shift = cc.regime / ac.regime_at;
    if (shift > kRegimeShift || shift * kRegimeShift < 1.0) ac = AlgoCosts{};
  }
}

void CostLearner::learn(const MeasuredCall& call) {
  constexpr double kStep = 0.5;     // share of the (log) error the common factor takes
  constexpr double kOwnStep = 0.3;  // ... and an own factor, of what the common one left
  // A call whose arrivals were mispredicted measures the prediction more
  // than the model: a schedule built for one late rank that found another
  // one late may take far longer than its model says, and that must not
  // count against it while it is then never tried again.  No factor learns
  // from such a call.
  constexpr double kMispredicted = 0.1;  // of the predicted time
  constexpr double kRegimeStep = 0.1;  // share of native's (log) ratio the regime factor takes per call
  if (!known(call.coll, call.algo)) return;
  CollectiveCosts& cc = of(call.coll);
  const bool native = is_native(call.algo);
  AlgoCosts* mine = native ? nullptr : &cc.algo[static_cast<std::size_t>(call.algo)];
  const bool informative = !(call.reach > kMispredicted * call.predicted);  // NaN (not known) counts
  // An algorithm's first call on a communicator warms it up (first touch of
  // its buffers, the predictor's first orders for it): on the emulated
  // cluster the sorted binomial tree's first call ran 1.5 to 4 times slower
  // than its next ones, enough to fail every trial.  It teaches nothing.
  const double runs_before = mine ? static_cast<double>(mine->calls) : 0.0;
  const bool warm = native || runs_before >= 1;
  const double measured = call.measured;
  if (call.predicted > 0 && informative && warm && measured > 0 && std::isfinite(measured)) {
    // Most of what a model misses is the machine's (contention, the
    // network's real rate), the same for every algorithm: the common
    // factor learns it from native's calls, or from whatever ran until
    // native has run, so an untried algorithm starts from what was
    // measured rather than from the bare model.  An algorithm's own
    // factor learns what stays after it: while it is on trial as the mean
    // of its trial calls (what the trial is for), then more slowly: a few
    // noisy calls must not send auto exploring its rivals.
    const double common = cc.common;
    const double own = native ? 1.0 : mine->own;
    const double ratio = clamp_factor(measured / call.predicted);  // the prediction carried common * own
    // Native's first calls set the common factor to their mean, so that
    // the trials that follow them are measured against native itself.
    const double native_before = static_cast<double>(cc.native_calls);
    const bool native_taught = native_before > 0;
    const double common_step = native && native_before < kTrialCalls ? 1.0 / (native_before + 1.0) : kStep;
    const double new_common =
        native || !native_taught ? clamp_factor(common * factor_pow(ratio, common_step)) : common;
    cc.common = new_common;
    if (native) {
      // Native's first call sets the regime factor, later ones move it slowly.
      const double regime_step = native_before == 0 ? 1.0 : kRegimeStep;
      cc.regime = clamp_factor(factor_pow(cc.regime, 1 - regime_step) * factor_pow(ratio * common, regime_step));
      cc.native_calls += 1;
      expire_verdicts(cc);
    } else {
      // On trial (selector.cpp correction_for) its prediction carried
      // the common factor alone; the mean over its calls after the first.
      const bool trial = runs_before < kTrialCalls;
      const double carried = trial ? common : common * own;
      const double own_target = clamp_factor(carried * ratio / new_common);
      const double step = trial ? 1.0 / runs_before : kOwnStep;
      mine->own = clamp_factor(factor_pow(own, 1 - step) * factor_pow(own_target, step));
      mine->regime_at = cc.regime;
    }
  }
  // Every call counts towards a trial, taught or not: what bounds the calls
  // an algorithm runs on trial is what a bad one costs.  And every measured
  // call counts towards the trial budget: a trial call by what it took
  // beyond native's prediction for it, every call by what it took.
  if (call.predicted > 0 && measured > 0 && std::isfinite(measured)) {
    cc.seen += measured;
    if (mine && runs_before < kTrialCalls && call.native_predicted > 0)
      cc.trial_excess += measured - call.native_predicted;
  }
  if (mine && call.predicted > 0) mine->calls += 1;
}

std::uint64_t CostLearner::fingerprint() const { return fnv1a(kFnvOffset, colls_.data(), sizeof colls_); }

}  // namespace papshim
