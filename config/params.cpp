#include "config/params.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "algorithms/catalog.h"

namespace papshim {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = "|") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

[[noreturn]] void reject(const ParamSpec& p, const std::string& value, const std::string& accepted) {
  throw ConfigError(std::string(p.name) + "='" + value + "' is not accepted; accepted values: " + accepted);
}

std::string parse_choice(const ParamSpec& p, const std::string& raw) {
  const std::string v = to_lower(raw);
  if (std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end()) reject(p, raw, join(p.choices));
  return v;
}

long parse_int(const ParamSpec& p, const std::string& raw) {
  std::string range = "an integer from " + std::to_string(p.min) + " to " + std::to_string(p.max);
  if (!p.choices.empty()) range = join(p.choices) + ", or " + range;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(raw.c_str(), &end, 10);
  if (raw.empty() || errno != 0 || *end != '\0' || v < p.min || v > p.max) reject(p, raw, range);
  return v;
}

double parse_double(const ParamSpec& p, const std::string& raw) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(raw.c_str(), &end);
  if (raw.empty() || errno != 0 || *end != '\0') reject(p, raw, "a number");
  return v;
}

bool parse_bool(const ParamSpec& p, const std::string& raw) {
  const std::string v = to_lower(raw);
  if (v == "1" || v == "yes" || v == "true" || v == "on") return true;
  if (v == "0" || v == "no" || v == "false" || v == "off" || v.empty()) return false;
  reject(p, raw, "1|0|yes|no|true|false|on|off");
}

// The canonical form of `value` for parameter `p`: lower-case choice, the
// integer or accepted word, "1"/"0"; String and Double values as given.
std::string canonical(const ParamSpec& p, const std::string& value) {
  switch (p.type) {
    case ParamType::Choice: return parse_choice(p, value);
    case ParamType::Int:  // an integer, or one of the words in choices
      if (std::find(p.choices.begin(), p.choices.end(), to_lower(value)) != p.choices.end()) return to_lower(value);
      return std::to_string(parse_int(p, value));
    case ParamType::Bool: return parse_bool(p, value) ? "1" : "0";
    case ParamType::Double: {
      const double v = parse_double(p, value);
      if (p.max > p.min && (v < static_cast<double>(p.min) || v > static_cast<double>(p.max)))
        reject(p, value, "a number from " + std::to_string(p.min) + " to " + std::to_string(p.max));
      return value;
    }
    case ParamType::String:
      if (p.empty_error && value.empty()) reject(p, value, p.empty_error);
      return value;
  }
  return value;
}

// Reads every parameter through `env` into `c`; records the canonical values
// when `record`.
void read_params(Config& c, const EnvLookup& env, bool record) {
  for (const auto& p : param_specs()) {
    const char* raw = env ? env(p.name) : nullptr;
    const std::string canon = canonical(p, raw ? raw : p.def);
    p.store(c, canon);
    if (record) c.values.emplace_back(p.name, canon);
  }
}

// ---- storage: where a parameter's canonical value goes ---------------------

using Store = std::function<void(Config&, const std::string&)>;

Store field(std::string Config::*f) {
  return [f](Config& c, const std::string& v) { c.*f = v; };
}
Store field(int Config::*f) {
  return [f](Config& c, const std::string& v) { c.*f = std::stoi(v); };
}
Store field(long Config::*f) {
  return [f](Config& c, const std::string& v) { c.*f = std::stol(v); };
}
Store field(bool Config::*f) {
  return [f](Config& c, const std::string& v) { c.*f = v == "1"; };
}
Store field(double Config::*f) {
  return [f](Config& c, const std::string& v) { c.*f = std::strtod(v.c_str(), nullptr); };
}

// ---- declarations ---------------------------------------------------------

ParamSpec choice(const char* name, const char* def, std::vector<std::string> choices, const char* help, Store store) {
  return {name, ParamType::Choice, def, std::move(choices), 0, 0, help, std::move(store), nullptr, nullptr, nullptr,
          false, true};
}

ParamSpec integer(const char* name, const char* def, long min, long max, const char* help, Store store) {
  return {name, ParamType::Int, def, {}, min, max, help, std::move(store), nullptr, nullptr, nullptr, false, true};
}

ParamSpec flag(const char* name, const char* def, const char* help, Store store) {
  return {name, ParamType::Bool, def, {}, 0, 0, help, std::move(store), nullptr, nullptr, nullptr, false, true};
}

ParamSpec text(const char* name, const char* def, const char* shown_default, const char* accepts, const char* help,
               Store store) {
  return {name, ParamType::String, def, {}, 0, 0, help, std::move(store), shown_default, accepts, nullptr, false, true};
}

ParamSpec per_rank(ParamSpec p) {
  p.job_wide = false;
  return p;
}

ParamSpec test_only(ParamSpec p) {
  p.test_only = true;
  return p;
}

// PAPSHIM_ALLREDUCE and friends: auto, native and the catalog's algorithms
// for the collective, in catalog order.
std::vector<std::string> algorithm_choices(Collective c) {
  std::vector<std::string> out = {"auto", "native"};
  for (const AlgoInfo* a : algorithms_for(c)) out.emplace_back(a->name);
  return out;
}

std::vector<ParamSpec> make_specs() {
  std::vector<ParamSpec> s;
  s.push_back(choice("PAPSHIM_ALLREDUCE", "auto", algorithm_choices(Collective::Allreduce),
                     "allreduce algorithm; auto picks by predicted arrivals and measured costs",
                     field(&Config::allreduce)));
  s.push_back(choice("PAPSHIM_REDUCE", "auto", algorithm_choices(Collective::Reduce), "reduce algorithm",
                     field(&Config::reduce)));
  s.push_back(choice("PAPSHIM_ALLGATHER", "auto", algorithm_choices(Collective::Allgather),
                     "allgather algorithm (recursive_doubling: powers of two only, else native)",
                     field(&Config::allgather)));
  s.push_back(choice("PAPSHIM_PREDICTOR", "sma", {"sma", "edge", "off"},
                     "arrival prediction: moving average of compute phases per call site; edge-based "
                     "(`papshim_edge`); off (auto then always runs native)",
                     [](Config& c, const std::string& v) {
                       c.predictor = v == "sma" ? PredictorMode::Sma : v == "edge" ? PredictorMode::Edge
                                                                                   : PredictorMode::Off;
                     }));
  s.push_back(integer("PAPSHIM_SMA_WINDOW", "2", 1, 1000,
                      "compute phases in the moving average (default chosen by measurement, see "
                      "docs/results.md)",
                      field(&Config::sma_window)));
  s.push_back(flag("PAPSHIM_DISABLE", "0", "pass every call straight to the MPI library", field(&Config::disable)));
  ParamSpec report = text("PAPSHIM_REPORT", "papshim-report", nullptr, "path prefix, off",
                          "where rank 0 writes `<prefix>.txt` and `<prefix>.json`", field(&Config::report));
  report.empty_error = "a path prefix or off";
  s.push_back(report);
  s.push_back(choice("PAPSHIM_LOG_LEVEL", "warn", {"trace", "debug", "info", "warn", "error", "off"},
                     "debug prints auto mode's candidate table on rank 0", field(&Config::log_level)));
  s.push_back(text("PAPSHIM_LOG_DIR", "", "(stderr)", "directory",
                   "per-rank log files `papshim.<host>.<pid>.r<rank>.log`", field(&Config::log_dir)));
  s.push_back(integer("PAPSHIM_CALLSITE_DEPTH", "1", 1, 8, "stack frames above the MPI call that identify a call site",
                      field(&Config::callsite_depth)));
  s.push_back(flag("PAPSHIM_CHECK", "0",
                   "before each schedule, verify that every rank holds the same decision inputs (one extra "
                   "allreduce); stops with a message if not",
                   field(&Config::check)));
  s.push_back(integer("PAPSHIM_CLV_SEGMENTS", "0", 0, 4096, "Clairvoyant segments (0: P, one per rank)",
                      field(&Config::clv_segments)));
  ParamSpec segsize = integer(
      "PAPSHIM_TREE_SEGSIZE", "auto", 0, 1L << 30,
      "segment bytes of the reduce trees (binomial, sorted_binomial; at most 4096 segments); 0: P segments; auto: "
      "32 KiB when the job spans several nodes (under the network's eager limit a sender leaves as soon as its "
      "data is on the wire), else P segments",
      [](Config& c, const std::string& v) { c.tree_segsize = v == "auto" ? -1 : std::stol(v); });
  segsize.choices = {"auto"};
  s.push_back(segsize);
  s.push_back(text("PAPSHIM_TIMELINE", "", "(none)", "path",
                   "Chrome trace of the sampled calls (all calls in runs of up to 16384 calls per rank): "
                   "predicted and actual arrivals and exits",
                   field(&Config::timeline)));
  ParamSpec helper = integer(
      "PAPSHIM_HELPER_THREAD", "auto", 0, 1,
      "1: a helper thread advances the prediction rounds while ranks compute and decides ahead of each call (papshim "
      "asks MPI for `MPI_THREAD_MULTIPLE`); 0: inline, at the application's thread level; auto: inline when the "
      "launcher says the job has at most 16 ranks (their rounds need no relays), else the helper thread",
      [](Config& c, const std::string& v) { c.helper_thread = v == "auto" ? -1 : std::stoi(v); });
  helper.choices = {"auto"};
  s.push_back(helper);
  s.push_back(choice("PAPSHIM_HELPER_BACKOFF", "auto", {"auto", "on", "off"},
                     "helper thread polls: `on` doubles the pause after a poll that found nothing new, from 0.1 ms "
                     "up to 1 ms, or up to 50 ms when the job spans several machines; `off` polls every 0.1 ms; "
                     "`auto`: on when a machine has at least as many of the job's ranks as cores a rank may run on",
                     [](Config& c, const std::string& v) { c.helper_backoff = v; }));
  s.push_back(integer("PAPSHIM_MIN_BYTES", "16384", 0, 1L << 30,
                      "auto mode predicts and reconsiders only calls of at least this many bytes per rank",
                      field(&Config::min_bytes)));
  s.push_back(integer("PAPSHIM_QUIET_SKIP", "64", 0, 1024,
                      "after 8 calls in a row that auto weighed and ran native, the prediction rounds thin out: 1 call "
                      "without a round, then 2, 4, ... up to this many between rounds, until a call runs anything "
                      "else (auto's pick or a forced algorithm); 0: a round on every call",
                      field(&Config::quiet_skip)));
  s.push_back(flag("PAPSHIM_REPRODUCIBLE", "0",
                   "1: allreduce and reduce results that do not depend on which rank is late (README: Reproducible "
                   "results); 0: "
                   "arrival-aware, results may differ in the last bits with the lateness pattern",
                   field(&Config::reproducible)));
  s.push_back(flag("PAPSHIM_HIERARCHY", "1",
                   "with several ranks on a host of a communicator that spans hosts, allreduce and reduce combine "
                   "within each host through the MPI library and run the arrival-aware algorithm between hosts "
                   "(one rank per host); 0: between all ranks",
                   field(&Config::hierarchy)));
  s.push_back({"PAPSHIM_STALL_SECONDS", ParamType::Double, "0", {}, 0, 86400,
               "when a call has waited this many seconds inside a collective, the helper thread logs once where "
               "this rank waits and which ranks had not arrived yet by the call's prediction round; 0: off",
               field(&Config::stall_seconds), "0 (off)", nullptr, nullptr, false, true});
  s.push_back(per_rank(flag("PAPSHIM_HELP", "0", "print this table on rank 0 at `MPI_Init`", field(&Config::help))));
  s.push_back(test_only(integer("PAPSHIM_TEST_MAX_PRIVATE", "0", 0, 1000000,
                                "test only: refuse private duplicates after this many (0: never), as an MPI library "
                                "out of context ids would",
                                field(&Config::test_max_private))));
  s.push_back(test_only(per_rank({"PAPSHIM_TEST_CLOCK_OFFSET_US", ParamType::Double, "0", {}, 0, 0,
                                  "test only: microseconds added to this rank's clock (emulates hosts whose clocks "
                                  "disagree)",
                                  field(&Config::clock_offset_us), nullptr, nullptr, nullptr, false, true})));
  s.push_back(test_only(integer("PAPSHIM_TEST_RANKS_PER_NODE", "0", 0, 1000000,
                                "test only: every K consecutive world ranks form one emulated host (0: the real "
                                "hosts)",
                                field(&Config::test_ranks_per_node))));
  return s;
}

// A bound as the tables show it: 2^k for large powers of two.
std::string shown_bound(long v) {
  for (int k = 20; k < 62; ++k)
    if (v == (1L << k)) return "2^" + std::to_string(k);
  return std::to_string(v);
}

std::string shown_default(const ParamSpec& p) { return p.shown_default ? p.shown_default : p.def; }

std::string shown_accepted(const ParamSpec& p) {
  switch (p.type) {
    case ParamType::Choice: return join(p.choices, ", ");
    case ParamType::Int: {
      std::string range = shown_bound(p.min) + ".." + shown_bound(p.max);
      return p.choices.empty() ? range : join(p.choices, ", ") + ", " + range;
    }
    case ParamType::Bool: return "1, 0";
    case ParamType::Double: return p.max > p.min ? shown_bound(p.min) + ".." + shown_bound(p.max) : "a number";
    case ParamType::String: return p.accepts ? p.accepts : "any";
  }
  return "";
}

}  // namespace

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const std::vector<ParamSpec>& param_specs() {
  static const std::vector<ParamSpec> specs = make_specs();
  return specs;
}

Config::Config() { read_params(*this, nullptr, false); }

bool is_job_wide(const std::string& name) {
  for (const auto& p : param_specs())
    if (name == p.name) return p.job_wide;
  return true;
}

Config parse_config(const EnvLookup& env) {
  Config c;
  read_params(c, env, true);
  return c;
}

Config parse_config_from_environment() {
  return parse_config([](const char* n) { return std::getenv(n); });
}

std::string describe_params(bool include_test_only) {
  std::ostringstream out;
  out << "papshim parameters (environment variables, read once at MPI_Init):\n";
  for (const auto& p : param_specs()) {
    if (p.test_only && !include_test_only) continue;
    out << "  " << p.name << "\n      " << p.help << "\n      default: " << shown_default(p)
        << "; accepted: " << shown_accepted(p) << "\n";
  }
  return out.str();
}

std::string params_markdown() {
  std::ostringstream out;
  out << "| variable | default | accepted | meaning |\n|---|---|---|---|\n";
  for (const auto& p : param_specs()) {
    if (p.test_only) continue;
    out << "| `" << p.name << "` | " << shown_default(p) << " | " << shown_accepted(p) << " | " << p.help << " |\n";
  }
  return out.str();
}

}  // namespace papshim
