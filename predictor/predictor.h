// The predictor of one communicator: learns compute phases per call site,
// publishes each rank's predicted arrival for the next call, and hands every
// rank the same arrival vector at the call's entry.
//
// Rounds.  Round r carries the predictions for call r (the communicator's
// r-th intercepted call): every rank contributes a RoundMessage and every
// rank receives all of them, in one nonblocking allgather on the private
// duplicate (RoundExchange, predictor/round_exchange.h: point-to-point
// messages, straight to every peer up to kDirectMaxRanks ranks, else
// ceil(log2 P) sends and receives per rank and round).  At the exit
// of call r-1 the rank opens round r; it starts the exchange when it
// publishes its value: SMA at that exit, edge at papshim_edge() or, when no
// edge came, at its arrival at call r (or at the communicator's free or
// MPI_Finalize when call r never comes).  The helper thread advances it
// with RoundExchange::test(); otherwise the entry of call r advances it
// until complete (RoundExchange::wait()).  Nothing else advances it: unlike
// a library collective, other MPI calls do not.
//
// Why the messages on the private duplicate match up.  papshim sends three
// kinds there: the PMPI_Allreduce that creates it (shim/comm_context.cpp
// ensure_private) and PAPSHIM_CHECK's PMPI_Allreduce (shim/dispatch.cpp),
// both collectives, and point-to-point messages: the schedules' (tags up to
// the context's tag_ub) and the rounds' (the kRoundTags tags above it).
// Collectives never match point-to-point messages, and the two kinds of
// point-to-point messages never match each other by tag.  The collectives
// are started in the same order on every rank: the Allreduce before this
// predictor exists, the check's Allreduce of call r inside call r, and
// whether a call has one is decided from inputs identical on every rank.
// The rounds need no order with respect to them: round r is started, on
// every rank, strictly between its exit of call r-1 and its entry of call r
// (or at the free/finalize that replaces call r), and is complete on this
// rank before round r+1 starts, so a rank's round messages to a peer, and
// its receives from it, come in round order (see round_exchange.h).
//
// Why the wait at entry is bounded (no deadlock): a rank waits at the entry
// of call r only for messages its peers send once they have published
// (their exit of call r-1 in SMA mode, their edge or their own entry of call
// r in edge mode) and then advance the exchange.  Call r-1 completes without
// round r, so every peer does exit it and publish; a peer reaches the entry
// of call r once its earlier calls complete, and those (on any
// communicator) come before call r in the order every rank calls
// collectives, so by the same argument, applied in that order, their waits
// end first.  A waiting rank has posted every send it can already make
// (round_exchange.h), so the wait ends, at the latest, once every peer has
// reached call r (without the helper thread a peer advances the exchange
// only there; the direct exchange needs no peer to advance it, only to
// have published).  The very first call has no round (no rank
// opens one), identically on every rank.
//
// Communicator free.  A running exchange cannot be abandoned: its messages
// are in flight to and from peers that still need them.  close() starts
// this rank's part if it has not, then advances it for a bounded time
// (kCloseWaitSeconds).  Peers that free the communicator start their part
// at the latest there, so the wait ends unless a peer frees it much later
// (edge mode with communicators freed in different orders, or a peer
// computing long without MPI calls and no helper thread).  Then close()
// returns false and the caller parks the predictor with its private
// duplicate (park()): the exchange and its buffers stay alive, parked
// rounds are advanced at every later close() and completed at MPI_Finalize
// (finish_all, which advances every open round of the process together:
// a rank advances only the exchanges it tests, so waiting for one at a time
// could wait for a peer waiting for another), and the duplicate is freed
// once its round has completed.  Never a hang, never a freed buffer under a
// pending request.
//
// Anchored phases (predictor/history.h).  Each message also carries the
// rank's exit from the previous call, its phase from the anchor (SMA) and
// whether it found that history the steadier one; phases and edges are
// taken from the anchor for all ranks when most prefer it, else from each
// rank's own exit (AnchorUse, predicted_arrival below).  The anchor, the
// latest of those exits, is the same on every rank once the round is
// complete, and so is the vector built from it.
//
// Measured costs.  Each rank's message also carries how long it spent in
// the previous call (exit - arrival).  When a round completes, every rank
// holds the same vector of those times, so the mean elapsed time of the
// previous call is known identically everywhere; compared with what the
// cost model predicted for the algorithm that ran, it updates the
// collective's common factor (from native's calls) or the algorithm's own
// (update_corrections), which auto mode multiplies into its predictions.
// Unused algorithms' factors drift back towards 1.
//
// Threads.  With the helper thread (predictor/helper_thread.h) the round is
// advanced and completed by poll() as soon as the data is in (it may post
// the exchange's later steps, never the first), and the helper computes the
// decision for the call ahead of time (precompute slot).  Every method
// takes the predictor's mutex, so the helper and the application thread
// never touch the exchange at once.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "algorithms/cost_learner.h"
#include "algorithms/selector.h"
#include "config/params.h"
#include "predictor/history.h"
#include "predictor/round_exchange.h"

namespace papshim {

// The arguments of a call that decide its algorithm, besides the vector.
struct CallShape {
  int coll = -1;
  int count = 0;
  int type_size = 0;
  int root = 0;
  bool commutative = true;
  bool operator==(const CallShape& o) const {
    return coll == o.coll && count == o.count && type_size == o.type_size && root == o.root &&
           commutative == o.commutative;
  }
};

// What ran in a call, for the measured-cost feedback.
struct RanDecision {
  int coll = -1;
  int algo = -1;          // Algo as int
  double predicted = 0;   // the cost model's mean elapsed for it, seconds (0: none)
  bool judged = false;    // the call used its round: auto weighed it, or a forced schedule was built on it
  bool quiet = false;     // ... auto weighed it and ran native
};

// Rounds while auto keeps running native.  A call that auto weighed and
// ran native needs nothing from the next round but the confirmation that
// nothing changed: after kQuietRounds such calls in a row the rounds thin
// out, one call without a round, then 2, 4, ... up to `max_skip` between
// rounds (at the cap, max_skip and max_skip - 1 in turn, so that the
// rounds move through the calls of a loop of any length rather than
// always landing on the same one).  Any other call that used its round
// (auto picked something else, or a forced algorithm ran on the arrivals)
// brings a round on every call back.  The inputs are the decisions,
// identical on every rank, so every rank skips the same rounds.  Calls
// without a round (skipped, or not considered) leave the count as it is.
class QuietRounds {
 public:
  static constexpr int kQuietRounds = 8;  // longer than native's first calls and a trial
  explicit QuietRounds(long max_skip) : max_skip_(max_skip) {}
  // The exit of a call; true when the round of the next call is skipped.
  bool skip_next(const RanDecision& ran) {
    if (ran.judged) {
      streak_ = ran.quiet ? std::min(streak_ + 1, kQuietRounds + 30) : 0;
      if (streak_ < kQuietRounds || max_skip_ <= 0) {
        left_ = 0;
        at_cap_ = 0;
      } else {
        left_ = std::min(max_skip_, 1L << std::min(streak_ - kQuietRounds, 30));
        if (left_ == max_skip_ && max_skip_ > 1 && (at_cap_++ & 1) != 0) --left_;
      }
    }
    if (left_ == 0) return false;
    --left_;
    return true;
  }
  int streak() const { return streak_; }

 private:
  long max_skip_;
  int streak_ = 0;           // judged calls in a row that ran native
  long left_ = 0;            // rounds still to skip
  unsigned at_cap_ = 0;      // gaps of max_skip so far (the odd ones are one shorter)
};

// The result of a complete round: predicted arrivals and corrections.
struct RoundResult {
  std::vector<double> arrival;
  CostLearner corrections;
  // How far the ranks' prediction errors scatter around their common part
  // (the median over the last five rounds of the median absolute deviation
  // of the ranks' last errors; 0: not known yet).  A predicted spread within a few
  // of these is noise, not a pattern; an error all ranks share moves no
  // one's arrival relative to the others and does not count.
  double noise = 0;
};

// A decision computed ahead of the call: valid for call `seq` if the call
// has the shape it was computed for.
struct Precomputed {
  std::uint64_t seq = ~0ull;
  CallShape shape;
  std::shared_ptr<const Selection> selection;
};

// RoundMessage::prefers_anchor: which of its phase histories a rank found
// the steadier.
constexpr double kPrefersOwn = 0.0, kPrefersAnchor = 1.0, kPrefersUnknown = 0.5;

// One rank's message in a prediction round, sent as kRoundWords doubles.
constexpr int kRoundWords = 8;
struct RoundMessage {
  double own_prediction;  // its predicted arrival at the call, from its own exit (NaN: none)
  double last_elapsed;    // how long it spent in the previous call (exit - arrival), seconds
  double last_exit;       // its exit from the previous call (NaN: unknown)
  double anchored_phase;  // its phase from the anchor (SMA), or NaN before any
  double edge_time;       // the time of its edge (papshim_edge), or NaN
  double edge_fraction;   // the fraction of the phase done at that edge, or NaN
  double prefers_anchor;  // kPrefersAnchor, kPrefersOwn, or kPrefersUnknown (too few phases yet)
  double last_error;      // its last predicted call's arrival minus the prediction (seconds), or NaN
};
static_assert(std::is_trivially_copyable_v<RoundMessage> && sizeof(RoundMessage) == kRoundWords * sizeof(double),
              "a round message is sent as kRoundWords doubles");

// Which estimates a round takes from its anchor, the same for all ranks.
//
// Edges and SMA phases are each measured from one start for all ranks,
// decided by vote: a phase that really began after both (a barrier after
// the call) biases either start differently, and mixing them would turn the
// difference, e.g. how much later one rank left the last call than another,
// into a spread nobody has.  Edges start at the anchor unless most ranks
// that sent one found their own exits the steadier start (a rank that
// cannot tell yet does not object): from the anchor, what a start misses is
// the same for every rank, while own exits differ by as much as the last
// call let ranks leave apart (a reduce's leaves long before its root).
// SMA phases measure whole phases: from the anchor only when more than
// half of all ranks found those the steadier.
struct AnchorUse {
  bool edges = false;   // extrapolate edges from the anchor (edges_from_anchor)
  bool phases = false;  // SMA phases from the anchor (phases_from_anchor)
};
// One rank's arrival from its round message and the round's anchor (the
// latest exit; NaN: unknown): its edge extrapolated from the anchor, else
// its anchored phase after the anchor (as `use` says, when it has them),
// else its own prediction.
double predicted_arrival(const RoundMessage& msg, double anchor, const AnchorUse& use);
// Whether the round takes SMA phases from the anchor: more than half of all
// ranks sent an anchored phase and found those the steadier ones.
bool phases_from_anchor(const RoundMessage* msgs, int nranks);
// The median absolute deviation of the ranks' last errors from their median
// (finite ones; the upper median of an even count), or NaN with fewer than
// two: the same on every rank, from the same messages.
double error_scatter(const RoundMessage* msgs, int nranks);
// The largest deviation of a rank's last error from their median (NaN as
// above): how far the last call's arrivals strayed from the prediction,
// apart from what every rank shares.
double error_reach(const RoundMessage* msgs, int nranks);
// Folds the previous call's measured mean elapsed time (the messages'
// last_elapsed) into the factors (SelectInput::correction), as
// CostLearner::learn says, unless its arrivals strayed from the prediction
// (error_reach).  The same on every rank, from the same messages.
void update_corrections(CostLearner& factors, const RanDecision& ran, const RoundMessage* msgs, int nranks);
// Whether the round's edges are extrapolated from the anchor: some rank
// sent an edge and fewer than half of those found their own exits the
// steadier start.  `msgs` holds `nranks` messages.
bool edges_from_anchor(const RoundMessage* msgs, int nranks);

class Predictor {
 public:
  // `xchg`: the private duplicate the rounds run on; `tag_top`: its
  // MPI_TAG_UB (the rounds use the kRoundTags tags up to it); `min_bytes`:
  // PAPSHIM_MIN_BYTES (the round policy, on_exit()).
  // `quiet_skip`: QuietRounds' max_skip (PAPSHIM_QUIET_SKIP; 0: a round on every call).
  Predictor(MPI_Comm xchg, int size, int rank, int tag_top, int window, PredictorMode mode, long min_bytes,
            long quiet_skip = 0);
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Entry of call `seq`, arriving at `arrival` (common time base).  Returns
  // the arrival vector (identical on every rank), or nothing when this call
  // has no complete prediction.
  std::optional<RoundResult> on_entry(std::uint64_t seq, double arrival);
  // This rank's published prediction for the current call (NaN: none).
  double my_prediction() const { return my_prediction_; }
  // Exit of call `seq` of `bytes_per_rank` bytes.  Returns whether it
  // opened the round of call seq+1.  Rounds are worth their messages only
  // while the communicator carries large calls: they stay open for
  // kRoundsAfterLargeCall calls after each call of at least `min_bytes`,
  // fewer while auto keeps running native (QuietRounds).  Call sizes and
  // decisions are identical on every rank, so every rank opens the same
  // rounds.
  static constexpr int kRoundsAfterLargeCall = 16;
  bool on_exit(std::uint64_t seq, std::uint64_t site, const CallShape& shape, double arrival, double exit,
               std::uint64_t bytes_per_rank, const RanDecision& ran);
  // papshim_edge(fraction) at time `t`.
  void on_edge(double t, double fraction);

  // Helper thread: completes the open round if its data is in.  Returns true
  // once per round, with the vector, the round's call and its expected shape.
  // Sets `advanced` when the round's exchange moved on (left alone otherwise).
  bool poll(RoundResult& out, std::uint64_t& seq, CallShape& shape, bool& advanced);
  bool waiting() const;  // a round is open and not yet complete
  void store_precomputed(Precomputed p);
  std::optional<Precomputed> take_precomputed(std::uint64_t seq);

  // Communicator freed: starts this rank's part of the open round and waits
  // for it a bounded time.  True: nothing is outstanding, the private
  // duplicate may be freed.  False: the round is still running; park() the
  // predictor with the duplicate instead of freeing it.
  bool close();

  // Process-wide list of closed predictors whose round is still running.
  // park() takes over `xchg` (the private duplicate) and frees it once the
  // round completes; test_parked() does so for the completed ones (never
  // blocks).  finish_all() (MPI_Finalize) completes the open rounds of the
  // `live` predictors and of the parked ones, all advanced together.
  static void park(std::shared_ptr<Predictor> p, MPI_Comm xchg);
  static void test_parked();
  static void finish_all(const std::vector<std::shared_ptr<Predictor>>& live);
  static std::size_t parked();
  // This process's rounds over all its communicators: opened, and left out
  // while auto kept running native (QuietRounds), for the report.
  static std::uint64_t rounds_opened();
  static std::uint64_t rounds_skipped();

 private:
  void post_round(std::uint64_t seq);
  // Publishes this rank's part of the open round if it has not, then
  // advances it without blocking: true once nothing is outstanding (the
  // round is then closed).
  bool settle();
  void publish(double value, double anchored_phase = std::numeric_limits<double>::quiet_NaN(),
               double edge_time = std::numeric_limits<double>::quiet_NaN(),
               double edge_fraction = std::numeric_limits<double>::quiet_NaN());
  bool vector_valid() const;
  void round_complete();  // updates the corrections (once per round)
  RoundResult result() const;

  mutable std::mutex mu_;
  int size_, rank_;
  PredictorMode mode_;
  std::uint64_t min_bytes_;
  int rounds_left_ = 0;       // calls that still open a round (on_exit)
  QuietRounds quiet_;         // ... fewer while auto keeps running native
  PhaseHistory history_;
  std::unordered_map<std::uint64_t, CallShape> shape_by_site_;
  CallShape next_shape_;
  bool round_open_ = false;   // the next round is open
  bool recv_done_ = false;    // ... and complete
  bool sent_ = false;         // ... and its exchange started (this rank's value published)
  bool closed_ = false;       // the communicator was freed
  std::uint64_t round_seq_ = 0;
  double last_elapsed_ = 0;
  double my_prediction_;
  double last_error_;            // arrival - my_prediction_ at the last predicted call (NaN: none yet)
  double noise_ = 0;             // RoundResult::noise, updated by every completed round
  std::array<double, 5> scatters_{};  // the last rounds' error scatters, a ring
  std::size_t scatter_count_ = 0;     // how many were ever stored
  RanDecision ran_;           // what ran in the call before the open round
  CostLearner corrections_;
  std::vector<RoundMessage> recv_;  // one per rank: the exchange's output
  std::vector<double> arrival_;  // of the last complete round
  double anchor_ = 0;            // ... its anchor (NaN: none)
  std::uint64_t anchor_seq_ = ~0ull;
  RoundExchange exchange_;       // the rounds' allgather (after recv_: it writes there)
  Precomputed pre_;
};

}  // namespace papshim
