// The prediction rounds' allgather (predictor/round_exchange.h) alone, on
// communicators of every size from 1 to the job's (the first n ranks of
// MPI_COMM_WORLD), once in Bruck's steps at every size and once with the
// direct exchange up to its limit: several consecutive rounds of rank- and
// round-dependent blocks, some ranks advancing only with test() while the
// others wait(), ranks starting late in turn, and point-to-point traffic
// with the highest tag left to schedules in flight during every round.
// Checks every block, that each rank sent exactly the round's number of
// messages (n - 1 direct, else ceil(log2 n)), and that no message is left
// over.  Prints one line per failure and "round_exchange_check
// OK" on rank 0; exits 1 on any failure.
// With "fail": a round whose messages MPI refuses (a tag above MPI_TAG_UB,
// on a communicator that returns errors) must stop the job with a message,
// never return an incomplete vector or hang; so this mode exits 0 only if
// the round returned.
//   round_exchange_check [rounds | fail]
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "predictor/round_exchange.h"

namespace {

using papshim::RoundExchange;

constexpr int kWords = 7;

double value(int rank, int round, int word) { return rank * 1000.0 + round * 10.0 + word + 0.25; }

int ceil_log2(int n) {
  int s = 0;
  while ((1 << s) < n) ++s;
  return s;
}

// One round on `comm`: returns the failures seen by this rank.
int one_round(RoundExchange& x, MPI_Comm comm, int n, int rank, int round, int tag_top) {
  // Ranks start late in turn, so some wait long for others.
  if (rank == round % n) usleep(2000);
  std::vector<double> mine(kWords), out(static_cast<std::size_t>(n) * kWords, -1.0);
  for (int w = 0; w < kWords; ++w) mine[static_cast<std::size_t>(w)] = value(rank, round, w);
  x.start(mine.data(), out.data());
  // A schedule's message with the highest tag schedules may use, in flight
  // during the round: it must match neither way.
  const int sched_tag = tag_top - papshim::kRoundTags;
  double ping = rank + round * 0.5, pong = -1;
  MPI_Request r[2];
  MPI_Irecv(&pong, 1, MPI_DOUBLE, (rank + n - 1) % n, sched_tag, comm, &r[0]);
  MPI_Isend(&ping, 1, MPI_DOUBLE, (rank + 1) % n, sched_tag, comm, &r[1]);
  // Half of the ranks (alternating with the round) only ever test.
  if ((rank + round) % 2 == 0) {
    while (!x.test()) {
    }
  } else {
    x.wait();
  }
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  int failures = 0;
  if (x.active()) {
    std::printf("n=%d rank %d round %d: exchange still active\n", n, rank, round);
    ++failures;
  }
  if (pong != (rank + n - 1) % n + round * 0.5) {
    std::printf("n=%d rank %d round %d: schedule-tag message got %g\n", n, rank, round, pong);
    ++failures;
  }
  for (int p = 0; p < n; ++p)
    for (int w = 0; w < kWords; ++w) {
      const double got = out[static_cast<std::size_t>(p * kWords + w)];
      if (got != value(p, round, w)) {
        if (failures < 5) std::printf("n=%d rank %d round %d: block %d word %d is %g\n", n, rank, round, p, w, got);
        ++failures;
      }
    }
  return failures;
}

// direct_max: 0 for Bruck's steps at every size, else the library's limit.
int check_size(int n, int world_rank, int rounds, int direct_max) {
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < n ? 0 : MPI_UNDEFINED, world_rank, &comm);
  if (comm == MPI_COMM_NULL) return 0;
  int* ub = nullptr;
  int has_ub = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &has_ub);
  const int tag_top = has_ub ? *ub : 32767;
  int failures = 0;
  {
    RoundExchange x(comm, n, world_rank, kWords, tag_top, direct_max);
    const bool direct = n > 1 && n <= direct_max;
    const int want_steps = direct ? 1 : ceil_log2(n);
    const int want_messages = direct ? n - 1 : ceil_log2(n);
    if (x.direct() != direct || RoundExchange::steps(n, direct_max) != want_steps ||
        RoundExchange::messages_per_round(n, direct_max) != want_messages) {
      std::printf("n=%d direct_max=%d: direct %d steps %d messages %d, expected %d %d %d\n", n, direct_max,
                  x.direct(), RoundExchange::steps(n, direct_max), RoundExchange::messages_per_round(n, direct_max),
                  direct, want_steps, want_messages);
      ++failures;
    }
    for (int round = 0; round < rounds; ++round) {
      const auto before = x.messages_sent();
      failures += one_round(x, comm, n, world_rank, round, tag_top);
      const auto sent = x.messages_sent() - before;
      if (sent != static_cast<unsigned>(want_messages)) {
        std::printf("n=%d rank %d round %d: sent %llu messages, expected %d\n", n, world_rank, round,
                    static_cast<unsigned long long>(sent), want_messages);
        ++failures;
      }
    }
  }
  MPI_Barrier(comm);  // every message of every round has been received
  int left = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &left, MPI_STATUS_IGNORE);
  if (left) {
    std::printf("n=%d rank %d: a message is left over\n", n, world_rank);
    ++failures;
  }
  MPI_Comm_free(&comm);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1 && std::strcmp(argv[1], "fail") == 0) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int* ub = nullptr;
    int has_ub = 0;
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &has_ub);
    const int bad_top = (has_ub ? *ub : 32767) + papshim::kRoundTags + 1;  // every step's tag beyond the bound
    for (int direct_max : {0, papshim::kDirectMaxRanks}) {
      RoundExchange x(comm, size, rank, kWords, bad_top, direct_max);
      std::vector<double> mine(kWords, 1.0), out(static_cast<std::size_t>(size) * kWords);
      x.start(mine.data(), out.data());
      x.wait();
    }
    std::printf("rank %d: rounds with invalid tags returned\n", rank);
    MPI_Finalize();
    return 0;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
  int failures = 0;
  for (int direct_max : {0, papshim::kDirectMaxRanks})
    for (int n = 1; n <= size; ++n) failures += check_size(n, rank, rounds, direct_max);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      std::printf("round_exchange_check OK: sizes 1..%d, Bruck and direct, %d rounds each\n", size, rounds);
    else
      std::printf("round_exchange_check: %d failures\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
