// Step 1 of the simulator (algorithms/simulator.cpp): every step checked and
// every Send paired with its receive.  Sends and receives are radix-sorted by
// (source, destination, tag) and walked side by side, so duplicates and
// strays show up as neighbours or gaps.
#include "algorithms/sim_pairing.h"

#include <cstdint>
#include <sstream>
#include <utility>

namespace papshim {

namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// A message (source, destination, tag) packed into one number, and a step.
struct Key {
  std::uint64_t msg;
  int g;
};

// Stable LSD radix sort on Key::msg, which has at most `bits` bits.
void radix_sort(std::vector<Key>& v, unsigned bits) {
  constexpr unsigned kDigit = 11;
  std::vector<Key> tmp(v.size());
  std::vector<std::size_t> pos(std::size_t{1} << kDigit);
  for (unsigned shift = 0; shift < bits; shift += kDigit) {
    std::fill(pos.begin(), pos.end(), 0);
    const auto digit = [shift](const Key& k) { return (k.msg >> shift) & ((1U << kDigit) - 1); };
    for (const Key& k : v) ++pos[digit(k)];
    std::size_t sum = 0;
    for (std::size_t& p : pos) sum += std::exchange(p, sum);
    for (const Key& k : v) tmp[pos[digit(k)]++] = k;
    v.swap(tmp);
  }
}

}  // namespace

std::string FlatSchedule::where(const Schedule& s, int r, std::size_t i) const {
  const Step& st = s.programs[sz(r)].steps[i];
  std::ostringstream os;
  os << "rank " << r << " step " << i << " (" << to_string(st.op) << " seg " << st.seg
     << (st.op == StepOp::Send ? " to " : " from ") << st.peer << " tag " << st.tag << ")";
  return os.str();
}

std::string FlatSchedule::where(const Schedule& s, int g) const { return where(s, rank[sz(g)], sz(idx[sz(g)])); }

std::string flatten_and_pair(const Schedule& s, std::size_t n_arrival, FlatSchedule& fs) {
  const int P = static_cast<int>(s.programs.size());
  if (P == 0) return "schedule has no ranks";
  if (n_arrival != sz(P))
    return "arrival has " + std::to_string(n_arrival) + " entries for " + std::to_string(P) + " ranks";
  if (s.nseg < 1) return "nseg " + std::to_string(s.nseg) + " < 1";
  if (s.coll == Collective::Allgather && s.nseg % P != 0)
    return "allgather needs nseg a multiple of P (" + std::to_string(s.nseg) + ", P " + std::to_string(P) + ")";
  if (s.coll == Collective::Reduce && (s.root < 0 || s.root >= P))
    return "root " + std::to_string(s.root) + " out of range";
  if (P > 65535) return "too many ranks to simulate";
  std::size_t total = 0;
  for (const RankProgram& prog : s.programs) total += prog.steps.size();
  for (auto* v : {&fs.rank, &fs.idx}) v->reserve(total);
  fs.flat.reserve(total);
  std::vector<Key> sends, recvs;
  sends.reserve(total);
  recvs.reserve(total);
  for (int r = 0; r < P; ++r) {
    const auto& steps = s.programs[sz(r)].steps;
    fs.off.push_back(fs.rank.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& st = steps[i];
      const int g = static_cast<int>(fs.rank.size());
      fs.rank.push_back(r);
      fs.idx.push_back(static_cast<int>(i));
      fs.flat.push_back(st);
      if (st.peer < 0 || st.peer >= P || st.peer == r) return fs.where(s, r, i) + ": bad peer";
      if (st.seg < 0 || st.seg >= s.nseg) return fs.where(s, r, i) + ": segment out of range";
      if (st.tag < 0) return fs.where(s, r, i) + ": negative tag";
      if (st.op != StepOp::Send && st.op != StepOp::RecvReduce && st.op != StepOp::RecvCopy)
        return fs.where(s, r, i) + ": unknown operation";
      if (st.op == StepOp::RecvReduce && s.coll == Collective::Allgather)
        return fs.where(s, r, i) + ": recv_reduce in an allgather";
      // (source, destination) for now; the tag is added below.
      if (st.op == StepOp::Send) sends.push_back(Key{sz(r) * sz(P) + sz(st.peer), g});
      else recvs.push_back(Key{sz(st.peer) * sz(P) + sz(r), g});
    }
  }
  const auto bit_width = [](std::uint64_t x) {
    unsigned b = 0;
    while ((x >> b) != 0) ++b;
    return b;
  };
  const unsigned tag_bits = bit_width(sz(s.max_tag()));
  const unsigned key_bits = bit_width(sz(P) * sz(P) - 1) + tag_bits;
  for (auto* v : {&sends, &recvs}) {
    for (Key& k : *v) k.msg = k.msg << tag_bits | sz(fs.flat[sz(k.g)].tag);
    radix_sort(*v, key_bits);
  }
  for (const auto* v : {&sends, &recvs})
    for (std::size_t i = 1; i < v->size(); ++i)
      if ((*v)[i - 1].msg == (*v)[i].msg)
        return fs.where(s, (*v)[i].g) + ": same (source, destination, tag) as " + fs.where(s, (*v)[i - 1].g);
  fs.msg_of.assign(fs.rank.size(), -1);
  fs.msgs.reserve(sends.size());
  std::size_t j = 0;
  std::uint64_t last_pair = 0;
  for (const Key& k : sends) {
    if (j < recvs.size() && recvs[j].msg < k.msg) return fs.where(s, recvs[j].g) + ": no matching send";
    if (j == recvs.size() || recvs[j].msg != k.msg) return fs.where(s, k.g) + ": no matching receive";
    FlatSchedule::Message m;
    m.send = k.g;
    m.recv = recvs[j++].g;
    if (fs.pair_ports.empty() || (k.msg >> tag_bits) != last_pair) {
      last_pair = k.msg >> tag_bits;
      fs.pair_ports.push_back({fs.rank[sz(m.send)], P + fs.rank[sz(m.recv)]});
    }
    m.pair = static_cast<int>(fs.pair_ports.size()) - 1;
    if (fs.flat[sz(m.send)].seg != fs.flat[sz(m.recv)].seg)
      return fs.where(s, m.send) + ": matched by " + fs.where(s, m.recv) + " on another segment";
    fs.msg_of[sz(m.send)] = fs.msg_of[sz(m.recv)] = static_cast<int>(fs.msgs.size());
    fs.msgs.push_back(m);
  }
  if (j < recvs.size()) return fs.where(s, recvs[j].g) + ": no matching send";
  return "";
}

}  // namespace papshim
