// Clairvoyant reduce, plain version (seed section 4, with its fixes): every
// round G is built from scratch by scanning all processes, and peers are
// found by linear search over segments and, per segment, over G: O(|G|^2 * N)
// per round.  Idle rounds are skipped as in the improved version (seed 5.1),
// else widely spread arrivals would make it spin.
//
// Works as follows (terms as in clairvoyant.h): `cell` holds the state of
// every (process, segment) pair: Held (A or P), Sent (E) or Fresh (P');
// K is the availability in whole rounds, compared together with the
// arrival's fractional part (frac_pos: position by fraction, then rank;
// frac_class: equal fractions share a class).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "algorithms/clairvoyant.h"

namespace papshim {
namespace {

enum Cell : std::uint8_t { Held, Sent, Fresh };  // A/P, E, P'

}  // namespace

Schedule build_clairvoyant_linear(const ScheduleParams& params) {
  const detail::ClairvoyantClock clk = detail::clairvoyant_clock(params);
  const int P = params.nprocs, N = params.nseg, root = params.root;
  Schedule out;
  out.coll = Collective::Reduce;
  out.nseg = N;
  out.root = root;
  out.programs.resize(static_cast<std::size_t>(P));

  std::vector<Cell> cell(static_cast<std::size_t>(P) * N, Held);
  auto at = [&](int p, int j) -> Cell& { return cell[static_cast<std::size_t>(p) * N + j]; };
  std::vector<std::int64_t> K = clk.whole;  // availability, whole rounds
  std::vector<char> done(static_cast<std::size_t>(P), 0), busy(static_cast<std::size_t>(P), 0);
  // (K, f, rank) order; f's position already breaks ties by rank.
  auto earlier = [&](int p, int q) {
    return K[p] != K[q] ? K[p] < K[q] : clk.frac_pos[p] < clk.frac_pos[q];
  };
  // q is within d of h: K_q*d + f_q <= (K_h + 1)*d + f_h.
  auto within = [&](int q, int h) {
    return K[q] != K[h] + 1 ? K[q] < K[h] + 1 : clk.frac_class[q] <= clk.frac_class[h];
  };

  int remaining = P - 1;  // non-roots not done
  int round = 0;
  std::vector<int> G;
  while (remaining > 0) {
    // Phase 1: G = not-done processes within d of the earliest one.
    int head = -1;
    for (int p = 0; p < P; ++p)
      if (!done[p] && (head < 0 || earlier(p, head))) head = p;
    G.clear();
    for (int p = 0; p < P; ++p)
      if (!done[p] && within(p, head)) G.push_back(p);
    if (G.size() == 1) {
      // Idle rounds: jump to the first round in which the next process
      // joins the window of `head`.
      int next = -1;
      for (int p = 0; p < P; ++p)
        if (!done[p] && p != head && (next < 0 || earlier(p, next))) next = p;
      if (next < 0) throw std::logic_error("clairvoyant: lost track");
      K[head] = clk.frac_class[next] <= clk.frac_class[head] ? K[next] - 1 : K[next];
      continue;
    }
    std::sort(G.begin(), G.end(), earlier);  // (K, f, rank): a strict order

    // Phase 2: the sink (root if present, else the first of G) goes first.
    const int sink = done[root] == 0 && within(root, head) ? root : G.front();
    const auto sink_at = std::find(G.begin(), G.end(), sink);
    std::rotate(G.begin(), sink_at, sink_at + 1);
    for (int p : G) busy[p] = 0;

    // Phase 3: for each receiver i, the smallest segment, then the first peer.
    for (int i : G) {
      int peer = -1, seg = -1;
      for (int j = 0; j < N && peer < 0; ++j) {
        const bool wants = i == sink ? at(i, j) != Fresh : at(i, j) == Held;
        if (!wants) continue;
        for (int z : G)
          if (z != i && !busy[z] && at(z, j) == Held) {
            peer = z;
            seg = j;
            break;
          }
      }
      if (peer < 0) continue;
      const StepOp op = at(i, seg) == Held ? StepOp::RecvReduce : StepOp::RecvCopy;
      if (builds_program(params, peer)) out.programs[peer].steps.push_back({StepOp::Send, i, seg, round, round});
      if (builds_program(params, i)) out.programs[i].steps.push_back({op, peer, seg, round, round});
      at(peer, seg) = Sent;
      busy[peer] = 1;
      at(i, seg) = Fresh;
    }

    // Phase 4: P' becomes P; holders and the root stay, the others are done.
    for (int p : G) {
      bool holds = false;
      for (int j = 0; j < N; ++j) {
        if (at(p, j) == Fresh) at(p, j) = Held;
        holds = holds || at(p, j) == Held;
      }
      if (holds || p == root) {
        ++K[p];
      } else {
        done[p] = 1;
        --remaining;
      }
    }
    if (++round >= detail::round_limit(params)) throw std::logic_error("clairvoyant: no progress");
  }
  out.tag_bound = round - 1;  // tag = round number
  return out;
}

}  // namespace papshim
