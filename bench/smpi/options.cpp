#include "bench/smpi/options.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/hash.h"

namespace papshim::smpi {

namespace {

double uniform01(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const std::uint64_t h = mix64(mix64(mix64(a) ^ b) ^ c);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && *end == '\0' && std::isfinite(out);
}

bool parse_long(const std::string& s, long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtol(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

// COUNT: a positive integer with an optional K or M suffix (2^10, 2^20).
bool parse_count(std::string s, long& out) {
  long mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1024, s.pop_back();
  else if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1024 * 1024, s.pop_back();
  if (!parse_long(s, out) || out < 1 || out > INT_MAX / mult) return false;
  out *= mult;
  return true;
}

bool parse_pattern(const std::string& s, Pattern& p, std::string& error) {
  if (s == "balanced") {
    p = Pattern{};
    return true;
  }
  const auto colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  if (kind == "one-late") p.kind = PatternKind::OneLate;
  else if (kind == "rand-late") p.kind = PatternKind::RandLate;
  else {
    error = "PATTERN must be balanced, one-late:D or rand-late:D (got '" + s + "')";
    return false;
  }
  std::string d = colon == std::string::npos ? "" : s.substr(colon + 1);
  p.in_transfers = !d.empty() && d.back() == 'x';
  if (p.in_transfers) d.pop_back();
  if (!parse_double(d, p.delay) || p.delay < 0) {
    error = "PATTERN " + kind + " needs a delay D >= 0 in ms, or Dx in transfers (got '" + s + "')";
    return false;
  }
  return true;
}

std::string names_for(Collective c) {
  std::string out = "native, auto";
  for (const AlgoInfo* a : algorithms_for(c)) out += std::string(", ") + a->name;
  return out;
}

}  // namespace

std::string usage() {
  return "usage: smpirun ... smpi_coll COLL ALGO COUNT PATTERN ITERS [options]\n"
         "  COLL     allreduce | reduce | allgather (MPI_FLOAT, MPI_SUM)\n"
         "  ALGO     native (the PMPI collective, SMPI's selector), auto (papshim's selector\n"
         "           on the pattern's arrivals) or a papshim algorithm of COLL; a comma-\n"
         "           separated list runs each in turn, one result line each\n"
         "  COUNT    floats per rank (allgather: per block); K, M suffixes = 2^10, 2^20\n"
         "  PATTERN  balanced | one-late:D | rand-late:D   (D ms, or Dx: D transfers of the\n"
         "           whole vector, measured at start-up)\n"
         "  ITERS    timed iterations\n"
         "options:\n"
         "  --seed N        seed of the late rank, the random delays and the data (default 1)\n"
         "  --late-rank R   one-late: always rank R (default: drawn per iteration)\n"
         "  --root R        reduce root (default 0)\n"
         "  --gamma S       simulated seconds per reduced byte of papshim's combines (default 2e-10)\n"
         "  --no-check      skip the comparison with the PMPI collective\n"
         "  --verbose       one line per iteration as well\n"
         "  --label TEXT    copied to the result line\n"
         "  -h              this text\n";
}

std::optional<Options> parse_options(int argc, char** argv, std::string& error) {
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      v = argv[++i];
      return true;
    };
    std::string v;
    long n = 0;
    if (a == "--no-check") {
      o.check = false;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--seed" || a == "--late-rank" || a == "--root") {
      if (!value(v)) return std::nullopt;
      if (!parse_long(v, n) || n < (a == "--late-rank" ? -1 : 0)) {
        error = a + " needs a non-negative integer (got '" + v + "')";
        return std::nullopt;
      }
      if (a == "--seed") o.seed = static_cast<std::uint64_t>(n);
      else if (a == "--late-rank") o.late_rank = static_cast<int>(n);
      else o.root = static_cast<int>(n);
    } else if (a == "--gamma") {
      if (!value(v)) return std::nullopt;
      if (!parse_double(v, o.gamma) || o.gamma < 0) {
        error = "--gamma needs seconds per byte >= 0 (got '" + v + "')";
        return std::nullopt;
      }
    } else if (a == "--label") {
      if (!value(v)) return std::nullopt;
      o.label = v;
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      error = "unknown option '" + a + "'";
      return std::nullopt;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 5) {
    error = "expected 5 arguments COLL ALGO COUNT PATTERN ITERS, got " + std::to_string(pos.size());
    return std::nullopt;
  }
  if (pos[0] == "allreduce") o.coll = Collective::Allreduce;
  else if (pos[0] == "reduce") o.coll = Collective::Reduce;
  else if (pos[0] == "allgather") o.coll = Collective::Allgather;
  else {
    error = "COLL must be allreduce, reduce or allgather (got '" + pos[0] + "')";
    return std::nullopt;
  }
  std::size_t start = 0;
  while (start <= pos[1].size()) {
    const std::size_t comma = std::min(pos[1].find(',', start), pos[1].size());
    Choice c{pos[1].substr(start, comma - start), std::nullopt};
    if (c.name != "auto") c.algo = algo_from_name(o.coll, c.name);
    if (c.name != "auto" && !c.algo) {
      error = "ALGO '" + c.name + "' is not an algorithm of " + pos[0] + " (one of: " + names_for(o.coll) + ")";
      return std::nullopt;
    }
    o.algos.push_back(c);
    start = comma + 1;
  }
  if (!parse_count(pos[2], o.count)) {
    error = "COUNT must be a positive integer below 2^31, K or M suffix allowed (got '" + pos[2] + "')";
    return std::nullopt;
  }
  if (!parse_pattern(pos[3], o.pattern, error)) return std::nullopt;
  long iters = 0;
  if (!parse_long(pos[4], iters) || iters < 1 || iters > 1000000) {
    error = "ITERS must be a positive integer (got '" + pos[4] + "')";
    return std::nullopt;
  }
  o.iters = static_cast<int>(iters);
  if (o.label.find_first_of(" \t\n") != std::string::npos) {
    error = "--label must not contain white space ('" + o.label + "')";
    return std::nullopt;
  }
  return o;
}

double pattern_delay(const Pattern& p, double delta) { return p.in_transfers ? p.delay * delta : 1e-3 * p.delay; }

std::vector<double> delays_for(const Options& o, int nprocs, int iter, double delay) {
  std::vector<double> d(static_cast<std::size_t>(nprocs), 0.0);
  const auto it = static_cast<std::uint64_t>(iter);
  if (o.pattern.kind == PatternKind::OneLate && nprocs > 0) {
    const int late = o.late_rank >= 0 ? o.late_rank
                                      : static_cast<int>(mix64(mix64(o.seed) ^ it) % static_cast<std::uint64_t>(nprocs));
    d[static_cast<std::size_t>(late)] = delay;
  } else if (o.pattern.kind == PatternKind::RandLate) {
    for (int r = 0; r < nprocs; ++r) d[static_cast<std::size_t>(r)] = delay * uniform01(o.seed, it, static_cast<std::uint64_t>(r));
  }
  return d;
}

std::string pattern_text(const Pattern& p) {
  if (p.kind == PatternKind::Balanced) return "balanced";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s:%g%s", p.kind == PatternKind::OneLate ? "one-late" : "rand-late", p.delay,
                p.in_transfers ? "x" : "");
  return buf;
}

}  // namespace papshim::smpi
