#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "predictor/history.h"
#include "predictor/predictor.h"

namespace papshim {
namespace {

TEST(PhaseHistory, NoPredictionBeforeHistory) {
  PhaseHistory h(4);
  EXPECT_FALSE(h.predict_next_arrival());
  h.on_call(1, 0.0, 1.0);
  EXPECT_FALSE(h.predict_next_arrival());  // one call: no phase yet
}

TEST(PhaseHistory, MovingAverageOverWindow) {
  PhaseHistory h(3);
  double t = 0;
  for (double phase : {1.0, 2.0, 3.0, 4.0, 5.0}) {  // compute phases of site 7
    t += phase;
    h.on_call(7, t, t + 0.5);
    t += 0.5;
  }
  ASSERT_TRUE(h.sma(7));
  EXPECT_DOUBLE_EQ(*h.sma(7), (3.0 + 4.0 + 5.0) / 3.0);  // the first call has no phase
  ASSERT_TRUE(h.predict_next_arrival());
  EXPECT_DOUBLE_EQ(*h.predict_next_arrival(), t + 4.0);
}

TEST(PhaseHistory, PredictsTheSiteThatFollows) {
  // An iteration calls site A after a long phase, then site B after a short one.
  PhaseHistory h(2);
  double t = 0;
  for (int it = 0; it < 4; ++it) {
    t += 10;
    h.on_call(0xA, t, t + 1);
    t += 1;
    t += 2;
    h.on_call(0xB, t, t + 1);
    t += 1;
  }
  EXPECT_EQ(*h.expected_next_site(), 0xAu);
  EXPECT_DOUBLE_EQ(*h.predict_next_arrival(), t + 10);
  h.on_call(0xA, t + 10, t + 11);
  EXPECT_EQ(*h.expected_next_site(), 0xBu);
  EXPECT_DOUBLE_EQ(*h.predict_next_arrival(), t + 11 + 2);
}

TEST(PhaseHistory, FollowsAChangeWithinTheWindow) {
  const int window = 4;
  PhaseHistory h(window);
  double t = 0;
  auto step = [&](double phase) {
    t += phase;
    h.on_call(1, t, t);
  };
  for (int i = 0; i < 10; ++i) step(0.001);
  for (int i = 0; i < window; ++i) step(0.050);  // this rank becomes late
  EXPECT_NEAR(*h.predict_next_arrival() - t, 0.050, 1e-12);
}

// A rank that leaves early on every other call (a leaf of a reduce tree,
// then its root) and starts computing when the last rank has left: its own
// phases alternate, the phases from the anchor do not.
TEST(PhaseHistory, AnchoredPhaseWhenItIsTheSteadierOne) {
  PhaseHistory h(2);
  double anchor = 0;
  for (int i = 0; i < 10; ++i) {
    const double arrival = anchor + 0.030;            // compute 30 ms after the last exit
    const double exit = arrival + (i % 2 ? 0.005 : 0.080);  // leaf or root
    h.on_call(1, arrival, exit, i == 0 ? NAN : anchor);
    anchor = arrival + 0.080;                         // the latest exit of the call
  }
  ASSERT_TRUE(h.anchored_phase_next());
  EXPECT_NEAR(*h.anchored_phase_next(), 0.030, 1e-12);
  // The own-exit estimate is off by half the alternation.
  EXPECT_GT(std::abs(*h.predict_next_arrival() - (anchor + 0.030)), 0.03);
}

TEST(PhaseHistory, OwnPhaseWhenItIsTheSteadierOne) {
  PhaseHistory h(2);
  double t = 0;
  for (int i = 0; i < 10; ++i) {
    const double arrival = t + 0.030;
    const double anchor = t - (i % 2 ? 0.001 : 0.050);  // others leave at scattered times
    t = arrival + 0.005;
    h.on_call(1, arrival, t, i == 0 ? NAN : anchor);
  }
  EXPECT_FALSE(h.anchored_phase_next());
  ASSERT_TRUE(h.anchored_steadier_next());
  EXPECT_FALSE(*h.anchored_steadier_next());
  EXPECT_NEAR(*h.predict_next_arrival() - t, 0.030, 1e-12);
}

// Both histories about as steady (own changes 2 ms a call, anchored 3 ms):
// no preference either way.
TEST(PhaseHistory, NoPreferenceWhenBothAreAboutAsSteady) {
  PhaseHistory h(2);
  double exit = 0;
  for (int i = 0; i < 8; ++i) {
    const double arrival = exit + 0.030 + (i % 2 ? 0.002 : 0.0);
    const double anchor = exit - (i % 2 ? 0.001 : 0.0);  // anchored phase: 30, 33, 30, 33 ms
    exit = arrival + 0.005;
    h.on_call(1, arrival, exit, i == 0 ? NAN : anchor);
  }
  EXPECT_FALSE(h.anchored_steadier_next());
}

TEST(PhaseHistory, NoAnchoredPhaseBeforeThreeSamples) {
  PhaseHistory h(2);
  // Arrivals 0.1 s after the anchor; own exits alternate, so the anchored
  // history is the steadier one once it has three samples.
  auto call = [&](int k) {
    const double arrival = 0.2 * k;
    h.on_call(1, arrival, arrival + (k % 2 ? 0.01 : 0.09), k == 0 ? NAN : arrival - 0.1);
  };
  for (int k = 0; k < 3; ++k) call(k);
  EXPECT_FALSE(h.anchored_phase_next());  // two anchored samples
  EXPECT_FALSE(h.anchored_steadier_next());  // cannot tell yet
  ASSERT_TRUE(h.anchored_sma_next());        // the SMA itself is there
  EXPECT_NEAR(*h.anchored_sma_next(), 0.1, 1e-12);
  call(3);
  ASSERT_TRUE(h.anchored_phase_next());
  EXPECT_NEAR(*h.anchored_phase_next(), 0.1, 1e-12);
  ASSERT_TRUE(h.anchored_steadier_next());
  EXPECT_TRUE(*h.anchored_steadier_next());
}

TEST(RoundMessage, ArrivalFromAnchorEdgeOrOwnPrediction) {
  const double nan = NAN;
  // own prediction, elapsed, exit, anchored phase, edge time, edge fraction, prefers anchor, recent error
  const RoundMessage own{5.0, 0.1, 1.0, nan, nan, nan, 0, nan};
  const AnchorUse both{true, true}, neither{false, false}, phases{false, true}, edges{true, false};
  EXPECT_EQ(predicted_arrival(own, 2.0, both), 5.0);
  const RoundMessage phase{5.0, 0.1, 1.0, 0.5, nan, nan, 1, nan};
  EXPECT_EQ(predicted_arrival(phase, 2.0, phases), 2.5);
  EXPECT_EQ(predicted_arrival(phase, 2.0, edges), 5.0);  // the round takes phases from own exits
  EXPECT_EQ(predicted_arrival(phase, nan, both), 5.0);   // no anchor: own prediction
  // Halfway at 2.25 with the phase begun at the anchor 2.0: arrival 2.5.
  const RoundMessage edge{5.0, 0.1, 1.0, nan, 2.25, 0.5, 1, nan};
  EXPECT_DOUBLE_EQ(predicted_arrival(edge, 2.0, edges), 2.5);
  EXPECT_EQ(predicted_arrival(edge, 2.0, neither), 5.0);  // the round extrapolates from own exits
  EXPECT_EQ(predicted_arrival(edge, 2.5, edges), 5.0);   // an edge before the anchor: not from it
}

// Anchored phases are used for all ranks or for none: more than half of
// all ranks must have one and prefer it (a rank without one has no vote).
TEST(RoundMessage, PhasesFromTheAnchorByMajorityOfAllRanks) {
  const double nan = NAN;
  std::vector<RoundMessage> msgs;
  auto add = [&](double phase, double vote) { msgs.push_back(RoundMessage{1.0, 0.1, 1.0, phase, nan, nan, vote, nan}); };
  add(0.5, 1);
  add(nan, 1);  // prefers, but sent no phase
  add(0.5, 0);
  add(0.5, 1);
  EXPECT_FALSE(phases_from_anchor(msgs.data(), 4));  // 2 of 4
  add(0.5, 1);
  EXPECT_TRUE(phases_from_anchor(msgs.data(), 5));  // 3 of 5
  EXPECT_FALSE(phases_from_anchor(msgs.data(), 0));
}

// The round's error scatter: how far the ranks' last errors lie from their
// median, identical for every rank that holds the same messages.  An error
// every rank shares is no scatter; fewer than two errors: not known.
TEST(RoundMessage, ErrorScatterIgnoresTheErrorAllRanksShare) {
  const double nan = NAN;
  auto msg = [nan](double err) { return RoundMessage{1.0, 0.1, 1.0, nan, nan, nan, 0, err}; };
  std::vector<RoundMessage> msgs{msg(nan), msg(0.020)};
  EXPECT_TRUE(std::isnan(error_scatter(msgs.data(), 2)));
  msgs = {msg(0.018), msg(0.018), msg(0.018), msg(0.018)};  // all 18 ms late: no scatter
  EXPECT_EQ(error_scatter(msgs.data(), 4), 0.0);
  // Errors 1, 2, 3, 50 ms (and one unknown): median 3; deviations 2, 1, 0, 47: upper median 2.
  msgs = {msg(0.003), msg(0.050), msg(nan), msg(0.001), msg(0.002)};
  EXPECT_NEAR(error_scatter(msgs.data(), 5), 0.002, 1e-15);
  EXPECT_TRUE(std::isnan(error_scatter(msgs.data(), 0)));
}

// The measured-cost feedback.  The collective's common factor learns from
// whatever ran until native has run, then from native's calls only: the
// mean of native's first kTrialCalls calls, then half the (log) error still
// off each call.  An algorithm's own factor learns what the common one
// left: its first call (a warm-up) teaches nothing, the others of its trial
// (kTrialCalls calls, whose predictions carried the common factor alone)
// set it to their mean, later ones move it by 0.3 of the error.  Only calls
// whose arrivals came as predicted teach (with one rank 40 ms off a 100 ms
// prediction the call says how well the prediction did, not how well the
// algorithm's model does), but every call counts towards a trial.
TEST(RoundMessage, CorrectionsLearnOnlyFromWellPredictedCalls) {
  const double nan = NAN;
  auto msg = [nan](double elapsed, double err) { return RoundMessage{1.0, elapsed, 1.0, nan, nan, nan, 0, err}; };
  const RanDecision ran{Collective::Allreduce, static_cast<Algo>(7), 0.100};  // allreduce, algorithm 7, predicted 100 ms
  const RanDecision native{Collective::Allreduce, Algo::Native, 0.100};
  const Collective ar = Collective::Allreduce, rd = Collective::Reduce;
  const Algo seven = static_cast<Algo>(7);
  // Every rank 20 ms late (shared, not a misprediction), 150 ms measured.
  std::vector<RoundMessage> msgs(4, msg(0.150, 0.020));
  CostLearner f;
  f.set_own(rd, static_cast<Algo>(3), 2.0);
  f.set_common(rd, 3.0);
  f.set_common(ar, 1.2);
  // Algorithm 7's first call warms it up: it only counts.
  update_corrections(f, ran, msgs.data(), 4);
  EXPECT_NEAR(f.common(ar), 1.2, 1e-12);
  EXPECT_EQ(f.own(ar, seven), 1.0);
  EXPECT_EQ(f.calls(ar, seven), 1);
  EXPECT_EQ(f.own(rd, static_cast<Algo>(3)), 2.0);  // another collective's verdict holds
  update_corrections(f, ran, msgs.data(), 4);
  EXPECT_NEAR(f.common(ar), 1.2 * std::sqrt(1.5), 1e-12);  // native has not run: it learns from algorithm 7
  EXPECT_NEAR(f.own(ar, seven), std::sqrt(1.5), 1e-12);  // its first taught call: all the half left
  EXPECT_EQ(f.calls(ar, seven), 2);
  EXPECT_EQ(f.own(rd, static_cast<Algo>(3)), 2.0);
  EXPECT_NEAR(f.common(rd), 3.0, 1e-12);
  EXPECT_NEAR(error_reach(msgs.data(), 4), 0.0, 1e-15);
  // Native ran: the common factor learns.  Its first
  // call sets it to what native measured (1.5 times the prediction, which
  // carried the factor); later ones to their mean, then by half the error.
  update_corrections(f, native, msgs.data(), 4);
  const double taught = 1.2 * std::pow(1.5, 1.5);
  EXPECT_NEAR(f.common(ar), taught, 1e-12);
  CostLearner n;
  n.set_common(ar, 2.0);
  n.set_calls(ar, Algo::Native, 1);
  update_corrections(n, native, msgs.data(), 4);
  EXPECT_NEAR(n.common(ar), 2.0 * std::pow(1.5, 1.0 / 2), 1e-12);
  n.set_calls(ar, Algo::Native, kTrialCalls);
  update_corrections(n, native, msgs.data(), 4);
  EXPECT_NEAR(n.common(ar), 2.0 * std::pow(1.5, 1.0 / 2) * std::pow(1.5, 0.5), 1e-12);
  // Algorithm 7's verdict was taught before native ever ran: native's first
  // call sets the regime factor (1.5 times the model here, beyond
  // kRegimeShift from the 1 of no regime), so it goes back on trial.
  EXPECT_EQ(f.own(ar, seven), 1.0);
  EXPECT_EQ(f.calls(ar, seven), 0);
  // From now on algorithm 7's calls teach its own factor only: a warm-up,
  // then its trial calls, predicted with the common factor alone, ran 1.5
  // times that: their mean.
  update_corrections(f, ran, msgs.data(), 4);
  EXPECT_EQ(f.own(ar, seven), 1.0);
  update_corrections(f, ran, msgs.data(), 4);
  update_corrections(f, ran, msgs.data(), 4);
  EXPECT_NEAR(f.common(ar), taught, 1e-12);
  EXPECT_NEAR(f.own(ar, seven), 1.5, 1e-12);
  EXPECT_EQ(f.calls(ar, seven), kTrialCalls);
  double before = f.own(ar, seven);
  // Off trial, its prediction carried its own factor too: 0.3 of the error.
  before = f.own(ar, seven);
  update_corrections(f, ran, msgs.data(), 4);
  EXPECT_NEAR(f.own(ar, seven), before * std::pow(1.5, 0.3), 1e-12);
  EXPECT_NEAR(f.common(ar), taught, 1e-12);
  // One rank 40 ms off the others: no factor learns.
  msgs[2].last_error = 0.060;
  EXPECT_NEAR(error_reach(msgs.data(), 4), 0.040, 1e-15);
  CostLearner g;
  g.set_own(ar, seven, 1.2);
  g.set_common(ar, 1.3);
  update_corrections(g, ran, msgs.data(), 4);
  EXPECT_EQ(g.own(ar, seven), 1.2);
  EXPECT_NEAR(g.common(ar), 1.3, 1e-12);
  EXPECT_EQ(g.calls(ar, seven), 1);  // but it counts towards the trial
  // 9 ms off (under a tenth of 100 ms): it learns.
  msgs[2].last_error = 0.029;
  CostLearner h;
  h.set_calls(ar, seven, 1);
  update_corrections(h, ran, msgs.data(), 4);
  EXPECT_NEAR(h.common(ar), std::sqrt(1.5), 1e-12);
  // No errors known (no prediction before): it learns as before.
  for (auto& m : msgs) m.last_error = nan;
  EXPECT_TRUE(std::isnan(error_reach(msgs.data(), 4)));
  CostLearner k;
  k.set_calls(ar, seven, 1);
  update_corrections(k, ran, msgs.data(), 4);
  EXPECT_NEAR(k.common(ar), std::sqrt(1.5), 1e-12);
}

TEST(RoundMessage, EdgesFromTheAnchorByMajorityOfEdgeSenders) {
  const double nan = NAN;
  std::vector<RoundMessage> msgs;
  auto add = [&](double edge_f, double vote) { msgs.push_back(RoundMessage{1.0, 0.1, 1.0, nan, 2.0, edge_f, vote, nan}); };
  add(0.5, 1);
  add(0.5, 0);
  EXPECT_FALSE(edges_from_anchor(msgs.data(), 2));  // a tie keeps the own exits
  add(nan, 0);  // no edge: no vote
  add(0.5, 1);
  EXPECT_TRUE(edges_from_anchor(msgs.data(), 4));
  EXPECT_FALSE(edges_from_anchor(msgs.data(), 0));
  // Ranks that cannot tell yet do not object: the anchor, unless most
  // edge senders found their own exits the steadier.
  msgs.clear();
  add(0.5, kPrefersUnknown);
  add(0.5, kPrefersUnknown);
  add(0.5, kPrefersOwn);
  EXPECT_TRUE(edges_from_anchor(msgs.data(), 3));
  add(0.5, kPrefersOwn);
  EXPECT_FALSE(edges_from_anchor(msgs.data(), 4));  // 2 of 4 object
}

// The rounds a run of native picks skips: none until kQuietRounds judged
// calls in a row ran native, then 1, 2, 4, ... up to the cap, then the cap
// and one less in turn; calls with no round leave the count alone; any
// other pick ends the thinning.
TEST(QuietRounds, ThinOutWhileNativeRunsAndComeBackAtOnce) {
  const RanDecision quiet{Collective::Allreduce, Algo::Native, 1e-3, true, true}, busy{Collective::Allreduce, static_cast<Algo>(2), 1e-3, true, false}, unjudged{Collective::Allreduce, Algo::Native, 0, false, false};
  QuietRounds q(4);
  // The calls without a round after a judged call, until the next round.
  auto gap_after = [&](const RanDecision& d) {
    int skipped = 0;
    for (bool skip = q.skip_next(d); skip; skip = q.skip_next(unjudged)) ++skipped;
    return skipped;
  };
  for (int i = 0; i < QuietRounds::kQuietRounds - 1; ++i) EXPECT_EQ(gap_after(quiet), 0) << i;
  EXPECT_EQ(gap_after(unjudged), 0);  // a call that did not use a round: no count either way
  EXPECT_EQ(q.streak(), QuietRounds::kQuietRounds - 1);
  std::vector<int> gaps;
  for (int i = 0; i < 7; ++i) gaps.push_back(gap_after(quiet));
  EXPECT_EQ(gaps, (std::vector<int>{1, 2, 4, 3, 4, 3, 4}));
  // Anything else: a round on every call, and the count starts again.
  EXPECT_EQ(gap_after(busy), 0);
  EXPECT_EQ(q.streak(), 0);
  for (int i = 0; i < QuietRounds::kQuietRounds - 1; ++i) EXPECT_EQ(gap_after(quiet), 0) << i;
  EXPECT_EQ(gap_after(quiet), 1);
}

// A loop of 65 calls, the cap's gap plus one: without the turns of
// max_skip and max_skip - 1 every round would land on the same call of the
// loop, and a call that starts to need another algorithm later in the run
// would never be weighed again.
TEST(QuietRounds, RoundsMoveThroughTheCallsOfALoop) {
  constexpr int kLoop = 65;
  QuietRounds q(64);
  const RanDecision quiet{Collective::Allreduce, Algo::Native, 1e-3, true, true}, busy{Collective::Allreduce, static_cast<Algo>(2), 1e-3, true, false}, none{};
  bool has_round = true;
  std::set<int> positions;  // the loop's calls that had a round, once thinned out
  for (int call = 0; call < 400 * kLoop; ++call) {
    if (has_round && call >= 20 * kLoop) positions.insert(call % kLoop);
    has_round = !q.skip_next(has_round ? quiet : none);
  }
  EXPECT_EQ(positions.size(), static_cast<std::size_t>(kLoop));
  // Now the loop's first call would pick another algorithm: a round reaches it.
  int waited = -1;
  for (int call = 400 * kLoop; call < 600 * kLoop && waited < 0; ++call) {
    if (has_round && call % kLoop == 0) waited = call - 400 * kLoop;
    has_round = !q.skip_next(!has_round ? none : call % kLoop == 0 ? busy : quiet);
  }
  EXPECT_GE(waited, 0);
  EXPECT_EQ(q.streak(), 0);
}

TEST(QuietRounds, ZeroKeepsARoundOnEveryCall) {
  QuietRounds q(0);
  const RanDecision quiet{Collective::Allreduce, Algo::Native, 1e-3, true, true};
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(q.skip_next(quiet)) << i;
}

// PAPSHIM_CHECK compares the round policy's fingerprint: policies fed the
// same calls agree, and one call judged differently (a rank that ran
// another algorithm) changes it, as does a call of another size.
TEST(RoundPolicy, FingerprintFollowsTheState) {
  const RanDecision quiet{Collective::Allreduce, Algo::Native, 1e-3, true, true},
      busy{Collective::Allreduce, static_cast<Algo>(2), 1e-3, true, false};
  RoundPolicy a(1024, 64), b(1024, 64);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  for (std::uint64_t seq = 1; seq <= 12; ++seq) {
    a.next_has_round(seq, 4096, quiet, false);
    b.next_has_round(seq, 4096, quiet, false);
    EXPECT_EQ(a.fingerprint(), b.fingerprint()) << seq;
  }
  b.next_has_round(13, 4096, busy, false);
  a.next_has_round(13, 4096, quiet, false);
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  RoundPolicy d(1024, 64);  // a small call: the rounds after large calls run out sooner
  d.next_has_round(1, 4096, quiet, false);
  RoundPolicy e(1024, 64);
  e.next_has_round(1, 16, quiet, false);
  EXPECT_NE(d.fingerprint(), e.fingerprint());
}

// The noise is not known until kNoiseRounds rounds have measured the ranks'
// error scatter (NaN before: auto then acts on no spread); rounds whose
// messages carry no error do not count.
TEST(ArrivalModelNoise, UnknownUntilTwoRoundsMeasuredIt) {
  const double nan = NAN;
  auto msg = [nan](double err) { return RoundMessage{1.0, 0.1, 1.0, nan, nan, nan, kPrefersUnknown, err}; };
  ArrivalModel m(5);
  EXPECT_TRUE(std::isnan(m.noise()));
  std::vector<RoundMessage> none(4, msg(nan));
  m.on_round(1, none.data(), 4);
  EXPECT_TRUE(std::isnan(m.noise()));
  std::vector<RoundMessage> scattered = {msg(0.0), msg(0.002), msg(-0.002), msg(0.004)};
  m.on_round(2, scattered.data(), 4);
  EXPECT_TRUE(std::isnan(m.noise()));
  m.on_round(3, scattered.data(), 4);
  EXPECT_GT(m.noise(), 0.0);
  EXPECT_DOUBLE_EQ(m.noise(), error_scatter(scattered.data(), 4));
}

}  // namespace
}  // namespace papshim
