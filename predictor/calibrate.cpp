#include "predictor/calibrate.h"

#include <algorithm>
#include <vector>

#include "common/clock.h"

namespace papshim {

namespace {

constexpr int kTagPing = 1, kTagPong = 2, kTagOffset = 3, kTagData = 4;
constexpr int kRounds = 16;

// Offsets along a binomial tree rooted at rank 0: at distance d = 1, 2,
// 4, ... every rank r < d with a rank r + d measures that child, all such
// pairs at once, and hands it its offset to rank 0 (the parent's own plus
// the one measured between them): ceil(log2 P) levels of kRounds
// ping-pongs, where one after another from rank 0 took P - 1 (at 4096
// ranks, seconds).  An offset is then the sum of at most ceil(log2 P)
// measured hops, each off by at most half its round trip; offset_rtt sums
// them.
void clock_offsets(MPI_Comm world, int rank, int size, Calibration& c) {
  for (int d = 1; d < size; d *= 2) {
    if (rank < d && rank + d < size) {
      const int child = rank + d;
      double best_rtt = 1e300, offset = 0;
      for (int i = 0; i < kRounds; ++i) {
        double child_time = 0;
        const double t0 = now();
        PMPI_Send(&t0, 1, MPI_DOUBLE, child, kTagPing, world);
        PMPI_Recv(&child_time, 1, MPI_DOUBLE, child, kTagPong, world, MPI_STATUS_IGNORE);
        const double t1 = now();
        if (t1 - t0 < best_rtt) best_rtt = t1 - t0, offset = child_time - 0.5 * (t0 + t1);
      }
      const double msg[2] = {c.clock_offset + offset, c.offset_rtt + best_rtt};
      double echo[2];  // the same message back keeps the pair symmetric (calibrate.h)
      PMPI_Sendrecv(msg, 2, MPI_DOUBLE, child, kTagOffset, echo, 2, MPI_DOUBLE, child, kTagOffset, world,
                    MPI_STATUS_IGNORE);
    } else if (rank >= d && rank < 2 * d) {
      const int parent = rank - d;
      for (int i = 0; i < kRounds; ++i) {
        double t0 = 0;
        PMPI_Recv(&t0, 1, MPI_DOUBLE, parent, kTagPing, world, MPI_STATUS_IGNORE);
        const double t = now();
        PMPI_Send(&t, 1, MPI_DOUBLE, parent, kTagPong, world);
      }
      double msg[2];
      PMPI_Recv(msg, 2, MPI_DOUBLE, parent, kTagOffset, world, MPI_STATUS_IGNORE);
      PMPI_Send(msg, 2, MPI_DOUBLE, parent, kTagOffset, world);
      c.clock_offset = msg[0];
      c.offset_rtt = msg[1];
    }
  }
}

// Smallest one-way time of `bytes` between ranks 0 and `peer`.
double one_way(MPI_Comm world, int rank, int peer, std::vector<char>& buf, int bytes) {
  double best = 1e300;
  for (int i = 0; i < 5; ++i) {
    if (rank == 0) {
      const double t0 = now();
      PMPI_Send(buf.data(), bytes, MPI_BYTE, peer, kTagData, world);
      PMPI_Recv(buf.data(), bytes, MPI_BYTE, peer, kTagData, world, MPI_STATUS_IGNORE);
      best = std::min(best, 0.5 * (now() - t0));
    } else if (rank == peer) {
      PMPI_Recv(buf.data(), bytes, MPI_BYTE, 0, kTagData, world, MPI_STATUS_IGNORE);
      PMPI_Send(buf.data(), bytes, MPI_BYTE, 0, kTagData, world);
    }
  }
  return best;
}

}  // namespace

Calibration calibrate(MPI_Comm world, int rank, int size, int peer) {
  Calibration c;
  if (size < 2) return c;
  clock_offsets(world, rank, size, c);
  // One-way times at these sizes: the first and the last give alpha and
  // beta, all of them the transfer curve (common/cost_figures.h).
  constexpr int kSizes[] = {8, 16 << 10, 64 << 10, 256 << 10, 1 << 20};
  constexpr int kPoints = static_cast<int>(sizeof kSizes / sizeof kSizes[0]);
  static_assert(kPoints <= CostFigures::kCurveMax, "the curve holds every calibrated size");
  constexpr int kBig = kSizes[kPoints - 1];
  const bool measures = rank == 0 || rank == peer;
  std::vector<char> buf(measures ? kBig : 0);
  double fig[3 + kPoints] = {c.cost.alpha, c.cost.beta, c.cost.gamma};
  if (measures) {
    double times[kPoints];
    for (int i = 0; i < kPoints; ++i) times[i] = one_way(world, rank, peer, buf, kSizes[i]);
    if (rank == 0) {
      const double small = times[0], big = times[kPoints - 1];
      fig[0] = std::max(small, 1e-7);
      fig[1] = std::max((big - small) / kBig, 1e-12);
      // The curve never falls with size (a noisy point takes its predecessor's time).
      for (int i = 0; i < kPoints; ++i) fig[3 + i] = std::max(times[i], i == 0 ? fig[0] : fig[3 + i - 1]);
      // gamma: one local reduction of 256 Ki floats, best of three.
      std::vector<float> a(1 << 18, 1.0f), b(1 << 18, 2.0f);
      double best = 1e300;
      for (int i = 0; i < 3; ++i) {
        const double t0 = now();
        PMPI_Reduce_local(a.data(), b.data(), 1 << 18, MPI_FLOAT, MPI_SUM);
        best = std::min(best, now() - t0);
      }
      fig[2] = std::max(best / (4.0 * (1 << 18)), 1e-13);
    }
  }
  // Rank 0's figures to all: a maximum over zeros elsewhere, because a
  // broadcast's messages go one way only (calibrate.h).
  if (rank != 0)
    for (double& f : fig) f = 0;
  PMPI_Allreduce(MPI_IN_PLACE, fig, 3 + kPoints, MPI_DOUBLE, MPI_MAX, world);
  c.cost.alpha = fig[0];
  c.cost.beta = fig[1];
  c.cost.gamma = fig[2];
  c.cost.curve_n = kPoints;
  for (int i = 0; i < kPoints; ++i) {
    c.cost.curve_bytes[static_cast<std::size_t>(i)] = kSizes[i];
    c.cost.curve_time[static_cast<std::size_t>(i)] = fig[3 + i];
  }
  return c;
}

}  // namespace papshim
