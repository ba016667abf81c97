#include "shim/stats.h"

#include <algorithm>
#include <cmath>

#include "algorithms/catalog.h"
#include "shim/runtime.h"

namespace papshim {

Stats& Stats::instance() {
  static Stats* s = new Stats;  // outlives static destruction (delete callbacks at exit)
  return *s;
}

void Stats::configure(bool keep_samples, std::size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  configured_ = true;
  keep_ = keep_samples && capacity > 0;
  capacity_ = capacity;
  if (!keep_) {
    samples_.clear();
    samples_.shrink_to_fit();
  }
}

std::uint32_t Stats::site_of(const SiteKey& key) {
  SiteKey k = key;
  k.comm_id = 0;
  auto [it, inserted] = site_index_.try_emplace(k, static_cast<std::uint32_t>(sites_.size()));
  if (inserted) sites_.push_back(Site{k, {}, 0, 0, {}});
  return it->second;
}

Stats::Row& Stats::row_locked(const SiteKey& key) {
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    it = rows_.try_emplace(key).first;
    it->second.site = site_of(key);
    keys_by_comm_[key.comm_id].push_back(key);
  }
  return it->second;
}

Stats::Row* Stats::row_for(const SiteKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return &row_locked(key);
}

SiteStats Stats::settled(const Row& row) const {
  SiteStats s = row.s;
  const std::uint64_t calls = row.pass_calls.load(std::memory_order_relaxed);
  if (calls == 0) return s;
  const double spt = tick_rate_.seconds_per_tick();
  s.calls += calls;
  s.bytes += row.pass_bytes.load(std::memory_order_relaxed);
  s.sum_elapsed += spt * static_cast<double>(row.pass_ticks.load(std::memory_order_relaxed));
  s.max_elapsed = std::max(s.max_elapsed, spt * static_cast<double>(row.pass_max_ticks.load(std::memory_order_relaxed)));
  s.algorithms[algo_info(Algo::Native).name] += calls;
  return s;
}

void Stats::record(const SiteKey& key, std::uint64_t global_comm_id, std::uint64_t seq, double arrival, double exit,
                   double predicted, std::uint64_t bytes, const char* algorithm, const std::string& fallback_reason,
                   bool auto_decision, bool ready, double gain) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!configured_) {
    const Config& cfg = runtime().cfg;
    configured_ = true;
    keep_ = cfg.report != "off" || !cfg.timeline.empty();
  }
  Row& row = row_locked(key);
  SiteStats& s = row.s;
  const double elapsed = exit - arrival;
  s.calls++;
  s.bytes += bytes;
  s.sum_elapsed += elapsed;
  if (elapsed > s.max_elapsed) s.max_elapsed = elapsed;
  s.algorithms[algorithm]++;
  if (!fallback_reason.empty()) s.fallbacks[fallback_reason]++;
  s.auto_decisions += auto_decision ? 1 : 0;
  s.ready += ready ? 1 : 0;
  if (std::isfinite(predicted)) {
    s.predicted_calls++;
    s.sum_abs_error += std::fabs(predicted - arrival);
  }
  Site& site = sites_[row.site];
  const std::uint64_t index = site.calls++;
  auto& bucket = site.series.at(index);
  bucket.calls++;
  bucket.sum_elapsed += elapsed;
  bucket.sum_gain += gain;
  bucket.algorithms[algorithm]++;
  if (std::isfinite(predicted)) {
    bucket.predicted_calls++;
    bucket.sum_abs_error += std::fabs(predicted - arrival);
  }
  if (keep_ && global_comm_id != 0)
    sample(SampleRecord{global_comm_id, seq, arrival, exit, predicted, row.site,
                        static_cast<std::uint32_t>(std::min<std::uint64_t>(index, 0xffffffffu))});
}

void Stats::sample(const SampleRecord& rec) {
  const int rank = sample_rank(sample_hash(rec.comm_id, rec.seq));
  if (rank < level_) return;
  if (samples_.empty()) samples_.reserve(capacity_);
  while (samples_.size() >= capacity_ && level_ < kMaxSampleLevel) {
    ++level_;
    const int level = level_;
    samples_.erase(std::remove_if(samples_.begin(), samples_.end(),
                                  [level](const SampleRecord& a) { return !sampled_at(a.comm_id, a.seq, level); }),
                   samples_.end());
  }
  if (rank < level_ || samples_.size() >= capacity_) return;
  samples_.push_back(rec);
}

void Stats::retire_communicator(std::uint64_t local_comm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto keys = keys_by_comm_.find(local_comm_id);
  if (keys == keys_by_comm_.end()) return;
  for (const SiteKey& key : keys->second) {
    const auto it = rows_.find(key);
    Site& site = sites_[it->second.site];
    add_sums(site.retired, settled(it->second));
    site.retired_comms++;
    rows_.erase(it);
  }
  keys_by_comm_.erase(keys);
}

RankStats Stats::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  RankStats out;
  out.level = level_;
  out.sites.resize(sites_.size());
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    const Site& site = sites_[i];
    RankSite& x = out.sites[i];
    x.op = to_string(site.key.op);
    x.comm_size = site.key.comm_size;
    x.key = callsite_key(site.key.site);
    x.communicators = site.retired_comms;
    add_sums(x, site.retired);
    x.series.add(site.series);
  }
  for (const auto& [key, row] : rows_) {
    RankSite& x = out.sites[row.site];
    x.communicators++;
    add_sums(x, settled(row));
  }
  out.samples = samples_;
  return out;
}

int Stats::sample_level() const {
  std::lock_guard<std::mutex> lock(mu_);
  return level_;
}

std::size_t Stats::sample_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_.size();
}

std::size_t Stats::live_rows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

}  // namespace papshim
