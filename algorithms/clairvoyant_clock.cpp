// Clairvoyant reduce: the exact clock and the round limit shared by both
// generators (clairvoyant.h, "Exact arithmetic" and "Safety"), and the
// segments auto mode gives them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "algorithms/clairvoyant.h"

namespace papshim {

int clairvoyant_segments(const SegmentInput& in) {
  int nseg = in.clv_segments > 0 ? in.clv_segments : in.nprocs;
  if (in.count > 0) nseg = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(nseg), in.count));
  return std::max(nseg, 1);
}

namespace detail {

ClairvoyantClock clairvoyant_clock(const ScheduleParams& params) {
  const int P = params.nprocs;
  if (P < 1 || params.arrival.size() != static_cast<std::size_t>(P))
    throw std::invalid_argument("clairvoyant: arrival vector size must equal nprocs");
  if (params.root < 0 || params.root >= P) throw std::invalid_argument("clairvoyant: bad root");
  if (params.nseg < 1) throw std::invalid_argument("clairvoyant: nseg must be >= 1");
  if (!(params.tau > 0) || !std::isfinite(params.tau))
    throw std::invalid_argument("clairvoyant: round length must be positive and finite");
  for (double a : params.arrival)
    if (!std::isfinite(a)) throw std::invalid_argument("clairvoyant: arrival time not finite");

  // Arrival relative to the earliest one, in rounds: whole part K and
  // fraction f.  Beyond 2^60 rounds everything counts as "at 2^60".
  const double first = *std::min_element(params.arrival.begin(), params.arrival.end());
  const double cap = std::ldexp(1.0, 60);
  ClairvoyantClock clk;
  std::vector<double> frac(static_cast<std::size_t>(P));
  clk.whole.resize(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    double t = (params.arrival[p] - first) / params.tau;
    if (!(t < cap)) t = cap;
    const double whole = std::floor(t);
    clk.whole[p] = static_cast<std::int64_t>(whole);
    frac[p] = t - whole;
  }

  // Order by (f, rank): position and dense class of equal fractions.
  std::vector<int> by_frac(static_cast<std::size_t>(P));
  std::iota(by_frac.begin(), by_frac.end(), 0);
  std::sort(by_frac.begin(), by_frac.end(), [&](int p, int q) {
    return frac[p] != frac[q] ? frac[p] < frac[q] : p < q;
  });
  clk.frac_pos.resize(static_cast<std::size_t>(P));
  clk.frac_class.resize(static_cast<std::size_t>(P));
  for (int k = 0, cls = 0; k < P; ++k) {
    if (k > 0 && frac[by_frac[k]] != frac[by_frac[k - 1]]) ++cls;
    clk.frac_pos[by_frac[k]] = k;
    clk.frac_class[by_frac[k]] = cls;
  }

  clk.by_arrival = by_frac;
  std::stable_sort(clk.by_arrival.begin(), clk.by_arrival.end(),
                   [&](int p, int q) { return clk.whole[p] < clk.whole[q]; });
  return clk;
}

int round_limit(const ScheduleParams& params) {
  const double limit = 4.0 * params.nprocs * params.nseg + 4.0 * params.nprocs + 16;
  return limit < std::numeric_limits<int>::max() ? static_cast<int>(limit)
                                                  : std::numeric_limits<int>::max();
}

}  // namespace detail
}  // namespace papshim
