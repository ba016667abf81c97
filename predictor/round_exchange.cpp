#include "predictor/round_exchange.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "config/log.h"

namespace papshim {

namespace {
int ceil_log2(int size) {
  int s = 0;
  while (s < 31 && (1 << s) < size) ++s;
  return s;
}
bool is_direct(int size, int direct_max) { return size > 1 && size <= direct_max; }
}  // namespace

int RoundExchange::steps(int size, int direct_max) { return is_direct(size, direct_max) ? 1 : ceil_log2(size); }

int RoundExchange::messages_per_round(int size, int direct_max) {
  return is_direct(size, direct_max) ? size - 1 : ceil_log2(size);
}

RoundExchange::RoundExchange(MPI_Comm comm, int size, int rank, int block_words, int tag_top, int direct_max)
    : comm_(comm),
      size_(size),
      rank_(rank),
      words_(block_words),
      tag_top_(tag_top),
      direct_(is_direct(size, direct_max)),
      nsteps_(steps(size, direct_max)),
      work_(static_cast<std::size_t>(size) * static_cast<std::size_t>(block_words), 0.0),
      reqs_(direct_ ? 2 * static_cast<std::size_t>(size - 1) : 2, MPI_REQUEST_NULL) {}

void RoundExchange::start(const void* mine, void* out) {
  if (active_) wait();  // a caller's bug; waiting keeps the buffers safe
  out_ = out;
  step_ = 0;
  std::memcpy(work_.data(), mine, static_cast<std::size_t>(words_) * sizeof(double));
  active_ = true;
  if (nsteps_ == 0) {
    advance();  // one rank: complete at once
    return;
  }
  post_step();
}

void RoundExchange::post_step() {
  if (direct_) {
    post_direct();
    return;
  }
  const int dist = 1 << step_;
  const int n = std::min(dist, size_ - dist) * words_;
  const int to = (rank_ - dist + size_) % size_;
  const int from = (rank_ + dist) % size_;
  const int tag = tag_top_ - step_;
  double* recv_at = work_.data() + static_cast<std::size_t>(dist) * static_cast<std::size_t>(words_);
  int rc = PMPI_Irecv(recv_at, n, MPI_DOUBLE, from, tag, comm_, &reqs_[0]);
  if (rc != MPI_SUCCESS) fail(rc);
  rc = PMPI_Isend(work_.data(), n, MPI_DOUBLE, to, tag, comm_, &reqs_[1]);
  if (rc != MPI_SUCCESS) fail(rc);
  ++messages_sent_;
}

// Position i receives from rank (rank_ + i) mod P, as in Bruck's layout, so
// advance() writes the output the same way.  All receives are posted before
// any send, so a peer's block never waits as an unexpected message when
// this rank is already listening.
void RoundExchange::post_direct() {
  const int peers = size_ - 1;
  for (int i = 1; i <= peers; ++i) {
    double* at = work_.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(words_);
    MPI_Request& r = reqs_[static_cast<std::size_t>(i - 1)];
    const int rc = PMPI_Irecv(at, words_, MPI_DOUBLE, (rank_ + i) % size_, tag_top_, comm_, &r);
    if (rc != MPI_SUCCESS) fail(rc);
  }
  for (int i = 1; i <= peers; ++i) {
    MPI_Request& r = reqs_[static_cast<std::size_t>(peers + i - 1)];
    const int rc = PMPI_Isend(work_.data(), words_, MPI_DOUBLE, (rank_ - i + size_) % size_, tag_top_, comm_, &r);
    if (rc != MPI_SUCCESS) fail(rc);
    ++messages_sent_;
  }
}

bool RoundExchange::all_null() const {
  return std::all_of(reqs_.begin(), reqs_.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; });
}

void RoundExchange::advance() {
  if (!all_null()) return;  // not all completed
  if (++step_ < nsteps_) {
    post_step();
    return;
  }
  active_ = false;
  const std::size_t block = static_cast<std::size_t>(words_) * sizeof(double);
  auto* out = static_cast<unsigned char*>(out_);
  for (int i = 0; i < size_; ++i) {
    const std::size_t owner = static_cast<std::size_t>((rank_ + i) % size_);
    std::memcpy(out + owner * block, work_.data() + static_cast<std::size_t>(i) * words_, block);
  }
}

void RoundExchange::fail(int rc) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error code %d", rc);
  user_error(fmt::format("a prediction round on a communicator of {} ranks failed on this rank (MPI: {}); its "
                         "ranks can no longer be sure to run the same schedule at their next call, so the job "
                         "stops here rather than risk a hang or a wrong result (PAPSHIM_PREDICTOR=off runs "
                         "without prediction rounds)",
                         size_, text));
  PMPI_Abort(comm_, rc == MPI_SUCCESS ? 1 : rc);
  std::_Exit(EXIT_FAILURE);  // PMPI_Abort does not return
}

bool RoundExchange::test() {
  while (active_) {
    int done = 0;
    const int rc = PMPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) fail(rc);
    if (!done) return false;
    advance();
  }
  return true;
}

void RoundExchange::wait() {
  // Blocks for the current step only; test() posts the next one.
  while (!test()) {
    const int rc = PMPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) fail(rc);
  }
}

}  // namespace papshim
