#include "predictor/round_channel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

#include "config/log.h"

namespace papshim {

namespace {
constexpr double kCloseWaitSeconds = 1.0;

std::atomic<std::uint64_t> g_rounds_opened{0};

// Closed rounds still running, with their duplicates.
struct Parked {
  ParkedRounds::Settle settle;
  MPI_Comm xchg = MPI_COMM_NULL;
};
std::mutex& parked_mu() {
  static auto* m = new std::mutex;  // outlives static destruction
  return *m;
}
std::vector<Parked>& parked_list() {
  static auto* v = new std::vector<Parked>;
  return *v;
}
}  // namespace

RoundChannel::RoundChannel(MPI_Comm xchg, int size, int rank, int tag_top)
    : recv_(static_cast<std::size_t>(size), RoundMessage{}), exchange_(xchg, size, rank, kRoundWords, tag_top) {}

std::uint64_t RoundChannel::opened() { return g_rounds_opened.load(std::memory_order_relaxed); }

void RoundChannel::open(std::uint64_t seq) {
  // The previous round was completed at the entry of call seq-1 (every round
  // is); an exchange still running would be a bug, and waiting for it keeps
  // the buffer safe (every rank started it).
  if (exchange_.active()) exchange_.wait();
  seq_ = seq;
  state_ = RoundState::Open;  // also with one rank: the owner builds the vector once it completes
  g_rounds_opened.fetch_add(1, std::memory_order_relaxed);
}

void RoundChannel::publish(const RoundMessage& mine) {
  if (state_ != RoundState::Open) return;
  state_ = RoundState::Running;
  // This round's exchange (see the header for why the rounds of a
  // communicator match up on every rank).  An MPI error in it stops the job
  // (round_exchange.h).  A rank without a value (no history yet, or its
  // part started by close() or settle()) sends NaN: an arrival left NaN
  // makes the round's vector invalid, and its call runs without one.
  exchange_.start(&mine, recv_.data());
}

bool RoundChannel::wait() {
  if (state_ == RoundState::Idle || state_ == RoundState::Complete) return false;
  exchange_.wait();
  state_ = RoundState::Complete;
  return true;
}

bool RoundChannel::test(bool& advanced) {
  // Only a started exchange is advanced: starting it (publishing this
  // rank's value) is the application thread's.
  if (!started()) return false;
  const int step = exchange_.step();
  const bool done = exchange_.test();
  advanced = advanced || done || exchange_.step() != step;
  if (!done) return false;
  const bool parked = state_ == RoundState::Parked;
  state_ = RoundState::Complete;
  return !parked;
}

bool RoundChannel::close() {
  if (state_ != RoundState::Idle) {
    // Peers must never wait for this rank: the owner started its part
    // first.  In SMA mode every peer started its part at its exit of the
    // last call, so the wait below ends once they progress it; it is
    // bounded anyway (see the header), and a round still running then is
    // parked by the caller.
    const double deadline = PMPI_Wtime() + kCloseWaitSeconds;
    // Yielding: on a shared core the peers this wait needs may be the
    // very processes a busy spin would keep off it.
    while (!exchange_.test() && PMPI_Wtime() < deadline) std::this_thread::yield();
    if (exchange_.active()) {
      state_ = RoundState::Parked;
      return false;
    }
  }
  state_ = RoundState::Idle;
  return true;
}

bool RoundChannel::settle() {
  if (!exchange_.test()) return false;
  state_ = RoundState::Idle;
  return true;
}

void ParkedRounds::park(Settle settle, MPI_Comm xchg) {
  std::lock_guard<std::mutex> lock(parked_mu());
  parked_list().push_back(Parked{std::move(settle), xchg});
  log().debug("a communicator was freed with its prediction round still running: parked ({} parked)",
              parked_list().size());
}

void ParkedRounds::test() {
  std::vector<Parked> done;
  {
    std::lock_guard<std::mutex> lock(parked_mu());
    auto& list = parked_list();
    for (auto it = list.begin(); it != list.end();) {
      if (it->settle()) {
        done.push_back(std::move(*it));
        it = list.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Like every private duplicate, freed without synchronising (a local
  // operation in the MPI libraries papshim supports).
  for (auto& d : done)
    if (d.xchg != MPI_COMM_NULL) PMPI_Comm_free(&d.xchg);
}

void ParkedRounds::finish_all(const std::vector<Settle>& live) {
  std::vector<Parked> parked;
  {
    std::lock_guard<std::mutex> lock(parked_mu());
    parked.swap(parked_list());
  }
  // Every rank started each of these rounds (at its close(), its
  // settle() or its call).  A rank advances only the exchanges it
  // tests, and ranks may hold them in different orders, so all are advanced
  // together until all are complete: waiting for one alone could wait for a
  // peer that waits for another.
  std::vector<const Settle*> open;
  for (const auto& s : live) open.push_back(&s);
  for (const auto& d : parked) open.push_back(&d.settle);
  while (!open.empty()) {
    open.erase(std::remove_if(open.begin(), open.end(), [](const Settle* s) { return (*s)(); }), open.end());
    if (!open.empty()) std::this_thread::yield();
  }
  for (auto& d : parked)
    if (d.xchg != MPI_COMM_NULL) PMPI_Comm_free(&d.xchg);
}

std::size_t ParkedRounds::count() {
  std::lock_guard<std::mutex> lock(parked_mu());
  return parked_list().size();
}

}  // namespace papshim
