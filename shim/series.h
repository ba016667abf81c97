// A call site's time series: what its calls did over the run, in a fixed
// number of buckets over the call index (the site's calls on one rank,
// counted from 0), so the memory stays the same however long the run.
//
// Works as follows.  Bucket b holds the calls of index [b * width,
// (b + 1) * width).  The width starts at 1 and doubles whenever a call's
// index falls beyond the last bucket: bucket pairs (2b, 2b+1) merge into b.
// Widths are powers of two from index 0, so any series can be brought to a
// wider one (coarsen) and two series of the same width add bucket by
// bucket: every rank of a site buckets its calls by the same rule, and rank
// 0 sums them at the widest width any rank reached.  The arrival spread of
// a sampled call goes to the bucket of its call index on the first rank
// rank 0 saw it from (shim/report.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace papshim {

constexpr std::size_t kSeriesBuckets = 32;

// `Names` maps an algorithm's name to its calls: keyed by the static name
// on the ranks, by std::string in the message and on rank 0.
template <typename Names>
struct SeriesBucket {
  std::uint64_t calls = 0;
  double sum_elapsed = 0;        // seconds in the collective
  double sum_gain = 0;           // auto mode's estimated gain over native, seconds
  std::uint64_t predicted_calls = 0;
  double sum_abs_error = 0;      // |predicted - actual arrival|, seconds
  std::uint64_t spread_calls = 0;
  double sum_spread = 0;         // rank 0 only: arrival spreads of sampled calls
  Names algorithms;

  template <typename Other>
  void add(const SeriesBucket<Other>& o) {
    calls += o.calls;
    sum_elapsed += o.sum_elapsed;
    sum_gain += o.sum_gain;
    predicted_calls += o.predicted_calls;
    sum_abs_error += o.sum_abs_error;
    spread_calls += o.spread_calls;
    sum_spread += o.sum_spread;
    for (const auto& [name, n] : o.algorithms) algorithms[name] += n;
  }
};

template <typename Names>
struct Series {
  std::uint64_t width = 1;                   // calls per bucket (a power of two)
  std::vector<SeriesBucket<Names>> buckets;  // empty, or kSeriesBuckets

  // The bucket of call `index`, widening the series when needed.
  SeriesBucket<Names>& at(std::uint64_t index) {
    if (buckets.empty()) buckets.resize(kSeriesBuckets);
    std::uint64_t w = width;
    while (index / w >= kSeriesBuckets) w *= 2;
    coarsen(w);
    return buckets[static_cast<std::size_t>(index / width)];
  }

  // Brings the series to `w` (a power of two, at least `width`).
  void coarsen(std::uint64_t w) {
    while (width < w) {
      for (std::size_t b = 0; b < buckets.size(); ++b) {
        if (b / 2 == b) continue;  // bucket 0 stays where it is
        buckets[b / 2].add(buckets[b]);
        buckets[b] = SeriesBucket<Names>{};
      }
      width *= 2;
    }
  }

  // Adds another series (any width) into this one.
  template <typename Other>
  void add(const Series<Other>& o) {
    if (o.buckets.empty()) return;
    if (buckets.empty()) buckets.resize(kSeriesBuckets);
    coarsen(o.width);
    const std::uint64_t ratio = width / o.width;
    for (std::size_t b = 0; b < o.buckets.size(); ++b) buckets[static_cast<std::size_t>(b / ratio)].add(o.buckets[b]);
  }
};

using RankSeries = Series<std::map<const char*, std::uint64_t>>;
using NamedSeries = Series<std::map<std::string, std::uint64_t>>;

}  // namespace papshim
