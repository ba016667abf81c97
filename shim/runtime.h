// Process-wide state of the shim and the thread-local re-entry guard.
#pragma once

#include <mpi.h>

#include <atomic>
#include <string>

#include "config/params.h"
#include "predictor/calibrate.h"

namespace papshim {

struct Runtime {
  Config cfg;
  std::atomic<bool> active{false};  // initialised, not disabled, not finalised
  bool initialised = false;
  int world_rank = 0, world_size = 1;
  MPI_Comm world_priv = MPI_COMM_NULL;
  MPI_Comm self_priv = MPI_COMM_NULL;
  double t_init = 0;
  Calibration cal;  // clock offset to rank 0 and cost figures
};

// The shim's time base: this rank's clock moved onto rank 0's.
double common_now();

Runtime& runtime();

// Set while a thread is inside the shim: a nested intercepted call (from the
// MPI library or a callback) goes straight to PMPI.
class ReentryGuard {
 public:
  ReentryGuard() : entered_(!depth_) { depth_ = true; }
  ~ReentryGuard() { if (entered_) depth_ = false; }
  bool first() const { return entered_; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;

 private:
  bool entered_;
  static thread_local bool depth_;
};

// Called right after the MPI library initialised (C and Fortran paths).
void on_init();
// Called right before the MPI library finalises.
void on_finalize();

}  // namespace papshim
