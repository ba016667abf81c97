// The measured cost figures of the Hockney model that every layer shares:
// calibrated at MPI_Init (predictor/calibrate.h), used by the cost model and
// the schedules (algorithms/selector.h).
//
// One message of b bytes takes transfer(b).  Two sizes (alpha, beta) miss
// mid-size messages on real networks and on SMPI (where a 64 KiB message
// took 1.14 ms against 0.69 from the 8 B / 1 MiB line: the eager and
// rendezvous protocols, TCP's window), so the calibration also measures a
// few sizes between and transfer() interpolates them (a piecewise-linear
// alpha / beta by message size, as LogGP-style models have it).  Without a
// curve (tests, the reproducible mode) it is alpha + beta b.
#pragma once

#include <array>

namespace papshim {

struct CostFigures {
  double alpha = 5e-6;   // s per message
  double beta = 1e-10;   // s per byte
  double gamma = 2e-10;  // s per reduced byte
  // Measured one-way times at increasing sizes, curve_n of them (0: none).
  static constexpr int kCurveMax = 6;
  int curve_n = 0;
  std::array<double, kCurveMax> curve_bytes{};
  std::array<double, kCurveMax> curve_time{};

  // Seconds for one message of `bytes`: the curve between its points, the
  // first point's time at or below it, the last point plus beta per byte
  // beyond.
  double transfer(double bytes) const {
    if (curve_n < 2) return alpha + beta * bytes;
    if (bytes <= curve_bytes[0]) return curve_time[0];
    for (int i = 1; i < curve_n; ++i)
      if (bytes <= curve_bytes[static_cast<unsigned>(i)]) {
        const unsigned j = static_cast<unsigned>(i);
        const double f = (bytes - curve_bytes[j - 1]) / (curve_bytes[j] - curve_bytes[j - 1]);
        return curve_time[j - 1] + f * (curve_time[j] - curve_time[j - 1]);
      }
    const unsigned last = static_cast<unsigned>(curve_n - 1);
    return curve_time[last] + beta * (bytes - curve_bytes[last]);
  }
};

}  // namespace papshim
