// Clairvoyant reduce: schedule generation time, plain linear search against
// the segment-tree version, for P = N = 4 ... 512 (seed section 5.7, table 1).
//
// Instances as in the seed:
//   uniform  arrival times uniform in [0, P + 0.1], a random root;
//   skewed   every process arrives at 0 except process P-1, at N; root 0.
// In both the round length d is uniform in [0.001, 1].  Each benchmark
// iteration builds the schedules of kInstances fixed instances (the same for
// both versions); the counter `per_schedule` is the CPU time of one
// schedule.  Compare the two versions within one run: the machine is shared.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "algorithms/clairvoyant.h"

namespace {

using papshim::Schedule;
using papshim::ScheduleParams;

enum class Family { Uniform, Skewed };
constexpr int kInstances = 10;

std::vector<ScheduleParams> instances(Family family, int P) {
  std::mt19937_64 rng(static_cast<unsigned>(P) * 2 + (family == Family::Skewed ? 1 : 0));
  std::uniform_real_distribution<double> round_length(0.001, 1.0);
  std::vector<ScheduleParams> out(kInstances);
  for (ScheduleParams& p : out) {
    p.nprocs = P;
    p.nseg = P;
    p.count = static_cast<std::size_t>(P);
    p.tau = round_length(rng);
    p.arrival.assign(static_cast<std::size_t>(P), 0.0);
    if (family == Family::Uniform) {
      std::uniform_real_distribution<double> when(0.0, P + 0.1);
      for (double& a : p.arrival) a = when(rng);
      p.root = std::uniform_int_distribution<int>(0, P - 1)(rng);
    } else {
      p.arrival.back() = P;  // = N
      p.root = 0;
    }
  }
  return out;
}

template <Schedule (*Build)(const ScheduleParams&)>
void generate(benchmark::State& state, Family family) {
  const auto set = instances(family, static_cast<int>(state.range(0)));
  for (auto _ : state)
    for (const ScheduleParams& p : set) {
      Schedule s = Build(p);
      benchmark::DoNotOptimize(s.programs.data());
    }
  state.counters["per_schedule"] = benchmark::Counter(
      kInstances, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void segment_tree(benchmark::State& state, Family family) {
  generate<papshim::build_clairvoyant>(state, family);
}
void linear(benchmark::State& state, Family family) {
  generate<papshim::build_clairvoyant_linear>(state, family);
}

BENCHMARK_CAPTURE(linear, uniform, Family::Uniform)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(segment_tree, uniform, Family::Uniform)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(linear, skewed, Family::Skewed)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(segment_tree, skewed, Family::Skewed)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);

}  // namespace
