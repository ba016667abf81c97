// Which calls of a communicator get a prediction round: the same calls on
// every rank, from inputs identical on every rank (call sizes, decisions).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "algorithms/catalog.h"
#include "common/hash.h"

namespace papshim {

// What ran in a call, for the measured-cost feedback and the round policy.
struct RanDecision {
  std::optional<Collective> coll;  // none: no call ran before the round (nothing learns)
  Algo algo{};            // what ran (the library's own until a call ran)
  double predicted = 0;   // the cost model's mean elapsed for it, seconds (0: none)
  bool judged = false;    // the call used its round: auto weighed it, or a forced schedule was built on it
  bool quiet = false;     // ... auto weighed it and ran native
  double native_predicted = 0;  // the cost model's mean elapsed for native on it, seconds (0: none)
};

// Rounds while auto keeps running native.  A call that auto weighed and
// ran native needs nothing from the next round but the confirmation that
// nothing changed: after kQuietRounds such calls in a row the rounds thin
// out, one call without a round, then 2, 4, ... up to `max_skip` between
// rounds (at the cap, max_skip and max_skip - 1 in turn, so that the
// rounds move through the calls of a loop of any length rather than
// always landing on the same one).  Any other call that used its round
// (auto picked something else, or a forced algorithm ran on the arrivals)
// brings a round on every call back.  The inputs are the decisions,
// identical on every rank, so every rank skips the same rounds.  Calls
// without a round (skipped, or not considered) leave the count as it is.
class QuietRounds {
 public:
  static constexpr int kQuietRounds = 8;  // longer than native's first calls and a trial
  explicit QuietRounds(long max_skip) : max_skip_(max_skip) {}
  // The exit of a call; true when the round of the next call is skipped.
  bool skip_next(const RanDecision& ran) {
    if (ran.judged) {
      streak_ = ran.quiet ? std::min(streak_ + 1, kQuietRounds + 30) : 0;
      if (streak_ < kQuietRounds || max_skip_ <= 0) {
        left_ = 0;
        at_cap_ = 0;
      } else {
        left_ = std::min(max_skip_, 1L << std::min(streak_ - kQuietRounds, 30));
        if (left_ == max_skip_ && max_skip_ > 1 && (at_cap_++ & 1) != 0) --left_;
      }
    }
    if (left_ == 0) return false;
    --left_;
    return true;
  }
  int streak() const { return streak_; }
  // Folds the state into `h` (PAPSHIM_CHECK: the same on every rank).
  std::uint64_t fingerprint(std::uint64_t h) const {
    h = fnv1a_word(h, static_cast<std::uint64_t>(streak_));
    h = fnv1a_word(h, static_cast<std::uint64_t>(left_));
    return fnv1a_word(h, at_cap_);
  }

 private:
  long max_skip_;
  int streak_ = 0;           // judged calls in a row that ran native
  long left_ = 0;            // rounds still to skip
  unsigned at_cap_ = 0;      // gaps of max_skip so far (the odd ones are one shorter)
};

// Rounds are worth their messages only while the communicator carries large
// calls: they stay open for kRoundsAfterLargeCall calls after each call of
// at least `min_bytes` (PAPSHIM_MIN_BYTES), fewer while auto keeps running
// native (QuietRounds, `quiet_skip`: PAPSHIM_QUIET_SKIP; 0: a round on every
// call).  Call sizes and decisions are identical on every rank, so every
// rank opens the same rounds.
class RoundPolicy {
 public:
  static constexpr int kRoundsAfterLargeCall = 16;
  RoundPolicy(long min_bytes, long quiet_skip);
  // The exit of call `seq` of `bytes_per_rank` bytes that ran `ran`:
  // whether call seq+1 gets a round.  `log_here`: this rank logs the
  // skipped rounds (rank 0).
  bool next_has_round(std::uint64_t seq, std::uint64_t bytes_per_rank, const RanDecision& ran, bool log_here);
  // This process's rounds left out while auto kept running native, over all
  // its communicators (the report).
  static std::uint64_t skipped();
  // A hash of which rounds come next (PAPSHIM_CHECK compares it across
  // ranks: ranks that disagree would open different rounds and wait for
  // each other's messages).
  std::uint64_t fingerprint() const {
    return quiet_.fingerprint(fnv1a_word(fnv1a_word(kFnvOffset, min_bytes_), static_cast<std::uint64_t>(rounds_left_)));
  }

 private:
  std::uint64_t min_bytes_;
  int rounds_left_ = 0;  // calls that still open a round
  QuietRounds quiet_;    // ... fewer while auto keeps running native
};

}  // namespace papshim
