#include "shim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "common/hash.h"
#include "shim/stats.h"

namespace papshim {

namespace {

// ---- message encoding: fixed-width native words, strings with a length ----

constexpr std::uint64_t kMagic = 0x3252535348534150ull;  // "PAPSHSR2"

class Writer {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) == 8, "8-byte words only");
    const auto at = out_.size();
    out_.resize(at + 8);
    std::memcpy(&out_[at], &v, 8);
  }
  void put(const std::string& s) {
    put<std::uint64_t>(s.size());
    out_ += s;
  }
  void put(const std::map<std::string, std::uint64_t>& m) {
    put<std::uint64_t>(m.size());
    for (const auto& [k, v] : m) put(k), put<std::uint64_t>(v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), left_(n) {}
  template <typename T>
  bool get(T& v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) == 8, "8-byte words only");
    if (left_ < 8) return false;
    std::memcpy(&v, p_, 8);
    p_ += 8, left_ -= 8;
    return true;
  }
  bool get(std::string& s) {
    std::uint64_t n = 0;
    if (!get(n) || n > left_) return false;
    s.assign(p_, static_cast<std::size_t>(n));
    p_ += n, left_ -= n;
    return true;
  }
  bool get(std::map<std::string, std::uint64_t>& m) {
    std::uint64_t n = 0;
    if (!count(n, 16)) return false;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string k;
      std::uint64_t v = 0;
      if (!get(k) || !get(v)) return false;
      m[k] += v;
    }
    return true;
  }
  // A count of items of at least `min_bytes` each: never more than the rest
  // of the message could hold (a damaged count allocates nothing).
  bool count(std::uint64_t& n, std::size_t min_bytes) { return get(n) && n <= left_ / min_bytes; }
  bool done() const { return left_ == 0; }

 private:
  const char* p_;
  std::size_t left_;
};

void put_series(Writer& w, const NamedSeries& s) {
  w.put<std::uint64_t>(s.width);
  w.put<std::uint64_t>(s.buckets.size());
  for (const auto& b : s.buckets) {
    w.put<std::uint64_t>(b.calls);
    w.put<double>(b.sum_elapsed);
    w.put<double>(b.sum_gain);
    w.put<std::uint64_t>(b.predicted_calls);
    w.put<double>(b.sum_abs_error);
    w.put(b.algorithms);
  }
}

bool get_series(Reader& r, NamedSeries& s) {
  std::uint64_t n = 0;
  if (!r.get(s.width) || s.width == 0 || (s.width & (s.width - 1)) != 0 || !r.count(n, 6 * 8) ||
      (n != 0 && n != kSeriesBuckets))
    return false;
  s.buckets.resize(static_cast<std::size_t>(n));
  for (auto& b : s.buckets)
    if (!r.get(b.calls) || !r.get(b.sum_elapsed) || !r.get(b.sum_gain) || !r.get(b.predicted_calls) ||
        !r.get(b.sum_abs_error) || !r.get(b.algorithms))
      return false;
  return true;
}

// A slot of a pool of vectors, reusing freed ones.
template <typename T>
std::uint32_t take_slot(std::vector<std::vector<T>>& pool, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    pool.emplace_back();
    return static_cast<std::uint32_t>(pool.size() - 1);
  }
  const std::uint32_t slot = free.back();
  free.pop_back();
  return slot;
}

template <typename T>
void give_back(std::vector<std::vector<T>>& pool, std::vector<std::uint32_t>& free, std::uint32_t slot) {
  pool[slot].clear();
  free.push_back(slot);
}

}  // namespace

// ---- sampling -------------------------------------------------------------

std::uint64_t sample_hash(std::uint64_t comm_id, std::uint64_t seq) { return mix64(mix64(comm_id) ^ seq); }

int sample_rank(std::uint64_t hash) {
  if (hash == 0) return kMaxSampleLevel;
  int n = 0;
  while ((hash & 1u) == 0) hash >>= 1, ++n;
  return n;
}

std::vector<std::uint64_t> sample_call_weights(const RankStats& s) {
  std::vector<std::uint64_t> w(kMaxSampleLevel + 1, 0);
  for (const auto& a : s.samples) {
    const int size = a.site < s.sites.size() ? std::max(s.sites[a.site].comm_size, 1) : 1;
    w[static_cast<std::size_t>(sample_rank(sample_hash(a.comm_id, a.seq)))] +=
        (std::uint64_t{1} << kCallWeightBits) / static_cast<std::uint64_t>(size);
  }
  for (int l = kMaxSampleLevel - 1; l >= 0; --l) w[static_cast<std::size_t>(l)] += w[static_cast<std::size_t>(l + 1)];
  return w;
}

std::vector<std::uint64_t> sample_record_counts(const RankStats& s) {
  std::vector<std::uint64_t> n(kMaxSampleLevel + 1, 0);
  for (const auto& a : s.samples) n[static_cast<std::size_t>(sample_rank(sample_hash(a.comm_id, a.seq)))]++;
  for (int l = kMaxSampleLevel - 1; l >= 0; --l) n[static_cast<std::size_t>(l)] += n[static_cast<std::size_t>(l + 1)];
  return n;
}

int choose_record_level(const std::vector<std::uint64_t>& counts, int min_level, std::uint64_t budget) {
  int l = std::clamp(min_level, 0, kMaxSampleLevel);
  while (l < kMaxSampleLevel && l < static_cast<int>(counts.size()) && counts[static_cast<std::size_t>(l)] > budget)
    ++l;
  return l;
}

int choose_sample_level(const std::vector<std::uint64_t>& weights, int min_level, std::uint64_t budget) {
  // Weights are rounded down, so a sum may fall short of the calls by one
  // unit per sample: compare with the budget in whole calls, rounded up.
  const std::uint64_t limit = (budget << kCallWeightBits) | ((std::uint64_t{1} << kCallWeightBits) - 1);
  int l = std::clamp(min_level, 0, kMaxSampleLevel);
  while (l < kMaxSampleLevel && l < static_cast<int>(weights.size()) && weights[static_cast<std::size_t>(l)] > limit)
    ++l;
  return l;
}

void thin_samples(RankStats& s, int level) {
  if (level > s.level)
    s.samples.erase(std::remove_if(s.samples.begin(), s.samples.end(),
                                   [level](const SampleRecord& a) { return !sampled_at(a.comm_id, a.seq, level); }),
                    s.samples.end());
  s.level = std::max(s.level, level);
}

// ---- packing --------------------------------------------------------------

std::string pack_rank_stats(const RankStats& s) {
  Writer w;
  w.put<std::uint64_t>(kMagic);
  w.put<std::int64_t>(s.level);
  w.put(s.host);
  w.put<std::uint64_t>(s.sites.size());
  for (const auto& x : s.sites) {
    w.put(x.op);
    w.put<std::int64_t>(x.comm_size);
    w.put(x.key);
    w.put<std::uint64_t>(x.communicators);
    w.put<std::uint64_t>(x.calls);
    w.put<std::uint64_t>(x.bytes);
    w.put<double>(x.sum_elapsed);
    w.put<double>(x.max_elapsed);
    w.put(x.algorithms);
    w.put(x.fallbacks);
    w.put<std::uint64_t>(x.auto_decisions);
    w.put<std::uint64_t>(x.ready);
    w.put<std::uint64_t>(x.predicted_calls);
    w.put<double>(x.sum_abs_error);
    put_series(w, x.series);
  }
  w.put<std::uint64_t>(s.samples.size());
  for (const auto& a : s.samples) {
    w.put<std::uint64_t>(a.comm_id);
    w.put<std::uint64_t>(a.seq);
    w.put<double>(a.arrival);
    w.put<double>(a.exit);
    w.put<double>(a.predicted);
    w.put<std::uint64_t>(a.site);
    w.put<std::uint64_t>(a.index);
  }
  return w.take();
}

bool unpack_rank_stats(const char* data, std::size_t size, RankStats& out) {
  Reader r(data, size);
  out = RankStats{};
  std::uint64_t magic = 0, n = 0;
  std::int64_t level = 0;
  if (!r.get(magic) || magic != kMagic || !r.get(level) || level < 0 || level > kMaxSampleLevel) return false;
  out.level = static_cast<int>(level);
  if (!r.get(out.host) || !r.count(n, 15 * 8)) return false;
  out.sites.resize(static_cast<std::size_t>(n));
  for (auto& x : out.sites) {
    std::int64_t comm_size = 0;
    if (!r.get(x.op) || !r.get(comm_size) || comm_size < 0 || comm_size > std::numeric_limits<int>::max() ||
        !r.get(x.key) || !r.get(x.communicators) || !r.get(x.calls) || !r.get(x.bytes) || !r.get(x.sum_elapsed) ||
        !r.get(x.max_elapsed) || !r.get(x.algorithms) || !r.get(x.fallbacks) || !r.get(x.auto_decisions) ||
        !r.get(x.ready) || !r.get(x.predicted_calls) || !r.get(x.sum_abs_error) || !get_series(r, x.series))
      return false;
    x.comm_size = static_cast<int>(comm_size);
  }
  if (!r.count(n, 7 * 8)) return false;
  out.samples.resize(static_cast<std::size_t>(n));
  for (auto& a : out.samples) {
    std::uint64_t site = 0, index = 0;
    if (!r.get(a.comm_id) || !r.get(a.seq) || !r.get(a.arrival) || !r.get(a.exit) || !r.get(a.predicted) ||
        !r.get(site) || site >= out.sites.size() || !r.get(index) || index > 0xffffffffu)
      return false;
    a.site = static_cast<std::uint32_t>(site);
    a.index = static_cast<std::uint32_t>(index);
  }
  return r.done();
}

// ---- merging --------------------------------------------------------------

double mean_spread(const ReportSite& s) {
  return s.spread_calls ? s.sum_spread / static_cast<double>(s.spread_calls) : 0.0;
}

double imbalance_factor(const ReportSite& s, const ReportHeader& h) {
  const double bytes = s.calls ? static_cast<double>(s.bytes) / static_cast<double>(s.calls) : 0.0;
  const double message = h.alpha + h.beta * bytes;
  return message > 0 ? mean_spread(s) / message : 0.0;
}

double mean_abs_error(const ReportSite& s) {
  return s.predicted_calls ? s.sum_abs_error / static_cast<double>(s.predicted_calls) : 0.0;
}

double mean_lateness(const ReportSite& s, std::size_t r) {
  if (r >= s.lateness_calls.size() || s.lateness_calls[r] == 0) return 0.0;
  return s.sum_lateness[r] / static_cast<double>(s.lateness_calls[r]);
}

std::vector<std::size_t> worst_ranks(const ReportSite& s, std::size_t n) {
  // Keeps the n worst in a small sorted list: O(P n), no P-sized copy.
  std::vector<std::size_t> worst;
  auto worse = [&](std::size_t a, std::size_t b) {
    const double la = mean_lateness(s, a), lb = mean_lateness(s, b);
    return la != lb ? la > lb : s.last_calls[a] > s.last_calls[b];
  };
  for (std::size_t r = 0; r < s.last_calls.size(); ++r) {
    if (mean_lateness(s, r) <= 0 && s.last_calls[r] == 0) continue;
    const auto at = std::find_if(worst.begin(), worst.end(), [&](std::size_t w) { return worse(r, w); });
    if (static_cast<std::size_t>(at - worst.begin()) >= n) continue;
    worst.insert(at, r);
    if (worst.size() > n) worst.pop_back();
  }
  return worst;
}

ReportMerger::ReportMerger(const ReportHeader& header, int nranks, Resolver resolve)
    : nranks_(std::max(nranks, 0)), resolve_(std::move(resolve)) {
  rep_.header = header;
  rep_.header.lateness_level = std::max(header.lateness_level, header.sample_level);
  rep_.hosts.assign(static_cast<std::size_t>(nranks_), std::string());
}

std::vector<std::size_t> ReportMerger::add_rank(int rank, const RankStats& s) {
  std::vector<std::size_t> rows;
  rows.reserve(s.sites.size());
  for (const auto& x : s.sites) {
    auto [it, inserted] = index_.try_emplace({x.op, x.key, x.comm_size}, rep_.sites.size());
    if (inserted) {
      ReportSite n;
      n.op = x.op;
      n.key = x.key;
      n.comm_size = x.comm_size;
      const auto where = resolve_(x.key);
      n.function = where.function;
      n.file_line = where.file_line;
      n.calls_per_rank.assign(static_cast<std::size_t>(nranks_), 0);
      rep_.sites.push_back(std::move(n));
    }
    ReportSite& m = rep_.sites[it->second];
    add_sums(m, x);
    m.series.add(x.series);
    if (rank >= 0 && rank < nranks_) m.calls_per_rank[static_cast<std::size_t>(rank)] += x.calls;
    m.communicators = std::max(m.communicators, x.communicators);
    rows.push_back(it->second);
  }
  if (rank >= 0 && rank < nranks_) rep_.hosts[static_cast<std::size_t>(rank)] = s.host;
  for (const auto& a : s.samples)
    if (a.site < rows.size() && sampled_at(a.comm_id, a.seq, rep_.header.sample_level))
      add_sample(a, static_cast<std::uint32_t>(rows[a.site]), rank);
  return rows;
}

// One rank's arrival at a sampled call; once every rank of the communicator
// has reported it, its spread goes to the rows its ranks called it from.
// Calls at the lateness level also keep each rank's arrival until then
// (their number is bounded by the level: shim/report_writer.cpp).
void ReportMerger::add_sample(const SampleRecord& a, std::uint32_t row, int rank) {
  const auto size = static_cast<std::uint32_t>(std::max(rep_.sites[row].comm_size, 1));
  auto [it, inserted] = pending_.try_emplace(CallKey{a.comm_id, a.seq}, Pending{a.arrival, a.arrival, 0, size, row,
                                                                                 kNone, a.index, rank, row, kNone});
  Pending& p = it->second;
  if (inserted && sampled_at(a.comm_id, a.seq, rep_.header.lateness_level))
    p.arrivals = take_slot(arrivals_, free_arrivals_);
  if (a.arrival > p.hi) p.last = rank, p.last_row = row;
  p.lo = std::min(p.lo, a.arrival);
  p.hi = std::max(p.hi, a.arrival);
  p.seen++;
  if (p.arrivals != kNone) arrivals_[p.arrivals].push_back(Arrival{rank, row, a.arrival});
  if (row != p.row) {
    if (p.more == kNone) p.more = take_slot(more_rows_, free_more_);
    auto& more = more_rows_[p.more];
    if (std::find(more.begin(), more.end(), row) == more.end()) more.push_back(row);
  }
  if (p.seen < p.size) return;
  complete(p);
  if (p.more != kNone) give_back(more_rows_, free_more_, p.more);
  if (p.arrivals != kNone) give_back(arrivals_, free_arrivals_, p.arrivals);
  pending_.erase(it);
}

void ReportMerger::grow_rank_vectors(ReportSite& m) const {
  if (!m.sum_lateness.empty()) return;
  const auto n = static_cast<std::size_t>(nranks_);
  m.sum_lateness.assign(n, 0.0);
  m.lateness_calls.assign(n, 0);
  m.last_calls.assign(n, 0);
}

// A call every rank of which has reported: its spread, who came last, and
// with the arrivals kept, every rank's lateness.
void ReportMerger::complete(const Pending& p) {
  const double spread = p.hi - p.lo;
  auto fold = [&](std::uint32_t r) {
    auto& m = rep_.sites[r];
    m.spread_calls++;
    m.sum_spread += spread;
    m.max_spread = std::max(m.max_spread, spread);
    auto& bucket = m.series.at(p.index);
    bucket.spread_calls++;
    bucket.sum_spread += spread;
  };
  fold(p.row);
  if (p.more != kNone)
    for (auto r : more_rows_[p.more]) fold(r);
  const auto in_range = [&](std::int32_t rank) { return rank >= 0 && rank < nranks_; };
  if (in_range(p.last) && spread > 0) {
    ReportSite& m = rep_.sites[p.last_row];
    grow_rank_vectors(m);
    m.last_calls[static_cast<std::size_t>(p.last)]++;
  }
  if (p.arrivals == kNone) return;
  for (const Arrival& x : arrivals_[p.arrivals]) {
    if (!in_range(x.rank)) continue;
    ReportSite& m = rep_.sites[x.row];
    grow_rank_vectors(m);
    m.sum_lateness[static_cast<std::size_t>(x.rank)] += x.t - p.lo;
    m.lateness_calls[static_cast<std::size_t>(x.rank)]++;
  }
}

Report ReportMerger::finish() {
  // Calls still pending lack some rank's arrival: they give no spread.
  pending_.clear();
  more_rows_.clear();
  arrivals_.clear();
  std::stable_sort(rep_.sites.begin(), rep_.sites.end(),
                   [](const ReportSite& a, const ReportSite& b) { return a.sum_elapsed > b.sum_elapsed; });
  for (std::size_t i = 0; i < rep_.sites.size(); ++i) rep_.sites[i].id = static_cast<int>(i + 1);
  index_.clear();
  return std::move(rep_);
}

Report merge_report(ReportHeader header, const std::vector<RankStats>& ranks, const Resolver& resolve) {
  for (const auto& s : ranks) header.sample_level = std::max(header.sample_level, s.level);
  ReportMerger m(header, static_cast<int>(ranks.size()), resolve);
  for (std::size_t r = 0; r < ranks.size(); ++r) m.add_rank(static_cast<int>(r), ranks[r]);
  return m.finish();
}

}  // namespace papshim
