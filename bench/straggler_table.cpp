// Predicted mean elapsed time of the allreduce schedules with one rank late,
// from the simulator and from the closed forms, against the lower bound.
//
//   straggler_table [P] [count] [alpha_us] [beta_ns_per_byte] [gamma_ns_per_byte] [delays_ms...]
//
// Defaults: P = 8, 1 Mi floats, alpha 50 us, beta 8 ns/B (1 Gbit/s), gamma
// 0.3 ns/B, rank 3 late by 0, 10 and 50 ms.  Lower bound: (P-1)/P D + one
// transfer of the vector; "native" is the cheaper of ring and Rabenseifner
// (the selector's model of the MPI library); absorbed = (native - alg) /
// (native - bound).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/cost_model.h"
#include "algorithms/selector.h"
#include "algorithms/simulator.h"

using namespace papshim;

namespace {

double simulated(Algo a, const SelectInput& in) {
  const ScheduleParams p = schedule_params_for(a, in);
  const BuildResult b = build_schedule(a, p);
  if (!b.schedule) return -1;
  const SimResult r = simulate(*b.schedule, p.arrival, SimCost::from_figures(in.cost, in.elem_size, in.count));
  return r.ok ? r.mean_elapsed : -1;
}

double closed(Algo a, const SelectInput& in) {
  const ScheduleParams p = schedule_params_for(a, in);
  const auto v = closed_form_mean_elapsed(a, in.coll, p, in.elem_size, in.cost, summarize_arrivals(p.arrival));
  return v ? *v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  SelectInput in;
  in.coll = Collective::Allreduce;
  in.nprocs = argc > 1 ? std::atoi(argv[1]) : 8;
  in.count = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : (1u << 20);
  in.elem_size = 4;
  in.cost.alpha = (argc > 3 ? std::atof(argv[3]) : 50.0) * 1e-6;
  in.cost.beta = (argc > 4 ? std::atof(argv[4]) : 8.0) * 1e-9;
  in.cost.gamma = (argc > 5 ? std::atof(argv[5]) : 0.3) * 1e-9;
  std::vector<double> delays;
  for (int i = 6; i < argc; ++i) delays.push_back(std::atof(argv[i]) * 1e-3);
  if (delays.empty()) delays = {0.0, 0.010, 0.050};
  const int P = in.nprocs;
  const double transfer = in.cost.alpha + in.cost.beta * static_cast<double>(in.count * in.elem_size);
  const std::vector<Algo> algos = {Algo::RingAllreduce, Algo::Rabenseifner, Algo::DirectAllreduce,
                                   Algo::Prr, Algo::Slt, Algo::Straggler};
  std::printf("P=%d count=%zu alpha=%.1fus beta=%.2fns/B gamma=%.2fns/B; ms, simulated (closed form)\n", P,
              in.count, in.cost.alpha * 1e6, in.cost.beta * 1e9, in.cost.gamma * 1e9);
  std::printf("| delay ms | bound |");
  for (Algo a : algos) std::printf(" %s |", algo_info(a).name);
  std::printf(" native | absorbed: prr, slt, straggler |\n");
  for (double D : delays) {
    in.arrival.assign(static_cast<std::size_t>(P), 0.0);
    in.arrival[static_cast<std::size_t>(std::min(3, P - 1))] = D;
    const double bound = (P - 1.0) / P * D + transfer;
    std::printf("| %g | %.2f |", D * 1e3, bound * 1e3);
    std::vector<double> sim;
    for (Algo a : algos) {
      sim.push_back(simulated(a, in));
      std::printf(" %.2f (%.2f) |", sim.back() * 1e3, closed(a, in) * 1e3);
    }
    const double native = std::min(sim[0], sim[1]);
    auto absorbed = [&](double t) { return 100.0 * (native - t) / (native - bound); };
    std::printf(" %.2f | %.0f%%, %.0f%%, %.0f%% |\n", native * 1e3, absorbed(sim[3]), absorbed(sim[4]),
                absorbed(sim[5]));
  }
  return 0;
}
