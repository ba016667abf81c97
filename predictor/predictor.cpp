#include "predictor/predictor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "config/log.h"

namespace papshim {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kCloseWaitSeconds = 1.0;

std::atomic<std::uint64_t> g_rounds_opened{0}, g_rounds_skipped{0};

// Closed predictors whose round is still running, with their duplicates.
struct Parked {
  std::shared_ptr<Predictor> pred;
  MPI_Comm xchg = MPI_COMM_NULL;
};
std::mutex& parked_mu() {
  static auto* m = new std::mutex;  // outlives static destruction
  return *m;
}
std::vector<Parked>& parked_list() {
  static auto* v = new std::vector<Parked>;
  return *v;
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

Predictor::Predictor(MPI_Comm xchg, int size, int rank, int tag_top, int window, PredictorMode mode,
                     long min_bytes, long quiet_skip)
    : size_(size),
      rank_(rank),
      mode_(mode),
      min_bytes_(static_cast<std::uint64_t>(std::max(min_bytes, 0L))),
      quiet_(quiet_skip),
      history_(window),
      my_prediction_(kNaN),
      last_error_(kNaN),
      recv_(static_cast<std::size_t>(size), RoundMessage{}),
      exchange_(xchg, size, rank, kRoundWords, tag_top) {}

std::uint64_t Predictor::rounds_opened() { return g_rounds_opened.load(std::memory_order_relaxed); }
std::uint64_t Predictor::rounds_skipped() { return g_rounds_skipped.load(std::memory_order_relaxed); }

void Predictor::post_round(std::uint64_t seq) {
  // The previous round was completed at the entry of call seq-1 (every round
  // is); an exchange still running would be a bug, and waiting for it keeps
  // the buffer safe (every rank started it).
  if (exchange_.active()) exchange_.wait();
  round_seq_ = seq;
  round_open_ = true;
  g_rounds_opened.fetch_add(1, std::memory_order_relaxed);
  recv_done_ = false;  // also with one rank: round_complete() builds the vector
  sent_ = false;
}

void Predictor::publish(double value, double anchored_phase, double edge_time, double edge_fraction) {
  if (!round_open_ || sent_) return;
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
  sent_ = true;
  // This round's exchange (see the header for why the rounds of a
  // communicator match up on every rank).  On an MPI error it ends with NaN
  // messages, which make the vector invalid: this call runs without one.
  exchange_.start(&mine, recv_.data());
}

namespace {
double upper_median(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}
}  // namespace

namespace {
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

double error_scatter(const RoundMessage* msgs, int nranks) {
  std::vector<double> d = error_deviations(msgs, nranks);
  return d.empty() ? kNaN : upper_median(d);
}

double error_reach(const RoundMessage* msgs, int nranks) {
  const std::vector<double> d = error_deviations(msgs, nranks);
  return d.empty() ? kNaN : *std::max_element(d.begin(), d.end());
}

void update_corrections(CostLearner& factors, const RanDecision& ran, const RoundMessage* msgs, int nranks) {
  MeasuredCall call;
  if (ran.coll >= 0 && ran.algo >= 0) {  // else nothing ran that was modelled: only the drift
    call.coll = static_cast<Collective>(ran.coll);
    call.algo = static_cast<Algo>(ran.algo);
    call.predicted = ran.predicted;
  }
  if (nranks > 0) {
    double sum = 0;
    for (int i = 0; i < nranks; ++i) sum += msgs[i].last_elapsed;
    call.measured = sum / nranks;
  }
  call.reach = error_reach(msgs, nranks);
  factors.learn(call);
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
  for (const RoundMessage& m : recv_) anchor = std::max(anchor, m.last_exit);  // NaN never wins
  for (const RoundMessage& m : recv_)
    if (!std::isfinite(m.last_exit)) anchor = kNaN;
  anchor_ = std::isfinite(anchor) ? anchor : kNaN;
  anchor_seq_ = round_seq_;
  arrival_.resize(static_cast<std::size_t>(size_));
  const AnchorUse use{edges_from_anchor(recv_.data(), size_), phases_from_anchor(recv_.data(), size_)};
  for (std::size_t p = 0; p < recv_.size(); ++p) arrival_[p] = predicted_arrival(recv_[p], anchor_, use);
  // Every rank folds the same scatter in the same rounds: the same noise.
  // The median of the last few rounds' scatters: a pattern that holds shows
  // within a few rounds, and the wild guesses of the first calls (no
  // history yet) are forgotten as soon as they are outnumbered.
  if (const double d = error_scatter(recv_.data(), size_); std::isfinite(d)) {
    scatters_[scatter_count_++ % scatters_.size()] = d;
    std::vector<double> recent(scatters_.begin(),
                               scatters_.begin() + static_cast<std::ptrdiff_t>(std::min(scatter_count_, scatters_.size())));
    noise_ = upper_median(recent);
  }

  if (rank_ == 0 && ran_.algo >= 0 && ran_.predicted > 0 && log().should_log(spdlog::level::debug)) {
    double sum = 0;
    for (const RoundMessage& m : recv_) sum += m.last_elapsed;
    log().debug("{} as it ran: {} measured {:.1f} us mean elapsed, predicted {:.1f} us",
                to_string(static_cast<Collective>(ran_.coll)), algo_info(static_cast<Algo>(ran_.algo)).name,
                1e6 * sum / size_, 1e6 * ran_.predicted);
  }
  update_corrections(corrections_, ran_, recv_.data(), size_);
}

RoundResult Predictor::result() const {
  RoundResult r;
  r.arrival = arrival_;
  r.corrections = corrections_;
  r.noise = noise_;
  return r;
}

std::optional<RoundResult> Predictor::on_entry(std::uint64_t seq, double arrival) {
  std::lock_guard<std::mutex> lock(mu_);
  my_prediction_ = kNaN;
  if (!round_open_ || round_seq_ != seq) return std::nullopt;
  publish(arrival);  // edge mode without an edge: the actual arrival
  if (!recv_done_) {
    exchange_.wait();
    recv_done_ = true;
    round_complete();
  }
  round_open_ = false;
  my_prediction_ = arrival_[static_cast<std::size_t>(rank_)];
  if (std::isfinite(my_prediction_)) last_error_ = arrival - my_prediction_;  // published with the next round
  if (!vector_valid()) return std::nullopt;
  return result();
}

bool Predictor::on_exit(std::uint64_t seq, std::uint64_t site, const CallShape& shape, double arrival,
                        double exit, std::uint64_t bytes_per_rank, const RanDecision& ran) {
  std::lock_guard<std::mutex> lock(mu_);
  rounds_left_ = bytes_per_rank >= min_bytes_ ? kRoundsAfterLargeCall : std::max(rounds_left_ - 1, 0);
  last_elapsed_ = exit - arrival;
  ran_ = ran;
  history_.on_call(site, arrival, exit, anchor_seq_ == seq ? anchor_ : kNaN);
  shape_by_site_[site] = shape;
  const auto next = history_.expected_next_site();
  auto it = next ? shape_by_site_.find(*next) : shape_by_site_.end();
  next_shape_ = it == shape_by_site_.end() ? shape : it->second;
  const bool skip = quiet_.skip_next(ran);
  if (skip && rank_ == 0 && rounds_left_ > 0 && log().should_log(spdlog::level::debug))
    log().debug("no prediction round for call #{}: auto ran native in the last {} calls it weighed",
                seq + 1, quiet_.streak());
  if (rounds_left_ == 0) return false;
  if (skip) {
    g_rounds_skipped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  post_round(seq + 1);
  if (mode_ == PredictorMode::Sma) {
    const auto p = history_.predict_next_arrival();
    const auto phase = history_.anchored_sma_next();
    publish(p ? *p : kNaN, phase ? *phase : kNaN);
  }
  return true;
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

bool Predictor::poll(RoundResult& out, std::uint64_t& seq, CallShape& shape, bool& advanced) {
  std::lock_guard<std::mutex> lock(mu_);
  // Only a started exchange is advanced: starting it (publishing this
  // rank's value) is the application thread's.
  if (!round_open_ || recv_done_ || !sent_) return false;
  const int step = exchange_.step();
  const bool done = exchange_.test();
  advanced = advanced || done || exchange_.step() != step;
  if (!done) return false;
  recv_done_ = true;
  if (closed_) return false;  // parked: nobody needs its vector
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

bool Predictor::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  if (round_open_) {
    // Peers must never wait for this rank: start its part first.  In SMA
    // mode every peer started its part at its exit of the last call, so the
    // wait below ends once they progress it; it is bounded anyway (see the
    // header), and a round still running then is parked by the caller.
    publish(kNaN);
    const double deadline = PMPI_Wtime() + kCloseWaitSeconds;
    while (!exchange_.test() && PMPI_Wtime() < deadline) {
    }
    if (exchange_.active()) return false;
  }
  round_open_ = false;
  recv_done_ = true;
  return true;
}

bool Predictor::settle() {
  std::lock_guard<std::mutex> lock(mu_);
  publish(kNaN);  // done already by close()
  if (!exchange_.test()) return false;
  round_open_ = false;
  recv_done_ = true;
  return true;
}

void Predictor::park(std::shared_ptr<Predictor> p, MPI_Comm xchg) {
  std::lock_guard<std::mutex> lock(parked_mu());
  parked_list().push_back(Parked{std::move(p), xchg});
  log().debug("a communicator was freed with its prediction round still running: parked ({} parked)",
              parked_list().size());
}

void Predictor::test_parked() {
  std::vector<Parked> done;
  {
    std::lock_guard<std::mutex> lock(parked_mu());
    auto& list = parked_list();
    for (auto it = list.begin(); it != list.end();) {
      if (it->pred->settle()) {
        done.push_back(std::move(*it));
        it = list.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Like every private duplicate, freed without synchronising (a local
  // operation in the MPI libraries papshim supports).
  for (auto& d : done)
    if (d.xchg != MPI_COMM_NULL) PMPI_Comm_free(&d.xchg);
}

void Predictor::finish_all(const std::vector<std::shared_ptr<Predictor>>& live) {
  std::vector<Parked> parked;
  {
    std::lock_guard<std::mutex> lock(parked_mu());
    parked.swap(parked_list());
  }
  // Every rank started each of these rounds (at its close(), its
  // publish_final() or its call).  A rank advances only the exchanges it
  // tests, and ranks may hold them in different orders, so all are advanced
  // together until all are complete: waiting for one alone could wait for a
  // peer that waits for another.
  std::vector<Predictor*> open;
  for (const auto& p : live) open.push_back(p.get());
  for (const auto& d : parked) open.push_back(d.pred.get());
  while (!open.empty()) {
    open.erase(std::remove_if(open.begin(), open.end(), [](Predictor* p) { return p->settle(); }), open.end());
    if (!open.empty()) std::this_thread::yield();
  }
  for (auto& d : parked)
    if (d.xchg != MPI_COMM_NULL) PMPI_Comm_free(&d.xchg);
}

std::size_t Predictor::parked() {
  std::lock_guard<std::mutex> lock(parked_mu());
  return parked_list().size();
}

}  // namespace papshim
