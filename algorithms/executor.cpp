// Works as follows.  The working buffer is recvbuf, or for the non-root ranks
// of a reduce a temporary of `count` elements; it first receives the rank's
// own contribution (a typed local copy, unless MPI_IN_PLACE).  A segment s is
// the element range segment_bounds(count, nseg, s) of the working buffer
// (allgather: block s, `count` elements at s*count).  Addresses are computed
// as base + first_element * extent in integer arithmetic, so buffers given as
// MPI_BOTTOM with absolute-address datatypes work, and no byte is copied
// without its datatype.
//
// Each step goes through: waiting -> posted -> (RecvReduce: received ->)
// done.  The dependency rules of schedule.h reduce to two counters per
// segment, because writes of a segment are serialised and a later send of a
// segment cannot start before the write that precedes it:
//   a Send may start when writes_done[seg] == writes before it;
//   a write may start when sends_done[seg] and writes_done[seg] equal the
//   sends and writes before it.
// Sends to one peer go one at a time, in program order (a send waits for the
// previous send to the same peer): several large messages posted at once on
// one link share its bandwidth and all arrive late, stalling the pipeline
// of the segment that was due first.  The schedules are time-ordered per
// rank, so this only makes the link follow the order the schedule intends
// (the simulator's one-message-per-port model).
// The loop posts every startable step, then blocks in PMPI_Waitsome and
// handles what completed.  A RecvReduce posts its receive into a temporary at
// once; only the combine waits for the dependencies.
#include "algorithms/executor.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace papshim {

namespace {

struct TypeInfo {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int size = 0;
  bool plain = false;  // contiguous bytes: memcpy is exact
};

TypeInfo type_info(MPI_Datatype t) {
  TypeInfo ti;
  PMPI_Type_get_extent(t, &ti.lb, &ti.extent);
  PMPI_Type_get_true_extent(t, &ti.true_lb, &ti.true_extent);
  PMPI_Type_size(t, &ti.size);
  ti.plain = ti.lb == 0 && ti.true_lb == 0 && ti.extent == ti.size && ti.true_extent == ti.size;
  return ti;
}

std::size_t bytes_for(const TypeInfo& ti, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(ti.true_extent) + (n - 1) * static_cast<std::size_t>(ti.extent);
}

// Scratch memory of this thread, kept between calls: fresh allocations of
// segment-sized temporaries would cost an mmap, page faults and a munmap
// per segment on every call.  One call carves all its temporaries from it.
class Scratch {
 public:
  void reserve(std::size_t bytes) {
    if (bytes > size_) {
      mem_.reset(new char[bytes]);
      size_ = bytes;
    }
    used_ = 0;
  }
  // n elements of a type, addressed like a user buffer (base - true_lb).
  std::uintptr_t take(const TypeInfo& ti, std::size_t n) {
    const std::size_t bytes = (bytes_for(ti, n) + 63) & ~std::size_t{63};
    const std::uintptr_t at_ptr = reinterpret_cast<std::uintptr_t>(mem_.get()) + used_;
    used_ += bytes;
    return at_ptr - static_cast<std::uintptr_t>(ti.true_lb);
  }

 private:
  std::unique_ptr<char[]> mem_;
  std::size_t size_ = 0, used_ = 0;
};

thread_local Scratch t_scratch;

void* at(std::uintptr_t base, std::size_t first, const TypeInfo& ti) {
  return reinterpret_cast<void*>(base + first * static_cast<std::uintptr_t>(ti.extent));
}

// dst <- src, n elements of type t (typed copy through a private self
// communicator unless the type is plain bytes).
int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount, MPI_Datatype dtype,
               MPI_Comm self) {
  if (stype == dtype) {
    const TypeInfo ti = type_info(stype);
    if (ti.plain) {
      if (scount > 0) std::memmove(dst, src, static_cast<std::size_t>(scount) * static_cast<std::size_t>(ti.size));
      return MPI_SUCCESS;
    }
  }
  return PMPI_Sendrecv(src, scount, stype, 0, 0, dst, dcount, dtype, 0, 0, self, MPI_STATUS_IGNORE);
}

enum class State : std::uint8_t { Waiting, Posted, Received, Done };

struct StepRun {
  State state = State::Waiting;
  int sends_before = 0, writes_before = 0;
  long prev_send_same_peer = -1;  // Send steps: the previous send to that peer
  std::uintptr_t temp = 0;  // RecvReduce only: where the segment is received
};

}  // namespace

int execute(const Schedule& s, int rank, const ExecArgs& a) {
  const TypeInfo ti = type_info(a.type);
  const bool allgather = a.coll == Collective::Allgather;
  const bool is_root = a.coll != Collective::Reduce || rank == a.root;

  const auto& steps = s.programs[static_cast<std::size_t>(rank)].steps;
  auto seg_range = [&](int seg) -> SegRange {
    if (allgather) return {static_cast<std::size_t>(seg) * static_cast<std::size_t>(a.count), static_cast<std::size_t>(a.count)};
    return segment_bounds(static_cast<std::size_t>(a.count), s.nseg, seg);
  };

  // Scratch for this call: the non-root working buffer and every
  // RecvReduce temporary.
  std::size_t scratch = is_root ? 0 : bytes_for(ti, static_cast<std::size_t>(a.count)) + 64;
  for (const Step& st : steps)
    if (st.op == StepOp::RecvReduce) scratch += bytes_for(ti, seg_range(st.seg).n) + 64;
  t_scratch.reserve(scratch);

  // Working buffer and the rank's own contribution.
  std::uintptr_t work = reinterpret_cast<std::uintptr_t>(a.recvbuf);
  if (!is_root) work = t_scratch.take(ti, static_cast<std::size_t>(a.count));
  int rc = MPI_SUCCESS;
  if (allgather) {
    if (a.sendbuf != MPI_IN_PLACE)
      rc = local_copy(a.sendbuf, a.sendcount, a.sendtype, at(work, static_cast<std::size_t>(rank) * a.count, ti),
                      a.count, a.type, a.self);
  } else if (a.sendbuf != MPI_IN_PLACE) {
    rc = local_copy(a.sendbuf, a.count, a.type, at(work, 0, ti), a.count, a.type, a.self);
  }
  if (rc != MPI_SUCCESS) return rc;

  const std::size_t nsteps = steps.size();

  // Dependency counters (see the header comment).
  std::vector<StepRun> run(nsteps);
  std::vector<int> sends_seen(static_cast<std::size_t>(s.nseg), 0), writes_seen(sends_seen);
  std::vector<long> last_send_to(s.programs.size(), -1);
  for (std::size_t i = 0; i < nsteps; ++i) {
    const auto seg = static_cast<std::size_t>(steps[i].seg);
    run[i].sends_before = sends_seen[seg];
    run[i].writes_before = writes_seen[seg];
    (steps[i].op == StepOp::Send ? sends_seen : writes_seen)[seg]++;
    if (steps[i].op == StepOp::Send) {
      auto& last = last_send_to[static_cast<std::size_t>(steps[i].peer)];
      run[i].prev_send_same_peer = last;
      last = static_cast<long>(i);
    }
  }
  std::vector<int> sends_done(sends_seen.size(), 0), writes_done(sends_seen.size(), 0);
  std::vector<MPI_Request> reqs(nsteps, MPI_REQUEST_NULL);
  std::vector<int> done_idx(nsteps);

  auto finish = [&](std::size_t i) {
    run[i].state = State::Done;
    const auto seg = static_cast<std::size_t>(steps[i].seg);
    (steps[i].op == StepOp::Send ? sends_done : writes_done)[seg]++;
  };

  std::size_t remaining = nsteps;
  std::size_t first_open = 0;  // steps before it are all done
  while (remaining > 0) {
    // Post or apply every step whose dependencies are met.
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (std::size_t i = first_open; i < nsteps; ++i) {
        auto& r = run[i];
        if (r.state == State::Done || r.state == State::Posted) continue;
        const Step& st = steps[i];
        const auto seg = static_cast<std::size_t>(st.seg);
        const SegRange range = seg_range(st.seg);
        const int n = static_cast<int>(range.n);
        const bool write_ready = sends_done[seg] == r.sends_before && writes_done[seg] == r.writes_before;
        if (st.op == StepOp::Send) {
          if (writes_done[seg] != r.writes_before) continue;
          if (r.prev_send_same_peer >= 0 && run[static_cast<std::size_t>(r.prev_send_same_peer)].state != State::Done)
            continue;
          if (n == 0) { finish(i); --remaining; progressed = true; continue; }
          rc = PMPI_Isend(at(work, range.first, ti), n, a.type, st.peer, st.tag, a.comm, &reqs[i]);
          r.state = State::Posted;
        } else if (st.op == StepOp::RecvCopy) {
          if (!write_ready) continue;
          if (n == 0) { finish(i); --remaining; progressed = true; continue; }
          rc = PMPI_Irecv(at(work, range.first, ti), n, a.type, st.peer, st.tag, a.comm, &reqs[i]);
          r.state = State::Posted;
        } else if (r.state == State::Waiting) {  // RecvReduce: post into a temporary now
          if (n == 0) {
            if (!write_ready) continue;
            finish(i); --remaining; progressed = true; continue;
          }
          r.temp = t_scratch.take(ti, range.n);
          rc = PMPI_Irecv(at(r.temp, 0, ti), n, a.type, st.peer, st.tag, a.comm, &reqs[i]);
          r.state = State::Posted;
        } else {  // RecvReduce, received: combine when the segment is free
          if (!write_ready) continue;
          rc = PMPI_Reduce_local(at(r.temp, 0, ti), at(work, range.first, ti), n, a.type, a.op);
          finish(i);
          --remaining;
          progressed = true;
        }
        if (rc != MPI_SUCCESS) return rc;
      }
      while (first_open < nsteps && run[first_open].state == State::Done) ++first_open;
    }
    if (remaining == 0) break;

    // Block until some posted request completes.
    int outcount = 0;
    rc = PMPI_Waitsome(static_cast<int>(nsteps), reqs.data(), &outcount, done_idx.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    if (outcount == MPI_UNDEFINED) return MPI_ERR_INTERN;  // nothing posted: a schedule bug
    for (int k = 0; k < outcount; ++k) {
      const auto i = static_cast<std::size_t>(done_idx[static_cast<std::size_t>(k)]);
      if (steps[i].op == StepOp::RecvReduce) {
        run[i].state = State::Received;
      } else {
        finish(i);
        --remaining;
      }
    }
  }
  return MPI_SUCCESS;
}

}  // namespace papshim
