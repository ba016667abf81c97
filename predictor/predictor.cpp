#include "predictor/predictor.h"

#include <cmath>
#include <limits>

namespace papshim {

namespace {
constexpr int kTagBase = 100;
int round_tag(std::uint64_t seq) { return kTagBase + static_cast<int>(seq % 16384); }
}  // namespace

Predictor::Predictor(MPI_Comm xchg, int size, int rank, int window, PredictorMode mode)
    : xchg_(xchg),
      size_(size),
      rank_(rank),
      mode_(mode),
      history_(window),
      my_prediction_(std::numeric_limits<double>::quiet_NaN()),
      recv_(static_cast<std::size_t>(size), 0.0),
      reqs_(2 * static_cast<std::size_t>(size), MPI_REQUEST_NULL) {}

Predictor::~Predictor() = default;

void Predictor::post_round(std::uint64_t seq) {
  round_seq_ = seq;
  round_open_ = true;
  sent_ = false;
  for (int p = 0; p < size_; ++p)
    if (p != rank_) PMPI_Irecv(&recv_[static_cast<std::size_t>(p)], 1, MPI_DOUBLE, p, round_tag(seq), xchg_, &reqs_[static_cast<std::size_t>(p)]);
}

void Predictor::publish(double value) {
  if (!round_open_ || sent_) return;
  value_ = value;
  recv_[static_cast<std::size_t>(rank_)] = value;
  for (int p = 0; p < size_; ++p)
    if (p != rank_)
      PMPI_Isend(&value_, 1, MPI_DOUBLE, p, round_tag(round_seq_), xchg_,
                 &reqs_[static_cast<std::size_t>(size_ + p)]);
  sent_ = true;
}

std::optional<std::vector<double>> Predictor::on_entry(std::uint64_t seq, std::uint64_t, double arrival) {
  my_prediction_ = std::numeric_limits<double>::quiet_NaN();
  if (!round_open_ || round_seq_ != seq) return std::nullopt;
  publish(arrival);  // edge mode without an edge: the actual arrival
  my_prediction_ = value_;
  PMPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  round_open_ = false;
  for (double v : recv_)
    if (!std::isfinite(v)) return std::nullopt;
  return recv_;
}

void Predictor::on_exit(std::uint64_t seq, std::uint64_t site, double arrival, double exit) {
  history_.on_call(site, arrival, exit);
  post_round(seq + 1);
  if (mode_ == PredictorMode::Sma) {
    const auto p = history_.predict_next_arrival();
    publish(p ? *p : std::numeric_limits<double>::quiet_NaN());
  }
}

void Predictor::on_edge(double t, double fraction) {
  if (mode_ != PredictorMode::Edge || !round_open_ || sent_ || !history_.has_exit()) return;
  if (!(fraction > 0.0) || fraction > 1.0) return;
  const double elapsed = t - history_.last_exit();
  publish(t + elapsed * (1.0 - fraction) / fraction);
}

void Predictor::publish_final() { publish(std::numeric_limits<double>::quiet_NaN()); }

void Predictor::finish() {
  if (!round_open_) return;
  publish_final();
  PMPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  round_open_ = false;
}

}  // namespace papshim
