// Which host each rank of a communicator is on, for the hierarchical
// collectives (shim/hierarchy.h): ranks of one host combine through the MPI
// library, and the arrival-aware schedule runs between hosts, one rank per
// host (its leader, the host's lowest rank), with each host arriving when
// its latest rank does.
//
// Hosts are numbered in the order of their lowest rank, which is also the
// order of their leaders in the leaders' communicator (split by rank).  A
// NodeMap is built from inputs every rank holds (the host of every rank,
// gathered once per communicator), so it is the same on every rank, and so
// is everything computed from it.
#pragma once

#include <cstddef>
#include <vector>

namespace papshim {

struct NodeMap {
  std::vector<int> node_of;  // host index of each rank
  int nnodes = 0;
  int max_node_size = 0;
  int node_index = -1;       // this rank's host

  // From each rank's host key (any integer naming the host; equal keys,
  // same host).  `rank`: this process's rank.
  static NodeMap from_keys(const std::vector<int>& key_of_rank, int rank);
  // Several hosts and several ranks on one of them: combining within hosts
  // first is worth it.
  bool hierarchical() const { return nnodes > 1 && max_node_size > 1; }
  // Each host's arrival: its latest rank's.
  std::vector<double> latest(const std::vector<double>& arrival) const;
  // Rank `r`'s rank among the ranks of its host (in rank order).
  int rank_in_node(int r) const;
};

}  // namespace papshim
