// The measured cost figures of the Hockney model that every layer shares:
// calibrated at MPI_Init (predictor/calibrate.h), used by the cost model and
// the schedules (algorithms/selector.h).
#pragma once

namespace papshim {

struct CostFigures {
  double alpha = 5e-6;   // s per message
  double beta = 1e-10;   // s per byte
  double gamma = 2e-10;  // s per reduced byte
};

}  // namespace papshim
