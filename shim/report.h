// The per-call-site report: rank 0 merges every rank's statistics and writes
// <prefix>.txt (a table for people, in the spirit of mpiP) and <prefix>.json
// (for tools).
//
// Works as follows.  Each rank sends one message (RankStats, packed by
// pack_rank_stats): one row per (operation, communicator size, call site)
// with its aggregates, and a sample of its calls with their arrival times.
// The sample is deterministic: a call (global communicator id, sequence
// number) is in it iff sample_rank(sample_hash(id, seq)) >= level, a rule
// that depends only on values identical on every rank of the communicator,
// so every rank samples the same calls and rank 0 finds all the arrivals of
// a sampled call (its spread: latest minus earliest arrival).  ReportMerger
// folds the messages in one at a time, so rank 0 holds the merged rows, the
// sampled calls still missing some rank's arrival, and one message.  Packing,
// merging and formatting are pure functions, tested without MPI.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "shim/callsite.h"
#include "shim/series.h"

namespace papshim {

// ---- one rank's message ---------------------------------------------------

// Aggregates of one call site on one rank, over every communicator it used
// there (live or freed).
struct RankSite {
  std::string op;   // "allreduce", ...
  int comm_size = 0;
  std::string key;  // portable call-site key (callsite_key)
  std::uint64_t communicators = 0;  // communicators this rank called the site on
  std::uint64_t calls = 0, bytes = 0;
  double sum_elapsed = 0, max_elapsed = 0;  // seconds
  std::map<std::string, std::uint64_t> algorithms, fallbacks;  // name or reason -> calls
  std::uint64_t auto_decisions = 0, ready = 0;
  std::uint64_t predicted_calls = 0;  // calls with a published prediction
  double sum_abs_error = 0;           // sum of |predicted - actual arrival|, seconds
  NamedSeries series;                 // over the rank's calls at the site (shim/series.h)
};

// One sampled call on one rank (times on rank 0's clock).
struct SampleRecord {
  std::uint64_t comm_id = 0;  // job-wide id of the communicator
  std::uint64_t seq = 0;      // the call's number on that communicator
  double arrival = 0, exit = 0;
  double predicted = 0;       // this rank's predicted arrival, NaN if none
  std::uint32_t site = 0;     // index into RankStats::sites
  std::uint32_t index = 0;    // the call's index at its site on this rank (its series bucket)
};

struct RankStats {
  std::vector<RankSite> sites;
  std::vector<SampleRecord> samples;
  int level = 0;  // sampling level the samples satisfy
  std::string host;  // where the rank runs (the report names late ranks' hosts)
};

// The sampling rule (see the top of this file).
std::uint64_t sample_hash(std::uint64_t comm_id, std::uint64_t seq);
// Trailing zero bits of a hash (64 for 0): a call is sampled at level L iff
// its rank is at least L.
int sample_rank(std::uint64_t hash);
constexpr int kMaxSampleLevel = 64;
inline bool sampled_at(std::uint64_t comm_id, std::uint64_t seq, int level) {
  return sample_rank(sample_hash(comm_id, seq)) >= level;
}

// Distinct calls the samples would cover at each level, in units of
// 2^-32 calls: entry L sums 2^32/comm_size (rounded down) over the samples
// whose rank is at least L (kMaxSampleLevel+1 entries).  Summed over all
// ranks (integers: the same sum on every rank, in any order) it is the
// number of distinct sampled calls, since each rank of a communicator
// samples the same calls.
constexpr int kCallWeightBits = 32;
std::vector<std::uint64_t> sample_call_weights(const RankStats& s);
// The lowest level >= min_level at which `weights` (summed over the ranks)
// is at most `budget` calls.
int choose_sample_level(const std::vector<std::uint64_t>& weights, int min_level, std::uint64_t budget);
// Sample records (one rank's arrival at one call) at each level: entry L
// counts the samples whose rank is at least L (kMaxSampleLevel+1 entries;
// summed over the ranks, the arrivals rank 0 may have to hold for the
// lateness at that level).
std::vector<std::uint64_t> sample_record_counts(const RankStats& s);
// The lowest level >= min_level at which `counts` is at most `budget`.
int choose_record_level(const std::vector<std::uint64_t>& counts, int min_level, std::uint64_t budget);
// Drops the samples below `level` and sets s.level.
void thin_samples(RankStats& s, int level);

// Byte string of a rank's message; sizes and counts are 64-bit.
std::string pack_rank_stats(const RankStats& s);
// False (and `out` unspecified) when `bytes` is not a complete message.
bool unpack_rank_stats(const char* data, std::size_t size, RankStats& out);

// ---- the merged report ----------------------------------------------------

struct ReportSite {
  std::string op;
  std::string key;  // portable call-site key
  int comm_size = 0;
  std::string function, file_line;  // resolved on rank 0
  std::uint64_t calls = 0, bytes = 0;
  double sum_elapsed = 0, max_elapsed = 0;
  std::vector<std::uint64_t> calls_per_rank;
  std::uint64_t communicators = 0;  // the most any one rank used at the site
  std::uint64_t spread_calls = 0;   // sampled calls whose every arrival was seen
  double sum_spread = 0, max_spread = 0;
  std::map<std::string, std::uint64_t> algorithms, fallbacks;
  std::uint64_t auto_decisions = 0, ready = 0;  // decided by auto; decision found ready
  std::uint64_t predicted_calls = 0;  // rank-calls with a prediction
  double sum_abs_error = 0;           // |predicted - actual arrival|, seconds
  NamedSeries series;                 // over the call index, summed over the ranks
  // Who is late, per rank (empty until a call of the site completes): the
  // sum of its arrival minus the earliest arrival of the call, over the
  // calls sampled at the lateness level, and how many; how often it arrived
  // last, over every call whose spread was measured.
  std::vector<double> sum_lateness;
  std::vector<std::uint64_t> lateness_calls, last_calls;
  int id = 0;                         // row number in the report
};

struct ReportHeader {
  int ranks = 0;
  std::string mpi_library;
  std::string config;  // "PAPSHIM_X=v ..." (non-default values)
  int sample_level = 0;  // spreads from 1 in 2^sample_level calls
  int lateness_level = 0;  // lateness from 1 in 2^lateness_level calls (at least sample_level)
  double wall_seconds = 0;
  double alpha = 0, beta = 0, gamma = 0;  // cost figures in use
  double max_clock_offset = 0;            // largest |offset to rank 0|, seconds
  std::string thread_mode;                // helper thread or inline, and why
  double helper_cpu_mean = 0, helper_cpu_max = 0;  // helper thread CPU seconds per rank
  std::uint64_t rounds_opened = 0, rounds_skipped = 0;  // prediction rounds, summed over ranks
};

struct Report {
  ReportHeader header;
  std::vector<ReportSite> sites;  // sorted by total elapsed, largest first
  std::vector<std::string> hosts;  // per rank
};

using Resolver = std::function<ResolvedSite(const std::string&)>;

// Folds ranks' messages in one at a time (any order, each rank once).
class ReportMerger {
 public:
  // header.sample_level: samples below it are ignored (the highest level
  // any rank reached, so that every rank's samples are of the same calls).
  ReportMerger(const ReportHeader& header, int nranks, Resolver resolve);
  // Returns, for each of s.sites, its row (an index for row()).
  std::vector<std::size_t> add_rank(int rank, const RankStats& s);
  const ReportSite& row(std::size_t i) const { return rep_.sites[i]; }
  // Sorted rows with their ids; the merger is spent afterwards.
  Report finish();
  // Sampled calls still waiting for some rank's arrival.
  std::size_t pending_calls() const { return pending_.size(); }

 private:
  struct CallKey {
    std::uint64_t comm, seq;
    bool operator==(const CallKey& o) const { return comm == o.comm && seq == o.seq; }
  };
  struct CallKeyHash {
    std::size_t operator()(const CallKey& k) const { return static_cast<std::size_t>(sample_hash(k.comm, k.seq)); }
  };
  static constexpr std::uint32_t kNone = ~0u;
  struct Pending {
    double lo, hi;
    std::uint32_t seen, size;
    std::uint32_t row;   // the first rank's row
    std::uint32_t more;  // index into more_rows_ when ranks reported other rows, else kNone
    std::uint32_t index; // the first rank's call index at its site
    std::int32_t last;   // the rank that arrived last so far
    std::uint32_t last_row;
    std::uint32_t arrivals;  // index into arrivals_ (calls at the lateness level), else kNone
  };
  struct Arrival {
    std::int32_t rank;
    std::uint32_t row;
    double t;
  };
  void add_sample(const SampleRecord& a, std::uint32_t row, int rank);
  void complete(const Pending& p);
  void grow_rank_vectors(ReportSite& m) const;

  Report rep_;
  int nranks_;
  Resolver resolve_;
  std::map<std::tuple<std::string, std::string, int>, std::size_t> index_;  // op, key, comm size -> row
  std::unordered_map<CallKey, Pending, CallKeyHash> pending_;
  std::vector<std::vector<std::uint32_t>> more_rows_;
  std::vector<std::uint32_t> free_more_;
  std::vector<std::vector<Arrival>> arrivals_;
  std::vector<std::uint32_t> free_arrivals_;
};

// All ranks at once (ranks[r] is rank r's message); header.sample_level is
// raised to the highest level of any rank.
Report merge_report(ReportHeader header, const std::vector<RankStats>& ranks, const Resolver& resolve);

std::string format_text(const Report& r);
std::string format_json(const Report& r);

// Chrome trace (chrome://tracing, Perfetto) of the sampled calls, written
// rank by rank: timeline_begin(), then per rank its events, then
// timeline_end().  One row per rank, each call a slice from arrival to exit
// named "<op> at <site>", predicted arrivals as instant events; times in
// microseconds from t0.  site_names[i] names s.sites[i].
std::string timeline_begin();
std::string timeline_rank_events(int rank, const RankStats& s, const std::vector<std::string>& site_names, double t0,
                                 bool first_rank);
std::string timeline_end();
std::string timeline_site_name(const ReportSite& s);

// Derived figures of one site.
double mean_spread(const ReportSite& s);
double imbalance_factor(const ReportSite& s, const ReportHeader& h);
double mean_abs_error(const ReportSite& s);
// Rank r's mean lateness at the site, seconds (0 without calls).
double mean_lateness(const ReportSite& s, std::size_t r);
// The `n` ranks of largest mean lateness (then most often last), worst
// first; ranks never late are left out.
std::vector<std::size_t> worst_ranks(const ReportSite& s, std::size_t n);

}  // namespace papshim
