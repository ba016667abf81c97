// The simulator's first step, kept apart from its event loop: a schedule's
// steps under global ids (rank offset + index in the rank's program), each
// checked (peer, segment, tag, operation), and every Send paired with the
// receive it matches.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace papshim {

struct FlatSchedule {
  struct Message {
    int send = -1, recv = -1;  // global step ids
    int pair = -1;             // index into pair_ports: its (source, destination)
  };
  std::vector<std::size_t> off;   // first global step id of each rank
  std::vector<int> rank, idx;     // per global step id: rank, index in its program
  std::vector<Step> flat;         // per global step id
  std::vector<int> msg_of;        // per global step id: its message
  std::vector<Message> msgs;
  // Per (source, destination) pair with messages: the source's outgoing
  // port (its rank) and the destination's incoming port (P + its rank).
  std::vector<std::array<int, 2>> pair_ports;

  // "rank r step i (op seg s to/from peer tag t)", for error messages.
  std::string where(const Schedule& s, int r, std::size_t i) const;
  std::string where(const Schedule& s, int g) const;
};

// Fills `fs` from `s`, whose simulation has `n_arrival` arrival times.
// Returns the first problem found ("" when the schedule is well formed).
std::string flatten_and_pair(const Schedule& s, std::size_t n_arrival, FlatSchedule& fs);

}  // namespace papshim
