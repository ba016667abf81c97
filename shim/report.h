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
};

struct ReportHeader {
  int ranks = 0;
  std::string mpi_library;
  std::string config;  // "PAPSHIM_X=v ..." (non-default values)
  bool arrivals_truncated = false;
  double wall_seconds = 0;
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

}  // namespace papshim
