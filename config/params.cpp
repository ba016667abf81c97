#include "config/params.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace papshim {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "|") + s;
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

[[noreturn]] void reject(const ParamSpec& p, const std::string& value, const std::string& accepted) {
  throw ConfigError(std::string(p.name) + "='" + value + "' is not accepted; accepted values: " + accepted);
}

std::string parse_choice(const ParamSpec& p, const std::string& raw) {
  const std::string v = lower(raw);
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
  const std::string v = lower(raw);
  if (v == "1" || v == "yes" || v == "true" || v == "on") return true;
  if (v == "0" || v == "no" || v == "false" || v == "off" || v.empty()) return false;
  reject(p, raw, "1|0|yes|no|true|false|on|off");
}

}  // namespace

const std::vector<ParamSpec>& param_specs() {
  static const std::vector<ParamSpec> specs = {
      {"PAPSHIM_ALLREDUCE", ParamType::Choice, "auto", {"auto", "native", "prr", "slt", "ring", "rabenseifner", "direct"},
       0, 0, "MPI_Allreduce algorithm: auto picks by predicted arrivals, native is the MPI library's own"},
      {"PAPSHIM_REDUCE", ParamType::Choice, "auto", {"auto", "native", "clairvoyant", "clairvoyant_linear", "binomial",
                                                  "sorted_binomial"}, 0, 0,
       "MPI_Reduce algorithm"},
      {"PAPSHIM_ALLGATHER", ParamType::Choice, "auto", {"auto", "native", "sparbit", "ring", "bruck", "recursive_doubling"}, 0, 0,
       "MPI_Allgather algorithm (recursive_doubling needs a power-of-two communicator, else native)"},
      {"PAPSHIM_PREDICTOR", ParamType::Choice, "sma", {"sma", "edge", "off"}, 0, 0,
       "arrival prediction: simple moving average of compute phases, edge-based (papshim_edge), or off"},
      {"PAPSHIM_SMA_WINDOW", ParamType::Int, "2", {}, 1, 1000,
       "compute phases in the moving average (2: chosen by measurement, see README)"},
      {"PAPSHIM_DISABLE", ParamType::Bool, "0", {}, 0, 0, "1: pass every call straight to the MPI library"},
      {"PAPSHIM_REPORT", ParamType::String, "papshim-report", {}, 0, 0,
       "report path prefix (<prefix>.txt and <prefix>.json, written by rank 0), or off"},
      {"PAPSHIM_LOG_LEVEL", ParamType::Choice, "warn", {"trace", "debug", "info", "warn", "error", "off"}, 0, 0,
       "log verbosity"},
      {"PAPSHIM_LOG_DIR", ParamType::String, "", {}, 0, 0, "directory for per-rank log files (default: stderr)"},
      {"PAPSHIM_CALLSITE_DEPTH", ParamType::Int, "1", {}, 1, 8,
       "stack frames above the MPI call that identify a call site"},
      {"PAPSHIM_CHECK", ParamType::Bool, "0", {}, 0, 0,
       "1: verify before each schedule that every rank holds the same decision inputs (costs one allreduce)"},
      {"PAPSHIM_CLV_SEGMENTS", ParamType::Int, "0", {}, 0, 4096,
       "Clairvoyant segment count (0: chosen by the cost model)"},
      {"PAPSHIM_TREE_SEGSIZE", ParamType::Int, "auto", {"auto"}, 0, 1L << 30,
       "segment size in bytes of the pipelined reduce trees (binomial, sorted_binomial; at most 4096 "
       "segments); 0: P segments; auto: 32768 when the job spans several nodes (below the network's eager "
       "limit, a sender leaves once its data is on the wire), else P segments"},
      {"PAPSHIM_TIMELINE", ParamType::String, "", {}, 0, 0, "Chrome trace JSON of arrivals and exits (path)"},
      {"PAPSHIM_HELPER_THREAD", ParamType::Bool, "1", {}, 0, 0,
       "1: ask MPI for MPI_THREAD_MULTIPLE and run the predictor's helper thread; 0: keep the application's "
       "thread level and run the predictor inline"},
      {"PAPSHIM_MIN_BYTES", ParamType::Int, "16384", {}, 0, 1L << 30,
       "auto mode predicts and reconsiders only calls of at least this many bytes (per rank); smaller ones run "
       "native: their possible gain is below the cost of predicting"},
      {"PAPSHIM_REPRODUCIBLE", ParamType::Bool, "0", {}, 0, 0,
       "1: allreduce and reduce combine every element's operands in an order fixed by the communicator size and "
       "the count, so results do not depend on which rank is late (schedules ignore arrivals and costs; auto "
       "picks by the call's shape: direct allreduce, binomial reduce); 0: arrival-aware schedules, results may "
       "differ in the last bits with the lateness pattern (identical on every rank within a call)"},
      {"PAPSHIM_HELP", ParamType::Bool, "0", {}, 0, 0, "1: print this table on rank 0 at MPI_Init", false, false},
      {"PAPSHIM_TEST_MAX_PRIVATE", ParamType::Int, "0", {}, 0, 1000000,
       "test only: refuse private duplicates after this many (0: never), as an MPI library out of context ids "
       "would",
       true},
      {"PAPSHIM_TEST_CLOCK_OFFSET_US", ParamType::Double, "0", {}, 0, 0,
       "test only: microseconds added to this rank's clock (emulates hosts whose clocks disagree)", true, false},
  };
  return specs;
}

bool is_job_wide(const std::string& name) {
  for (const auto& p : param_specs())
    if (name == p.name) return p.job_wide;
  return true;
}

Config parse_config(const EnvLookup& env) {
  Config c;
  for (const auto& p : param_specs()) {
    const char* raw = env(p.name);
    const std::string value = raw ? raw : p.def;
    std::string canon = value;
    const std::string name = p.name;
    switch (p.type) {
      case ParamType::Choice: canon = parse_choice(p, value); break;
      case ParamType::Int:  // an integer, or one of the words in choices
        if (std::find(p.choices.begin(), p.choices.end(), lower(value)) != p.choices.end()) canon = lower(value);
        else canon = std::to_string(parse_int(p, value));
        break;
      case ParamType::Bool: canon = parse_bool(p, value) ? "1" : "0"; break;
      case ParamType::Double: parse_double(p, value); break;
      case ParamType::String: break;
    }
    c.values.emplace_back(name, canon);
    if (name == "PAPSHIM_ALLREDUCE") c.allreduce = canon;
    else if (name == "PAPSHIM_REDUCE") c.reduce = canon;
    else if (name == "PAPSHIM_ALLGATHER") c.allgather = canon;
    else if (name == "PAPSHIM_PREDICTOR")
      c.predictor = canon == "sma" ? PredictorMode::Sma : canon == "edge" ? PredictorMode::Edge : PredictorMode::Off;
    else if (name == "PAPSHIM_SMA_WINDOW") c.sma_window = std::stoi(canon);
    else if (name == "PAPSHIM_DISABLE") c.disable = canon == "1";
    else if (name == "PAPSHIM_REPORT") {
      if (value.empty()) reject(p, value, "a path prefix or off");
      c.report = value;
    } else if (name == "PAPSHIM_LOG_LEVEL") c.log_level = canon;
    else if (name == "PAPSHIM_LOG_DIR") c.log_dir = value;
    else if (name == "PAPSHIM_CALLSITE_DEPTH") c.callsite_depth = std::stoi(canon);
    else if (name == "PAPSHIM_CHECK") c.check = canon == "1";
    else if (name == "PAPSHIM_CLV_SEGMENTS") c.clv_segments = std::stoi(canon);
    else if (name == "PAPSHIM_TREE_SEGSIZE") c.tree_segsize = canon == "auto" ? -1 : std::stol(canon);
    else if (name == "PAPSHIM_TIMELINE") c.timeline = value;
    else if (name == "PAPSHIM_HELP") c.help = canon == "1";
    else if (name == "PAPSHIM_HELPER_THREAD") c.helper_thread = canon == "1";
    else if (name == "PAPSHIM_MIN_BYTES") c.min_bytes = std::stol(canon);
    else if (name == "PAPSHIM_REPRODUCIBLE") c.reproducible = canon == "1";
    else if (name == "PAPSHIM_TEST_MAX_PRIVATE") c.test_max_private = std::stol(canon);
    else if (name == "PAPSHIM_TEST_CLOCK_OFFSET_US") c.clock_offset_us = std::strtod(value.c_str(), nullptr);
  }
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
    out << "  " << p.name << "\n      " << p.help << "\n      default: "
        << (*p.def ? p.def : "(empty)");
    if (p.type == ParamType::Choice) out << "; accepted: " << join(p.choices);
    if (p.type == ParamType::Int) out << "; accepted: " << p.min << ".." << p.max;
    if (p.type == ParamType::Bool) out << "; accepted: 1|0";
    out << "\n";
  }
  return out.str();
}

}  // namespace papshim
