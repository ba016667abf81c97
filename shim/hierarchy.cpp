#include "shim/hierarchy.h"

#include <new>
#include <vector>

#include "algorithms/executor.h"
#include "algorithms/executor_buffers.h"

namespace papshim {

Hierarchy::~Hierarchy() {
  if (leaders != MPI_COMM_NULL) PMPI_Comm_free(&leaders);
  if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
}

std::unique_ptr<Hierarchy> make_hierarchy(MPI_Comm priv, int rank, int host_key) {
  int size = 1;
  PMPI_Comm_size(priv, &size);
  std::vector<int> keys(static_cast<std::size_t>(size));
  if (PMPI_Allgather(&host_key, 1, MPI_INT, keys.data(), 1, MPI_INT, priv) != MPI_SUCCESS) return nullptr;
  auto map = std::make_shared<NodeMap>(NodeMap::from_keys(keys, rank));
  if (!map->hierarchical()) return nullptr;
  auto h = std::make_unique<Hierarchy>();
  const bool leader = map->rank_in_node(rank) == 0;
  int ok = PMPI_Comm_split(priv, map->node_index, rank, &h->node) == MPI_SUCCESS &&
           PMPI_Comm_split(priv, leader ? 0 : MPI_UNDEFINED, rank, &h->leaders) == MPI_SUCCESS;
  // Every rank must agree: a communicator refused anywhere means flat calls
  // everywhere.
  int all_ok = 0;
  if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, priv) != MPI_SUCCESS || !all_ok) return nullptr;
  for (MPI_Comm c : {h->node, h->leaders})
    if (c != MPI_COMM_NULL) PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  h->map = std::move(map);
  return h;
}

namespace {

// Where a leader that is not the root accumulates its host's contribution:
// `count` elements of `type`, laid out as a receive buffer (the executor's
// layout rules, executor_buffers.h).
struct LeaderBuffer {
  std::vector<char> bytes;
  void* at = nullptr;
  LeaderBuffer(int count, MPI_Datatype type) {
    const detail::TypeInfo ti = detail::type_info(type);
    bytes.resize(detail::bytes_for(ti, count > 0 ? static_cast<std::size_t>(count) : 0) + 1);
    at = bytes.data() - ti.true_lb;
  }
};

}  // namespace

int run_hierarchical(const CallArgs& a, int rank, const Hierarchy& h, const Schedule& between_hosts) {
  const NodeMap& m = *h.map;
  const bool allreduce = a.coll == Collective::Allreduce;
  const bool leader = h.leaders != MPI_COMM_NULL;
  const int root_node = allreduce ? 0 : m.node_of[static_cast<std::size_t>(a.root)];
  const bool root_host_leader = leader && m.node_index == root_node;
  // This rank's contribution, and where its leader accumulates the host's.
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  std::unique_ptr<LeaderBuffer> scratch;
  void* acc = a.recvbuf;
  if (!allreduce && leader && rank != a.root) {
    try {
      scratch = std::make_unique<LeaderBuffer>(a.count, a.type);
    } catch (const std::bad_alloc&) {
      return kExecNoMemory;  // before any message: the caller stops the job (dispatch.cpp says why)
    }
    acc = scratch->at;
  }
  int first_error = MPI_SUCCESS;
  auto note = [&first_error](int rc) {
    if (first_error == MPI_SUCCESS && rc != MPI_SUCCESS) first_error = rc;
  };
  // 1. Within the host, onto the leader (node rank 0).
  if (leader)
    note(PMPI_Reduce(mine == acc ? MPI_IN_PLACE : mine, acc, a.count, a.type, a.op, 0, h.node));
  else
    note(PMPI_Reduce(mine, nullptr, a.count, a.type, a.op, 0, h.node));
  // 2. Between hosts: every leader's data is now in `acc`.
  if (leader) {
    CallArgs b = a;
    b.root = root_node;
    const bool receives = allreduce || root_host_leader;
    b.sendbuf = receives ? MPI_IN_PLACE : acc;
    b.recvbuf = receives ? acc : nullptr;
    const int rc = execute(between_hosts, m.node_index, b, h.leaders);
    if (rc == kExecNoMemory) return rc;  // the caller stops the job (dispatch.cpp says why)
    note(rc);
  }
  // 3. Back within the host.
  if (allreduce) {
    note(PMPI_Bcast(a.recvbuf, a.count, a.type, 0, h.node));
  } else if (root_host_leader && rank != a.root) {
    note(PMPI_Send(acc, a.count, a.type, m.rank_in_node(a.root), 0, h.node));
  } else if (rank == a.root && !leader) {
    note(PMPI_Recv(a.recvbuf, a.count, a.type, 0, 0, h.node, MPI_STATUS_IGNORE));
  }
  return first_error;
}

}  // namespace papshim
