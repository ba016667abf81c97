// Works as follows.  on_init() runs right after the MPI library initialised:
// it reads the configuration, then checks it across MPI_COMM_WORLD with one
// allreduce (a parse error anywhere, or a job-wide parameter whose value
// differs between ranks, stops every rank with one line naming the variable,
// and a nonzero exit), creates the private world and self duplicates and
// sets up logging.  on_finalize() gathers every rank's statistics to rank 0,
// which writes the report, then frees every private communicator.
#include "shim/runtime.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "config/log.h"
#include "common/clock.h"
#include "common/hash.h"
#include "predictor/helper_thread.h"
#include "predictor/stall_watch.h"
#include "shim/callsite.h"
#include "shim/agreement.h"
#include "shim/comm_context.h"
#include "shim/decision.h"
#include "shim/dispatch.h"
#include "shim/report_writer.h"
#include "shim/stats.h"

namespace papshim {

thread_local bool ReentryGuard::depth_ = false;

Runtime& runtime() {
  static Runtime rt;
  return rt;
}

double common_now() { return now() - runtime().cal.clock_offset; }

namespace {

[[noreturn]] void stop_job(const std::string& msg, bool print) {
  if (print) user_error(msg);
  std::fflush(stdout);
  PMPI_Finalize();
  _exit(EXIT_FAILURE);
}

// Every rank parses; one allreduce tells all ranks whether any failed and
// which job-wide values differ.  Nobody waits for anybody else alone, so a
// bad value can never hang the job.
void validate_across_ranks(Runtime& rt, const std::string& parse_error) {
  const auto& values = rt.cfg.values;
  const std::size_t n = values.size();
  // [0] = the complement of this rank if it has a parse error (the maximum
  // names the lowest such rank; 0: none); then one hash per parameter.
  std::vector<std::uint64_t> mine(1 + n, 0), maxed(1 + n, 0);
  mine[0] = parse_error.empty() ? 0 : ~static_cast<std::uint64_t>(rt.world_rank);
  for (std::size_t i = 0; i < n; ++i)
    mine[1 + i] = is_job_wide(values[i].first) ? fnv1a(values[i].second) : 0;
  const std::vector<bool> same = agree_across(rt.world_priv, mine.data(), mine.size(), maxed.data());
  if (same.empty()) stop_job("the configuration check across ranks failed (MPI error)", rt.world_rank == 0);
  if (maxed[0] != 0) {
    const auto first_bad = static_cast<int>(~maxed[0]);
    stop_job(parse_error, first_bad == rt.world_rank);
  }
  std::string differ;
  for (std::size_t i = 0; i < n; ++i)
    if (!same[1 + i]) differ += (differ.empty() ? "" : ", ") + values[i].first;
  if (!differ.empty()) {
    std::string msg = differ + " differ between ranks (rank " + std::to_string(rt.world_rank) + " has";
    for (const auto& [name, v] : values)
      if (differ.find(name) != std::string::npos) msg += " " + name + "='" + v + "'";
    msg += "); set the same value on every rank, e.g. with mpirun -x";
    // Every rank sees the difference; the lowest rank reports it.
    stop_job(msg, rt.world_rank == 0);
  }
}

// Sets this rank's host key (the world rank of the lowest rank on its host)
// and whether the job spans several hosts; returns the calibration's
// partner of rank 0: the lowest rank on another host, else rank 1.
int find_hosts(Runtime& rt) {
  const long k = rt.cfg.test_ranks_per_node;
  int key = rt.world_rank;
  // The ranks sharing this machine, whatever PAPSHIM_TEST_RANKS_PER_NODE
  // says (they share its cores).
  MPI_Comm node = MPI_COMM_NULL;
  PMPI_Comm_split_type(rt.world_priv, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (node != MPI_COMM_NULL) {
    PMPI_Comm_size(node, &rt.ranks_here);
    // The lowest world rank on the host, by a minimum rather than a
    // broadcast from it: start-up traffic goes both ways (calibrate.h).
    if (k <= 0) PMPI_Allreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
  }
  if (k > 0) key = static_cast<int>(rt.world_rank / k * k);  // PAPSHIM_TEST_RANKS_PER_NODE: emulated hosts
  rt.host_key = key;
  int away = key == 0 ? INT_MAX : rt.world_rank, first_away = INT_MAX;  // rank 0's host has key 0
  PMPI_Allreduce(&away, &first_away, 1, MPI_INT, MPI_MIN, rt.world_priv);
  rt.multi_node = first_away != INT_MAX;
  return rt.multi_node ? first_away : 1;
}

// More ranks on this machine than cores this process may run on: every
// wake-up of a helper thread takes a core from some rank
// (PAPSHIM_HELPER_BACKOFF=on or off says so instead).
bool oversubscribed(const Runtime& rt) {
  if (rt.cfg.helper_backoff != "auto") return rt.cfg.helper_backoff == "on";
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return cores > 0 && rt.ranks_here >= cores;
}

// How long an idle helper may pause between polls (HelperThread::start).
// Not oversubscribed: it polls every 0.1 ms.  Oversubscribed, each wake-up
// takes a core from a rank, and a poll of a job spanning machines also
// drives the network transport, whose progress the application thread
// needs.  Measured on 4 emulated hosts x 4 ranks on 2 cores (1 Mi floats,
// medians of 3 interleaved rounds; docs/results.md): balanced reduce 272 ms
// with pauses of at most 1 ms, 135 ms with up to 50 ms, native 130 ms.  On
// one machine (8 ranks, 2 cores) the shorter pauses were the faster.
long helper_pause_ns(const Runtime& rt) {
  if (!oversubscribed(rt)) return 0;
  return rt.multi_node ? HelperThread::kMaxPauseHostsNs : HelperThread::kMaxPauseOneHostNs;
}

// The stall notice names the call site by its report key.
std::string describe_site(const void* site) { return callsite_key(*static_cast<const CallSite*>(site)); }

// The helper thread runs where it is wanted (PAPSHIM_HELPER_THREAD, see
// helper_wanted) and MPI granted MPI_THREAD_MULTIPLE; otherwise the
// predictor runs inline on the application thread (said once, in the log
// and the report), with a thread of its own for PAPSHIM_STALL_SECONDS that
// never calls MPI.
void start_helper(Runtime& rt) {
  if (!rt.active || rt.cfg.predictor == PredictorMode::Off) {
    rt.thread_mode = "off";
    return;
  }
  if (rt.cfg.helper_thread == 0) {
    rt.thread_mode = "inline (PAPSHIM_HELPER_THREAD=0)";
  } else if (rt.cfg.helper_thread < 0 && rt.world_size <= kDirectMaxRanks) {
    rt.thread_mode = fmt::format("inline (PAPSHIM_HELPER_THREAD=auto: {} ranks exchange predictions directly)",
                                 rt.world_size);
  } else if (rt.thread_level < MPI_THREAD_MULTIPLE) {
    rt.thread_mode = rt.asked_multiple ? "inline (MPI did not grant MPI_THREAD_MULTIPLE)"
                                       : "inline (the launcher announced at most 16 ranks, so papshim kept the "
                                         "application's thread level)";
    if (rt.world_rank == 0 && rt.asked_multiple)
      log().warn("the predictor runs inline: MPI did not grant MPI_THREAD_MULTIPLE");
  } else if (const long pause = helper_pause_ns(rt); HelperThread::instance().start(select_policy(), pause)) {
    rt.thread_mode = pause > 0 ? fmt::format("helper thread (polls back off, up to {} ms)", pause / 1000000)
                               : std::string("helper thread");
    return;
  } else {
    rt.thread_mode = "inline (the helper thread could not start)";
  }
  if (rt.cfg.stall_seconds > 0 && HelperThread::instance().start_watch_only())
    rt.thread_mode += "; a watch thread for PAPSHIM_STALL_SECONDS";
  log().info("predictor mode: {}", rt.thread_mode);
}

}  // namespace

namespace {
bool env_flag(const char* name, bool def) {
  const char* v = std::getenv(name);
  if (!v) return def;
  const std::string s = to_lower(v);
  if (s == "1" || s == "yes" || s == "true" || s == "on") return true;
  if (s == "0" || s == "no" || s == "false" || s == "off" || s.empty()) return false;
  return def;
}
// exit() without MPI_Finalize: the helper thread is stopped and joined
// before static destruction, and the process leaves with its own code.
void stop_at_exit() {
  Runtime& rt = runtime();
  if (!rt.initialised) return;
  rt.active = false;
  HelperThread::instance().stop();
}

// A forked child has no helper thread and must not use the parent's MPI
// state: papshim stays out of its way.
void forget_in_child() {
  runtime().active = false;
  runtime().initialised = false;
  HelperThread::instance().forget_after_fork();
}
}  // namespace

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end == '\0' && n > 0 && n <= INT_MAX) return static_cast<int>(n);
  }
  return 0;
}

bool helper_wanted() {
  if (env_flag("PAPSHIM_DISABLE", false)) return false;
  if (const char* p = std::getenv("PAPSHIM_PREDICTOR"); p && to_lower(p) == "off") return false;
  const char* h = std::getenv("PAPSHIM_HELPER_THREAD");
  if (h && to_lower(h) != "auto") return env_flag("PAPSHIM_HELPER_THREAD", true);
  const int n = launcher_world_size();
  return n == 0 || n > kDirectMaxRanks;
}

int thread_level_to_request(int required) { return helper_wanted() ? MPI_THREAD_MULTIPLE : required; }

int thread_level_to_report(int required, int granted) { return std::min(required, granted); }

void on_init(int granted, bool asked_multiple, int told) {
  Runtime& rt = runtime();
  if (rt.initialised) return;
  rt.initialised = true;
  rt.thread_level = granted;
  rt.thread_level_told = told;
  rt.asked_multiple = asked_multiple;

  std::string parse_error;
  try {
    rt.cfg = parse_config_from_environment();
  } catch (const ConfigError& e) {
    parse_error = e.what();
    rt.cfg = parse_config([](const char*) -> const char* { return nullptr; });
  }
  PMPI_Comm_rank(MPI_COMM_WORLD, &rt.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &rt.world_size);
  PMPI_Comm_dup(MPI_COMM_WORLD, &rt.world_priv);
  validate_across_ranks(rt, parse_error);
  g_clock_offset_s = 1e-6 * rt.cfg.clock_offset_us;
  if (!rt.cfg.disable) rt.cal = calibrate(rt.world_priv, rt.world_rank, rt.world_size, find_hosts(rt));
  configure_decisions();
  rt.t_init = common_now();
  init_logging(rt.cfg.log_level, rt.cfg.log_dir, rt.world_rank);
  if (rt.cfg.help && rt.world_rank == 0) std::fputs(describe_params().c_str(), stderr);
  rt.active = !rt.cfg.disable;
  StallWatch::instance().configure(rt.cfg.stall_seconds, rt.cal.clock_offset, rt.world_rank, describe_site);
  start_helper(rt);
  // Registered after everything the handlers use was constructed, so they
  // run before any of it is destroyed.
  static const bool hooks = [] {
    std::atexit(stop_at_exit);
    pthread_atfork(nullptr, nullptr, forget_in_child);
    return true;
  }();
  (void)hooks;
  log().info("papshim active={} allreduce={} reduce={} allgather={} clock offset {:.1f} us (rtt {:.1f} us) "
             "alpha {:.2f} us beta {:.4f} ns/B gamma {:.4f} ns/B; 64 KiB in {:.1f} us",
             rt.active.load(), rt.cfg.allreduce, rt.cfg.reduce, rt.cfg.allgather, 1e6 * rt.cal.clock_offset,
             1e6 * rt.cal.offset_rtt, 1e6 * rt.cal.cost.alpha, 1e9 * rt.cal.cost.beta, 1e9 * rt.cal.cost.gamma,
             1e6 * rt.cal.cost.transfer(65536.0));
}

void on_finalize() {
  Runtime& rt = runtime();
  if (!rt.initialised) return;
  const bool was_active = rt.active.exchange(false);
  HelperThread::instance().stop();
  CommRegistry::instance().finish_predictors();
  if (was_active && (rt.cfg.report != "off" || !rt.cfg.timeline.empty())) write_report(rt);
  CommRegistry::instance().release_all();
  if (rt.world_priv != MPI_COMM_NULL) PMPI_Comm_free(&rt.world_priv);
  log().flush();
  rt.initialised = false;
}

}  // namespace papshim
