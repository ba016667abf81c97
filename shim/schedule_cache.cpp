#include "shim/schedule_cache.h"

#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "common/hash.h"

namespace papshim {

namespace {

std::size_t schedule_bytes(const Schedule& s) {
  std::size_t bytes = sizeof(Schedule) + s.programs.capacity() * sizeof(RankProgram);
  for (const auto& p : s.programs) bytes += p.steps.capacity() * sizeof(Step);
  return bytes;
}

class Cache {
 public:
  std::shared_ptr<const Schedule> find(std::uint64_t key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // most recent first
    return it->second->second;
  }
  std::size_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }
  void add(std::uint64_t key, std::shared_ptr<const Schedule> s) {
    const std::size_t bytes = schedule_bytes(*s);
    if (bytes > kScheduleCacheBytes) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.count(key)) return;
    while (bytes_ + bytes > kScheduleCacheBytes && !order_.empty()) {
      bytes_ -= schedule_bytes(*order_.back().second);
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(s));
    index_[key] = order_.begin();
    bytes_ += bytes;
  }

 private:
  using Entry = std::pair<std::uint64_t, std::shared_ptr<const Schedule>>;
  std::mutex mu_;
  std::list<Entry> order_;
  std::unordered_map<std::uint64_t, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: usable until the process ends
  return *c;
}

}  // namespace

std::uint64_t params_hash(Algo algo, const ScheduleParams& p) {
  std::uint64_t h = kFnvOffset;
  const int head[] = {static_cast<int>(algo), p.nprocs, p.root, p.nseg};
  h = fnv1a(h, head, sizeof head);
  h = fnv1a(h, &p.count, sizeof p.count);
  h = fnv1a(h, &p.tau, sizeof p.tau);
  return fnv1a(h, p.arrival.data(), p.arrival.size() * sizeof(double));
}

std::shared_ptr<const Schedule> cached_schedule(Algo algo, const ScheduleParams& p, std::string& why_not) {
  // params_hash() leaves p.rank out on purpose: dispatch's PAPSHIM_CHECK
  // compares it between ranks, and p.rank is the one input that differs.
  // The cache key adds it: an own-program schedule (p.rank >= 0) is not the
  // full one (p.rank == -1).
  const int who = p.rank;
  const std::uint64_t key = fnv1a(params_hash(algo, p), &who, sizeof who);
  if (auto s = cache().find(key)) return s;
  BuildResult r = build_schedule(algo, p);
  if (!r.schedule) {
    why_not = r.reason;
    return nullptr;
  }
  auto s = std::make_shared<const Schedule>(std::move(*r.schedule));
  cache().add(key, s);
  return s;
}

std::size_t cached_schedule_bytes() { return cache().bytes(); }

}  // namespace papshim
