#include "predictor/helper_thread.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "config/log.h"
#include "predictor/stall_watch.h"

namespace papshim {

HelperThread& HelperThread::instance() {
  static HelperThread* h = new HelperThread;
  return *h;
}

bool HelperThread::start_watch_only() {
  rounds_ = false;
  return start(SelectPolicy{}, 0);
}

bool HelperThread::start(const SelectPolicy& policy, long max_pause_ns) {
  policy_ = policy;
  max_pause_ns_ = max_pause_ns;
  std::promise<bool> ready;
  auto started = ready.get_future();
  try {
    thread_ = new std::thread([this, &ready] {
      pthread_setname_np(pthread_self(), "papshim-helper");
      ready.set_value(true);
      loop();
    });
  } catch (const std::exception& e) {
    log().warn("helper thread could not start ({}); the predictor runs inline", e.what());
    return false;
  }
  running_ = started.get();
  return running_;
}

void HelperThread::stop() {
  if (!running_.exchange(false)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_->join();
  delete thread_;
  thread_ = nullptr;
  Event e;
  while (queue_.pop(e)) {
  }
}

void HelperThread::forget_after_fork() {
  thread_ = nullptr;  // the parent's thread object: not ours to join or free
  running_ = false;
}

void HelperThread::round_opened(const std::shared_ptr<Predictor>& p, int nprocs, int rank,
                                std::shared_ptr<const NodeMap> nodes) {
  if (!running_ || !rounds_) return;
  {
    std::lock_guard<std::mutex> lock(producer_mu_);
    if (!queue_.push(Event{p, nprocs, rank, std::move(nodes)})) return;  // full: this round is decided inline
  }
  if (sleeping_.load()) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_one();
  }
}

void HelperThread::loop() {
  std::vector<Event> watch;
  RoundResult round;
  long pace_ns = kMinPaceNs;
  int skipped = 0;  // polls left out in a row while the application was inside a collective
  while (!stop_.load()) {
    bool advanced = false;
    StallWatch::instance().check();  // PAPSHIM_STALL_SECONDS (nothing when 0)
    Event e;
    while (queue_.pop(e)) {
      auto same = [&](const Event& w) { return w.pred == e.pred; };
      if (std::find_if(watch.begin(), watch.end(), same) == watch.end()) watch.push_back(std::move(e));
    }
    // Inside a collective the library progresses what is posted, but the
    // next step of a round is posted only by a poll (test()), and peers may
    // wait for it at their next call: so every kMaxSkipped-th poll still runs.
    const bool skip = in_collective_.load(std::memory_order_relaxed) > 0 && skipped < kMaxSkipped;
    skipped = skip ? skipped + 1 : 0;
    for (auto it = watch.begin(); !skip && it != watch.end();) {
      std::uint64_t seq = 0;
      CallShape shape;
      if (it->pred->poll(round, seq, shape, advanced)) {
        Precomputed p;
        p.seq = seq;
        p.shape = shape;
        p.selection = select_ahead(policy_, shape, it->nprocs, it->rank, round.arrival, round.corrections,
                                   it->nodes.get(), round.noise);
        it->pred->store_precomputed(std::move(p));
        precomputed_++;
      }
      it = it->pred->waiting() ? std::next(it) : watch.erase(it);
    }
    if (watch.empty()) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_ = true;
      if (queue_.read_available() == 0 && !stop_.load()) cv_.wait_for(lock, std::chrono::milliseconds(50));
      sleeping_ = false;
    } else {
      pace_ns = advanced || max_pause_ns_ <= 0 ? kMinPaceNs : std::min(2 * pace_ns, max_pause_ns_);
      const timespec pace{0, pace_ns};
      nanosleep(&pace, nullptr);
    }
  }
  timespec cpu{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  cpu_seconds_ = static_cast<double>(cpu.tv_sec) + 1e-9 * static_cast<double>(cpu.tv_nsec);
}

}  // namespace papshim
