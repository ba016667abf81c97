#include "predictor/predictor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace papshim {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kCloseWaitSeconds = 1.0;
constexpr int kWords = kRoundWords;
constexpr std::size_t at(int rank, int word) { return static_cast<std::size_t>(rank) * kWords + word; }
}  // namespace

double predicted_arrival(const double* msg, double anchor, bool anchor_edges) {
  const double own = msg[0], phase = msg[3], edge_t = msg[4], edge_f = msg[5];
  if (anchor_edges && std::isfinite(anchor) && std::isfinite(edge_f) && edge_f > 0 && edge_t > anchor)
    return anchor + (edge_t - anchor) / edge_f;  // the phase began at the anchor
  if (std::isfinite(anchor) && std::isfinite(phase)) return anchor + phase;
  return own;
}

bool edges_from_anchor(const double* msgs, int nranks) {
  int edges = 0, votes = 0;
  for (int p = 0; p < nranks; ++p) {
    const double* m = msgs + static_cast<std::size_t>(p) * kRoundWords;
    if (!std::isfinite(m[5])) continue;
    ++edges;
    if (m[6] == 1.0) ++votes;
  }
  return 2 * votes > edges;
}

Predictor::Predictor(MPI_Comm xchg, int size, int rank, int window, PredictorMode mode, int tag_base)
    : xchg_(xchg),
      size_(size),
      rank_(rank),
      mode_(mode),
      tag_base_(tag_base),
      history_(window),
      my_prediction_(kNaN),
      recv_(kWords * static_cast<std::size_t>(size), 0.0),
      recv_reqs_(static_cast<std::size_t>(size), MPI_REQUEST_NULL),
      send_reqs_(static_cast<std::size_t>(size), MPI_REQUEST_NULL) {}

int Predictor::round_tag(std::uint64_t seq) const { return tag_base_ + static_cast<int>(seq % kRoundTags); }

void Predictor::post_round(std::uint64_t seq) {
  // The previous round's sends are eager and long complete; make it so.
  PMPI_Waitall(size_, send_reqs_.data(), MPI_STATUSES_IGNORE);
  round_seq_ = seq;
  round_open_ = true;
  recv_done_ = false;  // also with one rank: round_complete() builds the vector
  sent_ = false;
  for (int p = 0; p < size_; ++p)
    if (p != rank_)
      PMPI_Irecv(&recv_[at(p, 0)], kWords, MPI_DOUBLE, p, round_tag(seq), xchg_,
                 &recv_reqs_[static_cast<std::size_t>(p)]);
}

void Predictor::publish(double value, double anchored_phase, double edge_time, double edge_fraction) {
  if (!round_open_ || sent_) return;
  value_[6] = history_.anchored_phase_next() ? 1.0 : 0.0;
  value_[0] = value;
  value_[1] = last_elapsed_;
  value_[2] = history_.has_exit() ? history_.last_exit() : kNaN;
  value_[3] = anchored_phase;
  value_[4] = edge_time;
  value_[5] = edge_fraction;
  std::copy(value_, value_ + kWords, &recv_[at(rank_, 0)]);
  for (int p = 0; p < size_; ++p)
    if (p != rank_)
      PMPI_Isend(value_, kWords, MPI_DOUBLE, p, round_tag(round_seq_), xchg_,
                 &send_reqs_[static_cast<std::size_t>(p)]);
  sent_ = true;
}

bool Predictor::vector_valid() const {
  for (double t : arrival_)
    if (!std::isfinite(t)) return false;
  return true;
}

void Predictor::round_complete() {
  // The arrival vector: the anchor is the latest exit from the previous
  // call; a rank that sent an anchored phase arrives that long after it.
  double anchor = -INFINITY;
  for (int p = 0; p < size_; ++p) anchor = std::max(anchor, recv_[at(p, 2)]);  // NaN never wins
  for (int p = 0; p < size_; ++p)
    if (!std::isfinite(recv_[at(p, 2)])) anchor = kNaN;
  anchor_ = std::isfinite(anchor) ? anchor : kNaN;
  anchor_seq_ = round_seq_;
  arrival_.resize(static_cast<std::size_t>(size_));
  const bool anchor_edges = edges_from_anchor(recv_.data(), size_);
  for (int p = 0; p < size_; ++p)
    arrival_[static_cast<std::size_t>(p)] = predicted_arrival(&recv_[at(p, 0)], anchor_, anchor_edges);

  constexpr double kKeep = 0.5;    // weight of the old factor
  constexpr double kDrift = 0.98;  // per round, unused factors move towards 1
  int updated = -1;
  if (ran_.algo >= 0 && ran_.predicted > 0) {
    double sum = 0;
    for (int p = 0; p < size_; ++p) sum += recv_[at(p, 1)];
    const double measured = sum / size_;
    if (measured > 0 && std::isfinite(measured)) {
      updated = ran_.coll * 64 + ran_.algo;
      const double ratio = std::min(std::max(measured / ran_.predicted, 0.05), 50.0);
      auto it = corrections_.find(updated);
      const double old = it == corrections_.end() ? 1.0 : it->second;
      // The prediction already carried the old factor: move it by the
      // geometric share of what is still off.
      corrections_[updated] = std::min(std::max(old * std::pow(ratio, 1 - kKeep), 0.05), 50.0);
    }
  }
  for (auto& [key, f] : corrections_)
    if (key != updated) f = std::pow(f, kDrift);
}

RoundResult Predictor::result() const {
  RoundResult r;
  r.arrival = arrival_;
  r.corrections = corrections_;
  return r;
}

std::optional<RoundResult> Predictor::on_entry(std::uint64_t seq, double arrival) {
  std::lock_guard<std::mutex> lock(mu_);
  my_prediction_ = kNaN;
  if (!round_open_ || round_seq_ != seq) return std::nullopt;
  publish(arrival);  // edge mode without an edge: the actual arrival
  if (!recv_done_) {
    PMPI_Waitall(size_, recv_reqs_.data(), MPI_STATUSES_IGNORE);
    recv_done_ = true;
    round_complete();
  }
  round_open_ = false;
  my_prediction_ = arrival_[static_cast<std::size_t>(rank_)];
  if (!vector_valid()) return std::nullopt;
  return result();
}

void Predictor::on_exit(std::uint64_t seq, std::uint64_t site, const CallShape& shape, double arrival,
                        double exit, bool open_round, const RanDecision& ran) {
  std::lock_guard<std::mutex> lock(mu_);
  last_elapsed_ = exit - arrival;
  ran_ = ran;
  history_.on_call(site, arrival, exit, anchor_seq_ == seq ? anchor_ : kNaN);
  shape_by_site_[site] = shape;
  const auto next = history_.expected_next_site();
  auto it = next ? shape_by_site_.find(*next) : shape_by_site_.end();
  next_shape_ = it == shape_by_site_.end() ? shape : it->second;
  if (!open_round) return;
  post_round(seq + 1);
  if (mode_ == PredictorMode::Sma) {
    const auto p = history_.predict_next_arrival();
    const auto phase = history_.anchored_phase_next();
    publish(p ? *p : kNaN, phase ? *phase : kNaN);
  }
}

void Predictor::on_edge(double t, double fraction) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ != PredictorMode::Edge || !round_open_ || sent_ || !history_.has_exit()) return;
  if (!(fraction > 0.0) || fraction > 1.0) return;
  const double elapsed = t - history_.last_exit();
  // Measured from this rank's own exit, and the edge itself, to be measured
  // from the anchor once the round has it if most ranks prefer that.
  publish(t + elapsed * (1.0 - fraction) / fraction, kNaN, t, fraction);
}

bool Predictor::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return round_open_ && !recv_done_;
}

bool Predictor::poll(RoundResult& out, std::uint64_t& seq, CallShape& shape) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!round_open_ || recv_done_ || !sent_) return false;
  int flag = 0;
  PMPI_Testall(size_, recv_reqs_.data(), &flag, MPI_STATUSES_IGNORE);
  if (!flag) return false;
  recv_done_ = true;
  round_complete();
  if (!vector_valid()) return false;
  out = result();
  seq = round_seq_;
  shape = next_shape_;
  return true;
}

void Predictor::store_precomputed(Precomputed p) {
  std::lock_guard<std::mutex> lock(mu_);
  pre_ = std::move(p);
}

std::optional<Precomputed> Predictor::take_precomputed(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pre_.seq != seq) return std::nullopt;
  Precomputed p = std::move(pre_);
  pre_ = Precomputed{};
  return p;
}

void Predictor::publish_final() {
  std::lock_guard<std::mutex> lock(mu_);
  publish(kNaN);
}

void Predictor::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (round_open_) {
    publish(kNaN);
    if (!recv_done_) PMPI_Waitall(size_, recv_reqs_.data(), MPI_STATUSES_IGNORE);
    round_open_ = false;
    recv_done_ = true;
  }
  PMPI_Waitall(size_, send_reqs_.data(), MPI_STATUSES_IGNORE);
}

void Predictor::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (round_open_) {
    // Peers must never wait for this rank: send its part first.  In SMA mode
    // every peer sent its part at its exit of the last call, so the wait
    // below ends as soon as the messages are in; it is bounded anyway
    // (edge mode with communicators freed in different orders on different
    // ranks), and what is still missing then is cancelled.
    publish(kNaN);
    const double deadline = PMPI_Wtime() + kCloseWaitSeconds;
    int done = 0;
    while (!recv_done_ && PMPI_Testall(size_, recv_reqs_.data(), &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !done &&
           PMPI_Wtime() < deadline) {
    }
  }
  for (auto& r : recv_reqs_)
    if (r != MPI_REQUEST_NULL) {
      PMPI_Cancel(&r);
      PMPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  for (auto& r : send_reqs_)
    if (r != MPI_REQUEST_NULL) PMPI_Request_free(&r);
  round_open_ = false;
  recv_done_ = true;
}

}  // namespace papshim
