#include "shim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace papshim {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(s);
  while (std::getline(ss, cur, sep)) out.push_back(cur);
  return out;
}

void add_counts(std::map<std::string, std::uint64_t>& into, const std::string& list) {
  for (const auto& item : split(list, ',')) {
    const auto eq = item.rfind('=');
    if (eq == std::string::npos) continue;
    into[item.substr(0, eq)] += std::stoull(item.substr(eq + 1));
  }
}

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

}  // namespace

double mean_spread(const ReportSite& s) {
  return s.spread_calls ? s.sum_spread / static_cast<double>(s.spread_calls) : 0.0;
}

double imbalance_factor(const ReportSite& s, const ReportHeader& h) {
  const double bytes = s.calls ? static_cast<double>(s.bytes) / static_cast<double>(s.calls) : 0.0;
  const double message = h.alpha + h.beta * bytes;
  return message > 0 ? mean_spread(s) / message : 0.0;
}

double mean_abs_error(const ReportSite& s) {
  return s.predicted_calls ? s.sum_abs_error / static_cast<double>(s.predicted_calls) : 0.0;
}

Report merge_report(const ReportHeader& header, const std::vector<std::string>& site_texts,
                    const std::vector<std::vector<ArrivalRecord>>& arrivals,
                    const std::function<ResolvedSite(const std::string&)>& resolve) {
  Report rep;
  rep.header = header;
  const int nranks = static_cast<int>(site_texts.size());
  using Agg = std::tuple<std::string, std::string, int>;  // op, key, comm size
  std::map<Agg, std::size_t> index;
  std::map<Agg, std::set<std::uint64_t>> comms;
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> local_to_site(nranks);

  // Sites: one line per (op, communicator, call site) per rank.
  for (int r = 0; r < nranks; ++r) {
    for (const auto& line : split(site_texts[r], '\n')) {
      auto f = split(line, '\t');
      if (f.size() < 9) continue;
      f.resize(13);
      const Agg agg{f[0], f[3], std::stoi(f[2])};
      auto [it, inserted] = index.try_emplace(agg, rep.sites.size());
      if (inserted) {
        ReportSite s;
        s.op = f[0];
        s.key = f[3];
        s.comm_size = std::stoi(f[2]);
        s.calls_per_rank.assign(static_cast<std::size_t>(nranks), 0);
        rep.sites.push_back(std::move(s));
      }
      ReportSite& s = rep.sites[it->second];
      const auto calls = std::stoull(f[4]);
      s.calls += calls;
      s.calls_per_rank[static_cast<std::size_t>(r)] += calls;
      s.bytes += std::stoull(f[5]);
      s.sum_elapsed += std::stod(f[6]);
      s.max_elapsed = std::max(s.max_elapsed, std::stod(f[7]));
      add_counts(s.algorithms, f[9]);
      add_counts(s.fallbacks, f[10]);
      if (!f[11].empty()) s.auto_decisions += std::stoull(f[11]);
      if (!f[12].empty()) s.ready += std::stoull(f[12]);
      comms[agg].insert(std::stoull(f[1]));
      local_to_site[r][std::stoull(f[8])] = it->second;
    }
  }
  for (const auto& [agg, ids] : comms) rep.sites[index[agg]].communicators = static_cast<int>(ids.size());

  // Prediction error, per rank-call that had a prediction.
  for (int r = 0; r < nranks && r < static_cast<int>(arrivals.size()); ++r)
    for (const auto& a : arrivals[r]) {
      auto found = local_to_site[r].find(a.site_hash);
      if (found == local_to_site[r].end() || !std::isfinite(a.predicted)) continue;
      auto& s = rep.sites[found->second];
      s.predicted_calls++;
      s.sum_abs_error += std::fabs(a.predicted - a.arrival);
    }

  // Arrival spread: group the records of one call (communicator, sequence).
  struct Call { double lo = 1e300, hi = -1e300; int n = 0; std::set<std::size_t> sites; int size = 0; };
  std::map<std::pair<std::uint64_t, std::uint64_t>, Call> calls;
  for (int r = 0; r < nranks && r < static_cast<int>(arrivals.size()); ++r)
    for (const auto& a : arrivals[r]) {
      auto found = local_to_site[r].find(a.site_hash);
      if (found == local_to_site[r].end()) continue;
      auto& c = calls[{a.comm_id, a.seq}];
      c.lo = std::min(c.lo, a.arrival);
      c.hi = std::max(c.hi, a.arrival);
      c.n++;
      c.sites.insert(found->second);
      c.size = rep.sites[found->second].comm_size;
    }
  for (const auto& [id, c] : calls) {
    if (c.n != c.size) continue;  // some rank's record was dropped
    for (auto si : c.sites) {
      auto& s = rep.sites[si];
      s.spread_calls++;
      s.sum_spread += c.hi - c.lo;
      s.max_spread = std::max(s.max_spread, c.hi - c.lo);
    }
  }

  for (auto& s : rep.sites) {
    const auto rs = resolve(s.key);
    s.function = rs.function;
    s.file_line = rs.file_line;
  }
  std::stable_sort(rep.sites.begin(), rep.sites.end(),
                   [](const ReportSite& a, const ReportSite& b) { return a.sum_elapsed > b.sum_elapsed; });
  for (std::size_t i = 0; i < rep.sites.size(); ++i) rep.sites[i].id = static_cast<int>(i + 1);
  return rep;
}

std::string format_text(const Report& r) {
  std::ostringstream o;
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
  if (r.header.arrivals_truncated) o << "  note: arrival records were capped; spreads cover the first calls only\n";
  o << "\n";
  o << "Call sites (times in microseconds; mean/max over every rank's calls;\n"
       "spread = latest minus earliest arrival of one call across its communicator)\n\n";
  std::snprintf(line, sizeof line, "%3s  %-9s %6s %5s %9s %11s %11s %11s %11s %11s\n", "ID", "Op", "Comm", "Comms",
                "Calls", "Bytes/call", "Mean", "Max", "SpreadMean", "SpreadMax");
  o << line;
  int id = 1;
  for (const auto& s : r.sites) {
    const double calls = s.calls ? static_cast<double>(s.calls) : 1.0;
    const double spread_mean = s.spread_calls ? s.sum_spread / static_cast<double>(s.spread_calls) : 0.0;
    std::snprintf(line, sizeof line, "%3d  %-9s %6d %5d %9llu %11.0f %11.1f %11.1f %11.1f %11.1f\n", id++,
                  s.op.c_str(), s.comm_size, s.communicators, static_cast<unsigned long long>(s.calls),
                  static_cast<double>(s.bytes) / calls, 1e6 * s.sum_elapsed / calls, 1e6 * s.max_elapsed,
                  1e6 * spread_mean, 1e6 * s.max_spread);
    o << line;
  }
  o << "\nCall site locations and algorithms\n\n";
  id = 1;
  for (const auto& s : r.sites) {
    o << std::string(id < 10 ? "  " : id < 100 ? " " : "") << id << "  " << s.function;
    ++id;
    if (!s.file_line.empty()) o << "  at " << s.file_line;
    o << "\n      algorithms: " << counts_text(s.algorithms);
    if (s.auto_decisions) {
      std::snprintf(line, sizeof line, " (auto decided %llu calls, %.0f%% found the decision ready)",
                    static_cast<unsigned long long>(s.auto_decisions),
                    100.0 * static_cast<double>(s.ready) / static_cast<double>(s.auto_decisions));
      o << line;
    }
    std::snprintf(line, sizeof line, "\n      imbalance factor %.2f (mean spread / one message time)",
                  imbalance_factor(s, r.header));
    o << line;
    if (s.predicted_calls) {
      const double sp = mean_spread(s);
      std::snprintf(line, sizeof line, "; arrival prediction error %.1f us mean (%.0f%% of the spread), %llu predictions",
                    1e6 * mean_abs_error(s), sp > 0 ? 100.0 * mean_abs_error(s) / sp : 0.0,
                    static_cast<unsigned long long>(s.predicted_calls));
      o << line;
    }
    if (!s.fallbacks.empty()) o << "\n      ran native because: " << counts_text(s.fallbacks);
    std::uint64_t lo = ~0ull, hi = 0;
    for (auto c : s.calls_per_rank) lo = std::min(lo, c), hi = std::max(hi, c);
    o << "\n      calls per rank: " << (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi))
      << "\n";
  }
  return o.str();
}

std::string format_json(const Report& r) {
  std::ostringstream o;
  o.precision(6);
  o << std::fixed;
  o << "{\n  \"tool\": \"papshim\",\n  \"ranks\": " << r.header.ranks << ",\n  \"mpi_library\": \""
    << json_escape(r.header.mpi_library) << "\",\n  \"settings\": \"" << json_escape(r.header.config)
    << "\",\n  \"wall_seconds\": " << r.header.wall_seconds << ",\n  \"arrivals_truncated\": "
    << (r.header.arrivals_truncated ? "true" : "false") << ",\n  \"cost\": {\"alpha_us\": " << 1e6 * r.header.alpha
    << ", \"beta_ns_per_byte\": " << 1e9 * r.header.beta << ", \"gamma_ns_per_byte\": " << 1e9 * r.header.gamma
    << "},\n  \"predictor\": \"" << json_escape(r.header.thread_mode) << "\", \"helper_cpu_ms_mean\": "
    << 1e3 * r.header.helper_cpu_mean << ", \"helper_cpu_ms_max\": " << 1e3 * r.header.helper_cpu_max
    << ",\n  \"callsites\": [";
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
      << ", \"max_arrival_spread_us\": " << 1e6 * s.max_spread
      << ", \"imbalance_factor\": " << imbalance_factor(s, r.header)
      << ", \"predictions\": " << s.predicted_calls << ", \"prediction_mae_us\": " << 1e6 * mean_abs_error(s)
      << ", \"auto_decisions\": " << s.auto_decisions << ", \"decisions_ready\": " << s.ready
      << ", \"algorithms\": " << counts_json(s.algorithms)
      << ", \"fallbacks\": " << counts_json(s.fallbacks) << "}";
    first = false;
  }
  o << "\n  ]\n}\n";
  return o.str();
}

std::string format_timeline(const Report& r, const std::vector<std::string>& site_texts,
                            const std::vector<std::vector<ArrivalRecord>>& arrivals) {
  // Local site hash of each rank -> report row.
  std::vector<std::unordered_map<std::uint64_t, int>> row(site_texts.size());
  std::map<std::tuple<std::string, std::string, int>, int> id_of;
  for (const auto& s : r.sites) id_of[{s.op, s.key, s.comm_size}] = s.id;
  for (std::size_t rank = 0; rank < site_texts.size(); ++rank)
    for (const auto& line : split(site_texts[rank], '\n')) {
      const auto f = split(line, '\t');
      if (f.size() < 9) continue;
      row[rank][std::stoull(f[8])] = id_of[{f[0], f[3], std::stoi(f[2])}];
    }
  double t0 = 1e300;
  for (const auto& v : arrivals)
    for (const auto& a : v) t0 = std::min(t0, a.arrival);
  std::ostringstream o;
  o.precision(3);
  o << std::fixed << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  for (std::size_t rank = 0; rank < arrivals.size(); ++rank) {
    o << (first ? "" : ",\n") << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << rank
      << ", \"args\": {\"name\": \"rank " << rank << "\"}}";
    first = false;
    for (const auto& a : arrivals[rank]) {
      auto it = row[rank].find(a.site_hash);
      const int id = it == row[rank].end() ? 0 : it->second;
      const std::string op = id > 0 ? r.sites[static_cast<std::size_t>(id - 1)].op : "call";
      o << ",\n{\"ph\": \"X\", \"pid\": " << rank << ", \"tid\": 0, \"name\": \"" << op << " site " << id
        << "\", \"ts\": " << 1e6 * (a.arrival - t0) << ", \"dur\": " << 1e6 * (a.exit - a.arrival)
        << ", \"args\": {\"call\": " << a.seq;
      if (std::isfinite(a.predicted)) o << ", \"predicted_ts\": " << 1e6 * (a.predicted - t0);
      o << "}}";
      if (std::isfinite(a.predicted))
        o << ",\n{\"ph\": \"i\", \"s\": \"t\", \"pid\": " << rank << ", \"tid\": 0, \"name\": \"predicted arrival\", \"ts\": "
          << 1e6 * (a.predicted - t0) << "}";
    }
  }
  o << "\n]}\n";
  return o.str();
}

}  // namespace papshim
