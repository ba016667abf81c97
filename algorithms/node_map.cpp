#include "algorithms/node_map.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace papshim {

NodeMap NodeMap::from_keys(const std::vector<int>& key_of_rank, int rank) {
  NodeMap m;
  m.node_of.resize(key_of_rank.size());
  std::unordered_map<int, int> index;  // host key -> host index
  std::vector<int> sizes;
  for (std::size_t r = 0; r < key_of_rank.size(); ++r) {
    const auto [it, fresh] = index.emplace(key_of_rank[r], static_cast<int>(sizes.size()));
    if (fresh) sizes.push_back(0);
    m.node_of[r] = it->second;
    ++sizes[static_cast<std::size_t>(it->second)];
  }
  m.nnodes = static_cast<int>(sizes.size());
  m.max_node_size = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  if (rank >= 0 && static_cast<std::size_t>(rank) < m.node_of.size()) m.node_index = m.node_of[rank];
  return m;
}

std::vector<double> NodeMap::latest(const std::vector<double>& arrival) const {
  std::vector<double> out(static_cast<std::size_t>(nnodes), -std::numeric_limits<double>::infinity());
  const std::size_t n = std::min(arrival.size(), node_of.size());
  for (std::size_t r = 0; r < n; ++r) {
    double& t = out[static_cast<std::size_t>(node_of[r])];
    t = std::max(t, arrival[r]);
  }
  return out;
}

int NodeMap::rank_in_node(int r) const {
  int k = 0;
  for (int q = 0; q < r; ++q)
    if (node_of[static_cast<std::size_t>(q)] == node_of[static_cast<std::size_t>(r)]) ++k;
  return k;
}

}  // namespace papshim
