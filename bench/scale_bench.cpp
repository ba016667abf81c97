// Auto mode's cost at scale: for P in 8 .. 4096 and each collective, the
// decision time (select_algorithm: closed forms for every candidate, then
// the pick's schedule for this one rank), the time and bytes of this rank's
// program of the pick alone, and the prediction round's messages per rank.
//
//   scale_bench [--json FILE] [--max-p N] [--simulate-max-p N]
//
// Inputs: 1 Mi floats (allreduce and reduce: the vector; allgather: the
// whole gathered vector, 1 Mi / P floats per rank), arrivals uniform in
// [0, 50 ms) (seeded), the default cost figures, rank 0's program.  When
// auto picks native (no schedule), the program columns are those of the
// best arrival-aware candidate, so they still show what a schedule costs.
// The prediction round is becoming an MPI_Iallgather of one record per
// rank: recursive doubling / Bruck-style, ceil(log2 P) messages per rank
// (not measured: the count of the algorithm).
// --simulate-max-p N also times the simulation-based decision (the old
// selector) up to N ranks (default 256; it is O(P^2) and more).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/selector.h"
#include "predictor/round_exchange.h"

using namespace papshim;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median of `reps` runs of f, in milliseconds; fewer runs when one is slow.
template <class F>
double time_ms(F&& f) {
  std::vector<double> v;
  const double start = now();
  for (int i = 0; i < 15; ++i) {
    const double t0 = now();
    f();
    v.push_back(1e3 * (now() - t0));
    if (now() - start > 2.0 && v.size() >= 1) break;
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::size_t program_bytes(const Schedule& s, int rank) {
  return s.programs[static_cast<std::size_t>(rank)].steps.size() * sizeof(Step) + sizeof(Schedule) +
         s.programs.size() * sizeof(RankProgram);
}

}  // namespace

int main(int argc, char** argv) {
  const char* json = nullptr;
  int max_p = 4096, sim_max_p = 256;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--max-p") && i + 1 < argc) max_p = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--simulate-max-p") && i + 1 < argc) sim_max_p = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--max-p N] [--simulate-max-p N]\n", argv[0]);
      return 2;
    }
  }
  std::FILE* out = nullptr;
  if (json && !(out = std::fopen(json, "w"))) {
    std::perror(json);
    return 1;
  }
  std::printf("%6s %-10s %-16s %12s %12s %14s %10s %14s\n", "P", "collective", "pick (program)", "decision_ms",
              "program_ms", "program_bytes", "round_msgs", "simulated_ms");
  constexpr std::size_t kFloats = 1u << 20;
  const int rank = 0;
  for (int P : {8, 64, 256, 1024, 4096}) {
    if (P > max_p) break;
    std::mt19937 rng(static_cast<unsigned>(P));
    std::uniform_real_distribution<double> u(0.0, 0.05);
    std::vector<double> arrival(static_cast<std::size_t>(P));
    for (double& a : arrival) a = u(rng);
    for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather}) {
      SelectInput in;
      in.coll = c;
      in.nprocs = P;
      in.count = c == Collective::Allgather ? std::max<std::size_t>(1, kFloats / static_cast<std::size_t>(P)) : kFloats;
      in.elem_size = 4;
      in.arrival = arrival;
      in.rank = rank;
      Selection sel;
      const double decision = time_ms([&] { sel = select_algorithm(in); });
      // The program: the pick's, or the best arrival-aware candidate's.
      Algo prog = sel.pick;
      if (prog == Algo::Native) {
        double best = 1e300;
        for (const Candidate& k : sel.table)
          if (!k.native_model && k.predicted < best) best = k.predicted, prog = k.algo;
      }
      double program = 0;
      std::size_t bytes = 0;
      if (prog != Algo::Native) {
        ScheduleParams p = schedule_params_for(prog, in);
        p.rank = rank;
        BuildResult b;
        program = time_ms([&] { b = build_schedule(prog, p); });
        if (b.schedule) bytes = program_bytes(*b.schedule, rank);
      }
      double simulated = -1;
      if (P <= sim_max_p) {
        SelectInput s = in;
        s.simulate = true;
        simulated = time_ms([&] { (void)select_algorithm(s); });
      }
      const int round = RoundExchange::steps(P);  // one message per step and rank
      const std::string name = std::string(algo_info(sel.pick).name) + "(" + algo_info(prog).name + ")";
      std::printf("%6d %-10s %-16s %12.3f %12.3f %14zu %10d %14s\n", P, to_string(c), name.c_str(), decision, program,
                  bytes, round, simulated < 0 ? "-" : std::to_string(simulated).c_str());
      std::fflush(stdout);
      if (out)
        std::fprintf(out,
                     "{\"P\": %d, \"collective\": \"%s\", \"pick\": \"%s\", \"program_algo\": \"%s\", "
                     "\"decision_ms\": %.6f, \"program_ms\": %.6f, \"program_bytes\": %zu, "
                     "\"round_messages_per_rank\": %d, \"simulated_decision_ms\": %s}\n",
                     P, to_string(c), algo_info(sel.pick).name, algo_info(prog).name, decision, program, bytes, round,
                     simulated < 0 ? "null" : std::to_string(simulated).c_str());
    }
  }
  if (out) std::fclose(out);
  return 0;
}
