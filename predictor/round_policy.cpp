#include "predictor/round_policy.h"

#include <atomic>

#include "config/log.h"

namespace papshim {

namespace {
std::atomic<std::uint64_t> g_rounds_skipped{0};
}  // namespace

RoundPolicy::RoundPolicy(long min_bytes, long quiet_skip)
    : min_bytes_(static_cast<std::uint64_t>(std::max(min_bytes, 0L))), quiet_(quiet_skip) {}

std::uint64_t RoundPolicy::skipped() { return g_rounds_skipped.load(std::memory_order_relaxed); }

bool RoundPolicy::next_has_round(std::uint64_t seq, std::uint64_t bytes_per_rank, const RanDecision& ran,
                                 bool log_here) {
  rounds_left_ = bytes_per_rank >= min_bytes_ ? kRoundsAfterLargeCall : std::max(rounds_left_ - 1, 0);
  const bool skip = quiet_.skip_next(ran);
  if (skip && log_here && rounds_left_ > 0 && log().should_log(spdlog::level::debug))
    log().debug("no prediction round for call #{}: auto ran native in the last {} calls it weighed",
                seq + 1, quiet_.streak());
  if (rounds_left_ == 0) return false;
  if (skip) {
    g_rounds_skipped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

}  // namespace papshim
