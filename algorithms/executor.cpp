// Works as follows.  The working buffer is recvbuf, or for the non-root ranks
// of a reduce a temporary of `count` elements; it first receives the rank's
// own contribution (a typed local copy, unless MPI_IN_PLACE).  A segment s is
// the element range segment_bounds(count, nseg, s) of the working buffer
// (allgather: block s, `count` elements at s*count; with chunks, nseg > P,
// see "Allgather chunks" below).  Addresses are computed
// as base + first_element * extent in integer arithmetic, so buffers given as
// MPI_BOTTOM with absolute-address datatypes work, and no byte is copied
// without its datatype (a chunked allgather moves bytes only where they are
// the datatype's own, in order; below).
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
// A RecvReduce posts its receive into a temporary at once; only the combine
// waits for the dependencies.
//
// The loop.  A step's dependencies change only when a step of its own
// segment completes (the two counters) or, for a send, when the previous
// send to its peer does.  So a completion marks its segment for a rescan
// and wakes its successor to the same peer; a rescan tries the segment's
// open steps in program order and stops at the first write that cannot
// start (every later step of the segment waits for that write).  Marked
// segments and woken sends are taken smallest program position first, so
// steps are posted in the order the schedule lists them, as a scan of the
// whole program would.  Then the loop blocks in PMPI_Waitsome on the
// requests in flight only, kept in a compact array.  A call's CPU cost so
// grows with its steps times the steps of a segment, not with the square
// of its steps (Sparbit at P = 4096 has 8190 steps per rank).
//
// Allgather chunks.  The ranks of an allgather may use different receive
// types with the same type signature, so a chunk of a block cannot be cut
// in elements: 16386 ints and 8193 pairs of ints, the same bytes, split
// differently.  A schedule with chunks (nseg > P) therefore moves bytes:
// chunk q of block b is the same byte range of the block's data on every
// rank, sent and received as MPI_BYTE.  With a receive type whose memory is its packed
// form (a predefined type, or contiguous copies of one: in_order()) the
// bytes are recvbuf's own; otherwise the call runs on a staging buffer of P
// blocks, as large as recvbuf, the own block packed into it first
// (PMPI_Pack) and the others unpacked into recvbuf at the end.  Whole
// blocks (nseg == P) move typed as before.
//
// Errors.  A step that fails (a post, a completion, a combine) is counted as
// done and the schedule goes on: every message the peers expect is still
// sent and every message they send is still received, so the communicator
// is clean when the call returns the first error.  Only when the wait itself
// fails are the posted receives cancelled and the sends left to complete on
// their own (PMPI_Request_free).
//
// Memory and typed copies: executor_buffers.h.  What differs under
// SimGrid's SMPI (bench/smpi): executor_smpi.cpp.
#include "algorithms/executor.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "algorithms/executor_buffers.h"
#include "algorithms/executor_smpi.h"

namespace papshim {

namespace {

using namespace detail;  // executor_buffers.h, executor_smpi.h

thread_local ScratchArena t_scratch;

enum class State : std::uint8_t { Waiting, Posted, Received, Done };

struct StepRun {
  State state = State::Waiting;
  int sends_before = 0, writes_before = 0;
  long prev_send_same_peer = -1;  // Send steps: the previous send to that peer
  long next_send_same_peer = -1;  // ... and the next one
  std::uintptr_t temp = 0;  // RecvReduce only: where the segment is received
};

// One rank's run of one schedule.
class Execution {
 public:
  Execution(const Schedule& s, int rank, const CallArgs& a, MPI_Comm comm)
      : s_(s), a_(a), comm_(comm), ti_(type_info(a.type)), allgather_(a.coll == Collective::Allgather),
        is_root_(a.coll != Collective::Reduce || rank == a.root),
        bytes_(allgather_ && s.nseg > static_cast<int>(s.programs.size())),
        msg_type_(bytes_ ? MPI_BYTE : a.type), mti_(bytes_ ? type_info(MPI_BYTE) : ti_),
        unit_count_(bytes_ ? static_cast<std::size_t>(a.count) * static_cast<std::size_t>(ti_.size)
                           : static_cast<std::size_t>(a.count)),
        steps_(s.programs[static_cast<std::size_t>(rank)].steps), rank_(rank) {}

  int run() {
    if (!prepare()) return kExecNoMemory;
    start_all();
    while (remaining_ > 0) {
      start_ready_steps();
      if (remaining_ == 0) break;
      if (!wait_some()) break;
    }
    if (staged_) unstage();
    t_scratch.trim();
    return first_error_;
  }

 private:
  // Element range of a segment in units of msg_type_ (bytes for a chunked
  // allgather).
  SegRange seg_range(int seg) const {
    if (allgather_) return allgather_segment(unit_count_, static_cast<int>(s_.programs.size()), s_.nseg, seg);
    return segment_bounds(unit_count_, s_.nseg, seg);
  }

  // Where block b of the user's receive buffer starts.
  void* user_block(int b) const {
    return at(reinterpret_cast<std::uintptr_t>(a_.recvbuf),
              static_cast<std::size_t>(b) * static_cast<std::size_t>(a_.count), ti_);
  }

  // A staged chunked allgather (the receive type's memory is not its packed
  // form): the own block packed into the staging buffer (work_), and copied
  // to recvbuf unless in place; false when it does not pack into exactly its
  // type size (a heterogeneous representation), noted.
  bool stage_own_block() {
    const std::size_t block = unit_count_;
    const void* src = a_.sendbuf == MPI_IN_PLACE ? user_block(rank_) : a_.sendbuf;
    const int n = a_.sendbuf == MPI_IN_PLACE ? a_.count : a_.sendcount;
    const MPI_Datatype t = a_.sendbuf == MPI_IN_PLACE ? a_.type : a_.sendtype;
    int pos = 0;
    const int rc = PMPI_Pack(src, n, t, at(work_, static_cast<std::size_t>(rank_) * block, mti_),
                             static_cast<int>(block), &pos, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS || static_cast<std::size_t>(pos) != block) {
      note(rc != MPI_SUCCESS ? rc : MPI_ERR_TYPE);
      return false;
    }
    if (a_.sendbuf != MPI_IN_PLACE)
      note(local_copy(a_.sendbuf, a_.sendcount, a_.sendtype, user_block(rank_), a_.count, a_.type));
    return true;
  }

  // The other blocks from the staging buffer into recvbuf.
  void unstage() {
    const std::size_t block = unit_count_;
    for (int b = 0; b < static_cast<int>(s_.programs.size()); ++b) {
      if (b == rank_) continue;
      int pos = 0;
      note(PMPI_Unpack(at(work_, static_cast<std::size_t>(b) * block, mti_), static_cast<int>(block), &pos,
                       user_block(b), a_.count, a_.type, MPI_COMM_SELF));
    }
  }

  void note(int rc) {
    if (rc != MPI_SUCCESS && first_error_ == MPI_SUCCESS) first_error_ = rc;
  }

  // Scratch, the working buffer with the rank's own contribution, and the
  // dependency counters (see the header comment).  False: no scratch.  A
  // failed copy is noted and the schedule still runs.
  bool prepare() {
    std::size_t scratch = is_root_ ? 0 : bytes_for(ti_, static_cast<std::size_t>(a_.count)) + 64;
    for (const Step& st : steps_)
      if (st.op == StepOp::RecvReduce) scratch += bytes_for(ti_, seg_range(st.seg).n) + 64;
    staged_ = bytes_ && !(ti_.plain && in_order(a_.type));
    if (staged_) scratch += unit_count_ * s_.programs.size() + 64;
    if (!t_scratch.reserve(scratch)) return false;

    work_ = reinterpret_cast<std::uintptr_t>(a_.recvbuf);
    if (!is_root_) work_ = t_scratch.take(ti_, static_cast<std::size_t>(a_.count));
    int rc = MPI_SUCCESS;
    if (staged_) {
      // The messages and the dependency counters below work on the staging
      // buffer alone; a failed pack is noted and the schedule still runs.
      work_ = t_scratch.take(mti_, unit_count_ * s_.programs.size());
      stage_own_block();
    } else if (allgather_) {
      if (a_.sendbuf != MPI_IN_PLACE)
        rc = local_copy(a_.sendbuf, a_.sendcount, a_.sendtype,
                        at(work_, static_cast<std::size_t>(rank_) * static_cast<std::size_t>(a_.count), ti_), a_.count,
                        a_.type);
    } else if (a_.sendbuf != MPI_IN_PLACE) {
      rc = local_copy(a_.sendbuf, a_.count, a_.type, at(work_, 0, ti_), a_.count, a_.type);
    }
    note(rc);

    const std::size_t n = steps_.size();
    run_.assign(n, StepRun{});
    sends_done_.assign(static_cast<std::size_t>(s_.nseg), 0);
    writes_done_ = sends_done_;
    std::vector<int> sends_seen(sends_done_), writes_seen(sends_done_);
    std::vector<long> last_send_to(s_.programs.size(), -1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto seg = static_cast<std::size_t>(steps_[i].seg);
      run_[i].sends_before = sends_seen[seg];
      run_[i].writes_before = writes_seen[seg];
      (steps_[i].op == StepOp::Send ? sends_seen : writes_seen)[seg]++;
      if (steps_[i].op == StepOp::Send) {
        auto& last = last_send_to[static_cast<std::size_t>(steps_[i].peer)];
        run_[i].prev_send_same_peer = last;
        if (last >= 0) run_[static_cast<std::size_t>(last)].next_send_same_peer = static_cast<long>(i);
        last = static_cast<long>(i);
      }
    }
    // Each segment's steps in program order (seg_steps_[seg_first_[g] ..
    // seg_first_[g + 1])), from the counts just taken.
    const auto nseg = static_cast<std::size_t>(s_.nseg);
    seg_first_.assign(nseg + 1, 0);
    for (std::size_t g = 0; g < nseg; ++g)
      seg_first_[g + 1] = seg_first_[g] + static_cast<std::size_t>(sends_seen[g] + writes_seen[g]);
    seg_steps_.resize(n);
    seg_open_.assign(seg_first_.begin(), seg_first_.end() - 1);
    std::vector<std::size_t> fill(seg_open_);
    for (std::size_t i = 0; i < n; ++i) seg_steps_[fill[static_cast<std::size_t>(steps_[i].seg)]++] = i;
    seg_marked_.assign(nseg, 0);
    todo_.clear();
    active_.clear();
    active_step_.clear();
    remaining_ = n;
    return true;
  }

  void finish(std::size_t i) {
    run_[i].state = State::Done;
    const auto seg = static_cast<std::size_t>(steps_[i].seg);
    (steps_[i].op == StepOp::Send ? sends_done_ : writes_done_)[seg]++;
    --remaining_;
    mark(seg);
    if (run_[i].next_send_same_peer >= 0) {
      const auto next = static_cast<std::size_t>(run_[i].next_send_same_peer);
      push(next, 2 * next + 1);
    }
  }

  // To do: (program position, 2 x segment) rescans a segment, (position,
  // 2 x step + 1) tries a woken send; a min-heap on the position.
  void push(std::size_t position, std::size_t code) {
    todo_.emplace_back(position, code);
    std::push_heap(todo_.begin(), todo_.end(), std::greater<>());
  }

  // The segment's counters changed: rescan it, at the position of its first
  // open step.
  void mark(std::size_t seg) {
    if (seg_marked_[seg] || seg_open_[seg] == seg_first_[seg + 1]) return;
    seg_marked_[seg] = 1;
    push(seg_steps_[seg_open_[seg]], 2 * seg);
  }

  // A request in flight for step i.
  void track(MPI_Request r, std::size_t i) {
    active_.push_back(r);
    active_step_.push_back(i);
  }

  // Posts or applies step i if its dependencies are met; true if it moved.
  bool try_start(std::size_t i) {
    StepRun& r = run_[i];
    const Step& st = steps_[i];
    const auto seg = static_cast<std::size_t>(st.seg);
    const SegRange range = seg_range(st.seg);
    const int n = static_cast<int>(range.n);
    const bool write_ready = sends_done_[seg] == r.sends_before && writes_done_[seg] == r.writes_before;
    int rc = MPI_SUCCESS;
    MPI_Request req = MPI_REQUEST_NULL;
    if (st.op == StepOp::Send) {
      if (writes_done_[seg] != r.writes_before) return false;
      if (r.prev_send_same_peer >= 0 && run_[static_cast<std::size_t>(r.prev_send_same_peer)].state != State::Done)
        return false;
      if (n > 0) rc = post_send(at(work_, range.first, mti_), n, msg_type_, st.peer, st.tag, comm_, &req);
    } else if (st.op == StepOp::RecvCopy) {
      if (!write_ready) return false;
      if (n > 0) rc = PMPI_Irecv(at(work_, range.first, mti_), n, msg_type_, st.peer, st.tag, comm_, &req);
    } else if (r.state == State::Waiting) {  // RecvReduce: post into a temporary now
      if (n == 0) {
        if (!write_ready) return false;
        finish(i);
        return true;
      }
      r.temp = t_scratch.take(ti_, range.n);
      rc = PMPI_Irecv(at(r.temp, 0, ti_), n, a_.type, st.peer, st.tag, comm_, &req);
    } else {  // RecvReduce, received: combine when the segment is free
      if (!write_ready) return false;
      note(combine(at(r.temp, 0, ti_), at(work_, range.first, ti_), n, a_.type, ti_.size, a_.op));
      finish(i);
      return true;
    }
    note(rc);
    if (n == 0 || rc != MPI_SUCCESS) {
      finish(i);
    } else {
      r.state = State::Posted;
      track(req, i);
    }
    return true;
  }

  // Posts every RecvReduce's receive (they wait for nothing) and marks
  // every segment for its first scan.
  void start_all() {
    for (std::size_t i = 0; i < steps_.size(); ++i)
      if (steps_[i].op == StepOp::RecvReduce && run_[i].state == State::Waiting) try_start(i);
    for (std::size_t g = 0; g < seg_marked_.size(); ++g) mark(g);
  }

  // Starts what the completions since the last call made startable, and what
  // that in turn makes startable, until nothing moves.
  void start_ready_steps() {
    while (!todo_.empty()) {
      std::pop_heap(todo_.begin(), todo_.end(), std::greater<>());
      const std::size_t code = todo_.back().second;
      todo_.pop_back();
      if (code % 2 == 1) {
        const std::size_t i = code / 2;
        if (run_[i].state == State::Waiting) try_start(i);
      } else {
        seg_marked_[code / 2] = 0;
        scan(code / 2);
      }
    }
  }

  // Tries the open steps of a segment in program order, up to the first
  // write that cannot start or is in flight: every later step of the
  // segment waits for it.  Sends that cannot start (their peer's previous
  // send is still in flight) are passed over; their predecessor wakes them.
  void scan(std::size_t seg) {
    std::size_t& open = seg_open_[seg];
    const std::size_t end = seg_first_[seg + 1];
    while (open < end && run_[seg_steps_[open]].state == State::Done) ++open;
    for (std::size_t k = open; k < end; ++k) {
      const std::size_t i = seg_steps_[k];
      const State st = run_[i].state;
      if (st == State::Done) continue;
      const bool write = steps_[i].op != StepOp::Send;
      if (st == State::Posted || !try_start(i)) {
        if (write) break;
      }
    }
  }

  // Blocks until some posted request completes; false when nothing more
  // can happen (the error is noted).
  bool wait_some() {
    const auto count = active_.size();
    if (count == 0) {  // nothing in flight, steps left: a schedule bug
      note(MPI_ERR_INTERN);
      return false;
    }
    if (done_idx_.size() < count) {
      done_idx_.resize(count);
      statuses_.resize(count);
    }
    int outcount = 0;
    const int rc = wait_requests(static_cast<int>(count), active_.data(), &outcount, done_idx_.data(),
                                 statuses_.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      note(rc);
      abandon();
      return false;
    }
    if (outcount == MPI_UNDEFINED) {  // every request was inactive: cannot happen, but never loop on it
      note(MPI_ERR_INTERN);
      return false;
    }
    for (int k = 0; k < outcount; ++k) {
      const auto slot = static_cast<std::size_t>(done_idx_[static_cast<std::size_t>(k)]);
      const std::size_t i = active_step_[slot];
      active_[slot] = MPI_REQUEST_NULL;  // MPI did so too; said again for the compaction below
      const int err = statuses_[static_cast<std::size_t>(k)].MPI_ERROR;
      const bool failed = rc == MPI_ERR_IN_STATUS && err != MPI_SUCCESS && err != MPI_ERR_PENDING;
      if (failed) note(err);
      if (steps_[i].op == StepOp::RecvReduce && !failed) {
        run_[i].state = State::Received;
        mark(static_cast<std::size_t>(steps_[i].seg));
      } else {
        finish(i);
      }
    }
    // Keep only the requests still in flight, in their order.
    std::size_t kept = 0;
    for (std::size_t j = 0; j < count; ++j) {
      if (active_[j] == MPI_REQUEST_NULL) continue;
      active_[kept] = active_[j];
      active_step_[kept] = active_step_[j];
      ++kept;
    }
    active_.resize(kept);
    active_step_.resize(kept);
    return true;
  }

  // The wait failed: cancel the receives still posted, let the sends finish
  // on their own.
  void abandon() {
    for (std::size_t j = 0; j < active_.size(); ++j) {
      MPI_Request& r = active_[j];
      if (r == MPI_REQUEST_NULL) continue;
      if (steps_[active_step_[j]].op == StepOp::Send) {
        PMPI_Request_free(&r);
      } else {
        PMPI_Cancel(&r);
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
      }
    }
    active_.clear();
    active_step_.clear();
  }

  const Schedule& s_;
  const CallArgs& a_;
  const MPI_Comm comm_;  // the private duplicate
  const TypeInfo ti_;
  const bool allgather_, is_root_;
  const bool bytes_;              // a chunked allgather: messages in bytes
  const MPI_Datatype msg_type_;   // MPI_BYTE then, else the call's type
  const TypeInfo mti_;            // msg_type_'s
  const std::size_t unit_count_;  // per block (allgather) or vector, in msg_type_ units
  const std::vector<Step>& steps_;
  const int rank_;
  bool staged_ = false;           // bytes_, memory not the type's packed form: work_ is a staging buffer
  std::uintptr_t work_ = 0;
  std::vector<StepRun> run_;
  std::vector<int> sends_done_, writes_done_;
  std::vector<std::size_t> seg_first_;  // segment g's steps: seg_steps_[seg_first_[g] .. seg_first_[g + 1])
  std::vector<std::size_t> seg_steps_;
  std::vector<std::size_t> seg_open_;   // per segment: where its first step not done may be
  std::vector<char> seg_marked_;        // per segment: a rescan is in todo_
  std::vector<std::pair<std::size_t, std::size_t>> todo_;  // rescans and woken sends (push())
  std::vector<MPI_Request> active_;     // requests in flight ...
  std::vector<std::size_t> active_step_;  // ... and their steps
  std::vector<int> done_idx_;
  std::vector<MPI_Status> statuses_;
  std::size_t remaining_ = 0;
  int first_error_ = MPI_SUCCESS;
};

}  // namespace

int execute(const Schedule& s, int rank, const CallArgs& a, MPI_Comm comm) { return Execution(s, rank, a, comm).run(); }

}  // namespace papshim
