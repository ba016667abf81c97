// Works as follows (the model itself is described in simulator.h).
//
// 1. flatten_and_pair() (sim_pairing.cpp) checks every step (peer, segment, tag, operation) and pairs
//    each Send with its receive: sends and receives are radix-sorted by
//    (source, destination, tag) and walked side by side, so duplicates and
//    strays show up as neighbours or gaps.
// 2. Steps get global ids (rank offset + index).  For each (rank, segment)
//    the steps of that segment are listed in program order.  The dependency
//    rules of schedule.h make that list a sequence of groups: a run of Sends
//    (they may run together once the write before them is done) or a single
//    write (it waits for everything before it).  A group is released when
//    the previous one has completed, so every step is released exactly once.
// 3. A discrete-event loop (min-heap on time, then insertion order) handles
//    arrivals, transfer ends and combine ends.  All events of one instant are
//    handled first; then dispatch() starts the waiting messages whose two
//    ports are free, oldest ready first.  Waiting messages are queued per
//    (source, destination) pair, and each port lists its pairs that have
//    some, so a free port finds its best startable message by looking at
//    one head per partner.
// 4. The symbolic state of a (rank, segment) is two bit sets over ranks,
//    "present" and "present more than once"; a Send copies the sender's
//    state into the message when it is released.
// 5. Steps left over mean deadlock (reported with the reason the first one
//    is stuck); otherwise the final states are checked.
#include "algorithms/simulator.h"

#include "algorithms/sim_pairing.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <sstream>
#include <utility>

namespace papshim {

SimCost SimCost::tau_steps(double tau) {
  SimCost c;
  c.alpha = tau;
  return c;
}

SimCost SimCost::from_figures(const CostFigures& figures, std::size_t elem_size, std::size_t count) {
  SimCost c;
  c.alpha = figures.alpha;
  c.beta = figures.beta;
  c.gamma = figures.gamma;
  if (figures.curve_n >= 2) c.curve = figures;
  c.elem_size = elem_size;
  c.count = count;
  return c;
}

std::size_t SimCost::seg_bytes(const Schedule& s, int seg) const {
  if (s.coll == Collective::Allgather)
    return allgather_segment(count, static_cast<int>(s.programs.size()), s.nseg, seg).n * elem_size;
  return segment_bounds(count, s.nseg, seg).n * elem_size;
}

namespace {

using Word = std::uint64_t;

struct Msg {
  int send = -1, recv = -1;  // global step ids
  int pair = -1;             // the (source, destination) queue it waits in
  bool send_posted = false, recv_posted = false;
};

// A message waiting for its ports; the order is the dispatch priority.
struct Cand {
  double ready;  // when the second side was posted
  int send;      // global step id: orders by sender rank, then program order
  int m;         // message
  bool operator<(const Cand& o) const { return ready != o.ready ? ready < o.ready : send < o.send; }
  bool operator>(const Cand& o) const { return o < *this; }
};

// The ready messages from one rank to another, best first (a min-heap).  A
// pair with waiting messages is listed at both of its ports.
struct Pair {
  std::array<int, 2> port;          // outgoing port of the source, incoming of the destination
  std::array<std::size_t, 2> at{};  // index in each port's active list
  std::vector<Cand> heap;
};

enum class Ev : std::uint8_t { Arrive, TransferEnd, CombineEnd };

struct Event {
  double t;
  std::uint64_t seq;
  Ev kind;
  int id;  // rank, message or step
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Sim {
 public:
  Sim(const Schedule& s, const std::vector<double>& arrival, const SimCost& c)
      : s_(s), arrival_(arrival), cost_(c), P_(static_cast<int>(s.programs.size())),
        chunks_(allgather_chunks(s.nseg, P_)) {}

  SimResult run() {
    SimResult res;
    res.error = validate();
    if (!res.error.empty()) return res;
    setup();
    for (int r = 0; r < P_; ++r) push(arrival_[sz(r)], Ev::Arrive, r);
    while (!heap_.empty()) {
      const double t = heap_.top().t;
      while (!heap_.empty() && heap_.top().t == t) {
        const Event e = heap_.top();
        heap_.pop();
        if (e.kind == Ev::Arrive) arrive(e.id, t);
        else if (e.kind == Ev::TransferEnd) transfer_end(e.id, t);
        else combine_end(e.id, t);
      }
      dispatch(t);
    }
    res.exit = exit_;
    for (int r = 0; r < P_; ++r) {
      res.mean_elapsed += exit_[sz(r)] - arrival_[sz(r)];
      res.max_exit = r == 0 ? exit_[0] : std::max(res.max_exit, exit_[sz(r)]);
    }
    res.mean_elapsed /= P_;
    res.error = left_ > 0 ? deadlock_report() : final_check();
    res.ok = res.error.empty();
    return res;
  }

 private:
  static std::size_t sz(int i) { return static_cast<std::size_t>(i); }
  const Step& step(int g) const { return fs_.flat[sz(g)]; }
  int rank_of(int g) const { return fs_.rank[sz(g)]; }

  std::string where(int g) const { return fs_.where(s_, g); }

  // --- 1. static checks and message pairing (algorithms/sim_pairing.h) ---
  std::string validate() {
    std::string error = flatten_and_pair(s_, arrival_.size(), fs_);
    if (!error.empty()) return error;
    msgs_.reserve(fs_.msgs.size());
    for (const auto& m : fs_.msgs) msgs_.push_back(Msg{m.send, m.recv, m.pair});
    for (const auto& ports : fs_.pair_ports) pairs_.push_back(Pair{ports, {}, {}});
    return "";
  }

  // --- 2. per-segment step lists, buffers, ports --------------------------
  void setup() {
    const std::size_t nrs = sz(P_) * sz(s_.nseg), nsteps = fs_.rank.size();
    W_ = (sz(P_) + 63) / 64;
    seg_begin_.assign(nrs + 1, 0);
    for (std::size_t g = 0; g < nsteps; ++g) ++seg_begin_[rs_of(static_cast<int>(g)) + 1];
    for (std::size_t k = 0; k < nrs; ++k) seg_begin_[k + 1] += seg_begin_[k];
    seg_steps_.resize(nsteps);
    next_.assign(seg_begin_.begin(), seg_begin_.end() - 1);
    for (std::size_t g = 0; g < nsteps; ++g) seg_steps_[next_[rs_of(static_cast<int>(g))]++] = static_cast<int>(g);
    next_.assign(seg_begin_.begin(), seg_begin_.end() - 1);
    open_.assign(nrs, 0);
    released_.assign(nsteps, 0);
    received_.assign(nsteps, 0);
    done_.assign(nsteps, 0);
    left_ = nsteps;
    state_.assign(nrs * 2 * W_, 0);
    payload_.assign(msgs_.size() * 2 * W_, 0);
    for (int r = 0; r < P_; ++r)
      for (int seg = 0; seg < s_.nseg; ++seg)
        if (s_.coll != Collective::Allgather || seg / chunks_ == r) set_bit(state_at(r, seg), r);
    busy_.assign(2 * sz(P_), 0.0);
    active_.assign(2 * sz(P_), {});
    is_touched_.assign(2 * sz(P_), 0);
    reducer_free_.assign(sz(P_), 0.0);
    exit_ = arrival_;
    for (int seg = 0; seg < s_.nseg; ++seg) bytes_.push_back(static_cast<double>(cost_.seg_bytes(s_, seg)));
  }
  std::size_t rs_of(int g) const { return sz(rank_of(g)) * sz(s_.nseg) + sz(step(g).seg); }

  // --- 4. symbolic contents -------------------------------------------------
  Word* state_at(int r, int seg) { return &state_[(sz(r) * sz(s_.nseg) + sz(seg)) * 2 * W_]; }
  Word* payload_at(int m) { return &payload_[sz(m) * 2 * W_]; }
  static void set_bit(Word* w, int b) { w[sz(b) / 64] |= Word{1} << (sz(b) % 64); }
  static bool bit(const Word* w, int b) { return (w[sz(b) / 64] >> (sz(b) % 64)) & 1U; }
  void add(Word* dst, const Word* src) const {  // dst += src (multiset union)
    for (std::size_t k = 0; k < W_; ++k) {
      dst[W_ + k] |= src[W_ + k] | (dst[k] & src[k]);
      dst[k] |= src[k];
    }
  }

  // --- 3. the event loop ----------------------------------------------------
  void push(double t, Ev kind, int id) { heap_.push(Event{t, seq_++, kind, id}); }

  void arrive(int r, double t) {
    const auto& steps = s_.programs[sz(r)].steps;
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (steps[i].op == StepOp::RecvReduce) post(fs_.msg_of[fs_.off[sz(r)] + i], false, t);
    for (int seg = 0; seg < s_.nseg; ++seg) release_group(sz(r) * sz(s_.nseg) + sz(seg), t);
  }

  // Release the next group of a (rank, segment): a run of Sends or one write.
  void release_group(std::size_t rs, double t) {
    const std::size_t end = seg_begin_[rs + 1];
    std::size_t& k = next_[rs];
    if (k == end) return;
    if (step(seg_steps_[k]).op != StepOp::Send) {
      open_[rs] = 1;
      release_step(seg_steps_[k++], t);
      return;
    }
    for (; k < end && step(seg_steps_[k]).op == StepOp::Send; ++k) {
      ++open_[rs];
      release_step(seg_steps_[k], t);
    }
  }

  void release_step(int g, double t) {
    released_[sz(g)] = 1;
    const Step& st = step(g);
    const int m = fs_.msg_of[sz(g)];
    if (st.op == StepOp::Send) {
      std::copy_n(state_at(rank_of(g), st.seg), 2 * W_, payload_at(m));
      post(m, true, t);
    } else if (st.op == StepOp::RecvCopy) {
      post(m, false, t);
    } else {
      try_combine(g, t);
    }
  }

  void post(int m, bool send_side, double t) {
    Msg& msg = msgs_[sz(m)];
    (send_side ? msg.send_posted : msg.recv_posted) = true;
    if (!msg.send_posted || !msg.recv_posted) return;
    if (!cost_.serial_ports) {
      start(m, t);
      return;
    }
    Pair& pr = pairs_[sz(msg.pair)];
    if (pr.heap.empty())
      for (int side = 0; side < 2; ++side) {
        auto& list = active_[sz(pr.port[sz(side)])];
        pr.at[sz(side)] = list.size();
        list.push_back(msg.pair);
      }
    pr.heap.push_back(Cand{t, msg.send, m});
    std::push_heap(pr.heap.begin(), pr.heap.end(), std::greater<>());
    for (int p : pr.port) touch(p);
  }

  const std::array<int, 2>& ports(int m) const { return pairs_[sz(msgs_[sz(m)].pair)].port; }
  void touch(int p) {
    if (!is_touched_[sz(p)]) touched_.push_back(p);
    is_touched_[sz(p)] = 1;
  }

  void start(int m, double t) {
    const double bytes = static_cast<double>(bytes_[sz(step(msgs_[sz(m)].send).seg)]);
    const double end = t + (cost_.curve.curve_n >= 2 ? cost_.curve.transfer(bytes) : cost_.alpha + cost_.beta * bytes);
    if (cost_.serial_ports)
      for (int p : ports(m)) busy_[sz(p)] = end;
    push(end, Ev::TransferEnd, m);
  }

  // Start waiting messages whose two ports are free, oldest ready first.
  // Each round takes, from every touched free port, the best message at the
  // head of one of its pairs whose other port is free too, and starts them
  // in priority order; a port that loses its pick to a better message is
  // looked at again in the next round.
  void dispatch(double t) {
    while (!touched_.empty()) {
      cand_.clear();
      for (int p : touched_) {
        is_touched_[sz(p)] = 0;
        if (busy_[sz(p)] > t) continue;
        const Cand* best = nullptr;
        for (int pi : active_[sz(p)]) {
          const Pair& pr = pairs_[sz(pi)];
          const int other = pr.port[0] == p ? pr.port[1] : pr.port[0];
          if (busy_[sz(other)] <= t && (!best || pr.heap.front() < *best)) best = &pr.heap.front();
        }
        if (best) cand_.push_back(*best);
      }
      touched_.clear();
      std::sort(cand_.begin(), cand_.end());
      cand_.erase(std::unique(cand_.begin(), cand_.end(), [](const Cand& a, const Cand& b) { return a.m == b.m; }),
                  cand_.end());
      for (const Cand& c : cand_) {
        Pair& pr = pairs_[sz(msgs_[sz(c.m)].pair)];
        if (busy_[sz(pr.port[0])] <= t && busy_[sz(pr.port[1])] <= t) {
          pop_head(pr);
          start(c.m, t);
        } else {
          for (int p : pr.port)
            if (busy_[sz(p)] <= t) touch(p);
        }
      }
    }
  }

  // Removes the best message of a pair (the one being started); an emptied
  // pair leaves the active lists of its ports.
  void pop_head(Pair& pr) {
    std::pop_heap(pr.heap.begin(), pr.heap.end(), std::greater<>());
    pr.heap.pop_back();
    if (!pr.heap.empty()) return;
    for (int side = 0; side < 2; ++side) {
      auto& list = active_[sz(pr.port[sz(side)])];
      const std::size_t at = pr.at[sz(side)];
      Pair& moved = pairs_[sz(list.back())];
      moved.at[moved.port[0] == pr.port[sz(side)] ? 0 : 1] = at;
      list[at] = list.back();
      list.pop_back();
    }
  }

  void transfer_end(int m, double t) {
    const Msg& msg = msgs_[sz(m)];
    if (cost_.serial_ports)
      for (int p : ports(m)) touch(p);
    complete(msg.send, t);
    if (step(msg.recv).op == StepOp::RecvCopy) {
      std::copy_n(payload_at(m), 2 * W_, state_at(rank_of(msg.recv), step(msg.recv).seg));
      complete(msg.recv, t);
    } else {
      received_[sz(msg.recv)] = 1;
      try_combine(msg.recv, t);
    }
  }

  void try_combine(int g, double t) {
    if (!released_[sz(g)] || !received_[sz(g)]) return;
    double& free_at = reducer_free_[sz(rank_of(g))];
    free_at = std::max(t, free_at) + cost_.gamma * bytes_[sz(step(g).seg)];
    push(free_at, Ev::CombineEnd, g);
  }

  void combine_end(int g, double t) {
    add(state_at(rank_of(g), step(g).seg), payload_at(fs_.msg_of[sz(g)]));
    complete(g, t);
  }

  void complete(int g, double t) {
    done_[sz(g)] = 1;
    --left_;
    double& ex = exit_[sz(rank_of(g))];
    ex = std::max(ex, t);
    const std::size_t rs = rs_of(g);
    if (--open_[rs] == 0) release_group(rs, t);
  }

  // --- 5. outcome -----------------------------------------------------------
  std::string deadlock_report() const {
    for (int g = 0; g < static_cast<int>(fs_.rank.size()); ++g) {
      if (done_[sz(g)]) continue;
      const Step& st = step(g);
      const Msg& msg = msgs_[sz(fs_.msg_of[sz(g)])];
      const int other = st.op == StepOp::Send ? msg.recv : msg.send;
      std::string why;
      if (!released_[sz(g)])
        why = st.op == StepOp::Send ? "waits for an earlier write of its segment"
                                    : "waits for earlier steps on its segment";
      else if (st.op == StepOp::Send && !msg.recv_posted)
        why = "its receive, " + where(other) + ", is never posted";
      else if (st.op != StepOp::Send && !msg.send_posted)
        why = "its send, " + where(other) + ", is never posted";
      else
        why = "stuck";
      return "deadlock: " + std::to_string(left_) + " steps never complete; first: " + where(g) + " " + why;
    }
    return "deadlock";
  }

  std::string final_check() {
    const bool gather = s_.coll == Collective::Allgather;
    std::vector<Word> want(W_, 0);
    for (int x = 0; x < P_; ++x) set_bit(want.data(), x);
    for (int r = 0; r < P_; ++r) {
      if (s_.coll == Collective::Reduce && r != s_.root) continue;
      for (int seg = 0; seg < s_.nseg; ++seg) {
        if (gather) {
          std::fill(want.begin(), want.end(), 0);
          set_bit(want.data(), seg / chunks_);
        }
        const Word* w = state_at(r, seg);
        bool right = true;
        for (std::size_t k = 0; k < W_; ++k) right = right && w[k] == want[k] && w[W_ + k] == 0;
        if (!right) return explain(r, seg, w, want.data());
      }
    }
    return "";
  }

  std::string explain(int r, int seg, const Word* w, const Word* want) const {
    const std::string at =
        "rank " + std::to_string(r) +
        (s_.coll != Collective::Allgather ? " segment " + std::to_string(seg)
         : chunks_ == 1                   ? " block " + std::to_string(seg)
                                          : " block " + std::to_string(seg / chunks_) + " segment " + std::to_string(seg));
    for (int x = 0; x < P_; ++x) {
      if (bit(want, x) && !bit(w, x)) return at + " lacks the contribution of rank " + std::to_string(x);
      if (!bit(want, x) && bit(w, x)) return at + " holds data of rank " + std::to_string(x);
      if (bit(w + W_, x)) return at + " holds the contribution of rank " + std::to_string(x) + " more than once";
    }
    return at + " is wrong";
  }

  const Schedule& s_;
  const std::vector<double>& arrival_;
  const SimCost& cost_;
  const int P_;
  const int chunks_;                  // allgather: segments per block
  std::size_t W_ = 1;                 // words per bit set
  FlatSchedule fs_;                   // steps by global id, messages paired
  std::vector<Msg> msgs_;
  std::vector<std::size_t> seg_begin_, next_;  // CSR over (rank, segment)
  std::vector<int> seg_steps_, open_;
  std::vector<char> released_, received_, done_;
  std::size_t left_ = 0;
  std::vector<Word> state_, payload_;
  std::vector<double> busy_, reducer_free_, exit_;
  std::vector<double> bytes_;         // per segment
  std::vector<Pair> pairs_;
  std::vector<std::vector<int>> active_;  // per port: pairs with waiting messages
  std::vector<int> touched_;
  std::vector<Cand> cand_;
  std::vector<char> is_touched_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace

SimResult simulate(const Schedule& schedule, const std::vector<double>& arrival, const SimCost& cost) {
  return Sim(schedule, arrival, cost).run();
}

}  // namespace papshim
