#include "algorithms/schedule.h"

#include <algorithm>

namespace papshim {

int Schedule::max_tag() const {
  int m = std::max(tag_bound, 0);
  for (const auto& p : programs)
    for (const auto& s : p.steps) m = std::max(m, s.tag);
  return m;
}

SegRange segment_bounds(std::size_t count, int nseg, int s) {
  const auto k = static_cast<std::size_t>(nseg);
  const auto i = static_cast<std::size_t>(s);
  const std::size_t base = count / k, extra = count % k;
  const std::size_t first = i * base + std::min(i, extra);
  return {first, base + (i < extra ? 1 : 0)};
}

SegRange allgather_segment(std::size_t count, int nprocs, int nseg, int s) {
  const int c = allgather_chunks(nseg, nprocs);
  const SegRange in_block = segment_bounds(count, c, s % c);
  return {static_cast<std::size_t>(s / c) * count + in_block.first, in_block.n};
}

const char* to_string(StepOp op) {
  switch (op) {
    case StepOp::Send: return "send";
    case StepOp::RecvReduce: return "recv_reduce";
    case StepOp::RecvCopy: return "recv_copy";
  }
  return "?";
}

const char* to_string(Collective c) {
  switch (c) {
    case Collective::Allreduce: return "allreduce";
    case Collective::Reduce: return "reduce";
    case Collective::Allgather: return "allgather";
  }
  return "?";
}

Schedule slice_per_rank_schedule(int nprocs) {
  Schedule sched;
  sched.coll = Collective::Allreduce;
  sched.nseg = nprocs > 1 ? nprocs : 1;
  sched.programs.resize(static_cast<std::size_t>(nprocs > 0 ? nprocs : 0));
  sched.tag_bound = nprocs > 1 ? 2 * sched.nseg - 1 : sched.tag_bound;
  return sched;
}

}  // namespace papshim
