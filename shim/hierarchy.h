// Several ranks per host: the arrival-aware allreduce and reduce run
// between hosts, not between ranks.
//
// Works as follows.  When a communicator spans several hosts and some host
// carries several of its ranks (NodeMap::hierarchical), a call runs in
// three phases:
//   1. within each host, the ranks reduce onto the host's leader (its lowest
//      rank) with the MPI library's own PMPI_Reduce on the host's
//      communicator (shared memory);
//   2. the leaders run the arrival-aware schedule among themselves, on the
//      leaders' communicator, with each host's predicted arrival being its
//      latest rank's (NodeMap::latest): one rank per host on the network,
//      as in Open MPI's han and MPICH's multi-leader collectives;
//   3. allreduce: each leader broadcasts the result within its host
//      (PMPI_Bcast); reduce: the leader of the root's host hands the result
//      to the root when the root is not the leader itself.
// A host's ranks wait for its latest rank in phase 1 anyway, so nothing is
// lost by treating the host as arriving then.  The decision (algorithm and
// schedule between hosts) is a pure function of inputs every rank holds,
// as for the flat collectives, so every rank takes the same phases.
//
// The hosts come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on the
// world at MPI_Init (or PAPSHIM_TEST_RANKS_PER_NODE, which makes every K
// consecutive world ranks one emulated host); a communicator gathers its
// ranks' host keys once, when its private duplicate is made, and creates
// the host and leader communicators only when the hierarchy applies.
#pragma once

#include <mpi.h>

#include <memory>

#include "algorithms/call_args.h"
#include "algorithms/node_map.h"
#include "algorithms/schedule.h"

namespace papshim {

struct Hierarchy {
  MPI_Comm node = MPI_COMM_NULL;     // this rank's host
  MPI_Comm leaders = MPI_COMM_NULL;  // one rank per host; MPI_COMM_NULL where this rank is no leader
  std::shared_ptr<const NodeMap> map;
  ~Hierarchy();
};

// Collective over `priv` (the private duplicate, `rank` of `size`): nullptr
// where the hierarchy does not apply or a communicator could not be made
// (the same answer on every rank).  `host_key`: this rank's host (equal
// keys, same host).
std::unique_ptr<Hierarchy> make_hierarchy(MPI_Comm priv, int rank, int host_key);

// Runs allreduce or reduce `a` (this rank: `rank` of the communicator) in
// the three phases, with `between_hosts` the leaders' schedule (this
// leader's program; unused elsewhere).  Returns the first MPI error met;
// every phase runs whatever failed before, so no peer is left waiting.
int run_hierarchical(const CallArgs& a, int rank, const Hierarchy& h, const Schedule& between_hosts);

}  // namespace papshim
