// The closed-form cost model against the simulator (the oracle), and the
// selector's closed-form choice against its simulation-based choice.
//
// Tolerance: a closed form is "within" when |closed - simulated| <= 15% of
// the simulated mean elapsed time or <= 4 alpha.  Per algorithm at least 80%
// of the random instances must be within, and none may be off by more than
// 50%.  The selector's two choices may differ only where the simulated costs
// of the two picks are within 15% (plus the selector's margin against
// native, which scales with native's cost).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "algorithms/clairvoyant.h"
#include "algorithms/cost_model.h"
#include "algorithms/selector.h"
#include "algorithms/simulator.h"

namespace papshim {
namespace {

constexpr double kTol = 0.15;

struct Instance {
  SelectInput in;
  int pattern = 0;  // 0 equal, 1 one late, 2 spread
};

Instance draw(std::mt19937& rng, int i) {
  auto U = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  Instance x;
  SelectInput& in = x.in;
  in.coll = static_cast<Collective>(i % 3);
  in.nprocs = 2 + static_cast<int>(std::pow(U(0, 1), 2) * 254);  // 2..256, small P more often
  const int P = in.nprocs;
  in.count = static_cast<std::size_t>(std::exp(U(std::log(4096.0), std::log(4194304.0))));
  if (in.coll == Collective::Allgather) in.count = std::max<std::size_t>(1, in.count / static_cast<std::size_t>(P));
  in.root = static_cast<int>(rng() % static_cast<unsigned>(P));
  in.cost.alpha = std::exp(U(std::log(1e-6), std::log(5e-5)));
  in.cost.beta = std::exp(U(std::log(5e-11), std::log(1e-9)));
  in.cost.gamma = std::exp(U(std::log(5e-11), std::log(5e-10)));
  in.tree_segsize = (i / 3) % 2 ? 32768 : 0;
  const double bytes = static_cast<double>(in.count) * 4.0 * (in.coll == Collective::Allgather ? P : 1);
  const double msg = in.cost.alpha + in.cost.beta * bytes;
  in.arrival.assign(static_cast<std::size_t>(P), 0.0);
  x.pattern = (i / 6) % 3;
  if (x.pattern == 1) in.arrival[rng() % static_cast<unsigned>(P)] = U(0, 20) * msg;
  if (x.pattern == 2) {
    const double D = U(0, 20) * msg;
    for (auto& t : in.arrival) t = U(0, D);
  }
  return x;
}

// The algorithms of collective `c` that have a closed form, from the catalog.
std::vector<Algo> regular(Collective c) {
  std::vector<Algo> out;
  for (const AlgoInfo* a : algorithms_for(c))
    if (a->closed_form != nullptr) out.push_back(a->algo);
  return out;
}

TEST(CostModel, ClosedFormsMatchTheSimulator) {
  std::mt19937 rng(20261122);
  struct Tally {
    int n = 0, within = 0;
    double worst = 0;
  };
  std::map<int, Tally> tally;
  for (int i = 0; i < 90; ++i) {
    const Instance x = draw(rng, i);
    const SelectInput& in = x.in;
    const ArrivalSummary sum = summarize_arrivals(schedule_params_for(Algo::RingAllreduce, in).arrival);
    for (Algo a : regular(in.coll)) {
      const ScheduleParams p = schedule_params_for(a, in);
      const auto cf = closed_form_mean_elapsed(a, in.coll, p, in.elem_size, in.cost, sum);
      const SizeCheck size_check = algo_info(a).size_check;
      if (size_check != nullptr && size_check(in.nprocs) != nullptr) {
        EXPECT_FALSE(cf.has_value());
        continue;
      }
      ASSERT_TRUE(cf.has_value()) << algo_info(a).name;
      const BuildResult b = build_schedule(a, p);
      ASSERT_TRUE(b.schedule) << b.reason;
      const SimResult r = simulate(*b.schedule, p.arrival, SimCost::from_figures(in.cost, in.elem_size, in.count));
      ASSERT_TRUE(r.ok) << r.error;
      const double err = std::fabs(*cf - r.mean_elapsed);
      Tally& t = tally[static_cast<int>(a)];
      ++t.n;
      const bool ok = err <= kTol * r.mean_elapsed || err <= 4 * in.cost.alpha;
      t.within += ok ? 1 : 0;
      if (!ok) t.worst = std::max(t.worst, err / r.mean_elapsed);
      EXPECT_LE(err, 0.5 * r.mean_elapsed + 4 * in.cost.alpha)
          << algo_info(a).name << " P " << in.nprocs << " pattern " << x.pattern << " count " << in.count
          << ": closed form " << *cf << " simulated " << r.mean_elapsed;
    }
  }
  for (const auto& [a, t] : tally) {
    const AlgoInfo& info = algo_info(static_cast<Algo>(a));
    std::printf("  %-9s %-20s %3d instances, %3d within %.0f%% or 4 alpha, worst %.0f%%\n", to_string(info.coll),
                info.name, t.n, t.within, 100 * kTol, 100 * t.worst);
    EXPECT_GE(t.within, (t.n * 8 + 9) / 10) << algo_info(static_cast<Algo>(a)).name;
  }
}

TEST(CostModel, SelectionMatchesSimulationBeyondTheTolerance) {
  std::mt19937 rng(777);
  int same = 0, close = 0, n = 0;
  for (int i = 0; i < 90; ++i) {
    Instance x = draw(rng, i);
    x.in.simulate = true;
    const Selection by_sim = select_algorithm(x.in);
    x.in.simulate = false;
    const Selection by_cf = select_algorithm(x.in);
    ++n;
    if (by_sim.pick == by_cf.pick) {
      ++same;
      continue;
    }
    // Simulated cost of each pick (native: the cheapest model of native).
    auto sim_cost = [&](Algo a) {
      double best = INFINITY;
      for (const Candidate& c : by_sim.table)
        if ((a == Algo::Native && c.native_model) || (!c.native_model && c.algo == a)) best = std::min(best, c.predicted);
      return best;
    };
    const double cs = sim_cost(by_sim.pick), cc = sim_cost(by_cf.pick);
    const double native = sim_cost(Algo::Native);
    const double message = by_sim.message_time;
    const double allowance = kTol * std::max(cs, cc) + x.in.margin * native + 0.25 * message + 2 * x.in.cost.alpha;
    EXPECT_LE(std::fabs(cc - cs), allowance)
        << "P " << x.in.nprocs << " " << to_string(x.in.coll) << " pattern " << x.pattern << ": simulation picks "
        << algo_info(by_sim.pick).name << " (" << cs << " s), closed forms " << algo_info(by_cf.pick).name << " ("
        << cc << " s)\n"
        << format_selection(by_sim) << "\n"
        << format_selection(by_cf);
    ++close;
  }
  std::printf("  same pick %d of %d; %d differ within the tolerance\n", same, n, close);
}

TEST(CostModel, PickHoldsOnlyThisRanksProgramWhenTheGeneratorsSupportIt) {
  SelectInput in;
  in.coll = Collective::Allreduce;
  in.nprocs = 16;
  in.count = 1 << 20;
  in.arrival.assign(16, 0.0);
  in.arrival[5] = 0.05;
  in.rank = 3;
  const Selection s = select_algorithm(in);
  ASSERT_NE(s.pick, Algo::Native) << s.why;
  ASSERT_TRUE(s.schedule);
  EXPECT_EQ(s.params.rank, 3);
  ASSERT_EQ(s.schedule->programs.size(), 16u);
  EXPECT_FALSE(s.schedule->programs[3].steps.empty());
  for (const Candidate& c : s.table) EXPECT_FALSE(c.simulated) << algo_info(c.algo).name;
}

TEST(CostModel, ClairvoyantOnlyUpToTheSimulationLimit) {
  for (int P : {kClairvoyantSimMaxP, kClairvoyantSimMaxP + 1}) {
    SelectInput in;
    in.coll = Collective::Reduce;
    in.nprocs = P;
    in.count = 1 << 16;
    in.arrival.assign(static_cast<std::size_t>(P), 0.0);
    in.arrival[1] = 0.05;
    const Selection s = select_algorithm(in);
    const bool has = std::any_of(s.table.begin(), s.table.end(),
                                 [](const Candidate& c) { return c.algo == Algo::Clairvoyant; });
    EXPECT_EQ(has, P <= kClairvoyantSimMaxP) << P;
  }
}

}  // namespace
}  // namespace papshim
