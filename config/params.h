// The parameter registry: every PAPSHIM_* environment variable, read once.
//
// Each parameter has a name, a type, a default, the accepted values and a
// help text.  parse_config() validates all of them and fails with one line
// naming the variable, the value and what is accepted; papshim-info and
// PAPSHIM_HELP=1 print the table.  The per-parameter canonical values feed the
// cross-rank consistency check at MPI_Init (shim/init.cpp).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace papshim {

enum class ParamType { Choice, Int, Bool, String, Double };

struct ParamSpec {
  const char* name;
  ParamType type;
  const char* def;
  std::vector<std::string> choices;  // Choice: accepted values
  long min = 0, max = 0;             // Int: accepted range
  const char* help;
  bool test_only = false;            // hidden knobs for the test suite
  bool job_wide = true;              // must be equal on every rank
};

const std::vector<ParamSpec>& param_specs();

enum class PredictorMode { Sma, Edge, Off };

struct Config {
  std::string allreduce = "auto";
  std::string reduce = "auto";
  std::string allgather = "auto";
  PredictorMode predictor = PredictorMode::Sma;
  int sma_window = 2;
  bool disable = false;
  std::string report = "papshim-report";  // "off" disables
  std::string log_level = "warn";
  std::string log_dir;
  int callsite_depth = 1;
  bool check = false;
  int clv_segments = 0;   // 0: chosen by the cost model
  long tree_segsize = -1;  // bytes per segment of the reduce trees; 0: P segments; -1: auto
  std::string timeline;   // Chrome trace path, empty: off
  double clock_offset_us = 0;  // test-only: added to this rank's clock
  long test_max_private = 0;   // test-only: private duplicates allowed (0: any number)
  bool help = false;
  bool helper_thread = true;
  long min_bytes = 16384;
  bool reproducible = false;  // allreduce/reduce results independent of timing

  // name -> canonical value, for the cross-rank comparison.
  std::vector<std::pair<std::string, std::string>> values;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<const char*(const char*)>;

// Reads every parameter through `env` (getenv by default).  Throws
// ConfigError with a one-line message on the first value not accepted.
Config parse_config(const EnvLookup& env);
Config parse_config_from_environment();

// The help table (papshim-info, PAPSHIM_HELP=1).
std::string describe_params(bool include_test_only = false);

// Per-rank clock offset is the only per-rank knob; every other parameter must
// agree across ranks.
bool is_job_wide(const std::string& name);

}  // namespace papshim
