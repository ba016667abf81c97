#include "predictor/round_exchange.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "config/log.h"

namespace papshim {

int RoundExchange::steps(int size) {
  int s = 0;
  while (s < 31 && (1 << s) < size) ++s;
  return s;
}

RoundExchange::RoundExchange(MPI_Comm comm, int size, int rank, int block_words, int tag_top)
    : comm_(comm),
      size_(size),
      rank_(rank),
      words_(block_words),
      tag_top_(tag_top),
      nsteps_(steps(size)),
      work_(static_cast<std::size_t>(size) * static_cast<std::size_t>(block_words), 0.0) {}

void RoundExchange::start(const void* mine, void* out) {
  if (active_) wait();  // a caller's bug; waiting keeps the buffers safe
  out_ = out;
  failed_ = false;
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
  const int dist = 1 << step_;
  const int n = std::min(dist, size_ - dist) * words_;
  const int to = (rank_ - dist + size_) % size_;
  const int from = (rank_ + dist) % size_;
  const int tag = tag_top_ - step_;
  double* recv_at = work_.data() + static_cast<std::size_t>(dist) * static_cast<std::size_t>(words_);
  int rc = PMPI_Irecv(recv_at, n, MPI_DOUBLE, from, tag, comm_, &reqs_[0]);
  if (rc != MPI_SUCCESS) {
    reqs_[0] = MPI_REQUEST_NULL;
    fail(rc);
    return;
  }
  rc = PMPI_Isend(work_.data(), n, MPI_DOUBLE, to, tag, comm_, &reqs_[1]);
  if (rc != MPI_SUCCESS) {
    reqs_[1] = MPI_REQUEST_NULL;
    fail(rc);  // cancels the receive just posted
    return;
  }
  ++messages_sent_;
}

void RoundExchange::advance() {
  if (reqs_[0] != MPI_REQUEST_NULL || reqs_[1] != MPI_REQUEST_NULL) return;  // not all completed
  if (!failed_ && ++step_ < nsteps_) {
    post_step();
    return;
  }
  active_ = false;
  if (failed_) return;  // fail() wrote the output
  const std::size_t block = static_cast<std::size_t>(words_) * sizeof(double);
  auto* out = static_cast<unsigned char*>(out_);
  for (int i = 0; i < size_; ++i) {
    const std::size_t owner = static_cast<std::size_t>((rank_ + i) % size_);
    std::memcpy(out + owner * block, work_.data() + static_cast<std::size_t>(i) * words_, block);
  }
}

void RoundExchange::fail(int rc) {
  if (!failed_)
    log().warn("a prediction round failed (MPI error {}); its call runs without a prediction", rc);
  failed_ = true;
  if (reqs_[0] != MPI_REQUEST_NULL) PMPI_Cancel(&reqs_[0]);  // completes when tested or waited for
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto* out = static_cast<unsigned char*>(out_);
  for (std::size_t i = 0; i < work_.size(); ++i) std::memcpy(out + i * sizeof(double), &nan, sizeof nan);
}

bool RoundExchange::test_each() {
  for (MPI_Request& r : reqs_) {
    int done = 0;
    if (r != MPI_REQUEST_NULL) PMPI_Test(&r, &done, MPI_STATUS_IGNORE);  // frees it once complete
  }
  return reqs_[0] == MPI_REQUEST_NULL && reqs_[1] == MPI_REQUEST_NULL;
}

bool RoundExchange::test() {
  while (active_) {
    int done = 0;
    const int rc = PMPI_Testall(2, reqs_, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      fail(rc);
      done = test_each();  // whatever completed in error is freed; the rest stays
    }
    if (!done) return false;
    advance();
  }
  return true;
}

void RoundExchange::wait() {
  // Blocks for the current step only; test() posts the next one.
  while (!test()) {
    const int rc = PMPI_Waitall(2, reqs_, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) fail(rc);
  }
}

}  // namespace papshim
