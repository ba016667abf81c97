// Pre-reduced ring (PRR) allreduce as a schedule.
//
// Works as follows.  Processes get new ids by predicted arrival (id 0 first,
// id P-1 last); `order[id]` is the rank, `a[id]` its arrival.  The vector is
// cut into nseg = P slices (segments).  Every slice travels the ring of ids
// (id -> id + 1 mod P) as in the ring allreduce, but the early processes start
// some slices before the last process arrives:
//   k[id]   pre-steps of process id: how many tau before the last arrival it
//           can start, at most one more than its successor:
//           k[P-1] = 0; k[i] = k[i+1] + 1 if a[P-1] - a[i] >= (k[i+1] + 1) tau,
//           else k[i+1].
//   sp[j]   the id where slice j starts: the first id i with i + k[i] >= j
//           (process i's first slice is i + k[i]).
//   rp[j]   the id that reduces slice j last: sp[j] - 1 (mod P).
//   reduce  slice j goes sp[j] -> sp[j]+1 -> ... -> rp[j]; each receiver
//           combines it into its own copy.  rp[j] then holds the full sum.
//   copy    the sum goes on rp[j] -> rp[j]+1 -> ... -> rp[j]-1; each receiver
//           overwrites its copy.
// All processes together exchange P(2P-2) messages, as in the ring, but the
// early processes do more of them.
//
// Errata of the figure 7 listing (found by simulating it): line 3 compares
// a[i+1] where a[i] is meant: with a[i+1] the process before the last never
// gets a pre-step, so slice P-1 always starts at the last process and PRR
// never finishes before the ring (8 tau instead of figure 8's 7).  Simulated
// mean elapsed time over random arrivals, P <= 16: the fixed rule is about
// 16% faster without port limits and about 1% slower with one message per
// port.  Lines 7-13 leave sp[j] unset when i advances (meant: the formula
// above); line 19's send test must be rp != id; and running the two loops in
// a fixed order per process deadlocks for some arrivals.  So the schedule
// follows the data flow of each slice instead of the loops: a process's steps
// are sorted by their predicted time (below), receives before sends at equal
// times, which is a valid time order, and the executor runs the slices
// independently.
//
// Predicted time, in units of tau: a slice leaves sp[j] at its arrival; a hop
// starts when the sender holds the slice and the receiver has arrived, and
// takes one unit.  Tags: reduce messages of slice j have tag j, copy messages
// nseg + j; each link carries a slice at most once per phase.
#include "algorithms/prr.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "algorithms/arrival_order.h"

namespace papshim {

namespace {

bool usable_tau(double tau) { return tau > 0.0 && std::isfinite(tau); }

// A step with its predicted time, for sorting one rank's program.
struct Timed {
  double time;
  int kind;  // 0 receive, 1 send: a slice is received before it is passed on
  int slice;
  int hop;
  int id;    // the sorted id executing the step
  Step step;
};

}  // namespace

PrrPlan prr_plan(const ScheduleParams& params) {
  PrrPlan plan;
  const int P = std::max(params.nprocs, 0);
  plan.order = arrival_order(params);
  const std::vector<double> a = sorted_arrivals(params, plan.order);
  plan.k.assign(static_cast<std::size_t>(P), 0);
  plan.sp.assign(static_cast<std::size_t>(P), 0);
  plan.rp.assign(static_cast<std::size_t>(P), 0);
  if (P == 0) return plan;

  // Pre-steps, from the last process backwards (listing lines 1-6, with
  // a[i] for a[i+1]).  Without a usable tau there are none: a sorted ring.
  if (usable_tau(params.tau)) {
    for (int i = P - 2; i >= 0; --i) {
      const int next = plan.k[static_cast<std::size_t>(i + 1)];
      const bool room = a[static_cast<std::size_t>(P - 1)] - a[static_cast<std::size_t>(i)] >= (next + 1) * params.tau;
      plan.k[static_cast<std::size_t>(i)] = room ? next + 1 : next;
    }
  }
  // Start and last-reduce ids of every slice (lines 7-13 as intended).
  for (int j = 0, i = 0; j < P; ++j) {
    while (i + plan.k[static_cast<std::size_t>(i)] < j) ++i;
    plan.sp[static_cast<std::size_t>(j)] = i;
    plan.rp[static_cast<std::size_t>(j)] = (i + P - 1) % P;
  }
  return plan;
}

namespace {

// Predicted times along a slice's path, in closed form so that one rank's
// steps can be timed without walking every path.  A slice starting at id s
// at time rel[s] reaches the node after hop h at
//   T(h+1) = max(T(h), rel[n(h+1)]) + 1,  T(0) = rel[s],  n(i) = (s + i) % P,
// that is T(h) = h + max(rel[s], max over 1 <= i <= h of rel[n(i)] - i + 1).
// The inner maximum is a range maximum of g(id) = rel[id] - id (shifted by
// the wrap count of the path), answered from a sparse table.
class PathClock {
 public:
  explicit PathClock(const std::vector<double>& rel) : rel_(rel), P_(static_cast<int>(rel.size())) {
    std::vector<double> g(rel.size());
    for (int id = 0; id < P_; ++id) g[static_cast<std::size_t>(id)] = rel_[static_cast<std::size_t>(id)] - id;
    table_.push_back(std::move(g));
    for (int len = 2; len <= P_; len *= 2) {
      const std::vector<double>& prev = table_.back();
      std::vector<double> next(static_cast<std::size_t>(P_ - len + 1));
      for (int i = 0; i + len <= P_; ++i)
        next[static_cast<std::size_t>(i)] =
            std::max(prev[static_cast<std::size_t>(i)], prev[static_cast<std::size_t>(i + len / 2)]);
      table_.push_back(std::move(next));
    }
  }

  // T(h) for the slice starting at id s, 0 <= h <= 2P-2.
  double at(int s, int h) const {
    double m = rel_[static_cast<std::size_t>(s)];
    // Hop i = 1..h visits id s + i - w*P on its w-th wrap (w = 0, 1, 2).
    for (int w = 0; w <= 2; ++w) {
      const int lo = std::max(w == 0 ? s + 1 : 0, 0);
      const int hi = std::min(P_ - 1, s + h - w * P_);
      if (lo > hi) continue;
      m = std::max(m, range_max(lo, hi) + (s + 1 - w * P_));
    }
    return h + m;
  }

 private:
  double range_max(int lo, int hi) const {  // inclusive, lo <= hi
    int k = 0;
    while ((2 << k) <= hi - lo + 1) ++k;
    const std::vector<double>& row = table_[static_cast<std::size_t>(k)];
    return std::max(row[static_cast<std::size_t>(lo)], row[static_cast<std::size_t>(hi - (1 << k) + 1)]);
  }

  const std::vector<double>& rel_;
  int P_;
  std::vector<std::vector<double>> table_;  // table_[k][i] = max g[i .. i + 2^k)
};

// The program of sorted id `id`: its sends and receives on every slice's
// path, in predicted time order.  O(P log P) for 4(P-1) steps.
void prr_program(const PrrPlan& plan, const PathClock& clock, int P, int id, std::vector<Step>& out) {
  const int nseg = P;
  const int to = plan.order[static_cast<std::size_t>((id + 1) % P)];
  const int from = plan.order[static_cast<std::size_t>((id + P - 1) % P)];
  const int last_hop = 2 * (P - 1) - 1;
  std::vector<Timed> timed;
  timed.reserve(4 * static_cast<std::size_t>(P - 1));
  auto send = [&](int j, int s, int hop) {
    const int tag = hop < P - 1 ? j : nseg + j;
    timed.push_back({clock.at(s, hop), 1, j, hop, id, {StepOp::Send, to, j, tag, hop}});
  };
  auto recv = [&](int j, int s, int hop) {
    const bool reducing = hop < P - 1;
    const int tag = reducing ? j : nseg + j;
    timed.push_back({clock.at(s, hop + 1), 0, j, hop, id,
                     {reducing ? StepOp::RecvReduce : StepOp::RecvCopy, from, j, tag, hop}});
  };
  for (int j = 0; j < P; ++j) {
    const int s = plan.sp[static_cast<std::size_t>(j)];
    const int d = ((id - s) % P + P) % P;  // hops from the start to this id
    // Sends: the hops leaving this id, d and d + P.
    for (int hop = d; hop <= last_hop; hop += P) send(j, s, hop);
    // Receives: the hops arriving here, ending after d or d + P hops (the
    // start id receives only after going round: P hops).
    for (int end = d == 0 ? P : d; end <= last_hop + 1; end += P) recv(j, s, end - 1);
  }
  std::sort(timed.begin(), timed.end(), [](const Timed& x, const Timed& y) {
    return std::tie(x.time, x.kind, x.slice, x.hop) < std::tie(y.time, y.kind, y.slice, y.hop);
  });
  out.reserve(timed.size());
  for (const Timed& ts : timed) out.push_back(ts.step);
}

}  // namespace

Schedule build_prr(const ScheduleParams& params) {
  const int P = params.nprocs;
  Schedule sched = slice_per_rank_schedule(P);
  if (P <= 1) return sched;
  const PrrPlan plan = prr_plan(params);

  // Arrivals in tau after the first, finite and clamped (beyond 4P tau the
  // order of steps no longer changes); only used to order steps.
  const std::vector<double> a = sorted_arrivals(params, plan.order);
  std::vector<double> rel(static_cast<std::size_t>(P), 0.0);
  for (std::size_t i = 0; i < rel.size(); ++i) {
    const double x = usable_tau(params.tau) ? (a[i] - a[0]) / params.tau : 0.0;
    rel[i] = std::isfinite(x) ? std::clamp(x, 0.0, 4.0 * P) : 4.0 * P;
  }
  const PathClock clock(rel);

  // Each wanted rank's program: its steps on every slice's path (P-1
  // reducing hops, then P-1 copying hops) in predicted time order.
  for (int id = 0; id < P; ++id) {
    const int rank = plan.order[static_cast<std::size_t>(id)];
    if (builds_program(params, rank))
      prr_program(plan, clock, P, id, sched.programs[static_cast<std::size_t>(rank)].steps);
  }
  return sched;
}

}  // namespace papshim
