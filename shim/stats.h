// Per-rank statistics of intercepted calls, keyed by (operation,
// communicator, call site), and the arrival records that give the arrival
// spread once rank 0 has gathered them at MPI_Finalize.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/schedule.h"
#include "shim/callsite.h"

namespace papshim {

struct SiteStats {
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;      // per-rank payload bytes, summed over calls
  double sum_elapsed = 0;       // seconds
  double max_elapsed = 0;
  std::map<const char*, std::uint64_t> algorithms;  // algorithm name (static string) -> calls
  std::map<std::string, std::uint64_t> fallbacks;   // reason -> calls
  std::uint64_t auto_decisions = 0;  // calls decided by auto mode
  std::uint64_t ready = 0;           // ... whose decision the helper had ready
};

// One intercepted call, for the arrival spread across the communicator.
struct ArrivalRecord {
  std::uint64_t comm_id;
  std::uint64_t seq;
  std::uint64_t site_hash;  // local hash of (op, call site); see serialize_sites
  double arrival;           // common time base (rank 0's clock)
  double exit = 0;
  double predicted = std::numeric_limits<double>::quiet_NaN();  // this rank's published prediction
};

struct SiteKey {
  Collective op;
  std::uint64_t comm_id;
  int comm_size;
  CallSite site;
  bool operator==(const SiteKey& o) const {
    return op == o.op && comm_id == o.comm_id && comm_size == o.comm_size && site == o.site;
  }
};

struct SiteKeyHash {
  std::size_t operator()(const SiteKey& k) const {
    return CallSiteHash()(k.site) ^ (k.comm_id * 31u) ^ static_cast<std::size_t>(k.op);
  }
};

class Stats {
 public:
  // `algorithm` must be a string with static storage (AlgoInfo::name).
  void record(const SiteKey& key, std::uint64_t seq, double arrival, double exit, double predicted,
              std::uint64_t bytes, const char* algorithm, const std::string& fallback_reason,
              bool auto_decision, bool ready);

  // Serialised form gathered to rank 0 (text, one line per site), and the
  // arrival records as raw bytes.
  std::string serialize_sites() const;
  std::vector<ArrivalRecord> arrivals() const;
  bool arrivals_truncated() const { return truncated_; }

  static Stats& instance();
  static constexpr std::size_t kMaxArrivalRecords = 1u << 21;

 private:
  mutable std::mutex mu_;
  std::unordered_map<SiteKey, SiteStats, SiteKeyHash> sites_;
  std::vector<ArrivalRecord> arrivals_;
  bool truncated_ = false;
};

std::uint64_t site_hash(const std::string& op, const std::string& key);

}  // namespace papshim
