#include "predictor/arrival_model.h"

#include <algorithm>
#include <cmath>

namespace papshim {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double upper_median(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The finite last errors' absolute deviations from their median (empty with
// fewer than two errors).
std::vector<double> error_deviations(const RoundMessage* msgs, int nranks) {
  std::vector<double> e;
  e.reserve(static_cast<std::size_t>(std::max(nranks, 0)));
  for (int i = 0; i < nranks; ++i)
    if (std::isfinite(msgs[i].last_error)) e.push_back(msgs[i].last_error);
  if (e.size() < 2) return {};
  const double m = upper_median(e);
  for (double& x : e) x = std::fabs(x - m);
  return e;
}
}  // namespace

double predicted_arrival(const RoundMessage& msg, double anchor, const AnchorUse& use) {
  const double edge_t = msg.edge_time, edge_f = msg.edge_fraction;
  if (use.edges && std::isfinite(anchor) && std::isfinite(edge_f) && edge_f > 0 && edge_t > anchor)
    return anchor + (edge_t - anchor) / edge_f;  // the phase began at the anchor
  if (use.phases && std::isfinite(anchor) && std::isfinite(msg.anchored_phase)) return anchor + msg.anchored_phase;
  return msg.own_prediction;
}

bool phases_from_anchor(const RoundMessage* msgs, int nranks) {
  int votes = 0;
  for (int p = 0; p < nranks; ++p)
    if (std::isfinite(msgs[p].anchored_phase) && msgs[p].prefers_anchor == kPrefersAnchor) ++votes;
  return 2 * votes > nranks;
}

bool edges_from_anchor(const RoundMessage* msgs, int nranks) {
  int edges = 0, own = 0;
  for (int p = 0; p < nranks; ++p) {
    const RoundMessage& m = msgs[p];
    if (!std::isfinite(m.edge_fraction)) continue;
    ++edges;
    if (m.prefers_anchor == kPrefersOwn) ++own;
  }
  return edges > 0 && 2 * own < edges;
}

double error_scatter(const RoundMessage* msgs, int nranks) {
  std::vector<double> d = error_deviations(msgs, nranks);
  return d.empty() ? kNaN : upper_median(d);
}

double error_reach(const RoundMessage* msgs, int nranks) {
  const std::vector<double> d = error_deviations(msgs, nranks);
  return d.empty() ? kNaN : *std::max_element(d.begin(), d.end());
}

ArrivalModel::ArrivalModel(int window) : history_(window) {}

void ArrivalModel::on_call(std::uint64_t seq, std::uint64_t site, double arrival, double exit) {
  last_elapsed_ = exit - arrival;
  history_.on_call(site, arrival, exit, anchor_seq_ == seq ? anchor_ : kNaN);
}

RoundMessage ArrivalModel::message(double value, double anchored_phase, double edge_time,
                                   double edge_fraction) const {
  RoundMessage mine;
  mine.own_prediction = value;
  mine.last_elapsed = last_elapsed_;
  mine.last_exit = history_.has_exit() ? history_.last_exit() : kNaN;
  mine.anchored_phase = anchored_phase;
  mine.edge_time = edge_time;
  mine.edge_fraction = edge_fraction;
  const auto steadier = history_.anchored_steadier_next();
  mine.prefers_anchor = !steadier ? kPrefersUnknown : *steadier ? kPrefersAnchor : kPrefersOwn;
  mine.last_error = last_error_;
  return mine;
}

double ArrivalModel::sma_value() const {
  const auto p = history_.predict_next_arrival();
  return p ? *p : kNaN;
}

double ArrivalModel::sma_anchored_phase() const {
  const auto phase = history_.anchored_sma_next();
  return phase ? *phase : kNaN;
}

std::optional<double> ArrivalModel::edge_value(double t, double fraction) const {
  if (!history_.has_exit()) return std::nullopt;
  if (!(fraction > 0.0) || fraction > 1.0) return std::nullopt;
  const double elapsed = t - history_.last_exit();
  // Measured from this rank's own exit, and the edge itself, to be measured
  // from the anchor once the round has it if most ranks prefer that.
  return t + elapsed * (1.0 - fraction) / fraction;
}

void ArrivalModel::on_round(std::uint64_t seq, const RoundMessage* msgs, int nranks) {
  // The arrival vector: the anchor is the latest exit from the previous
  // call; a rank that sent an anchored phase arrives that long after it.
  const std::size_t n = static_cast<std::size_t>(std::max(nranks, 0));
  double anchor = -INFINITY;
  for (std::size_t p = 0; p < n; ++p) anchor = std::max(anchor, msgs[p].last_exit);  // NaN never wins
  for (std::size_t p = 0; p < n; ++p)
    if (!std::isfinite(msgs[p].last_exit)) anchor = kNaN;
  anchor_ = std::isfinite(anchor) ? anchor : kNaN;
  anchor_seq_ = seq;
  arrival_.resize(n);
  const AnchorUse use{edges_from_anchor(msgs, nranks), phases_from_anchor(msgs, nranks)};
  for (std::size_t p = 0; p < n; ++p) arrival_[p] = predicted_arrival(msgs[p], anchor_, use);
  // Every rank folds the same scatter in the same rounds: the same noise.
  // The median of the last few rounds' scatters: a pattern that holds shows
  // within a few rounds, and the wild guesses of the first calls (no
  // history yet) are forgotten as soon as they are outnumbered.
  if (const double d = error_scatter(msgs, nranks); std::isfinite(d)) {
    scatters_[scatter_count_++ % scatters_.size()] = d;
    const auto stored = static_cast<std::ptrdiff_t>(std::min(scatter_count_, scatters_.size()));
    std::vector<double> recent(scatters_.begin(), scatters_.begin() + stored);
    if (scatter_count_ >= kNoiseRounds) noise_ = upper_median(recent);
  }
}

bool ArrivalModel::vector_valid() const {
  for (double t : arrival_)
    if (!std::isfinite(t)) return false;
  return true;
}

void ArrivalModel::entered(int rank, double arrival) {
  my_prediction_ = arrival_[static_cast<std::size_t>(rank)];
  if (std::isfinite(my_prediction_)) last_error_ = arrival - my_prediction_;  // published with the next round
}

}  // namespace papshim
