// Start-up measurements, collective over the world (at MPI_Init):
//  - each rank's clock offset to rank 0 (ping-pong, the round trip with the
//    smallest time wins: offset = t_peer - (t_send + t_recv) / 2), so that
//    arrival times share rank 0's time base across hosts;
//  - the cost figures (alpha, beta from a ping-pong between rank 0 and
//    `peer`: the lowest rank on another host when there are several, so that
//    the figures are the network's, else rank 1;
//    gamma from timing PMPI_Reduce_local on rank 0), broadcast from rank 0 so
//    every rank holds the same numbers.
#pragma once

#include <mpi.h>

#include "common/cost_figures.h"

namespace papshim {

struct Calibration {
  double clock_offset = 0;  // this rank's clock minus rank 0's, seconds
  double offset_rtt = 0;    // round trip of the best exchange
  CostFigures cost;
};

Calibration calibrate(MPI_Comm world, int rank, int size, int peer);

}  // namespace papshim
