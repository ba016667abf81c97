// Start-up measurements, collective over the world (at MPI_Init):
//  - each rank's clock offset to rank 0 (ping-pong, the round trip with the
//    smallest time wins: offset = t_peer - (t_send + t_recv) / 2; measured
//    along a binomial tree rooted at rank 0, ceil(log2 P) levels deep, each
//    rank's offset the sum along its path), so that arrival times share
//    rank 0's time base across hosts;
//  - the cost figures (one-way times of 8 B to 1 MiB from a ping-pong
//    between rank 0 and `peer`: the lowest rank on another host when there
//    are several, so that the figures are the network's, else rank 1; alpha
//    and beta from the smallest and largest, the transfer curve of
//    common/cost_figures.h from all;
//    gamma from timing PMPI_Reduce_local on rank 0), spread from rank 0 so
//    every rank holds the same numbers.
// Every exchange is symmetric: between any two ranks as many bytes go each
// way, in messages of the same sizes.  Open MPI's shared-memory transport
// keeps one small-message ring per direction; when a start-up leaves the two
// rings of a pair at different positions, every later small message between
// them costs about 0.1 us more (measured with scripts/overhead.sh: 8-byte
// allreduce, 0.49 us native, 0.59 to 0.64 us after a one-way message).
// papshim's own start-up must not change the library's speed.
#pragma once

#include <mpi.h>

#include "common/cost_figures.h"

namespace papshim {

struct Calibration {
  double clock_offset = 0;  // this rank's clock minus rank 0's, seconds
  double offset_rtt = 0;    // sum of the best round trips along the path to rank 0 (the offset is within half of it)
  CostFigures cost;
};

Calibration calibrate(MPI_Comm world, int rank, int size, int peer);

}  // namespace papshim
