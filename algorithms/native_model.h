// The model of native: what the MPI library found at run time runs for a
// call, by its own fixed rules, and what that costs.
//
// Auto mode weighs every arrival-aware candidate against native, so the
// model of native decides as much as the candidates' own.  The libraries'
// collectives send log P messages per rank where papshim's ring-shaped
// schedules send 2(P-1), so papshim's own schedules are a poor model of them
// at scale (on a simulated 1 Gbit/s star of 1024 ranks the ring and
// Rabenseifner schedules model native at 4.4 times what it takes).  This
// file holds the decision rules of the libraries papshim is built for, per
// collective, communicator size and bytes, and a closed form per algorithm
// in the Hockney model of cost_model.h (t(b) = alpha + beta b per message,
// gamma b per reduced byte, one message each way per port at a time), with
// the message count and sizes the algorithm really has:
//   Open MPI 4.1 (coll/tuned, its fixed decisions: no segmentation)
//   MPICH 4.0 (the MPIR tuning tables compiled into the library)
//   SimGrid SMPI with --cfg=smpi/coll-selector:ompi (scripts/smpi.sh): Open
//     MPI 4.1's thresholds, MPICH's recursive doubling and Rabenseifner
// The library comes from MPI_Get_library_version at MPI_Init.  With several
// ranks on each of several hosts the selection weighs the schedules between
// hosts, one rank per host (selector.h), and so is native modelled: on the
// hosts' count, an approximation of the library's flat algorithm.  Allreduce and
// allgather are modelled; reduce, an unknown library and a non-commutative
// op are not (NativeAlgorithm::None): the selector then models native by the
// catalog's NativeModel rows, as before.  docs/algorithms.md, "The model of
// native", has the tables.  A library tuned otherwise (Open MPI's
// coll_tuned_use_dynamic_rules, MPICH's CVARs, coll/han) runs something
// else: the measured common factor (cost_learner.h) then corrects the model,
// as it corrects every model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "algorithms/schedule.h"
#include "common/cost_figures.h"

namespace papshim {

enum class MpiLibrary : std::uint8_t { Unknown, OpenMpi, Mpich, Smpi };

// The library named by an MPI_Get_library_version string.
MpiLibrary library_from_version(std::string_view version);
const char* to_string(MpiLibrary lib);

enum class NativeAlgorithm : std::uint8_t {
  None,               // not modelled here
  ReduceBcast,        // a binomial reduce to one rank, then a binomial broadcast
  LinearReduceBcast,  // the root receives P-1 vectors, then sends P-1
  RecursiveDoubling,  // allreduce: log2 P whole-vector exchanges
  Ring,               // allreduce: reduce-scatter and allgather around the ring
  Rabenseifner,       // allreduce: recursive halving, then recursive doubling
  Bruck,              // allgather: ceil(log2 P) steps of up to 2^k blocks
  RecursiveDoublingAllgather,  // log2 P exchanges of 2^k blocks (power of two P)
  RingAllgather,      // P-1 steps of one block
  NeighborExchange,   // P/2 steps of two blocks (even P)
  TwoProc,            // one exchange
};
const char* to_string(NativeAlgorithm a);

// What `lib` runs for collective `c` on `nprocs` ranks with `bytes` (the
// whole vector for allreduce, one rank's block for allgather) of `count`
// elements; None where this file does not model it.
NativeAlgorithm native_algorithm(MpiLibrary lib, Collective c, int nprocs, double bytes, std::size_t count,
                                 bool commutative);

// The time from the last arrival to the end of algorithm `a` (every rank
// leaves together, near enough, so the mean elapsed time of arrivals whose
// mean wait for the last is L is L plus this).  The pre- and post-steps of
// a non-power-of-two P are `lib`'s: Open MPI's Rabenseifner exchanges
// half vectors, MPICH's sends whole ones.
double native_balanced_time(MpiLibrary lib, NativeAlgorithm a, int nprocs, double bytes, const CostFigures& cost);

}  // namespace papshim
