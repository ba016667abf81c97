// The per-call-site report: rank 0 merges every rank's statistics and writes
// <prefix>.txt (a table for people, in the spirit of mpiP) and <prefix>.json
// (for tools).  The merge and the formatting are pure functions so the unit
// tests can check them without MPI.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shim/callsite.h"
#include "shim/stats.h"

namespace papshim {

struct ReportSite {
  std::string op;
  std::string key;  // portable call-site key
  int comm_size = 0;
  std::string function, file_line;  // resolved on rank 0
  std::uint64_t calls = 0, bytes = 0;
  double sum_elapsed = 0, max_elapsed = 0;
  std::vector<std::uint64_t> calls_per_rank;
  int communicators = 0;
  std::uint64_t spread_calls = 0;  // calls whose every arrival was recorded
  double sum_spread = 0, max_spread = 0;
  std::map<std::string, std::uint64_t> algorithms, fallbacks;
  std::uint64_t auto_decisions = 0, ready = 0;  // decided by auto; decision found ready
  std::uint64_t predicted_calls = 0;  // rank-calls with a prediction
  double sum_abs_error = 0;           // |predicted - actual arrival|, seconds
  int id = 0;                         // row number in the report
};

struct ReportHeader {
  int ranks = 0;
  std::string mpi_library;
  std::string config;  // "PAPSHIM_X=v ..." (non-default values)
  bool arrivals_truncated = false;
  double wall_seconds = 0;
  double alpha = 0, beta = 0, gamma = 0;  // cost figures in use
  double max_clock_offset = 0;            // largest |offset to rank 0|, seconds
  std::string thread_mode;                // helper thread or inline, and why
  double helper_cpu_mean = 0, helper_cpu_max = 0;  // helper thread CPU seconds per rank
};

struct Report {
  ReportHeader header;
  std::vector<ReportSite> sites;  // sorted by total elapsed, largest first
};

// site_texts[r] is Stats::serialize_sites() of rank r; arrivals[r] its records.
Report merge_report(const ReportHeader& header, const std::vector<std::string>& site_texts,
                    const std::vector<std::vector<ArrivalRecord>>& arrivals,
                    const std::function<ResolvedSite(const std::string&)>& resolve);

std::string format_text(const Report& r);
std::string format_json(const Report& r);
// Chrome trace (chrome://tracing, Perfetto): one row per rank, each call a
// slice from arrival to exit, predicted arrivals as instant events.
std::string format_timeline(const Report& r, const std::vector<std::string>& site_texts,
                            const std::vector<std::vector<ArrivalRecord>>& arrivals);

// Derived figures of one site.
double mean_spread(const ReportSite& s);
double imbalance_factor(const ReportSite& s, const ReportHeader& h);
double mean_abs_error(const ReportSite& s);

}  // namespace papshim
