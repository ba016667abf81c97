#include "predictor/history.h"

#include <numeric>

namespace papshim {

void PhaseHistory::on_call(std::uint64_t site, double arrival, double exit) {
  if (have_exit_) {
    auto& q = phases_[site];
    q.push_back(arrival - last_exit_);
    while (static_cast<int>(q.size()) > window_) q.pop_front();
    successor_[last_site_] = site;
  }
  last_site_ = site;
  last_exit_ = exit;
  have_exit_ = true;
}

std::optional<std::uint64_t> PhaseHistory::expected_next_site() const {
  if (!have_exit_) return std::nullopt;
  auto it = successor_.find(last_site_);
  return it == successor_.end() ? last_site_ : it->second;
}

std::optional<double> PhaseHistory::sma(std::uint64_t site) const {
  auto it = phases_.find(site);
  if (it == phases_.end() || it->second.empty()) return std::nullopt;
  return std::accumulate(it->second.begin(), it->second.end(), 0.0) / static_cast<double>(it->second.size());
}

std::optional<double> PhaseHistory::predict_next_arrival() const {
  const auto next = expected_next_site();
  if (!next) return std::nullopt;
  const auto phase = sma(*next);
  if (!phase) return std::nullopt;
  return last_exit_ + *phase;
}

}  // namespace papshim
