#include "predictor/history.h"

#include <algorithm>
#include <cmath>

namespace papshim {

namespace {
void push(std::deque<double>& q, double v, int keep) {
  q.push_back(v);
  while (static_cast<int>(q.size()) > keep) q.pop_front();
}
}  // namespace

double mean_change(const std::deque<double>& q) {
  if (q.size() < 3) return INFINITY;
  double sum = 0;
  for (std::size_t i = 1; i < q.size(); ++i) sum += std::fabs(q[i] - q[i - 1]);
  return sum / static_cast<double>(q.size() - 1);
}

void PhaseHistory::on_call(std::uint64_t site, double arrival, double exit, double anchor) {
  const int keep = std::max(window_, kSteadinessSamples);
  if (have_exit_) {
    Site& s = sites_[site];
    push(s.own, arrival - last_exit_, keep);
    if (std::isfinite(anchor)) push(s.anchored, arrival - anchor, keep);
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

std::optional<double> PhaseHistory::sma_of(const std::deque<double>& q) const {
  if (q.empty()) return std::nullopt;
  const std::size_t n = std::min(q.size(), static_cast<std::size_t>(window_));
  double sum = 0;
  for (std::size_t i = q.size() - n; i < q.size(); ++i) sum += q[i];
  return sum / static_cast<double>(n);
}

std::optional<double> PhaseHistory::sma(std::uint64_t site) const {
  auto it = sites_.find(site);
  if (it == sites_.end()) return std::nullopt;
  return sma_of(it->second.own);
}

std::optional<double> PhaseHistory::predict_next_arrival() const {
  const auto next = expected_next_site();
  if (!next) return std::nullopt;
  const auto phase = sma(*next);
  if (!phase) return std::nullopt;
  return last_exit_ + *phase;
}

const PhaseHistory::Site* PhaseHistory::next_site() const {
  const auto next = expected_next_site();
  if (!next) return nullptr;
  auto it = sites_.find(*next);
  return it == sites_.end() ? nullptr : &it->second;
}

std::optional<double> PhaseHistory::anchored_phase_next() const {
  const auto steadier = anchored_steadier_next();
  return steadier && *steadier ? anchored_sma_next() : std::nullopt;
}

std::optional<bool> PhaseHistory::anchored_steadier_next() const {
  const Site* s = next_site();
  if (!s || s->anchored.size() < 3 || s->own.size() < 3) return std::nullopt;
  const double anchored = mean_change(s->anchored), own = mean_change(s->own);
  if (anchored < own) return true;
  if (own < 0.5 * anchored) return false;
  return std::nullopt;  // about as steady: no preference
}

std::optional<double> PhaseHistory::anchored_sma_next() const {
  const Site* s = next_site();
  return s ? sma_of(s->anchored) : std::nullopt;
}

}  // namespace papshim
