#include "predictor/stall_watch.h"

#include <algorithm>
#include <cstdio>

#include "common/clock.h"
#include "config/log.h"

namespace papshim {

StallWatch& StallWatch::instance() {
  static auto* w = new StallWatch;  // used from the helper thread until it is joined
  return *w;
}

void StallWatch::configure(double seconds, double clock_offset, int world_rank, Describe describe) {
  std::lock_guard<std::mutex> lock(mu_);
  seconds_ = seconds > 0 ? seconds : 0;
  clock_offset_ = clock_offset;
  world_rank_ = world_rank;
  describe_ = describe;
}

void StallWatch::enter(Call* c) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(c);
}

void StallWatch::set_round(Call* c, const std::vector<double>* arrivals) {
  std::lock_guard<std::mutex> lock(mu_);
  c->predicted = arrivals;
}

void StallWatch::leave(Call* c) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.erase(std::remove(calls_.begin(), calls_.end(), c), calls_.end());
}

void StallWatch::check() {
  if (seconds_ <= 0) return;
  std::vector<std::string> notices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double t = now() - clock_offset_;
    for (Call* c : calls_) {
      if (c->reported || t - c->arrival < seconds_) continue;
      c->reported = true;
      notices.push_back(notice(*c, t, world_rank_, describe_ ? describe_(c->site) : std::string("?")));
    }
  }
  for (const auto& n : notices) log().warn("{}", n);
}

std::string StallWatch::notice(const Call& c, double now, int world_rank, const std::string& where) {
  char head[512];
  std::snprintf(head, sizeof head,
                "stall: rank %d of %d (world rank %d) has waited %.2f s in %s call #%llu at call site %s; ",
                c.rank, c.comm_size, world_rank, now - c.arrival, c.collective,
                static_cast<unsigned long long>(c.seq), where.c_str());
  std::string out = head;
  if (c.predicted == nullptr || c.predicted->empty())
    return out + "which ranks have not arrived is not known (no prediction round of this call had completed)";
  const std::vector<double>& p = *c.predicted;
  std::vector<std::size_t> missing;
  for (std::size_t r = 0; r < p.size(); ++r)
    if (p[r] > now) missing.push_back(r);
  char part[128];
  if (missing.empty()) {
    const auto latest = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    std::snprintf(part, sizeof part, "the prediction round had every rank arriving by now (the latest: rank %zu)",
                  latest);
    return out + part;
  }
  constexpr std::size_t kNamed = 16;
  out += "not arrived yet by the call's prediction round: rank";
  out += missing.size() > 1 ? "s" : "";
  for (std::size_t i = 0; i < missing.size() && i < kNamed; ++i) {
    std::snprintf(part, sizeof part, "%s %zu (predicted to arrive in %.2f s)", i ? "," : "", missing[i], p[missing[i]] - now);
    out += part;
  }
  if (missing.size() > kNamed) out += ", ... (" + std::to_string(missing.size()) + " in all)";
  return out;
}

}  // namespace papshim
