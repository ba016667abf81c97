// Test support for the schedule tests (schedule_check.h).
//
// Allgather and reduce schedules: ContentChecker.
//
// Works as follows.  A small symbolic checker runs a schedule in memory.  The
// state of (rank, segment) is the multiset of contributions it holds, as a
// sorted list of origin ranks: allgather starts with {r} in segment r only,
// reduce with {r} in every segment.  A message carries the sender's list;
// RecvCopy replaces, RecvReduce merges.  Messages match by (src, dst, tag).
// Two execution models, both must finish and end with the right data:
//   eager      each rank runs its steps strictly in program order; a Send
//              returns at once (buffered), a receive blocks until its message
//              exists.  This checks that program order is a valid time order.
//   dataflow   the executor's model from schedule.h: a step is posted once its
//              per-segment dependencies are done (a RecvReduce's receive at
//              once), and a Send completes only when its receive is posted
//              (rendezvous).
// No progress with steps left means deadlock.
//
// Allreduce schedules: SymbolicRun.
//
// Works as follows.  A symbolic checker plays a schedule in memory.  The
// value of (rank, segment) is a `Value`: `count[q]`, how many times rank q's
// contribution is in it, and `expr`, an interned id of the reduction tree that
// produced it (leaf q for rank q's own data; RecvReduce makes the node
// (incoming, own), as the executor computes buf = incoming op buf).  A Send
// carries the sender's value when the Send is issued, RecvReduce combines it
// into the receiver's, RecvCopy replaces it.  Messages match by
// (source, destination, tag).  Two execution models:
//   in order   every rank runs its steps strictly in program order; a Send is
//              buffered and returns at once, a receive waits for its message.
//              Finishing shows that program order is a valid time order.
//   data flow  the executor's rules (schedule.h): a Send is issued once the
//              earlier writes of its segment are done, a RecvCopy once every
//              earlier step of its segment is done; a RecvReduce's receive is
//              posted at once but combines only once the earlier steps of its
//              segment are done; a Send completes when its receive is posted.
// No progress with steps left is a deadlock.  At the end every rank must hold
// every contribution exactly once in every segment, and all ranks the same
// expression (the same bits, whatever the floating-point op).
#include "schedule_check.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace papshim::test_support {
namespace {

// ------------------------------------------------ allgather and reduce --

using Content = std::vector<int>;          // sorted origin ranks
using Key = std::tuple<int, int, int>;     // (src, dst, tag)
enum class Model { Eager, Dataflow };

bool is_write(StepOp op) { return op != StepOp::Send; }

std::string where(int rank, std::size_t i, const Step& st) {
  std::ostringstream os;
  os << "rank " << rank << " step " << i << " (" << to_string(st.op)
     << " peer " << st.peer << " seg " << st.seg << " tag " << st.tag << ")";
  return os.str();
}

Content merged(const Content& a, const Content& b) {
  Content out;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class ContentChecker {
 public:
  explicit ContentChecker(const Schedule& s) : s_(s), P_(static_cast<int>(s.programs.size())) {}

  // "" when the schedule is well formed, runs to completion under `model`
  // and leaves the right data; otherwise the first problem found.
  std::string run(Model model) {
    if (auto err = validate(); !err.empty()) return err;
    init_buffers();
    auto err = model == Model::Eager ? run_eager() : run_dataflow();
    return err.empty() ? final_check() : err;
  }

 private:
  const Schedule& s_;
  int P_;
  std::vector<std::vector<Content>> buf_;  // [rank][seg]

  // Allgather: the block segment g belongs to.
  int block(int g) const { return g / allgather_chunks(s_.nseg, P_); }

  const std::vector<Step>& steps(int r) const {
    return s_.programs[static_cast<std::size_t>(r)].steps;
  }

  // Phase 1: static checks - ranges, ops, tags, one receive per send.
  std::string validate() const {
    if (s_.nseg < 1) return "nseg < 1";
    if (s_.coll == Collective::Allgather && s_.nseg % P_ != 0) return "allgather nseg not a multiple of P";
    std::map<Key, int> sends, recvs;  // key -> seg
    std::map<std::pair<int, int>, int> copies;  // (rank, seg) -> RecvCopy count
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < steps(r).size(); ++i) {
        const Step& st = steps(r)[i];
        if (st.peer < 0 || st.peer >= P_ || st.peer == r) return "bad peer at " + where(r, i, st);
        if (st.seg < 0 || st.seg >= s_.nseg) return "bad seg at " + where(r, i, st);
        if (st.tag < 0) return "negative tag at " + where(r, i, st);
        if (s_.coll == Collective::Allgather && st.op == StepOp::RecvReduce)
          return "RecvReduce in allgather at " + where(r, i, st);
        const bool send = st.op == StepOp::Send;
        const Key key = send ? Key{r, st.peer, st.tag} : Key{st.peer, r, st.tag};
        if (!(send ? sends : recvs).emplace(key, st.seg).second)
          return "tag reused for one (sender, receiver) pair at " + where(r, i, st);
        if (st.op == StepOp::RecvCopy && s_.coll == Collective::Allgather &&
            (block(st.seg) == r || ++copies[{r, st.seg}] > 1))
          return "block received twice or own block overwritten at " + where(r, i, st);
      }
    for (const auto& [key, seg] : sends) {
      auto it = recvs.find(key);
      if (it == recvs.end()) return "unmatched send " + std::to_string(std::get<0>(key)) + "->" +
                                    std::to_string(std::get<1>(key)) + " tag " +
                                    std::to_string(std::get<2>(key));
      if (it->second != seg) return "send and receive disagree on the segment";
    }
    if (sends.size() != recvs.size()) return "unmatched receive";
    return "";
  }

  void init_buffers() {
    buf_.assign(static_cast<std::size_t>(P_),
                std::vector<Content>(static_cast<std::size_t>(s_.nseg)));
    for (int r = 0; r < P_; ++r)
      for (int g = 0; g < s_.nseg; ++g)
        if (s_.coll != Collective::Allgather || block(g) == r) buf_[r][g] = {r};
  }

  void apply(int r, const Step& st, const Content& data) {
    Content& mine = buf_[r][st.seg];
    mine = st.op == StepOp::RecvCopy ? data : merged(data, mine);
  }

  // Phase 2a: program order, buffered sends.
  std::string run_eager() {
    std::map<Key, Content> inflight;
    std::vector<std::size_t> pc(static_cast<std::size_t>(P_), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < P_; ++r)
        for (; pc[r] < steps(r).size(); ++pc[r], progress = true) {
          const Step& st = steps(r)[pc[r]];
          if (st.op == StepOp::Send) {
            if (buf_[r][st.seg].empty()) return "sends data it lacks: " + where(r, pc[r], st);
            inflight[{r, st.peer, st.tag}] = buf_[r][st.seg];
            continue;
          }
          auto it = inflight.find({st.peer, r, st.tag});
          if (it == inflight.end()) break;  // blocked on this receive
          apply(r, st, it->second);
          inflight.erase(it);
        }
    }
    for (int r = 0; r < P_; ++r)
      if (pc[r] < steps(r).size()) return "deadlock (eager): " + where(r, pc[r], steps(r)[pc[r]]);
    return "";
  }

  // Phase 2b: data flow per segment, rendezvous sends; as in the executor,
  // sends to one peer go one at a time in program order.
  enum State : int { Idle, Posted, Arrived, Done };
  std::string run_dataflow() {
    std::vector<std::vector<int>> state(static_cast<std::size_t>(P_));
    std::vector<std::vector<Content>> payload(static_cast<std::size_t>(P_));
    std::vector<std::vector<long>> prev_send(static_cast<std::size_t>(P_));  // the previous send to that peer
    std::map<Key, std::pair<int, std::size_t>> recv_at;  // key -> (rank, step)
    for (int r = 0; r < P_; ++r) {
      state[r].assign(steps(r).size(), Idle);
      payload[r].resize(steps(r).size());
      prev_send[r].assign(steps(r).size(), -1);
      std::map<int, long> last_to;
      for (std::size_t i = 0; i < steps(r).size(); ++i) {
        if (steps(r)[i].op != StepOp::Send) {
          recv_at[{steps(r)[i].peer, r, steps(r)[i].tag}] = {r, i};
          continue;
        }
        auto [it, fresh] = last_to.emplace(steps(r)[i].peer, static_cast<long>(i));
        if (!fresh) {
          prev_send[r][i] = it->second;
          it->second = static_cast<long>(i);
        }
      }
    }
    // Are the earlier steps on the same segment done (writes only, or all)?
    auto earlier_done = [&](int r, std::size_t i, bool writes_only) {
      for (std::size_t j = 0; j < i; ++j) {
        const Step& e = steps(r)[j];
        if (e.seg == steps(r)[i].seg && state[r][j] != Done && (!writes_only || is_write(e.op)))
          return false;
      }
      return true;
    };
    std::size_t left = 0;
    for (int r = 0; r < P_; ++r) left += steps(r).size();
    for (bool progress = true; progress && left > 0;) {
      progress = false;
      for (int r = 0; r < P_; ++r)
        for (std::size_t i = 0; i < steps(r).size(); ++i) {
          const Step& st = steps(r)[i];
          int& cur = state[r][i];
          // Post what is ready; a RecvReduce's receive needs nothing.
          if (cur == Idle) {
            const long prev = prev_send[r][i];
            const bool peer_free = prev < 0 || state[r][static_cast<std::size_t>(prev)] == Done;
            const bool ready = st.op == StepOp::Send       ? earlier_done(r, i, true) && peer_free
                               : st.op == StepOp::RecvCopy ? earlier_done(r, i, false)
                                                           : true;
            if (!ready) continue;
            if (st.op == StepOp::Send) {
              if (buf_[r][st.seg].empty()) return "sends data it lacks: " + where(r, i, st);
              payload[r][i] = buf_[r][st.seg];
            }
            cur = Posted;
            progress = true;
          }
          // Match a posted send with its posted receive.
          if (cur == Posted && st.op == StepOp::Send) {
            auto [rr, ri] = recv_at.at({r, st.peer, st.tag});
            int& other = state[rr][ri];
            if (other != Posted) continue;
            const Step& rs = steps(rr)[ri];
            if (rs.op == StepOp::RecvCopy) {
              apply(rr, rs, payload[r][i]);
              other = Done;
              --left;
            } else {
              payload[rr][ri] = payload[r][i];
              other = Arrived;
            }
            cur = Done;
            --left;
            progress = true;
          }
          // Combine an arrived RecvReduce once the segment is free.
          if (cur == Arrived && earlier_done(r, i, false)) {
            apply(r, st, payload[r][i]);
            cur = Done;
            --left;
            progress = true;
          }
        }
    }
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < steps(r).size(); ++i)
        if (state[r][i] != Done) return "deadlock (dataflow): " + where(r, i, steps(r)[i]);
    return "";
  }

  // Phase 3: allgather: block b == {b} everywhere; reduce: root has all.
  std::string final_check() const {
    if (s_.coll == Collective::Allgather) {
      for (int r = 0; r < P_; ++r)
        for (int g = 0; g < s_.nseg; ++g)
          if (buf_[r][g] != Content{block(g)})
            return "rank " + std::to_string(r) + " block " + std::to_string(block(g)) + " segment " +
                   std::to_string(g) + " wrong";
      return "";
    }
    Content all(static_cast<std::size_t>(P_));
    std::iota(all.begin(), all.end(), 0);
    for (int g = 0; g < s_.nseg; ++g)
      if (buf_[s_.root][g] != all) return "root segment " + std::to_string(g) + " wrong";
    return "";
  }
};

// ----------------------------------------------------------- allreduce --

struct Value {
  std::vector<int> count;
  int expr = -1;
};

using MsgKey = std::tuple<int, int, int>;  // (source, destination, tag)

std::string describe(int rank, std::size_t i, const Step& st) {
  std::ostringstream os;
  os << "rank " << rank << " step " << i << " " << to_string(st.op) << " peer " << st.peer
     << " seg " << st.seg << " tag " << st.tag;
  return os.str();
}

class SymbolicRun {
 public:
  explicit SymbolicRun(const Schedule& s) : s_(s), P_(static_cast<int>(s.programs.size())) {}

  // Empty when the schedule is well formed, finishes under the model and
  // leaves a correct allreduce; otherwise the first problem found.
  std::string check(bool in_order) {
    std::string err = validate();
    if (err.empty()) {
      reset();
      err = in_order ? run_in_order() : run_data_flow();
    }
    return err.empty() ? verify() : err;
  }

 private:
  const Schedule& s_;
  int P_;
  std::vector<std::vector<Value>> val_;            // [rank][seg]
  std::map<std::pair<int, int>, int> exprs_;       // (incoming, own) -> id
  std::map<MsgKey, std::pair<int, std::size_t>> receiver_;  // -> (rank, step)

  const std::vector<Step>& prog(int r) const { return s_.programs[static_cast<std::size_t>(r)].steps; }

  std::string validate() {
    if (s_.coll != Collective::Allreduce) return "not an allreduce";
    if (s_.nseg < 1) return "nseg < 1";
    std::map<MsgKey, int> send_seg;
    receiver_.clear();
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < prog(r).size(); ++i) {
        const Step& st = prog(r)[i];
        if (st.peer < 0 || st.peer >= P_ || st.peer == r) return "bad peer: " + describe(r, i, st);
        if (st.seg < 0 || st.seg >= s_.nseg) return "bad segment: " + describe(r, i, st);
        if (st.tag < 0) return "negative tag: " + describe(r, i, st);
        if (st.op == StepOp::Send) {
          if (!send_seg.emplace(MsgKey{r, st.peer, st.tag}, st.seg).second) return "tag reused: " + describe(r, i, st);
        } else if (!receiver_.emplace(MsgKey{st.peer, r, st.tag}, std::make_pair(r, i)).second) {
          return "tag reused: " + describe(r, i, st);
        }
      }
    if (send_seg.size() != receiver_.size()) return "sends and receives do not pair up";
    for (const auto& [key, seg] : send_seg) {
      const auto it = receiver_.find(key);
      if (it == receiver_.end()) return "send without receive";
      if (prog(it->second.first)[it->second.second].seg != seg) return "send and receive on different segments";
    }
    return "";
  }

  void reset() {
    val_.assign(static_cast<std::size_t>(P_), std::vector<Value>(static_cast<std::size_t>(s_.nseg)));
    exprs_.clear();
    for (int r = 0; r < P_; ++r)
      for (auto& v : val_[static_cast<std::size_t>(r)]) {
        v.count.assign(static_cast<std::size_t>(P_), 0);
        v.count[static_cast<std::size_t>(r)] = 1;
        v.expr = -1 - r;  // leaves are negative, nodes non-negative
      }
  }

  void receive(int r, const Step& st, const Value& in) {
    Value& mine = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
    if (st.op == StepOp::RecvCopy) {
      mine = in;
      return;
    }
    for (int q = 0; q < P_; ++q) mine.count[static_cast<std::size_t>(q)] += in.count[static_cast<std::size_t>(q)];
    const auto node = exprs_.emplace(std::make_pair(in.expr, mine.expr), static_cast<int>(exprs_.size()));
    mine.expr = node.first->second;
  }

  std::string run_in_order() {
    std::map<MsgKey, Value> buffered;
    std::vector<std::size_t> pc(static_cast<std::size_t>(P_), 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < P_; ++r) {
        std::size_t& i = pc[static_cast<std::size_t>(r)];
        while (i < prog(r).size()) {
          const Step& st = prog(r)[i];
          if (st.op == StepOp::Send) {
            buffered[{r, st.peer, st.tag}] = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
          } else {
            const auto it = buffered.find({st.peer, r, st.tag});
            if (it == buffered.end()) break;
            receive(r, st, it->second);
            buffered.erase(it);
          }
          ++i;
          moved = true;
        }
      }
    }
    for (int r = 0; r < P_; ++r)
      if (pc[static_cast<std::size_t>(r)] < prog(r).size())
        return "deadlock in order at " + describe(r, pc[static_cast<std::size_t>(r)], prog(r)[pc[static_cast<std::size_t>(r)]]);
    return "";
  }

  // Step states of the data-flow model.
  enum Phase { kWaiting, kIssued, kArrived, kDone };

  std::string run_data_flow() {
    std::vector<std::vector<Phase>> phase(static_cast<std::size_t>(P_));
    std::vector<std::vector<Value>> carried(static_cast<std::size_t>(P_));
    for (int r = 0; r < P_; ++r) {
      phase[static_cast<std::size_t>(r)].assign(prog(r).size(), kWaiting);
      carried[static_cast<std::size_t>(r)].resize(prog(r).size());
    }
    auto at = [&](int r, std::size_t i) -> Phase& { return phase[static_cast<std::size_t>(r)][i]; };
    // Are the earlier steps of the same segment done (only writes, or all)?
    auto free_before = [&](int r, std::size_t i, bool writes_only) {
      for (std::size_t j = 0; j < i; ++j) {
        const Step& e = prog(r)[j];
        if (e.seg == prog(r)[i].seg && at(r, j) != kDone && !(writes_only && e.op == StepOp::Send)) return false;
      }
      return true;
    };
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < P_; ++r)
        for (std::size_t i = 0; i < prog(r).size(); ++i) {
          const Step& st = prog(r)[i];
          Phase& ph = at(r, i);
          if (ph == kWaiting) {  // issue
            const bool ok = st.op == StepOp::RecvReduce || free_before(r, i, st.op == StepOp::Send);
            if (!ok) continue;
            if (st.op == StepOp::Send)
              carried[static_cast<std::size_t>(r)][i] = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.seg)];
            ph = kIssued;
            moved = true;
          }
          if (ph == kIssued && st.op == StepOp::Send) {  // rendezvous
            const auto [rr, ri] = receiver_.at({r, st.peer, st.tag});
            if (at(rr, ri) != kIssued) continue;
            const Step& rs = prog(rr)[ri];
            if (rs.op == StepOp::RecvCopy) {
              receive(rr, rs, carried[static_cast<std::size_t>(r)][i]);
              at(rr, ri) = kDone;
            } else {
              carried[static_cast<std::size_t>(rr)][ri] = carried[static_cast<std::size_t>(r)][i];
              at(rr, ri) = kArrived;
            }
            ph = kDone;
            moved = true;
          }
          if (ph == kArrived && free_before(r, i, false)) {  // combine
            receive(r, st, carried[static_cast<std::size_t>(r)][i]);
            ph = kDone;
            moved = true;
          }
        }
    }
    for (int r = 0; r < P_; ++r)
      for (std::size_t i = 0; i < prog(r).size(); ++i)
        if (at(r, i) != kDone) return "deadlock in data flow at " + describe(r, i, prog(r)[i]);
    return "";
  }

  std::string verify() const {
    for (int g = 0; g < s_.nseg; ++g)
      for (int r = 0; r < P_; ++r) {
        const Value& v = val_[static_cast<std::size_t>(r)][static_cast<std::size_t>(g)];
        for (int q = 0; q < P_; ++q)
          if (v.count[static_cast<std::size_t>(q)] != 1)
            return "rank " + std::to_string(r) + " seg " + std::to_string(g) + " has contribution " +
                   std::to_string(q) + " " + std::to_string(v.count[static_cast<std::size_t>(q)]) + " times";
        if (v.expr != val_[0][static_cast<std::size_t>(g)].expr)
          return "ranks 0 and " + std::to_string(r) + " reduce seg " + std::to_string(g) + " differently";
      }
    return "";
  }
};

}  // namespace

std::string check_schedule(const Schedule& s, CheckModel model) {
  if (s.coll == Collective::Allreduce) return SymbolicRun(s).check(model == CheckModel::InOrder);
  return ContentChecker(s).run(model == CheckModel::InOrder ? Model::Eager : Model::Dataflow);
}

std::string check_schedule_both(const Schedule& s) {
  auto err = check_schedule(s, CheckModel::InOrder);
  if (!err.empty()) return err;
  return check_schedule(s, CheckModel::DataFlow);
}

ScheduleParams params_for(int nprocs) {
  ScheduleParams p;
  p.nprocs = nprocs;
  p.count = static_cast<std::size_t>(nprocs) * 4;
  p.nseg = nprocs;
  p.arrival.assign(static_cast<std::size_t>(nprocs), 0.0);
  return p;
}

ScheduleParams late_rank(int nprocs, int late, double delay, std::size_t count, int nseg) {
  ScheduleParams p;
  p.nprocs = nprocs;
  p.count = count;
  p.nseg = nseg;
  p.arrival.assign(static_cast<std::size_t>(nprocs), 0.0);
  p.arrival[static_cast<std::size_t>(late)] = delay;
  return p;
}

bool same_steps(const std::vector<Step>& x, const std::vector<Step>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].op != y[i].op || x[i].peer != y[i].peer || x[i].seg != y[i].seg || x[i].tag != y[i].tag ||
        x[i].round != y[i].round)
      return false;
  return true;
}

std::vector<double> random_arrivals(int P, unsigned seed) {
  std::vector<double> a(static_cast<std::size_t>(P));
  unsigned x = seed * 2654435761u + 1;
  for (auto& t : a) {
    x = x * 1103515245u + 12345u;
    t = static_cast<double>((x >> 8) % 1000) * 1e-3;
  }
  return a;
}

std::vector<double> arrival_pattern(int P, int pattern, std::mt19937& rng) {
  std::vector<double> a(static_cast<std::size_t>(P), 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto any = [&] { return static_cast<std::size_t>(rng() % static_cast<unsigned>(P)); };
  switch (pattern % 7) {
    case 0: break;
    case 1: a[any()] = 1.0 + 3.0 * P * u(rng); break;
    case 2: a[any()] = 2.0 * P * u(rng); a[any()] = 2.0 * P * u(rng); break;
    case 3: for (auto& x : a) x = P * u(rng); break;
    case 4: for (auto& x : a) x = static_cast<double>(rng() % 4); break;
    case 5: for (int r = 0; r < P; ++r) a[static_cast<std::size_t>(r)] = P - r; break;
    case 6: for (auto& x : a) x = 100.0 * P * u(rng) * u(rng); break;
  }
  return a;
}

}  // namespace papshim::test_support
