// NodeMap: hosts of a communicator's ranks, and each host's arrival.
#include <gtest/gtest.h>

#include "algorithms/node_map.h"

namespace papshim {
namespace {

TEST(NodeMap, HostsInOrderOfTheirLowestRank) {
  // Ranks 0..6 on hosts keyed 40, 7, 40, 9, 7, 9, 9.
  const NodeMap m = NodeMap::from_keys({40, 7, 40, 9, 7, 9, 9}, 4);
  EXPECT_EQ(m.nnodes, 3);
  EXPECT_EQ(m.node_of, (std::vector<int>{0, 1, 0, 2, 1, 2, 2}));
  EXPECT_EQ(m.max_node_size, 3);
  EXPECT_EQ(m.node_index, 1);
  EXPECT_TRUE(m.hierarchical());
  EXPECT_EQ(m.rank_in_node(0), 0);
  EXPECT_EQ(m.rank_in_node(2), 1);
  EXPECT_EQ(m.rank_in_node(6), 2);
  EXPECT_EQ(m.rank_in_node(4), 1);
}

TEST(NodeMap, HierarchicalOnlyWithSeveralHostsAndSeveralRanksOnOne) {
  EXPECT_FALSE(NodeMap::from_keys({0, 0, 0, 0}, 0).hierarchical());  // one host
  EXPECT_FALSE(NodeMap::from_keys({0, 1, 2, 3}, 0).hierarchical());  // one rank per host
  EXPECT_TRUE(NodeMap::from_keys({0, 1, 1, 3}, 0).hierarchical());
  EXPECT_FALSE(NodeMap::from_keys({}, 0).hierarchical());
}

TEST(NodeMap, EachHostArrivesWithItsLatestRank) {
  const NodeMap m = NodeMap::from_keys({0, 0, 2, 2, 4}, 0);
  const std::vector<double> arrival = {1.0, 5.0, -2.0, -3.0, 0.5};
  EXPECT_EQ(m.latest(arrival), (std::vector<double>{5.0, -2.0, 0.5}));
}

}  // namespace
}  // namespace papshim
