// What each rank contributes to a prediction round: one RoundMessage, sent
// as kRoundWords doubles (predictor/round_channel.h); every rank receives
// all of them, so everything built from them is the same on every rank.
#pragma once

#include <type_traits>

namespace papshim {

// RoundMessage::prefers_anchor: which of its phase histories a rank found
// the steadier.
constexpr double kPrefersOwn = 0.0, kPrefersAnchor = 1.0, kPrefersUnknown = 0.5;

// One rank's message in a prediction round, sent as kRoundWords doubles.
constexpr int kRoundWords = 8;
struct RoundMessage {
  double own_prediction;  // its predicted arrival at the call, from its own exit (NaN: none)
  double last_elapsed;    // how long it spent in the previous call (exit - arrival), seconds
  double last_exit;       // its exit from the previous call (NaN: unknown)
  double anchored_phase;  // its phase from the anchor (SMA), or NaN before any
  double edge_time;       // the time of its edge (papshim_edge), or NaN
  double edge_fraction;   // the fraction of the phase done at that edge, or NaN
  double prefers_anchor;  // kPrefersAnchor, kPrefersOwn, or kPrefersUnknown (too few phases yet)
  double last_error;      // its last predicted call's arrival minus the prediction (seconds), or NaN
};
static_assert(std::is_trivially_copyable_v<RoundMessage> && sizeof(RoundMessage) == kRoundWords * sizeof(double),
              "a round message is sent as kRoundWords doubles");

}  // namespace papshim
