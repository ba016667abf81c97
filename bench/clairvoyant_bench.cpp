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
//
// segment_tree_own builds only the root's program (ScheduleParams::rank, as
// the shim does): the rounds are the same, the other ranks' steps are not
// stored.  own_program/<algo>/<P> builds rank P/2's program of every
// algorithm in the catalog at P = 64 ... 4096 (uniform arrivals as above,
// nseg = 8 for the reductions); the counter `bytes` is the memory of the
// built schedule (programs and steps).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
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
void generate(benchmark::State& state, Family family, bool own = false) {
  auto set = instances(family, static_cast<int>(state.range(0)));
  if (own)
    for (ScheduleParams& p : set) p.rank = p.root;
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
void segment_tree_own(benchmark::State& state, Family family) {
  generate<papshim::build_clairvoyant>(state, family, true);
}

std::size_t schedule_bytes(const Schedule& s) {
  std::size_t bytes = sizeof(Schedule) + s.programs.capacity() * sizeof(papshim::RankProgram);
  for (const auto& prog : s.programs) bytes += prog.steps.capacity() * sizeof(papshim::Step);
  return bytes;
}

// One rank's program of `algo` (rank P/2; state.range(1) == 1: every rank's).
void own_program(benchmark::State& state, papshim::Algo algo) {
  const int P = static_cast<int>(state.range(0));
  ScheduleParams p = instances(Family::Uniform, P).front();
  p.nseg = papshim::algo_info(algo).coll == papshim::Collective::Reduce ? 8 : P;
  p.count = 64 * static_cast<std::size_t>(P);
  p.rank = state.range(1) == 1 ? -1 : P / 2;
  std::size_t bytes = 0;
  for (auto _ : state) {
    papshim::BuildResult r = papshim::build_schedule(algo, p);
    if (!r.schedule) {
      state.SkipWithError(r.reason.c_str());
      return;
    }
    bytes = schedule_bytes(*r.schedule);
    benchmark::DoNotOptimize(r.schedule->programs.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

const bool registered = [] {
  for (const papshim::AlgoInfo& i : papshim::all_algorithms()) {
    if (i.build == nullptr) continue;
    const std::string name = std::string("own_program/") + papshim::to_string(i.coll) + "_" + i.name;
    auto* b = benchmark::RegisterBenchmark(name.c_str(), own_program, i.algo)->Unit(benchmark::kMillisecond);
    for (int P : {64, 256, 1024, 4096})
      if (i.algo != papshim::Algo::ClairvoyantLinear || P <= 1024) b->Args({P, 0});
    b = benchmark::RegisterBenchmark((std::string("full_build/") + papshim::to_string(i.coll) + "_" + i.name).c_str(),
                                     own_program, i.algo)
            ->Unit(benchmark::kMillisecond);
    for (int P : {64, 256, 1024}) b->Args({P, 1});
  }
  return true;
}();

BENCHMARK_CAPTURE(linear, uniform, Family::Uniform)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(segment_tree, uniform, Family::Uniform)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(segment_tree_own, uniform, Family::Uniform)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(linear, skewed, Family::Skewed)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(segment_tree, skewed, Family::Skewed)
    ->RangeMultiplier(2)->Range(4, 512)->Unit(benchmark::kMillisecond);

}  // namespace
