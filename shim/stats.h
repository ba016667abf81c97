// Per-rank statistics of intercepted calls: aggregates per (operation,
// communicator, call site), and a bounded sample of calls with their arrival
// times, which gives rank 0 the arrival spread across ranks at MPI_Finalize.
//
// Works as follows.  A row per (operation, local communicator id, size, call
// site) sums what the report shows (calls, bytes, times, algorithms, the
// prediction error of this rank's own predictions).  When the user frees a
// communicator, retire_communicator() folds its rows into one row per
// (operation, size, call site) that counts the communicators folded into
// it, so rows never outnumber the live communicators times the call sites.
// The sample keeps call (global id, seq) iff its hash has `level` trailing
// zero bits (shim/report.h); when the buffer is full the level goes up by
// one and the calls that no longer qualify are dropped, so about half stay.
// Every rank samples by the same rule, and rank 0 merges at the highest
// level any rank reached, so it sees the same calls from every rank.
// Memory per rank is fixed: kSampleCapacity records of 48 bytes (768 KiB)
// at most, whatever the length of the run, and per call site a series of
// kSeriesBuckets buckets over the call index (shim/series.h).  16384 records leave at least
// 8192 sampled calls after the last halving: a mean spread to about 1%, and
// with 1024 ranks of one communicator rank 0 still tracks only 16384 calls.
// No record is kept when neither the report nor the timeline is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/schedule.h"
#include "common/ticks.h"
#include "shim/callsite.h"
#include "shim/report.h"

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
  std::uint64_t predicted_calls = 0; // calls with a published prediction
  double sum_abs_error = 0;          // |predicted - actual arrival|, seconds
};

struct SiteKey {
  Collective op;
  std::uint64_t comm_id;  // the communicator's local id (unique on this rank)
  int comm_size;
  CallSite site;
  bool operator==(const SiteKey& o) const {
    return op == o.op && comm_id == o.comm_id && comm_size == o.comm_size && site == o.site;
  }
};

struct SiteKeyHash {
  std::size_t operator()(const SiteKey& k) const {
    return CallSiteHash()(k.site) ^ (k.comm_id * 31u) ^ static_cast<std::size_t>(k.op) ^
           (static_cast<std::size_t>(k.comm_size) << 40);
  }
};

// Adds one row's sums to another: a folded row, a rank's report row, a
// merged report row (any types with these fields).
template <typename Into, typename From>
void add_sums(Into& into, const From& from) {
  into.calls += from.calls;
  into.bytes += from.bytes;
  into.sum_elapsed += from.sum_elapsed;
  into.max_elapsed = into.max_elapsed < from.max_elapsed ? from.max_elapsed : into.max_elapsed;
  for (const auto& [a, n] : from.algorithms) into.algorithms[a] += n;
  for (const auto& [r, n] : from.fallbacks) into.fallbacks[r] += n;
  into.auto_decisions += from.auto_decisions;
  into.ready += from.ready;
  into.predicted_calls += from.predicted_calls;
  into.sum_abs_error += from.sum_abs_error;
}

class Stats {
 public:
  static constexpr std::size_t kSampleCapacity = 16384;

  // One (operation, communicator, size, call site).  `s` is written under
  // the lock; the pass-through counters only by the thread running the
  // communicator's collective (MPI allows one at a time), without a lock,
  // and folded into the sums when read.
  struct Row {
    SiteStats s;
    std::uint32_t site = 0;  // index into sites_
    std::atomic<std::uint64_t> pass_calls{0}, pass_bytes{0}, pass_ticks{0}, pass_max_ticks{0};
  };

  // The row of `key` (made if new; lives until its communicator is
  // retired), for record_pass_through.  Takes the lock.
  Row* row_for(const SiteKey& key);
  // A call run natively and not sampled: a few adds, no lock, no allocation.
  static void record_pass_through(Row& row, std::uint64_t elapsed_ticks, std::uint64_t bytes) {
    const auto add = [](std::atomic<std::uint64_t>& x, std::uint64_t v) {
      x.store(x.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    };
    add(row.pass_calls, 1);
    add(row.pass_bytes, bytes);
    add(row.pass_ticks, elapsed_ticks);
    if (elapsed_ticks > row.pass_max_ticks.load(std::memory_order_relaxed))
      row.pass_max_ticks.store(elapsed_ticks, std::memory_order_relaxed);
  }

  // Whether to sample calls, and into how many records at most.  Without a
  // call, the first record() decides from the configuration (sampling iff
  // the report or the timeline is on).
  void configure(bool keep_samples, std::size_t capacity = kSampleCapacity);

  // One intercepted call.  key.comm_id is the communicator's local id;
  // global_comm_id its job-wide id (identical on every rank), 0 if unknown
  // (the call is then not sampled).  `algorithm` must be a string with
  // static storage (AlgoInfo::name).  Makes no MPI call.
  void record(const SiteKey& key, std::uint64_t global_comm_id, std::uint64_t seq, double arrival, double exit,
              double predicted, std::uint64_t bytes, const char* algorithm, const std::string& fallback_reason,
              bool auto_decision, bool ready, double gain = 0);
  // The communicator of local id `local_comm_id` is gone: its rows are
  // folded into its call sites' rows of freed communicators.  Makes no MPI
  // call (safe in a delete callback).
  void retire_communicator(std::uint64_t local_comm_id);

  // This rank's message for the report: one row per (op, size, call site)
  // and the sampled calls.
  RankStats snapshot() const;

  int sample_level() const;
  std::size_t sample_count() const;
  std::size_t live_rows() const;  // rows of communicators not yet retired

  static Stats& instance();

 private:
  // Rows of one (op, size, call site), over every communicator.
  struct Site {
    SiteKey key;               // comm_id 0
    SiteStats retired;         // rows of freed communicators, folded
    std::uint64_t retired_comms = 0;
    std::uint64_t calls = 0;   // this rank's calls at the site: the next call's index
    RankSeries series;         // shim/series.h
  };
  std::uint32_t site_of(const SiteKey& key);
  Row& row_locked(const SiteKey& key);
  SiteStats settled(const Row& row) const;  // s plus the pass-through counters
  void sample(const SampleRecord& rec);

  mutable std::mutex mu_;
  bool configured_ = false;
  bool keep_ = false;
  std::size_t capacity_ = kSampleCapacity;
  std::unordered_map<SiteKey, Row, SiteKeyHash> rows_;
  std::unordered_map<std::uint64_t, std::vector<SiteKey>> keys_by_comm_;  // local comm id -> its rows
  std::vector<Site> sites_;
  std::unordered_map<SiteKey, std::uint32_t, SiteKeyHash> site_index_;
  std::vector<SampleRecord> samples_;  // SampleRecord::site indexes sites_
  int level_ = 0;
  TickRate tick_rate_;
};

}  // namespace papshim
