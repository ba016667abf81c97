// The report as text for people, JSON for tools, and the Chrome-trace
// timeline; the merged Report (shim/report.h) is their only input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "shim/report.h"

namespace papshim {

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out;
}

std::string counts_text(const std::map<std::string, std::uint64_t>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : " ") + k + ":" + std::to_string(v);
  return out.empty() ? "-" : out;
}

std::string counts_json(const std::map<std::string, std::uint64_t>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += (out.size() > 1 ? ", " : "") + ("\"" + json_escape(k) + "\": " + std::to_string(v));
  return out + "}";
}

std::string host_of(const Report& r, std::size_t rank) {
  return rank < r.hosts.size() && !r.hosts[rank].empty() ? r.hosts[rank] : "?";
}

// The worst ranks of a site, worst first: "rank 3 on node7 (20100.0 us
// after the earliest arrival on average, last in 38 of 40 calls); rank 5 on
// node2 (310.2 us, last in 2)".
void text_lateness(std::ostringstream& o, const ReportSite& s, const Report& r) {
  constexpr std::size_t kWorstShown = 3;
  const auto worst = worst_ranks(s, kWorstShown);
  if (worst.empty()) return;
  o << "\n      latest ranks:";
  char line[256];
  for (std::size_t i = 0; i < worst.size(); ++i) {
    const std::size_t k = worst[i];
    const auto last = static_cast<unsigned long long>(s.last_calls[k]);
    if (i == 0)
      std::snprintf(line, sizeof line, " rank %zu on %s (%.1f us after the earliest arrival on average, last in %llu "
                    "of %llu calls)", k, host_of(r, k).c_str(), 1e6 * mean_lateness(s, k), last,
                    static_cast<unsigned long long>(s.spread_calls));
    else
      std::snprintf(line, sizeof line, "; rank %zu on %s (%.1f us, last in %llu)", k, host_of(r, k).c_str(),
                    1e6 * mean_lateness(s, k), last);
    o << line;
  }
}

// The header: what ran, where, with which settings and cost figures.
void text_header(std::ostringstream& o, const Report& r) {
  char line[512];
  o << "papshim report\n";
  o << "  ranks:        " << r.header.ranks << "\n";
  o << "  MPI library:  " << r.header.mpi_library << "\n";
  o << "  settings:     " << (r.header.config.empty() ? "(all defaults)" : r.header.config) << "\n";
  std::snprintf(line, sizeof line, "  wall time:    %.3f s (rank 0, MPI_Init to MPI_Finalize)\n", r.header.wall_seconds);
  o << line;
  std::snprintf(line, sizeof line,
                "  cost model:   alpha %.2f us/message, beta %.3f ns/byte, gamma %.3f ns/byte reduced\n"
                "  clocks:       largest offset to rank 0 %.1f us (removed from every timestamp)\n",
                1e6 * r.header.alpha, 1e9 * r.header.beta, 1e9 * r.header.gamma, 1e6 * r.header.max_clock_offset);
  o << line;
  if (!r.header.thread_mode.empty()) {
    std::snprintf(line, sizeof line, "  predictor:    %s; helper CPU %.1f ms per rank (mean), %.1f ms (max)\n",
                  r.header.thread_mode.c_str(), 1e3 * r.header.helper_cpu_mean, 1e3 * r.header.helper_cpu_max);
    o << line;
  }
  if (r.header.rounds_skipped > 0) {
    std::snprintf(line, sizeof line,
                  "  rounds:       %llu prediction rounds, %llu left out while auto kept running native "
                  "(PAPSHIM_QUIET_SKIP; all ranks)\n",
                  static_cast<unsigned long long>(r.header.rounds_opened),
                  static_cast<unsigned long long>(r.header.rounds_skipped));
    o << line;
  }
  if (r.header.sample_level > 0) {
    std::snprintf(line, sizeof line,
                  "  spreads:      measured on 1 in %.0f calls (the same calls on every rank; memory stays bounded)\n",
                  std::ldexp(1.0, r.header.sample_level));
    o << line;
  }
}

// The table: one row of counts and times per call site.
void text_table(std::ostringstream& o, const Report& r) {
  char line[512];
  o << "Call sites (times in microseconds; mean/max over every rank's calls;\n"
       "spread = latest minus earliest arrival of one call across its communicator)\n\n";
  std::snprintf(line, sizeof line, "%3s  %-9s %6s %5s %9s %11s %11s %11s %11s %11s\n", "ID", "Op", "Comm", "Comms",
                "Calls", "Bytes/call", "Mean", "Max", "SpreadMean", "SpreadMax");
  o << line;
  int id = 1;
  for (const auto& s : r.sites) {
    const double calls = s.calls ? static_cast<double>(s.calls) : 1.0;
    std::snprintf(line, sizeof line, "%3d  %-9s %6d %5llu %9llu %11.0f %11.1f %11.1f", id++, s.op.c_str(),
                  s.comm_size, static_cast<unsigned long long>(s.communicators),
                  static_cast<unsigned long long>(s.calls), static_cast<double>(s.bytes) / calls,
                  1e6 * s.sum_elapsed / calls, 1e6 * s.max_elapsed);
    o << line;
    if (s.spread_calls == 0 && s.comm_size > 1)
      std::snprintf(line, sizeof line, " %11s %11s\n", "-", "-");  // no call with every rank's arrival
    else
      std::snprintf(line, sizeof line, " %11.1f %11.1f\n", 1e6 * mean_spread(s), 1e6 * s.max_spread);
    o << line;
  }
}

// One call site's details: location, algorithms, imbalance, prediction.
void text_site(std::ostringstream& o, const ReportSite& s, int id, const Report& r) {
  const ReportHeader& h = r.header;
  char line[512];
  o << std::string(id < 10 ? "  " : id < 100 ? " " : "") << id << "  " << s.function;
  if (!s.file_line.empty()) o << "  at " << s.file_line;
  o << "\n      algorithms: " << counts_text(s.algorithms);
  if (s.auto_decisions) {
    std::snprintf(line, sizeof line, " (auto decided %llu calls, %.0f%% found the decision ready)",
                  static_cast<unsigned long long>(s.auto_decisions),
                  100.0 * static_cast<double>(s.ready) / static_cast<double>(s.auto_decisions));
    o << line;
  }
  if (s.spread_calls == 0 && s.comm_size > 1)
    std::snprintf(line, sizeof line, "\n      arrival spread not measured (no sampled call with every rank's arrival)");
  else
    std::snprintf(line, sizeof line,
                  "\n      imbalance factor %.2f (mean spread / one message time; spreads of %llu call%s)",
                  imbalance_factor(s, h), static_cast<unsigned long long>(s.spread_calls),
                  s.spread_calls == 1 ? "" : "s");
  o << line;
  if (s.predicted_calls) {
    const double sp = mean_spread(s);
    std::snprintf(line, sizeof line, "; arrival prediction error %.1f us mean (%.0f%% of the spread), %llu predictions",
                  1e6 * mean_abs_error(s), sp > 0 ? 100.0 * mean_abs_error(s) / sp : 0.0,
                  static_cast<unsigned long long>(s.predicted_calls));
    o << line;
  }
  if (!s.fallbacks.empty()) o << "\n      ran native because: " << counts_text(s.fallbacks);
  text_lateness(o, s, r);
  std::uint64_t lo = ~0ull, hi = 0;
  for (auto c : s.calls_per_rank) lo = std::min(lo, c), hi = std::max(hi, c);
  o << "\n      calls per rank: " << (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi))
    << "\n";
}

}  // namespace

std::string format_text(const Report& r) {
  std::ostringstream o;
  text_header(o, r);
  o << "\n";
  text_table(o, r);
  o << "\nCall site locations and algorithms\n\n";
  int id = 1;
  for (const auto& s : r.sites) text_site(o, s, id++, r);
  return o.str();
}

template <typename T, typename F>
void json_list(std::ostringstream& o, const std::vector<T>& v, F item) {
  o << "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    o << (i ? ", " : "");
    item(v[i]);
  }
  o << "]";
}

// "lateness": per rank (full vectors) and the worst ranks with their hosts.
void json_lateness(std::ostringstream& o, const ReportSite& s, const Report& r) {
  o << ", \"lateness\": {\"calls\": ";
  json_list(o, s.lateness_calls, [&](std::uint64_t n) { o << n; });
  o << ", \"mean_us\": [";
  for (std::size_t k = 0; k < s.lateness_calls.size(); ++k) o << (k ? ", " : "") << 1e6 * mean_lateness(s, k);
  o << "], \"last\": ";
  json_list(o, s.last_calls, [&](std::uint64_t n) { o << n; });
  o << ", \"worst\": ";
  json_list(o, worst_ranks(s, 8), [&](std::size_t k) {
    o << "{\"rank\": " << k << ", \"host\": \"" << json_escape(host_of(r, k)) << "\", \"mean_us\": "
      << 1e6 * mean_lateness(s, k) << ", \"last\": " << s.last_calls[k] << "}";
  });
  o << "}";
}

// "series": the buckets up to the last one used (shim/series.h).
void json_series(std::ostringstream& o, const NamedSeries& series) {
  std::size_t used = 0;
  for (std::size_t b = 0; b < series.buckets.size(); ++b)
    if (series.buckets[b].calls || series.buckets[b].spread_calls) used = b + 1;
  o << ", \"series\": {\"width\": " << series.width << ", \"buckets\": [";
  for (std::size_t b = 0; b < used; ++b) {
    const auto& x = series.buckets[b];
    const auto mean = [](double sum, std::uint64_t n) { return n ? sum / static_cast<double>(n) : 0.0; };
    o << (b ? ", " : "") << "{\"first_call\": " << b * series.width << ", \"calls\": " << x.calls
      << ", \"mean_elapsed_us\": " << 1e6 * mean(x.sum_elapsed, x.calls)
      << ", \"mean_gain_us\": " << 1e6 * mean(x.sum_gain, x.calls) << ", \"predictions\": " << x.predicted_calls
      << ", \"prediction_mae_us\": " << 1e6 * mean(x.sum_abs_error, x.predicted_calls)
      << ", \"spread_calls\": " << x.spread_calls << ", \"mean_spread_us\": " << 1e6 * mean(x.sum_spread, x.spread_calls)
      << ", \"algorithms\": " << counts_json(x.algorithms) << "}";
  }
  o << "]}";
}

std::string format_json(const Report& r) {
  std::ostringstream o;
  o.precision(6);
  o << std::fixed;
  o << "{\n  \"tool\": \"papshim\",\n  \"ranks\": " << r.header.ranks << ",\n  \"mpi_library\": \""
    << json_escape(r.header.mpi_library) << "\",\n  \"settings\": \"" << json_escape(r.header.config)
    << "\",\n  \"wall_seconds\": " << r.header.wall_seconds << ",\n  \"arrival_sample_level\": "
    << r.header.sample_level << ",\n  \"cost\": {\"alpha_us\": " << 1e6 * r.header.alpha
    << ", \"beta_ns_per_byte\": " << 1e9 * r.header.beta << ", \"gamma_ns_per_byte\": " << 1e9 * r.header.gamma
    << "},\n  \"predictor\": \"" << json_escape(r.header.thread_mode) << "\", \"helper_cpu_ms_mean\": "
    << 1e3 * r.header.helper_cpu_mean << ", \"helper_cpu_ms_max\": " << 1e3 * r.header.helper_cpu_max
    << ", \"rounds\": " << r.header.rounds_opened << ", \"rounds_skipped\": " << r.header.rounds_skipped
    << ",\n  \"lateness_sample_level\": " << r.header.lateness_level << ",\n  \"hosts\": ";
  json_list(o, r.hosts, [&](const std::string& h) { o << "\"" << json_escape(h) << "\""; });
  o << ",\n  \"callsites\": [";
  bool first = true;
  for (const auto& s : r.sites) {
    const double calls = s.calls ? static_cast<double>(s.calls) : 1.0;
    o << (first ? "\n" : ",\n") << "    {\"op\": \"" << s.op << "\", \"location\": \"" << json_escape(s.function)
      << "\", \"file_line\": \"" << json_escape(s.file_line) << "\", \"key\": \"" << json_escape(s.key)
      << "\", \"comm_size\": " << s.comm_size << ", \"communicators\": " << s.communicators
      << ", \"calls\": " << s.calls << ", \"calls_per_rank\": [";
    for (std::size_t i = 0; i < s.calls_per_rank.size(); ++i) o << (i ? ", " : "") << s.calls_per_rank[i];
    o << "], \"bytes\": " << s.bytes << ", \"mean_elapsed_us\": " << 1e6 * s.sum_elapsed / calls
      << ", \"max_elapsed_us\": " << 1e6 * s.max_elapsed << ", \"arrival_spread_us\": "
      << (s.spread_calls ? 1e6 * s.sum_spread / static_cast<double>(s.spread_calls) : 0.0)
      << ", \"max_arrival_spread_us\": " << 1e6 * s.max_spread << ", \"spread_calls\": " << s.spread_calls
      << ", \"imbalance_factor\": " << imbalance_factor(s, r.header)
      << ", \"predictions\": " << s.predicted_calls << ", \"prediction_mae_us\": " << 1e6 * mean_abs_error(s)
      << ", \"auto_decisions\": " << s.auto_decisions << ", \"decisions_ready\": " << s.ready
      << ", \"algorithms\": " << counts_json(s.algorithms)
      << ", \"fallbacks\": " << counts_json(s.fallbacks);
    json_lateness(o, s, r);
    json_series(o, s.series);
    o << "}";
    first = false;
  }
  o << "\n  ]\n}\n";
  return o.str();
}

// ---- timeline -------------------------------------------------------------

std::string timeline_begin() { return "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"; }

std::string timeline_end() { return "\n]}\n"; }

std::string timeline_site_name(const ReportSite& s) {
  return s.op + " at " + (s.file_line.empty() ? s.function : s.file_line);
}

std::string timeline_rank_events(int rank, const RankStats& s, const std::vector<std::string>& site_names, double t0,
                                 bool first_rank) {
  std::ostringstream o;
  o.precision(3);
  o << std::fixed << (first_rank ? "" : ",\n") << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << rank
    << ", \"args\": {\"name\": \"rank " << rank << "\"}}";
  for (const auto& a : s.samples) {
    const std::string name = a.site < site_names.size() ? json_escape(site_names[a.site]) : "call";
    o << ",\n{\"ph\": \"X\", \"pid\": " << rank << ", \"tid\": 0, \"name\": \"" << name
      << "\", \"ts\": " << 1e6 * (a.arrival - t0) << ", \"dur\": " << 1e6 * (a.exit - a.arrival)
      << ", \"args\": {\"call\": " << a.seq << ", \"comm\": " << a.comm_id;
    if (std::isfinite(a.predicted)) o << ", \"predicted_ts\": " << 1e6 * (a.predicted - t0);
    o << "}}";
    if (std::isfinite(a.predicted))
      o << ",\n{\"ph\": \"i\", \"s\": \"t\", \"pid\": " << rank
        << ", \"tid\": 0, \"name\": \"predicted arrival\", \"ts\": " << 1e6 * (a.predicted - t0) << "}";
  }
  return o.str();
}

}  // namespace papshim
