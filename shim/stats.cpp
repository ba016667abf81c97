#include "shim/stats.h"

#include <sstream>

namespace papshim {

Stats& Stats::instance() {
  static Stats s;
  return s;
}

std::uint64_t site_hash(const std::string& op, const std::string& key) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : op + "|" + key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

void Stats::record(const SiteKey& key, std::uint64_t seq, double arrival, double exit, double predicted,
                   std::uint64_t bytes, const char* algorithm, const std::string& fallback_reason,
                   bool auto_decision, bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& s = sites_[key];
  const double elapsed = exit - arrival;
  s.calls++;
  s.bytes += bytes;
  s.sum_elapsed += elapsed;
  if (elapsed > s.max_elapsed) s.max_elapsed = elapsed;
  s.algorithms[algorithm]++;
  if (!fallback_reason.empty()) s.fallbacks[fallback_reason]++;
  s.auto_decisions += auto_decision ? 1 : 0;
  s.ready += ready ? 1 : 0;
  if (arrivals_.size() < kMaxArrivalRecords)
    arrivals_.push_back(
        {key.comm_id, seq, CallSiteHash()(key.site) ^ static_cast<std::uint64_t>(key.op), arrival, exit, predicted});
  else
    truncated_ = true;
}

// Line format (tab separated):
// op comm_id comm_size site_key calls bytes sum_elapsed max_elapsed local_hash algos fallbacks
// auto_decisions ready
std::string Stats::serialize_sites() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  out.precision(17);
  for (const auto& [k, s] : sites_) {
    const std::string key = callsite_key(k.site);
    out << to_string(k.op) << '\t' << k.comm_id << '\t' << k.comm_size << '\t' << key << '\t' << s.calls << '\t'
        << s.bytes << '\t' << s.sum_elapsed << '\t' << s.max_elapsed << '\t'
        << (CallSiteHash()(k.site) ^ static_cast<std::uint64_t>(k.op)) << '\t';
    for (const auto& [a, n] : s.algorithms) out << a << '=' << n << ',';
    out << '\t';
    for (const auto& [r, n] : s.fallbacks) out << r << '=' << n << ',';
    out << '\t' << s.auto_decisions << '\t' << s.ready << '\n';
  }
  return out.str();
}

std::vector<ArrivalRecord> Stats::arrivals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return arrivals_;
}

}  // namespace papshim
