// The prediction round's exchange: a nonblocking allgather of one fixed-size
// block per rank (the round messages) over a communicator, built from
// point-to-point messages and advanced by whoever tests or waits for it.
//
// Two ways, chosen by the communicator's size alone (so the same on every
// rank):
//
// Direct (P <= the direct limit, kDirectMaxRanks by default).  One step:
// start() posts a receive from every peer and sends the own block to every
// peer, P - 1 messages each way.  No rank relays another's block, so a
// rank's block reaches its peers while it computes, with nobody advancing
// anything: an eager message is delivered by the library without the
// sender's help.  A rank that enters its next call finds the blocks of every
// peer that has published, even when it runs without the helper thread and
// some peer is still computing.
//
// Bruck's dissemination allgather (larger P).  A work buffer holds, at
// position i, the block of rank (r + i) mod P; the own block starts at
// position 0.  Step k (k = 0 .. ceil(log2 P) - 1, d = 2^k) sends positions
// [0, n) to rank (r - d) mod P and receives positions [d, d + n) from rank
// (r + d) mod P, n = min(d, P - d): the receiver then holds the blocks of
// r + d .. r + 2d - 1 as well.  After the last step positions [0, P) are all
// filled, and a rotation writes them to the output in rank order.  Each rank
// sends and receives ceil(log2 P) messages per round, P - 1 blocks in all.
// A step's receive and send touch disjoint positions, so both are posted
// together; the next step's send needs the blocks this step receives, so it
// is posted once both requests of this step have completed: a rank relays
// its peers' blocks only when something advances its exchange (the helper
// thread, or its own next call).
//
// test() posts every step whose predecessor has completed and returns at
// once; wait() does the same, blocking in PMPI_Waitall for the current step
// only, so a waiting rank has always posted every send it can already make
// (its peers never wait for a send it could post).  With P = 1 a round is
// complete as soon as it starts.
//
// Tags.  Step k uses tag `tag_top - k` (the direct way has step 0 only): the
// rounds own the band of the kRoundTags highest tags of the communicator
// (schedules on the same communicator must stay below it,
// shim/comm_context.cpp).  Within a round each (source, tag) pair carries one
// message; a rank starts a round only once its previous round has completed,
// so both the sends and the receives of a (source, tag) pair come in round
// order, and MPI's non-overtaking rule matches the n-th receive with the
// n-th message: round n's.
//
// Errors.  A step that cannot be posted, or a completion that reports an
// error, stops the job (PMPI_Abort on the communicator) with a message
// naming the MPI error.  A round that failed on one rank only would leave
// that rank without the arrival vector its peers have, or its peers waiting
// for its message: the ranks could run different schedules, a hang or a
// wrong result, which papshim never risks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace papshim {

// Tags [tag_top - kRoundTags + 1, tag_top] belong to the rounds (enough for
// ceil(log2 P) steps at any int P).
constexpr int kRoundTags = 32;

// Communicators of up to this many ranks exchange directly (P - 1 messages
// per rank and round; above it, ceil(log2 P)).
constexpr int kDirectMaxRanks = 16;

class RoundExchange {
 public:
  // Blocks of `block_words` doubles on `comm` (size, rank), step tags below
  // `tag_top` (the communicator's MPI_TAG_UB); direct up to `direct_max`
  // ranks.
  RoundExchange(MPI_Comm comm, int size, int rank, int block_words, int tag_top,
                int direct_max = kDirectMaxRanks);
  RoundExchange(const RoundExchange&) = delete;
  RoundExchange& operator=(const RoundExchange&) = delete;

  // Starts a round (none may be active): `mine` is this rank's block (copied
  // at once), `out` receives the size * block_words doubles in rank order
  // and must stay valid until test() returns true or wait() returns.
  void start(const void* mine, void* out);
  // Advances without blocking; true once the round is complete (or none is
  // active).
  bool test();
  // Advances until the round is complete.
  void wait();
  bool active() const { return active_; }
  int step() const { return step_; }  // the step in progress (steps() when done)
  bool direct() const { return direct_; }
  // Messages this rank has sent in rounds so far (messages_per_round each).
  std::uint64_t messages_sent() const { return messages_sent_; }
  // The steps of one round: 0 for one rank, 1 direct, else ceil(log2 size).
  static int steps(int size, int direct_max = kDirectMaxRanks);
  // The messages a rank sends (and receives) per round: size - 1 direct,
  // else ceil(log2 size).
  static int messages_per_round(int size, int direct_max = kDirectMaxRanks);

 private:
  void post_step();
  void post_direct();
  bool all_null() const;
  void advance();  // the current step's requests have completed
  [[noreturn]] void fail(int rc);  // stops the job

  MPI_Comm comm_;
  int size_, rank_, words_, tag_top_;
  bool direct_;
  int nsteps_;
  std::vector<double> work_;  // position i: the block of rank (rank_ + i) mod size_
  void* out_ = nullptr;
  int step_ = 0;
  bool active_ = false;
  // The step's requests: receives first, then sends (Bruck: one of each;
  // direct: P - 1 of each).
  std::vector<MPI_Request> reqs_;
  std::uint64_t messages_sent_ = 0;
};

}  // namespace papshim
