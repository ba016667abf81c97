// The prediction rounds of one communicator: their exchange and lifetime,
// and the process-wide parking of rounds that outlive their communicator.
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
// returns false and the caller parks the round with its private duplicate
// (ParkedRounds::park()): the exchange and its buffers stay alive, parked
// rounds are advanced at every later close() and completed at MPI_Finalize
// (finish_all, which advances every open round of the process together:
// a rank advances only the exchanges it tests, so waiting for one at a time
// could wait for a peer waiting for another), and the duplicate is freed
// once its round has completed.  Never a hang, never a freed buffer under a
// pending request.
//
// Not thread safe: the owner (Predictor) serialises every call.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "predictor/round_exchange.h"
#include "predictor/round_message.h"

namespace papshim {

// Where the round of the communicator's next call is.  Transitions:
//   Idle     --open()-->     Open       (the exit of the previous call)
//   Open     --publish()-->  Running    (this rank's message is out)
//   Running  --test()/wait() complete--> Complete
//   Complete --take()-->     Idle       (the entry of the round's call)
//   any      --close()-->    Idle, or Parked while the exchange still runs
//   Parked   --test() complete--> Complete (no vector: nobody needs it)
//   any      --settle() complete--> Idle
// The owner publishes before close() and settle(), so neither leaves a
// round Open.
enum class RoundState {
  Idle,      // no round open
  Open,      // open, this rank's message not yet published
  Running,   // published: the exchange runs
  Complete,  // the exchange completed; the round's call has not taken it yet
  Parked,    // the communicator was freed with the exchange still running
};

class RoundChannel {
 public:
  // `xchg`: the private duplicate; `tag_top`: its MPI_TAG_UB (the rounds use
  // the kRoundTags tags up to it).
  RoundChannel(MPI_Comm xchg, int size, int rank, int tag_top);
  RoundChannel(const RoundChannel&) = delete;
  RoundChannel& operator=(const RoundChannel&) = delete;

  RoundState state() const { return state_; }
  std::uint64_t seq() const { return seq_; }  // the call of the open (or last) round
  // The round of call `seq` is open (in any state but Idle).
  bool open_for(std::uint64_t seq) const { return state_ != RoundState::Idle && seq_ == seq; }
  bool unpublished() const { return state_ == RoundState::Open; }
  bool started() const { return state_ == RoundState::Running || state_ == RoundState::Parked; }
  bool waiting() const { return state_ != RoundState::Idle && state_ != RoundState::Complete; }
  // The messages of a complete round, one per rank.
  const RoundMessage* messages() const { return recv_.data(); }

  // Opens the round of call `seq`.
  void open(std::uint64_t seq);
  // Starts the exchange with this rank's message (only when Open).
  void publish(const RoundMessage& mine);
  // The entry of the round's call: advances a started exchange until it
  // completes.  True when it completed here (not before, by test()).
  bool wait();
  // Advances a started exchange without blocking; sets `advanced` when it
  // moved on.  True once a Running round has completed (a Parked one
  // completes too, but nobody needs its vector: false).
  bool test(bool& advanced);
  // The round's call has taken its result.
  void take() { state_ = RoundState::Idle; }
  // Communicator freed (publish first): advances the round for a bounded
  // time.  True: nothing is outstanding.  False: Parked, still running.
  bool close();
  // Advances without blocking (publish first); true once nothing is
  // outstanding (the round is then over).
  bool settle();

  // This process's rounds opened over all its communicators (the report).
  static std::uint64_t opened();

 private:
  RoundState state_ = RoundState::Idle;
  std::uint64_t seq_ = 0;
  std::vector<RoundMessage> recv_;  // one per rank: the exchange's output
  RoundExchange exchange_;          // the rounds' allgather (after recv_: it writes there)
};

// Process-wide list of closed rounds still running, with their private
// duplicates.  `settle` publishes and advances a round (under its owner's
// lock) and keeps its owner alive; true once nothing is outstanding.
class ParkedRounds {
 public:
  using Settle = std::function<bool()>;
  // Takes over `xchg` and frees it once the round completes.
  static void park(Settle settle, MPI_Comm xchg);
  // Frees the duplicates of the completed ones (never blocks).
  static void test();
  // MPI_Finalize: completes the `live` rounds and the parked ones, all
  // advanced together.
  static void finish_all(const std::vector<Settle>& live);
  static std::size_t count();
};

}  // namespace papshim
