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
  double t_init = 0;
  Calibration cal;  // clock offset to rank 0 and cost figures
  int thread_level = MPI_THREAD_SINGLE;  // what MPI granted
  int thread_level_told = MPI_THREAD_SINGLE;  // what the application was told (MPI_Query_thread)
  bool asked_multiple = false;           // the shim asked for MPI_THREAD_MULTIPLE
  std::string thread_mode;               // for the report
  bool multi_node = false;               // MPI_COMM_WORLD spans several nodes
  int host_key = 0;                      // this rank's host: the world rank of its lowest rank
  int ranks_here = 1;                    // ranks of the job on this machine
};

// The job's size as its launcher announces it in the environment
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS, first found); 0 when none
// does.
int launcher_world_size();
// Whether papshim wants its helper thread, read from the environment before
// MPI is initialised (leniently; the full check of every value comes after
// initialisation): never with PAPSHIM_DISABLE=1, PAPSHIM_PREDICTOR=off or
// PAPSHIM_HELPER_THREAD=0; always with PAPSHIM_HELPER_THREAD=1; with auto
// (the default) unless the launcher announces at most kDirectMaxRanks
// ranks, whose prediction rounds exchange directly and so need nobody to
// relay them while ranks compute (predictor/round_exchange.h).
bool helper_wanted();
// Thread level to ask MPI for, given the application's request:
// MPI_THREAD_MULTIPLE when the helper thread is wanted, else the
// application's own.
int thread_level_to_request(int required);
// What the application is told: the level it would have had without the
// shim (never more than it asked for, never more than MPI granted).
int thread_level_to_report(int required, int granted);

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
// `granted`: the thread level MPI granted; `asked_multiple`: the shim
// asked for more than the application; `told`: the level the application
// was told (MPI_Query_thread answers it).
void on_init(int granted, bool asked_multiple, int told);
// Called right before the MPI library finalises.
void on_finalize();

}  // namespace papshim
