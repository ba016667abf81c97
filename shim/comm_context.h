// Per-communicator state: the private duplicate the algorithms run on, the
// call sequence number, and a job-wide id.
//
// Works as follows: the first intercepted collective on a communicator
// creates its context (PMPI_Comm_dup, then rank 0 broadcasts the id), which
// is safe because every rank of the communicator makes that same call at the
// same point of its collective sequence.  The context is cached as an MPI
// attribute on the user's communicator; the attribute's delete callback frees
// the private duplicate when the user frees the communicator.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "predictor/predictor.h"

namespace papshim {

struct CommContext {
  MPI_Comm user = MPI_COMM_NULL;
  MPI_Comm priv = MPI_COMM_NULL;  // private duplicate (MPI_COMM_NULL for size 1)
  int size = 1;
  int rank = 0;
  std::uint64_t id = 0;           // same on every rank of the communicator
  std::uint64_t seq = 0;          // intercepted calls so far
  int tag_ub = 32767;
  bool freed = false;             // user freed the communicator
  MPI_Comm xchg = MPI_COMM_NULL;  // private duplicate for the predictor's rounds
  int rounds_left = 0;             // predictor rounds stay open this many calls after a large one
  std::shared_ptr<Predictor> pred;  // null: predictor off or size 1 (shared with the helper thread)
};

class CommRegistry {
 public:
  // nullptr for intercommunicators and MPI_COMM_NULL (caller goes native).
  // Collective on `comm` the first time.
  CommContext* get(MPI_Comm comm, int world_rank);
  // Completes every predictor round still open (before the report).
  void finish_predictors();
  // Frees every private communicator (before PMPI_Finalize).
  void release_all();
  // The context of the most recent intercepted call (for papshim_edge).
  CommContext* last_used() const { return last_used_; }
  void set_last_used(CommContext* c) { last_used_ = c; }
  static CommRegistry& instance();

 private:
  std::mutex mu_;
  std::atomic<int> keyval_{MPI_KEYVAL_INVALID};
  std::uint32_t next_local_ = 0;
  std::vector<std::unique_ptr<CommContext>> all_;
  CommContext* last_used_ = nullptr;
};

}  // namespace papshim
