// The arguments of a call that decide its algorithm, besides the arrival
// vector: the same on every rank of the communicator in a valid program.
#pragma once

#include "algorithms/schedule.h"

namespace papshim {

struct CallShape {
  Collective coll = Collective::Allreduce;
  int count = 0;      // elements; allgather: bytes per block
  int type_size = 0;  // bytes per element; allgather: 1
  int root = 0;       // reduce only; 0 otherwise
  bool commutative = true;
  long long bytes() const { return static_cast<long long>(count) * type_size; }
  bool operator==(const CallShape& o) const {
    return coll == o.coll && count == o.count && type_size == o.type_size && root == o.root &&
           commutative == o.commutative;
  }
};

}  // namespace papshim
