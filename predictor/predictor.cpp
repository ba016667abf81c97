#include "predictor/predictor.h"

#include <cmath>
#include <utility>

#include "config/log.h"

namespace papshim {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

void update_corrections(CostLearner& factors, const RanDecision& ran, const RoundMessage* msgs, int nranks) {
  MeasuredCall call;
  if (ran.coll) {  // else nothing ran that was modelled: nothing learns
    call.coll = *ran.coll;
    call.algo = ran.algo;
    call.predicted = ran.predicted;
    call.native_predicted = ran.native_predicted;
  }
  if (nranks > 0) {
    double sum = 0;
    for (int i = 0; i < nranks; ++i) sum += msgs[i].last_elapsed;
    call.measured = sum / nranks;
  }
  call.reach = error_reach(msgs, nranks);
  factors.learn(call);
}

Predictor::Predictor(MPI_Comm xchg, int size, int rank, int tag_top, int window, PredictorMode mode,
                     long min_bytes, long quiet_skip)
    : size_(size),
      rank_(rank),
      mode_(mode),
      policy_(min_bytes, quiet_skip),
      model_(window),
      channel_(xchg, size, rank, tag_top) {}

void Predictor::publish(double value, double anchored_phase, double edge_time, double edge_fraction) {
  if (!channel_.unpublished()) return;
  channel_.publish(model_.message(value, anchored_phase, edge_time, edge_fraction));
}

void Predictor::round_complete() {
  const RoundMessage* msgs = channel_.messages();
  model_.on_round(channel_.seq(), msgs, size_);
  if (rank_ == 0 && ran_.coll && ran_.predicted > 0 && log().should_log(spdlog::level::debug)) {
    double sum = 0;
    for (int p = 0; p < size_; ++p) sum += msgs[p].last_elapsed;
    log().debug("{} as it ran: {} measured {:.1f} us mean elapsed, predicted {:.1f} us",
                to_string(*ran_.coll), algo_info(ran_.algo).name,
                1e6 * sum / size_, 1e6 * ran_.predicted);
  }
  update_corrections(corrections_, ran_, msgs, size_);
}

std::uint64_t Predictor::state_fingerprint() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::uint64_t h = fnv1a_word(policy_.fingerprint(), channel_.seq());
  return fnv1a_word(h, corrections_.fingerprint());
}

RoundResult Predictor::result() const {
  RoundResult r;
  r.arrival = model_.arrival();
  r.corrections = corrections_;
  r.noise = model_.noise();
  return r;
}

std::optional<RoundResult> Predictor::on_entry(std::uint64_t seq, double arrival) {
  std::lock_guard<std::mutex> lock(mu_);
  model_.no_prediction();
  if (!channel_.open_for(seq)) return std::nullopt;
  publish(arrival);  // edge mode without an edge: the actual arrival
  if (channel_.wait()) round_complete();  // not yet complete (no helper thread, or it was late)
  channel_.take();
  model_.entered(rank_, arrival);
  if (!model_.vector_valid()) return std::nullopt;
  return result();
}

bool Predictor::on_exit(std::uint64_t seq, std::uint64_t site, const CallShape& shape, double arrival,
                        double exit, std::uint64_t bytes_per_rank, const RanDecision& ran) {
  std::lock_guard<std::mutex> lock(mu_);
  ran_ = ran;
  model_.on_call(seq, site, arrival, exit);
  shape_by_site_[site] = shape;
  const auto next = model_.expected_next_site();
  auto it = next ? shape_by_site_.find(*next) : shape_by_site_.end();
  next_shape_ = it == shape_by_site_.end() ? shape : it->second;
  if (!policy_.next_has_round(seq, bytes_per_rank, ran, rank_ == 0)) return false;
  channel_.open(seq + 1);
  if (mode_ == PredictorMode::Sma) publish(model_.sma_value(), model_.sma_anchored_phase());
  return true;
}

void Predictor::on_edge(double t, double fraction) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ != PredictorMode::Edge || !channel_.unpublished()) return;
  if (const auto value = model_.edge_value(t, fraction)) publish(*value, kNaN, t, fraction);
}

bool Predictor::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return channel_.waiting();
}

bool Predictor::poll(RoundResult& out, std::uint64_t& seq, CallShape& shape, bool& advanced) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!channel_.test(advanced)) return false;  // not started, not complete, or parked
  round_complete();
  if (!model_.vector_valid()) return false;
  out = result();
  seq = channel_.seq();
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
  // Peers must never wait for this rank: start its part first.
  publish(kNaN);
  return channel_.close();
}

bool Predictor::settle() {
  std::lock_guard<std::mutex> lock(mu_);
  publish(kNaN);  // done already by close()
  return channel_.settle();
}

void Predictor::park(std::shared_ptr<Predictor> p, MPI_Comm xchg) {
  ParkedRounds::park([p] { return p->settle(); }, xchg);
}

void Predictor::finish_all(const std::vector<std::shared_ptr<Predictor>>& live) {
  std::vector<ParkedRounds::Settle> settle;
  settle.reserve(live.size());
  for (const auto& p : live) settle.emplace_back([q = p.get()] { return q->settle(); });
  ParkedRounds::finish_all(settle);
}

}  // namespace papshim
