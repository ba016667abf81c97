#include "algorithms/arrival_order.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace papshim {

namespace {

// The arrival used for sorting: NaN becomes +infinity, so that the
// comparison below is a strict weak order whatever the input.
double arrival_key(const ScheduleParams& p, int rank) {
  if (p.arrival.size() != static_cast<std::size_t>(p.nprocs)) return 0.0;
  const double a = p.arrival[static_cast<std::size_t>(rank)];
  return std::isnan(a) ? std::numeric_limits<double>::infinity() : a;
}

}  // namespace

std::vector<int> arrival_order(const ScheduleParams& params) {
  std::vector<int> order(static_cast<std::size_t>(std::max(params.nprocs, 0)));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const double ax = arrival_key(params, x), ay = arrival_key(params, y);
    return ax < ay || (ax == ay && x < y);
  });
  return order;
}

std::vector<double> sorted_arrivals(const ScheduleParams& params, const std::vector<int>& order) {
  std::vector<double> a;
  a.reserve(order.size());
  for (int r : order) a.push_back(arrival_key(params, r));
  return a;
}

}  // namespace papshim
