// The parameter registry: every PAPSHIM_* environment variable, read once.
//
// Each parameter is declared once, in param_specs() (params.cpp): its name,
// type, default, accepted values or range, help text, and where the parsed
// value goes in Config.  parse_config() validates all of them and fails with
// one line naming the variable, the value and what is accepted; papshim-info,
// PAPSHIM_HELP=1 and the README's table print the same declarations.  The
// per-parameter canonical values feed the cross-rank consistency check at
// MPI_Init (shim/runtime.cpp).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace papshim {

enum class PredictorMode { Sma, Edge, Off };

// Every field is set from its parameter's declaration: a default-constructed
// Config holds the defaults (as parse_config of an empty environment).
struct Config {
  Config();

  std::string allreduce;   // PAPSHIM_ALLREDUCE: "auto", "native" or an algorithm
  std::string reduce;      // PAPSHIM_REDUCE
  std::string allgather;   // PAPSHIM_ALLGATHER
  PredictorMode predictor;
  int sma_window;
  bool disable;
  std::string report;      // "off" disables
  std::string log_level;
  std::string log_dir;     // empty: stderr
  int callsite_depth;
  bool check;
  int clv_segments;        // 0: P segments
  long tree_segsize;       // bytes per segment of the reduce trees; 0: P segments; -1: auto
  std::string timeline;    // Chrome trace path, empty: off
  int helper_thread;       // 1: helper thread, 0: inline, -1: auto (helper_wanted, shim/runtime.h)
  std::string helper_backoff;  // auto, on, off
  long min_bytes;
  long quiet_skip;         // most calls between prediction rounds while auto keeps running native
  bool reproducible;       // allreduce/reduce results independent of timing
  bool hierarchy;          // several ranks per host: combine within hosts, arrival-aware between them
  bool help;
  double stall_seconds;     // log calls waiting this long (0: off)
  long test_max_private;   // test-only: private duplicates allowed (0: any number)
  double clock_offset_us;  // test-only: added to this rank's clock
  long test_ranks_per_node;  // test-only: every K consecutive world ranks form one emulated host (0: real hosts)

  // name -> canonical value, for the cross-rank comparison (parse_config
  // fills it; empty in a default-constructed Config).
  std::vector<std::pair<std::string, std::string>> values;
};

enum class ParamType { Choice, Int, Bool, String, Double };

struct ParamSpec {
  const char* name;
  ParamType type;
  const char* def;                   // the default, as the variable's value
  std::vector<std::string> choices;  // Choice: accepted values; Int: words accepted besides integers
  long min, max;                     // Int: accepted range
  const char* help;                  // papshim-info, PAPSHIM_HELP=1, README table
  // Stores the canonical value (raw value for String and Double) in Config.
  std::function<void(Config&, const std::string&)> store;
  const char* shown_default;         // how the default reads in the tables, if not `def`
  const char* accepts;               // String: what is accepted, in words
  const char* empty_error;           // String: an empty value is rejected with this "accepted" text
  bool test_only;                    // hidden knobs for the test suite
  bool job_wide;                     // must be equal on every rank
};

const std::vector<ParamSpec>& param_specs();

// `s` in lower case (ASCII), as every choice value is compared.
std::string to_lower(std::string s);

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<const char*(const char*)>;

// Reads every parameter through `env` (getenv by default).  Throws
// ConfigError with a one-line message on the first value not accepted.
Config parse_config(const EnvLookup& env);
Config parse_config_from_environment();

// The help text (papshim-info, PAPSHIM_HELP=1).
std::string describe_params(bool include_test_only = false);

// The README's parameter table (markdown, non-test parameters).
std::string params_markdown();

// Per-rank clock offset and PAPSHIM_HELP are the only per-rank knobs; every
// other parameter must agree across ranks.
bool is_job_wide(const std::string& name);

}  // namespace papshim
