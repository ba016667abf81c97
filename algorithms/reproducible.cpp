#include "algorithms/reproducible.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace papshim {

bool reproducible_applies(const SelectInput& in) {
  return in.reproducible && in.coll != Collective::Allgather;
}

void make_timing_free(ScheduleParams& p, const SelectInput& in) {
  p.arrival.assign(static_cast<std::size_t>(p.nprocs > 0 ? p.nprocs : 0), 0.0);
  const CostFigures fixed;  // constants, not the measured figures
  const double seg_bytes =
      static_cast<double>(in.count) * static_cast<double>(in.elem_size) / static_cast<double>(p.nseg > 0 ? p.nseg : 1);
  p.tau = fixed.alpha + (fixed.beta + fixed.gamma) * seg_bytes;
}

Algo reproducible_pick(const SelectInput& in) {
  if (in.nprocs < 2 || in.count == 0 || !in.commutative) return Algo::Native;
  switch (in.coll) {
    case Collective::Allreduce: return in.nprocs <= kDirectMaxProcs ? Algo::DirectAllreduce : Algo::RingAllreduce;
    case Collective::Reduce: return Algo::Binomial;
    case Collective::Allgather: break;
  }
  return Algo::Native;
}

Selection reproducible_selection(const SelectInput& in) {
  Selection s;
  s.pick = reproducible_pick(in);
  if (s.pick == Algo::Native) {
    s.why = "reproducible: native for this call";
    return s;
  }
  s.params = schedule_params_for(s.pick, in);  // timing-free (reproducible_applies)
  // A few recent schedules, keyed by everything that shapes them.
  using Key = std::tuple<int, int, int, std::size_t, int>;
  static std::mutex mu;
  static std::map<Key, std::shared_ptr<const Schedule>> cache;
  const Key key{static_cast<int>(s.pick), s.params.nprocs, s.params.root, s.params.count, s.params.nseg};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) s.schedule = it->second;
  }
  if (!s.schedule) {
    BuildResult b = build_schedule(s.pick, s.params);
    if (!b.schedule) {
      s.pick = Algo::Native;
      s.why = "reproducible: native (" + b.reason + ")";
      return s;
    }
    s.schedule = std::make_shared<const Schedule>(std::move(*b.schedule));
    std::lock_guard<std::mutex> lock(mu);
    if (cache.size() >= 8) cache.clear();
    cache.emplace(key, s.schedule);
  }
  s.why = std::string("reproducible: ") + algo_info(s.pick).name + " for every call of this shape";
  return s;
}

}  // namespace papshim
