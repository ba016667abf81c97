// The helper thread: one per process, started at MPI_Init behind a
// ready/failed handshake when it is wanted (PAPSHIM_HELPER_THREAD; by
// default above 16 ranks, whose rounds need relays: shim/runtime.h
// helper_wanted) and MPI granted MPI_THREAD_MULTIPLE.  Where the predictor
// runs inline, the same thread may run for PAPSHIM_STALL_SECONDS alone
// (start_watch_only): it then watches no rounds and never calls MPI.
//
// Works as follows.  The application thread pushes an event into a
// single-producer lock-free queue whenever it opens a prediction round (at a
// collective's exit) and wakes the helper.  The helper watches the open
// rounds: every 100 microseconds it advances a round's exchange and tests
// whether it has completed (RoundExchange::test(), which posts the steps
// whose data is in; it never blocks inside MPI and never starts a round),
// except while an application thread is inside a collective papshim runs,
// whose MPI calls progress the rounds' messages meanwhile,
// and once it has, computes the decision for that call ahead of time (the
// selection of algorithms/selector.h, select_ahead, from the job-wide
// SelectPolicy it was started with: cost model, simulation, schedule) and leaves it in
// the predictor, so the application thread finds it ready at the entry.
// When ranks outnumber cores, polls that advance nothing double the pause
// (up to a millisecond) until one does.  Each time it wakes it also looks
// for calls stalled longer than PAPSHIM_STALL_SECONDS
// (predictor/stall_watch.h).  With nothing to watch it sleeps on a
// condition variable (at most 50 ms): no spinning, because with many ranks per core a busy
// helper would steal the compute phase it is timing.  stop() sets the flag
// and joins; the loop's longest step is one precompute, so joining is
// bounded.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/lockfree/spsc_queue.hpp>

#include "algorithms/node_map.h"
#include "predictor/predictor.h"

namespace papshim {

class HelperThread {
 public:
  // Starts the thread ("papshim-helper" in top -H, gdb and perf); false
  // (and no thread) when it could not start.  `max_pause_ns` > 0: the cores
  // are oversubscribed, so polls that find nothing new come less and less
  // often, the pause doubling from kMinPaceNs up to max_pause_ns (a round
  // still open at the next call's entry is completed by the application
  // thread there); 0: a poll every kMinPaceNs.
  bool start(const SelectPolicy& policy, long max_pause_ns = 0);
  // Starts the thread for PAPSHIM_STALL_SECONDS alone, where the predictor
  // runs inline: it watches no rounds and never calls MPI, so it needs no
  // particular thread level.
  bool start_watch_only();
  // Joins the thread (bounded).  Safe to call when not started, and again.
  void stop();
  // In a forked child: the thread does not exist there; never join it.
  void forget_after_fork();
  bool running() const { return running_; }

  // Called by application threads; a mutex keeps the queue single-producer
  // when several application threads run collectives.
  // `nodes`: the communicator's hosts (null: none), for the precompute.
  void round_opened(const std::shared_ptr<Predictor>& p, int nprocs, int rank, std::shared_ptr<const NodeMap> nodes);

  // An application thread runs a collective papshim handles: meanwhile
  // its MPI library progresses the open rounds' messages, and the helper
  // leaves the library to it (no test() calls competing for its locks)
  // for up to kMaxSkipped polls in a row, so rounds still move on.
  void collective_begins() { in_collective_.fetch_add(1, std::memory_order_relaxed); }
  void collective_ends() { in_collective_.fetch_sub(1, std::memory_order_relaxed); }

  double cpu_seconds() const { return cpu_seconds_.load(); }
  std::uint64_t precomputed() const { return precomputed_.load(); }

  // Never destroyed: a process that leaves with exit() and no MPI_Finalize
  // must not meet a joinable std::thread at static destruction (stop() runs
  // from an atexit handler instead).
  static HelperThread& instance();

 private:
  struct Event {
    std::shared_ptr<Predictor> pred;
    int nprocs = 0;
    int rank = 0;  // this process's rank in the communicator
    std::shared_ptr<const NodeMap> nodes;
  };
  void loop();

  boost::lockfree::spsc_queue<Event, boost::lockfree::capacity<1024>> queue_;
  std::thread* thread_ = nullptr;  // leaked after fork()
  std::mutex mu_;
  std::mutex producer_mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> running_{false};
  bool rounds_ = true;  // false: the stall watch alone (start_watch_only)
  std::atomic<int> in_collective_{0};
  long max_pause_ns_ = 0;  // 0: no back-off
 public:
  static constexpr long kMinPaceNs = 100000;  // between polls while rounds progress
  // The longest pause of a backing-off helper: on one machine, and when the
  // job spans machines (runtime.cpp, helper_pause_ns).
  static constexpr long kMaxPauseOneHostNs = 1000000;
  static constexpr long kMaxPauseHostsNs = 50000000;

 private:
  static constexpr int kMaxSkipped = 7;        // polls left out in a row while the application is in a collective
  SelectPolicy policy_;  // what every selection reads besides the call and its round
  std::atomic<double> cpu_seconds_{0};
  std::atomic<std::uint64_t> precomputed_{0};
};

}  // namespace papshim
