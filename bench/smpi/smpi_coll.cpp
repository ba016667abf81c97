// smpi_coll: papshim's own schedules (algorithms/: builders, catalog,
// selector, cost model) and its own executor (algorithms/executor.cpp, PMPI
// point-to-point) against SMPI's native collectives, on simulated platforms
// of up to 1024 hosts.  Built with smpicxx and -DPAPSHIM_SMPI by
// scripts/smpi.sh; docs/smpi.md has the settings, the output and results.
//
// Works as follows.  Start-up: papshim's calibration (predictor/calibrate.cpp,
// ping-pongs between ranks 0 and 1) gives alpha and beta; gamma is the
// reduction cost the executor charges per byte (--gamma), because the
// PMPI_Reduce_local that calibrate() times costs no simulated time.  delta,
// one transfer of the whole vector (allgather: of all P blocks), is the best
// of three half round trips between ranks 0 and 1.  The executor's reduction
// cost and SMPI's settings are in docs/smpi.md.
// Each iteration follows the seeds' mini-benchmark.  Every rank computes the
// pattern's delays (the same on every rank) and, for a papshim algorithm, its
// own program of the schedule, before the barrier (the shim builds it off
// the critical path); auto runs papshim's selector on the delays as the
// predicted arrivals.  Then: barrier; the rank sleeps its delay (simulated:
// smpicxx maps nanosleep to SMPI's sleep); arrival; the timed collective;
// exit.  Rank 0 keeps the mean over ranks of (exit - arrival).  The result
// is then compared bit for bit with the PMPI collective's on the same input:
// integer-valued floats, so every order of summation gives the same sums.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/executor.h"
#include "algorithms/selector.h"
#include "bench/smpi/options.h"
#include "predictor/calibrate.h"

using namespace papshim;
using namespace papshim::smpi;

namespace {

// Best of three half round trips of `bytes` between ranks 0 and 1.
double one_transfer(int rank, long bytes) {
  std::vector<char> buf(rank <= 1 ? static_cast<std::size_t>(bytes) : 0);
  double best = 1e300;
  PMPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) {  // from the second on, rank 1 is waiting in its receive
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      PMPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 7, MPI_COMM_WORLD);
      PMPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      PMPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      PMPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
    best = std::min(best, 0.5 * (MPI_Wtime() - t0));
  }
  PMPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return best;
}

void simulated_sleep(double seconds) {
  if (seconds <= 0) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  nanosleep(&ts, nullptr);  // SMPI's simulated sleep under smpicxx
}

// Integer-valued floats: sums of up to 2^10 ranks stay below 2^24, exact.
void fill_input(std::vector<float>& v, const Options& o, int rank, int iter) {
  const auto base = static_cast<unsigned long>(rank) * 7u + static_cast<unsigned long>(iter) * 5u + o.seed;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (o.coll == Collective::Allgather)
      v[i] = static_cast<float>((base * 131u + i) % (1u << 20));
    else
      v[i] = static_cast<float>((base + i * 13u) % 17u);
  }
}

// What one iteration runs: native, or a schedule (with auto's pick).
struct Plan {
  Algo algo = Algo::Native;
  std::shared_ptr<const Schedule> schedule;
  double predicted = 0;       // auto: the pick's predicted mean elapsed (s)
  double native_model = 0;    // auto: the model of native (s)
  std::string why;
};

Plan plan_for(const Options& o, const Choice& c, int nprocs, int rank, const std::vector<double>& arrival,
              const CostFigures& cost, std::string& error) {
  SelectInput in;
  in.coll = o.coll;
  in.nprocs = nprocs;
  in.root = o.root;
  in.count = static_cast<std::size_t>(o.count);
  in.elem_size = sizeof(float);
  in.arrival = arrival;
  in.cost = cost;
  in.tree_segsize = 32768;  // the shim's segment on a network (shim/dispatch.cpp)
  in.library = MpiLibrary::Smpi;  // scripts/smpi.sh runs the ompi selector
  in.rank = rank;
  Plan plan;
  if (!c.algo) {
    const Selection s = select_algorithm(in);
    plan.algo = s.pick;
    plan.schedule = s.schedule;
    plan.predicted = s.predicted;
    plan.native_model = INFINITY;
    for (const Candidate& cand : s.table)
      if (cand.native_model) plan.native_model = std::min(plan.native_model, cand.predicted);
    if (!std::isfinite(plan.native_model)) plan.native_model = 0;
    plan.why = s.why;
    return plan;
  }
  plan.algo = *c.algo;
  if (plan.algo == Algo::Native) return plan;
  ScheduleParams p = schedule_params_for(plan.algo, in);
  p.rank = rank;
  BuildResult b = build_schedule(plan.algo, p);
  if (!b.schedule) {
    error = c.name + " cannot run here: " + b.reason;
    return plan;
  }
  plan.schedule = std::make_shared<const Schedule>(std::move(*b.schedule));
  return plan;
}

int native_collective(const Options& o, const float* send, float* recv) {
  const int n = static_cast<int>(o.count);
  switch (o.coll) {
    case Collective::Allreduce: return PMPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case Collective::Reduce: return PMPI_Reduce(send, recv, n, MPI_FLOAT, MPI_SUM, o.root, MPI_COMM_WORLD);
    case Collective::Allgather: return PMPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD);
  }
  return MPI_ERR_INTERN;
}

long sends_of(const Schedule& s, int rank) {
  long n = 0;
  for (const Step& st : s.programs[static_cast<std::size_t>(rank)].steps) n += st.op == StepOp::Send;
  return n;
}

struct Totals {
  std::vector<double> e;               // per iteration: mean over ranks of (exit - arrival)
  double e_lo_sum = 0, predicted_sum = 0, native_model_sum = 0;
  std::map<std::string, int> picks;
  long sends_max = -1;
  long mismatches = 0;
  int errors = 0;
};

std::string pick_text(const std::map<std::string, int>& picks, std::string& most) {
  std::string out;
  int best = -1;
  for (const auto& [name, n] : picks) {
    out += (out.empty() ? "" : "/") + name + ":" + std::to_string(n);
    if (n > best) best = n, most = name;
  }
  return out;
}

// Simulated seconds papshim's start-up calibration took on this rank.
double g_calibrate_s = 0;

void report(const Options& o, const Choice& c, int P, double delta, double delay, const CostFigures& cost, const Totals& t,
            double wall) {
  const double n = static_cast<double>(t.e.size());
  double sum = 0;
  for (double v : t.e) sum += v;
  const auto [lo, hi] = std::minmax_element(t.e.begin(), t.e.end());
  std::string line = "smpi_coll coll=" + std::string(to_string(o.coll)) + " algo=" + c.name;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " P=%d count=%ld bytes=%ld pattern=%s D_ms=%.4f iters=%d e_ms=%.4f e_min_ms=%.4f e_max_ms=%.4f", P,
                o.count, o.count * static_cast<long>(sizeof(float)), pattern_text(o.pattern).c_str(), 1e3 * delay,
                o.iters, 1e3 * sum / n, 1e3 * *lo, 1e3 * *hi);
  line += buf;
  if (o.coll == Collective::Reduce) line += " e_lo_ms=na";
  else {
    std::snprintf(buf, sizeof buf, " e_lo_ms=%.4f", 1e3 * t.e_lo_sum / n);
    line += buf;
  }
  std::snprintf(buf, sizeof buf,
                " delta_ms=%.4f alpha_us=%.3f beta_ns_per_byte=%.5f gamma_ns_per_byte=%.5f calibrate_ms=%.3f",
                1e3 * delta, 1e6 * cost.alpha, 1e9 * cost.beta, 1e9 * cost.gamma, 1e3 * g_calibrate_s);
  line += buf;
  if (!c.algo) {
    std::string most;
    const std::string all = pick_text(t.picks, most);
    std::snprintf(buf, sizeof buf, " pick=%s picks=%s predicted_ms=%.4f native_model_ms=%.4f", most.c_str(), all.c_str(),
                  1e3 * t.predicted_sum / n, 1e3 * t.native_model_sum / n);
    line += buf;
  }
  line += t.sends_max < 0 ? std::string(" sends_max=na") : " sends_max=" + std::to_string(t.sends_max);
  if (!o.check) line += " check=skipped";
  else if (t.mismatches == 0 && t.errors == 0) line += " check=ok";
  else line += " check=FAILED(" + std::to_string(t.mismatches) + " values, " + std::to_string(t.errors) + " errors)";
  std::snprintf(buf, sizeof buf, " wall_s=%.1f", wall);
  line += buf;
  if (!o.label.empty()) line += " label=" + o.label;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// One iteration; rank 0 adds it to `t`.
void iterate(const Options& o, const Choice& c, int P, int rank, int iter, double delta, double delay, const CostFigures& cost,
             MPI_Comm priv, std::vector<float>& send, std::vector<float>& recv, std::vector<float>& ref, Totals& t) {
  const std::vector<double> d = delays_for(o, P, iter, delay);
  fill_input(send, o, rank, iter);
  std::fill(recv.begin(), recv.end(), -1.0f);
  std::string error;
  const Plan plan = plan_for(o, c, P, rank, d, cost, error);
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "smpi_coll: %s\n", error.c_str());
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  CallArgs a;
  a.coll = o.coll;
  a.sendbuf = send.data();
  a.recvbuf = recv.data();
  a.count = static_cast<int>(o.count);
  a.type = a.sendtype = MPI_FLOAT;
  a.sendcount = a.count;
  a.op = MPI_SUM;
  a.root = o.root;
  a.comm = MPI_COMM_WORLD;

  PMPI_Barrier(MPI_COMM_WORLD);
  simulated_sleep(d[static_cast<std::size_t>(rank)]);
  const double arrival = MPI_Wtime();
  const int rc = plan.schedule ? execute(*plan.schedule, rank, a, priv) : native_collective(o, send.data(), recv.data());
  const double elapsed = MPI_Wtime() - arrival;

  long bad = 0;
  if (o.check) {
    native_collective(o, send.data(), ref.data());
    if (o.coll != Collective::Reduce || rank == o.root)
      for (std::size_t i = 0; i < ref.size(); ++i) bad += std::memcmp(&ref[i], &recv[i], sizeof(float)) != 0;
  }
  double sum_e = 0;
  long stats[3] = {bad, rc != MPI_SUCCESS, plan.schedule ? sends_of(*plan.schedule, rank) : -1}, out[3] = {0, 0, 0};
  PMPI_Reduce(&elapsed, &sum_e, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(stats, out, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&stats[2], &out[2], 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  t.e.push_back(sum_e / P);
  const double last = *std::max_element(d.begin(), d.end());
  double wait = 0;
  for (double v : d) wait += (last - v) / P;
  t.e_lo_sum += wait + delta;
  t.predicted_sum += plan.predicted;
  t.native_model_sum += plan.native_model;
  t.picks[algo_info(plan.algo).name]++;
  t.sends_max = std::max(t.sends_max, out[2]);
  t.mismatches += out[0];
  t.errors += static_cast<int>(out[1]);
  if (o.verbose)
    std::printf("smpi_coll_iter iter=%d e_ms=%.4f pick=%s predicted_ms=%.4f why=\"%s\"\n", iter, 1e3 * sum_e / P,
                algo_info(plan.algo).name, 1e3 * plan.predicted, plan.why.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0) {  // (SimGrid takes --help for its own)
      if (rank == 0) std::printf("%s", usage().c_str());
      MPI_Finalize();
      return 0;
    }
  }
  std::string error;
  std::optional<Options> opt = parse_options(argc, argv, error);
  if (opt && P < 2) error = "needs at least 2 ranks (smpirun -np)";
  else if (opt && opt->root >= P) error = "--root " + std::to_string(opt->root) + " is not a rank below " + std::to_string(P);
  else if (opt && opt->late_rank >= P)
    error = "--late-rank " + std::to_string(opt->late_rank) + " is not a rank below " + std::to_string(P);
  else if (opt && opt->coll == Collective::Allgather && opt->count > INT_MAX / P)
    error = "allgather: COUNT x P must stay below 2^31";
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "smpi_coll: %s\n%s", error.c_str(), usage().c_str());
    MPI_Finalize();
    return 2;
  }
  const Options& o = *opt;
  set_smpi_reduce_cost(o.gamma);

  const double calibrate_start = MPI_Wtime();
  Calibration cal = calibrate(MPI_COMM_WORLD, rank, P, 1);
  g_calibrate_s = MPI_Wtime() - calibrate_start;
  cal.cost.gamma = o.gamma;  // what the executor charges (calibrate() timed a free PMPI_Reduce_local)
  const long whole = o.count * static_cast<long>(sizeof(float)) * (o.coll == Collective::Allgather ? P : 1);
  const double delta = one_transfer(rank, whole);
  const double delay = pattern_delay(o.pattern, delta);

  const std::size_t n = static_cast<std::size_t>(o.count);
  std::vector<float> send(n), recv(o.coll == Collective::Allgather ? n * static_cast<std::size_t>(P) : n);
  std::vector<float> ref(o.check ? recv.size() : 0);
  MPI_Comm priv;
  PMPI_Comm_dup(MPI_COMM_WORLD, &priv);
  int failed = 0;
  for (const Choice& c : o.algos) {
    const auto wall0 = std::chrono::steady_clock::now();  // host time, not simulated
    Totals t;
    for (int iter = 0; iter < o.iters; ++iter)
      iterate(o, c, P, rank, iter, delta, delay, cal.cost, priv, send, recv, ref, t);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (rank == 0) report(o, c, P, delta, delay, cal.cost, t, wall);
    failed |= rank == 0 && (t.mismatches > 0 || t.errors > 0);
  }
  PMPI_Comm_free(&priv);
  int any = 0;
  PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
