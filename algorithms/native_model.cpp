// Works as follows.  Each library's rule for a collective is a list of
// bands of communicator size, each a list of (bytes below, algorithm)
// pairs ending in the band's otherwise; the first band whose size bound
// exceeds P applies, then the first pair whose bound exceeds the bytes.
// The thresholds are the libraries' own (Open MPI 4.1.4's
// coll_tuned_decision_fixed.c, unchanged from 4.1.0 to 4.1.8; MPICH 4.0.2's
// mpir/generic.json; SMPI's ompi selector, whose thresholds are Open MPI
// 4.1's); the algorithms' fallbacks (a ring on fewer elements than ranks,
// recursive doubling on a non-power-of-two P) follow.
#include "algorithms/native_model.h"

#include <algorithm>
#include <initializer_list>

namespace papshim {

namespace {

constexpr double K = 1024.0, M = 1024.0 * 1024.0;
constexpr double kOtherwise = 1e300;

// Open MPI's algorithm numbers, as its MCA parameters name them.
enum OmpiAllreduce { kArLinear = 1, kArNonoverlapping, kArRecursiveDoubling, kArRing, kArSegmentedRing, kArRabenseifner };
enum OmpiAllgather { kAgLinear = 1, kAgBruck, kAgRecursiveDoubling, kAgRing, kAgNeighbor, kAgTwoProc };

struct Pair {
  double below;  // bytes
  int algo;
};
struct Band {
  int procs_below;
  std::initializer_list<Pair> pairs;  // the last one's bound is kOtherwise
};

int pick(std::initializer_list<Band> bands, int P, double bytes) {
  for (const Band& b : bands) {
    if (P >= b.procs_below) continue;
    for (const Pair& p : b.pairs)
      if (bytes < p.below) return p.algo;
  }
  return 0;
}

constexpr int kAnyP = 1 << 30;

// Open MPI 4.1's allreduce for a commutative op (SMPI's ompi selector has
// the same thresholds).
int ompi_allreduce_number(int P, double B) {
  return pick({{4, {{8, kArRing}, {4 * K, kArRecursiveDoubling}, {8 * K, kArRing}, {16 * K, kArRecursiveDoubling},
                    {64 * K, kArRing}, {256 * K, kArSegmentedRing}, {kOtherwise, kArRabenseifner}}},
               {8, {{16, kArRing}, {8 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {16, {{8 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {32, {{64, kArSegmentedRing}, {4 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {64, {{128, kArSegmentedRing}, {kOtherwise, kArRabenseifner}}},
               {128, {{256 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {256, {{128 * K, kArNonoverlapping}, {256 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {512, {{4 * K, kArNonoverlapping}, {kOtherwise, kArRabenseifner}}},
               {2048, {{2 * K, kArNonoverlapping}, {16 * K, kArRecursiveDoubling}, {kOtherwise, kArRabenseifner}}},
               {4096,
                {{2 * K, kArNonoverlapping}, {4 * K, kArSegmentedRing}, {16 * K, kArRecursiveDoubling},
                 {kOtherwise, kArRabenseifner}}},
               {kAnyP,
                {{2 * K, kArNonoverlapping}, {16 * K, kArSegmentedRing}, {32 * K, kArRecursiveDoubling},
                 {kOtherwise, kArRabenseifner}}}},
              P, B);
}

// Open MPI 4.1's allgather, B one rank's block (SMPI's ompi selector: the same).
int ompi_allgather_number(int P, double B) {
  if (P == 2) return kAgTwoProc;
  return pick({{32, {{kOtherwise, kAgRecursiveDoubling}}},
               {64, {{1 * K, kAgRecursiveDoubling}, {64 * K, kAgNeighbor}, {kOtherwise, kAgRing}}},
               {128, {{512, kAgRecursiveDoubling}, {64 * K, kAgNeighbor}, {kOtherwise, kAgRing}}},
               {256,
                {{512, kAgRecursiveDoubling}, {128 * K, kAgNeighbor}, {512 * K, kAgRing}, {1 * M, kAgNeighbor},
                 {kOtherwise, kAgRing}}},
               {512,
                {{32, kAgRecursiveDoubling}, {128, kAgBruck}, {1 * K, kAgRecursiveDoubling}, {128 * K, kAgNeighbor},
                 {512 * K, kAgRing}, {1 * M, kAgNeighbor}, {kOtherwise, kAgRing}}},
               {1024, {{64, kAgRecursiveDoubling}, {256, kAgBruck}, {2 * K, kAgRecursiveDoubling}, {kOtherwise, kAgNeighbor}}},
               {2048,
                {{4, kAgRecursiveDoubling}, {8, kAgBruck}, {16, kAgRecursiveDoubling}, {32, kAgBruck},
                 {256, kAgRecursiveDoubling}, {512, kAgBruck}, {4 * K, kAgRecursiveDoubling}, {kOtherwise, kAgNeighbor}}},
               {4096,
                {{32, kAgBruck}, {128, kAgRecursiveDoubling}, {512, kAgBruck}, {4 * K, kAgRecursiveDoubling},
                 {kOtherwise, kAgNeighbor}}},
               {kAnyP,
                {{2, kAgRecursiveDoubling}, {8, kAgBruck}, {16, kAgRecursiveDoubling}, {512, kAgBruck},
                 {4 * K, kAgRecursiveDoubling}, {kOtherwise, kAgNeighbor}}}},
              P, B);
}

bool power_of_two(int P) { return P > 0 && (P & (P - 1)) == 0; }

NativeAlgorithm allreduce_of(MpiLibrary lib, int P, double B, std::size_t count) {
  const bool few = count < static_cast<std::size_t>(P);
  const bool below_pof2 = count < static_cast<std::size_t>(floor_pow2(P));
  if (lib == MpiLibrary::Mpich)
    return B <= 8 || below_pof2 ? NativeAlgorithm::RecursiveDoubling : NativeAlgorithm::Rabenseifner;
  const bool smpi = lib == MpiLibrary::Smpi;
  switch (ompi_allreduce_number(P, B)) {
    case kArLinear:
      return smpi ? NativeAlgorithm::ReduceBcast : NativeAlgorithm::LinearReduceBcast;
    case kArNonoverlapping:
      return NativeAlgorithm::ReduceBcast;
    case kArRecursiveDoubling:
      return NativeAlgorithm::RecursiveDoubling;
    case kArRing:
    case kArSegmentedRing:  // segment size 0 in the fixed rules (SMPI: 1 MiB): the plain ring
      if (few) return smpi ? NativeAlgorithm::ReduceBcast : NativeAlgorithm::RecursiveDoubling;
      return NativeAlgorithm::Ring;
    case kArRabenseifner:
      if (below_pof2) return smpi ? NativeAlgorithm::RecursiveDoubling : NativeAlgorithm::LinearReduceBcast;
      return NativeAlgorithm::Rabenseifner;
    default:
      return NativeAlgorithm::None;
  }
}

NativeAlgorithm allgather_of(MpiLibrary lib, int P, double B) {
  if (lib == MpiLibrary::Mpich) {
    const double total = B * P;
    if (power_of_two(P))
      return total < 512 * K ? NativeAlgorithm::RecursiveDoublingAllgather : NativeAlgorithm::RingAllgather;
    return total < 80 * K ? NativeAlgorithm::Bruck : NativeAlgorithm::RingAllgather;
  }
  switch (ompi_allgather_number(P, B)) {
    case kAgBruck:
      return NativeAlgorithm::Bruck;
    case kAgRecursiveDoubling:  // Open MPI runs Bruck on a non-power-of-two P; SMPI's variant has Bruck's steps
      return power_of_two(P) ? NativeAlgorithm::RecursiveDoublingAllgather : NativeAlgorithm::Bruck;
    case kAgRing:
      return NativeAlgorithm::RingAllgather;
    case kAgNeighbor:
      return P % 2 == 0 ? NativeAlgorithm::NeighborExchange : NativeAlgorithm::RingAllgather;
    case kAgTwoProc:
      return NativeAlgorithm::TwoProc;
    default:
      return NativeAlgorithm::None;
  }
}

}  // namespace

MpiLibrary library_from_version(std::string_view v) {
  if (v.find("Open MPI") != std::string_view::npos) return MpiLibrary::OpenMpi;
  if (v.find("SMPI") != std::string_view::npos) return MpiLibrary::Smpi;
  if (v.find("MPICH") != std::string_view::npos) return MpiLibrary::Mpich;
  return MpiLibrary::Unknown;
}

const char* to_string(MpiLibrary lib) {
  switch (lib) {
    case MpiLibrary::OpenMpi: return "open-mpi";
    case MpiLibrary::Mpich: return "mpich";
    case MpiLibrary::Smpi: return "smpi";
    case MpiLibrary::Unknown: break;
  }
  return "unknown";
}

const char* to_string(NativeAlgorithm a) {
  switch (a) {
    case NativeAlgorithm::None: return "none";
    case NativeAlgorithm::ReduceBcast: return "reduce+bcast";
    case NativeAlgorithm::LinearReduceBcast: return "linear reduce+bcast";
    case NativeAlgorithm::RecursiveDoubling: return "recursive doubling";
    case NativeAlgorithm::Ring: return "ring";
    case NativeAlgorithm::Rabenseifner: return "rabenseifner";
    case NativeAlgorithm::Bruck: return "bruck";
    case NativeAlgorithm::RecursiveDoublingAllgather: return "recursive doubling";
    case NativeAlgorithm::RingAllgather: return "ring";
    case NativeAlgorithm::NeighborExchange: return "neighbor exchange";
    case NativeAlgorithm::TwoProc: return "two-proc";
  }
  return "none";
}

NativeAlgorithm native_algorithm(MpiLibrary lib, Collective c, int nprocs, double bytes, std::size_t count,
                                 bool commutative) {
  if (lib == MpiLibrary::Unknown || nprocs < 2) return NativeAlgorithm::None;
  if (c == Collective::Allreduce) return commutative ? allreduce_of(lib, nprocs, bytes, count) : NativeAlgorithm::None;
  if (c == Collective::Allgather) return allgather_of(lib, nprocs, bytes);
  return NativeAlgorithm::None;
}

double native_balanced_time(MpiLibrary lib, NativeAlgorithm a, int nprocs, double n, const CostFigures& cost) {
  const int P = nprocs;
  if (P < 2) return 0;
  auto t = [&](double b) { return cost.transfer(b); };
  auto g = [&](double b) { return cost.gamma * b; };
  const int pof2 = floor_pow2(P), lg = ceil_log2(pof2), lgP = ceil_log2(P);
  const bool rem = P > pof2;
  switch (a) {
    case NativeAlgorithm::ReduceBcast:
      return lgP * (t(n) + g(n)) + lgP * t(n);
    case NativeAlgorithm::LinearReduceBcast:
      // The root's port takes the P-1 vectors one after another, reducing
      // each while the next comes in; then it sends P-1.
      return (P - 1) * std::max(t(n), g(n)) + std::min(t(n), g(n)) + (P - 1) * t(n);
    case NativeAlgorithm::RecursiveDoubling:
      return lg * (t(n) + g(n)) + (rem ? 2 * t(n) + g(n) : 0.0);
    case NativeAlgorithm::Ring:
      return 2 * (P - 1) * t(n / P) + (P - 1) * g(n / P);
    case NativeAlgorithm::Rabenseifner: {
      double T = 0, part = n;
      for (int k = 0; k < lg; ++k) {
        part /= 2;
        T += t(part) + g(part) + t(part);  // a halving step, and its doubling step
      }
      if (rem) {
        // Open MPI exchanges half vectors and returns the reduced half;
        // MPICH (and SMPI's MPICH-style variant) sends the whole vector.
        T += lib == MpiLibrary::OpenMpi ? t(n / 2) + g(n / 2) + t(n / 2) : t(n) + g(n);
        T += t(n);  // the result back to the rank that sat out
      }
      return T;
    }
    case NativeAlgorithm::Bruck: {
      double T = 0;
      for (int d = 1; d < P; d *= 2) T += t(std::min(d, P - d) * n);
      return T;
    }
    case NativeAlgorithm::RecursiveDoublingAllgather: {
      double T = 0;
      for (int d = 1; d < P; d *= 2) T += t(d * n);
      return T;
    }
    case NativeAlgorithm::RingAllgather:
      return (P - 1) * t(n);
    case NativeAlgorithm::NeighborExchange:
      return t(n) + (P / 2 - 1) * t(2 * n);
    case NativeAlgorithm::TwoProc:
      return t(n);
    case NativeAlgorithm::None:
      break;
  }
  return 0;
}

}  // namespace papshim
