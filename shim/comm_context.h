// Per-communicator state: the private duplicate the algorithms and the
// predictor's rounds run on, the call sequence number, and the ids.
//
// Works as follows.  The first intercepted collective on a communicator
// creates its context with local calls only (size, rank, an attribute on the
// user's communicator), so no lock is ever held across an MPI call and
// threads on other communicators are never waited for.  The private
// duplicate, a collective and a scarce context id, is made only when a call
// needs it (ensure_private: a schedule is to run, or auto mode starts
// predicting), at the same call on every rank because that decision reads
// only inputs identical on every rank.  When the MPI library refuses a
// duplicate (context ids exhausted), the communicator's calls run native
// from then on, counted in the report.  The attribute's delete callback
// frees the duplicate, the predictor and the context itself when the user
// frees the communicator, and retires its report rows.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "predictor/predictor.h"
#include "shim/callsite.h"
#include "shim/hierarchy.h"
#include "shim/stats.h"

namespace papshim {

struct CommContext {
  MPI_Comm user = MPI_COMM_NULL;
  MPI_Comm priv = MPI_COMM_NULL;  // private duplicate, once ensure_private() made it
  bool priv_refused = false;      // the MPI library refused one: the calls run native from then on
  int size = 1;
  int rank = 0;
  std::uint64_t local_id = 0;     // unique on this rank
  std::uint64_t id = 0;           // same on every rank once priv exists; 0 before
  bool has_private() const { return priv != MPI_COMM_NULL; }
  std::uint64_t seq = 0;          // intercepted calls so far
  int tag_ub = 32767 - kRoundTags;  // highest tag a schedule may use on priv (below the rounds')
  std::shared_ptr<Predictor> pred;  // null: predictor off, size 1 or no priv (shared with the helper)
  std::unique_ptr<Hierarchy> hier;  // several ranks per host (shim/hierarchy.h); made with priv

  // The report rows of the call sites this communicator was called from
  // most recently, so a call passed through finds its row without a lock.
  // The rows live until the context is released.
  struct SiteSlot {
    CallSite site;
    Collective op = Collective::Allreduce;
    Stats::Row* row = nullptr;
  };
  std::array<SiteSlot, 4> slots{};
  unsigned next_slot = 0;
  Stats::Row& row_of(Collective op, const CallSite& site) {
    for (SiteSlot& s : slots)
      if (s.row && s.op == op && s.site == site) return *s.row;
    SiteSlot& s = slots[next_slot++ % slots.size()];
    s = SiteSlot{site, op, Stats::instance().row_for(SiteKey{op, local_id, size, site})};
    return *s.row;
  }
};

class CommRegistry {
 public:
  // nullptr for intercommunicators, MPI_COMM_NULL and invalid handles
  // (caller goes native).  Local: makes no collective call.  Each thread
  // remembers the last communicator it asked for.
  CommContext* get(MPI_Comm comm);
  // Makes the private duplicate (collective on ctx.user; call it at the same
  // call on every rank).  False when there is none (refused now or before).
  bool ensure_private(CommContext& ctx);
  // Completes every predictor round still open (before the report).
  void finish_predictors();
  // Frees every context and private communicator (before PMPI_Finalize).
  void release_all();
  // The predictor of the most recent intercepted call (for papshim_edge).
  std::shared_ptr<Predictor> last_predictor();
  void set_last_used(CommContext* c) {
    if (last_used_.load(std::memory_order_relaxed) != c) remember_last(c);
  }
  // Communicators whose duplicate the library refused (for the report).
  std::uint64_t refused() const { return refused_.load(); }
  static CommRegistry& instance();

  // The attribute's delete callback (user frees a communicator).
  void on_delete(CommContext* ctx);

 private:
  CommContext* lookup(MPI_Comm comm);  // get() without the thread's cache
  void remember_last(CommContext* c);

  std::mutex mu_;  // guards live_, last_pred_, keyval creation; never held across MPI calls
  std::atomic<int> keyval_{MPI_KEYVAL_INVALID};
  std::uint32_t next_local_ = 0;
  std::unordered_set<CommContext*> live_;
  std::atomic<CommContext*> last_used_{nullptr};
  std::shared_ptr<Predictor> last_pred_;
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<long> made_{0};  // private duplicates made so far
  // Bumped whenever a context goes, so no thread's cached handle -> context
  // pair (get) outlives it, even when the MPI library reuses the handle.
  std::atomic<std::uint64_t> generation_{1};
};

}  // namespace papshim
