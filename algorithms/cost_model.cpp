// Works as follows.  Two shapes of formula cover the regular schedules.
//
// 1. Collectives that end together (allreduce, allgather): every rank waits
//    for the last arrival, so the mean elapsed time is L (the mean wait for
//    the last arrival) plus R, the time from the last arrival to the mean
//    exit.  R is the balanced time T0 for the arrival-blind schedules whose
//    last rank still has all of its work to do (ring, Rabenseifner), and
//    less for the schedules that let the early ranks work ahead (PRR, SLT,
//    the log-step allgathers); the constants of R_late (one rank very late)
//    were read off the simulator and checked against it over random
//    instances.
// 2. Reduce trees: a rank that only sends leaves once its data is out, so
//    one pass over the tree (children before parents) gives each rank's
//    exit: a parent's incoming port takes its children's segment streams one
//    after the other, earliest available first (the simulator's
//    oldest-ready-first rule), and a child leaves when its stream has gone
//    through and its own subtree's data was complete.
#include "algorithms/cost_model.h"

#include <algorithm>
#include <cmath>

#include "algorithms/binomial_reduce.h"
#include "algorithms/straggler.h"
#include "algorithms/straggler_allgather.h"
#include "common/cost_figures.h"

namespace papshim {

namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// Straggler allreduce: when phase 1 ends after the late arrival, its
// finished chunks contend with phase 1's last ones; this many rounds per
// chunk then (read off the simulator).
constexpr double kStragglerEarlyRounds = 1.3;

struct Seg {
  double t, g, c, u;  // transfer, reduction, max, min
};
Seg seg_costs(double bytes, const CostFigures& cost) {
  Seg s;
  s.t = cost.transfer(bytes);
  s.g = cost.gamma * bytes;
  s.c = std::max(s.t, s.g);
  s.u = std::min(s.t, s.g);
  return s;
}

// Reduce trees (binomial, sorted binomial): rank_at[pos] is the rank at
// tree position pos (children of pos: pos + mask for every mask below the
// lowest set bit of pos).
double tree_reduce(const std::vector<int>& rank_at, const std::vector<double>& arrival, int nseg, const Seg& s) {
  const int P = static_cast<int>(rank_at.size());
  std::vector<double> a(sz(P)), done(sz(P)), leave(sz(P));
  for (int pos = 0; pos < P; ++pos) a[sz(pos)] = arrival[sz(rank_at[sz(pos)])];
  const double stream = nseg * s.t;  // one child's segments through the parent's incoming port
  struct Child {
    double start;
    int pos;
  };
  std::vector<Child> kids;
  for (int v = P - 1; v >= 0; --v) {
    kids.clear();
    for (int mask = 1; mask < P && !(v & mask); mask *= 2)
      if (v + mask < P) kids.push_back({std::max(a[sz(v + mask)], a[sz(v)]), v + mask});
    std::stable_sort(kids.begin(), kids.end(), [](const Child& x, const Child& y) { return x.start < y.start; });
    double cursor = a[sz(v)], last = a[sz(v)];
    // The reduction unit takes every child's segments too (receives are
    // posted at arrival, so transfers do not wait for it).
    const double reduce_end = kids.empty() ? 0.0 : kids.front().start + s.t + static_cast<double>(kids.size()) * nseg * s.g;
    for (const Child& k : kids) {
      cursor = std::max(cursor, k.start) + stream;
      const double ex = std::max(cursor, done[sz(k.pos)] + s.t);
      leave[sz(k.pos)] = ex;
      last = std::max(last, ex);
    }
    done[sz(v)] = kids.empty() ? a[sz(v)] : std::max(last + s.g, reduce_end);
  }
  leave[0] = done[0];
  double sum = 0;
  for (int pos = 0; pos < P; ++pos) sum += leave[sz(pos)] - a[sz(pos)];
  return sum / P;
}

}  // namespace

ArrivalSummary summarize_arrivals(const std::vector<double>& arrival) {
  ArrivalSummary s;
  s.P = static_cast<int>(arrival.size());
  s.sorted = arrival;
  std::sort(s.sorted.begin(), s.sorted.end());
  if (s.P == 0) return s;
  double sum = 0;
  for (double x : s.sorted) sum += x;
  s.mean = sum / s.P;
  s.last = s.sorted.back();
  s.prev = s.P > 1 ? s.sorted[sz(s.P - 2)] : s.last;
  return s;
}

namespace {

// Reduce trees: the rank at each tree position, at one segment's costs.
double tree_cost(const CostInput& in, const std::vector<int>& rank_at) {
  const ScheduleParams& p = in.p;
  int nseg = std::max(1, p.nseg);
  if (p.count > 0 && sz(nseg) > p.count) nseg = static_cast<int>(p.count);
  const Seg s = seg_costs(in.bytes / nseg, in.cost);
  return tree_reduce(rank_at, p.arrival, nseg, s);
}

}  // namespace

double ring_allreduce_cost(const CostInput& in) {
  // 2(P-1) dependent ring steps, all after the last arrival.
  const Seg s = seg_costs(in.bytes / in.P, in.cost);
  return in.L + (in.Pd - 1) * (2 * s.t + s.g);
}

double rabenseifner_cost(const CostInput& in) {
  // n = 2^floor(log2 P) segments; halving then doubling moves n-1
  // segments each way, reductions pipelined with the transfers; P > n
  // adds a whole-vector pre-step (reduced) and post-step (copied).
  const int P = in.P;
  const int n = floor_pow2(P);
  const Seg s = seg_costs(in.bytes / n, in.cost);
  double T0 = (n - 1) * s.c + s.u + (n - 1) * s.t;
  if (P > n) T0 += n * s.c + s.u + 0.5 * n * s.t;  // the post-step overlaps the doubling in part
  return in.L + T0;
}

double direct_allreduce_cost(const CostInput& in) {
  // Every owner takes P-1 slices through its port, combines, sends P-1
  // sums.  A late rank's slices queue behind the others' (oldest ready
  // first) unless it is later than the others' scatter.
  const double Pd = in.Pd, d = in.d;
  const Seg s = seg_costs(in.bytes / in.P, in.cost);
  const double T0 = (Pd - 1) * s.c + s.u + (Pd - 1) * s.t;
  double extra = 0;
  if (d > s.t) extra = std::max(0.0, (Pd - 2) * s.c + 2 * (Pd - 1) * s.t + s.g - T0 - d);
  return in.L + T0 + extra;
}

double prr_cost(const CostInput& in) {
  // The ring, minus the pre-steps the early ranks take before the last
  // arrival (k_i of prr.cpp: one more than its successor's while the
  // gap to the last arrival allows), down to R_late: the last rank
  // takes in P slices and the sums travel back half the ring on average.
  const int P = in.P;
  const double Pd = in.Pd, tau = in.p.tau;
  const ArrivalSummary& arr = in.arr;
  const Seg s = seg_costs(in.bytes / P, in.cost);
  const double T0 = (Pd - 1) * (2 * s.t + s.g);
  const double R_late = Pd * s.c + s.u + 0.5 * Pd * s.t;
  double ksum = 0;
  if (tau > 0 && std::isfinite(tau)) {
    int k = 0;
    for (int i = P - 2; i >= 0; --i) {
      if (arr.last - arr.sorted[sz(i)] >= (k + 1) * tau) ++k;
      ksum += k;
    }
  }
  const double gain = ksum / (Pd - 1) * tau;
  return in.L + std::max(R_late, T0 - gain);
}

double slt_cost(const CostInput& in) {
  // A pipelined chain in arrival order: the rank at chain position k can
  // start when it arrives; from there (P-1-k) hops of c + 0.8 u (fitted
  // to the simulator) remain beyond R_late, the chain's end (P segments
  // in, the copies back).
  const int P = in.P;
  const double Pd = in.Pd;
  const Seg s = seg_costs(in.bytes / P, in.cost);
  const double R_late = Pd * s.c + s.u + 0.5 * Pd * s.t;
  double F = -INFINITY;
  for (int k = 0; k < P; ++k) F = std::max(F, in.arr.sorted[sz(k)] + R_late + (P - 1 - k) * (s.c + 0.8 * s.u));
  return F - in.arr.mean;
}

// The straggler allreduce (straggler.h).  Phase 1 (direct reduce-scatter
// among the m early ranks, c chunks per slice) ends (m-1) c chunks after the
// latest owner's arrival; then the finished chunks: c rounds of P-1
// messages through every owner's ports (k late chunks and m-1 finished ones
// in, P-1 out).  After the last arrival: c such rounds, the owners
// forwarding each as it comes, plus the pipeline's fill: one round (the
// last owner gets its last chunk at the end of round c and sends it P-1
// times).
double straggler_cost(const CostInput& in) {
  const ArrivalSummary& arr = in.arr;
  const StragglerPlan plan = straggler_plan(in.p);
  const int m = plan.owners, c = plan.chunks;
  const Seg s = seg_costs(in.bytes / plan.nseg, in.cost);
  const double a_owner = arr.sorted[sz(m - 1)];
  const double F1 = m > 1 ? a_owner + (m - 1) * c * s.c + s.u : a_owner;
  const double round = std::max((in.Pd - 1) * s.t, plan.late * s.g);
  const double end = std::max(arr.last + (c + 1) * round, F1 + kStragglerEarlyRounds * c * round);
  return end + plan.late * s.g - arr.mean;
}

double ring_allgather_cost(const CostInput& in) {
  const Seg s = seg_costs(in.bytes, in.cost);
  return in.L + (in.Pd - 1) * s.t;
}

double log_step_allgather_cost(const CostInput& in) {
  // Every rank takes in P-1 blocks; when one rank is late the others
  // have exchanged theirs and only its block (and its intake) is left:
  // R_late = l (l + 3) / 4 transfers, l = ceil(log2 P) steps.
  const Seg s = seg_costs(in.bytes, in.cost);
  const double T0 = (in.Pd - 1) * s.t;
  const int l = ceil_log2(in.P);
  const double R_late = l * (l + 3) / 4.0 * s.t;
  return in.L + std::max(R_late, T0 - 0.5 * in.d);
}

// The straggler allgather (straggler_allgather.h): the model of its plan
// (straggler_allgather_mean) with one chunk's transfer as t.  O(k c P) for
// k late ranks.
double straggler_allgather_cost(const CostInput& in) {
  const StragglerAllgatherPlan plan = straggler_allgather_plan(in.p);
  const double t = in.cost.transfer(in.bytes / plan.chunks);
  return straggler_allgather_mean(plan, in.arr.sorted, t);
}

double binomial_reduce_cost(const CostInput& in) {
  const int P = in.P;
  std::vector<int> rank_at(sz(P));
  for (int pos = 0; pos < P; ++pos) rank_at[sz(pos)] = (pos + in.p.root) % P;
  return tree_cost(in, rank_at);
}

double sorted_binomial_reduce_cost(const CostInput& in) { return tree_cost(in, sorted_binomial_positions(in.p)); }

std::optional<double> closed_form_mean_elapsed(Algo a, Collective coll, const ScheduleParams& p,
                                               std::size_t elem_size, const CostFigures& cost,
                                               const ArrivalSummary& arr) {
  const int P = p.nprocs;
  if (P < 1 || arr.P != P || p.arrival.size() != sz(P)) return std::nullopt;
  if (P == 1) return 0.0;
  const AlgoInfo& info = algo_info(a);
  if (info.closed_form == nullptr || info.coll != coll) return std::nullopt;
  if (info.size_check != nullptr && info.size_check(P) != nullptr) return std::nullopt;
  const CostInput in{p,
                     cost,
                     arr,
                     P,
                     static_cast<double>(P),
                     arr.last - arr.mean,
                     arr.last - arr.prev,
                     static_cast<double>(p.count) * static_cast<double>(elem_size)};
  return info.closed_form(in);
}

}  // namespace papshim
