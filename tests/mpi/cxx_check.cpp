// cxx_check - MPI_Allreduce (also with MPI_IN_PLACE), MPI_Reduce to root 0 and
// MPI_Allgather called from ordinary application C++ code (templates and
// member functions), on int and double arrays whose results have a closed
// form.
//
// Every collective is called from its own call site a fixed number of times:
//   site                              collective      calls
//   global_sum<int>                   MPI_Allreduce   10
//   Histogram::merge_max_in_place     MPI_Allreduce    5   (MPI_IN_PLACE)
//   RootReducer<int>::sum_at_root     MPI_Reduce       7
//   EnergyTally::total_at_root        MPI_Reduce       3
//   gather_all<int>                   MPI_Allgather    4
//   Trajectory::gather_positions      MPI_Allgather    2
// Each template is instantiated for one type only and every site function is
// kept out of line, so each site is exactly one call instruction. Each call
// is followed, on the same line, by a note of __LINE__, so the printed line
// is the line of the call. Rank 0 prints one "EXPECT" line per site (with
// the function the report must name there) and finally "OK"; any wrong
// value stops the job with MPI_Abort(..., 1).

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace app {

// ---------------------------------------------------------------------------
// Call-site bookkeeping and failure handling
// ---------------------------------------------------------------------------

class SiteLog {
 public:
  void note(const char* site, const char* collective, int line) {
    for (Entry& e : entries_) {
      if (e.site == site) {
        ++e.calls;
        return;
      }
    }
    entries_.push_back({site, collective, line, 1});
  }

  void print(const char* file) const {
    int totals[3] = {0, 0, 0};
    const char* names[3] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Allgather"};
    for (const Entry& e : entries_) {
      std::printf("EXPECT site=%s function=%s file=%s line=%d collective=%s calls=%d\n", e.site.c_str(), e.site.c_str(), file, e.line, e.collective.c_str(), e.calls);
      for (int k = 0; k < 3; ++k) {
        if (e.collective == names[k]) totals[k] += e.calls;
      }
    }
    for (int k = 0; k < 3; ++k) std::printf("EXPECT total collective=%s calls=%d\n", names[k], totals[k]);
  }

 private:
  struct Entry {
    std::string site;
    std::string collective;
    int line;
    int calls;
  };
  std::vector<Entry> entries_;
};

SiteLog& site_log() {
  static SiteLog log;
  return log;
}

void require(bool ok, const char* what, int iteration, std::size_t index) {
  if (ok) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::printf("cxx_check: FAIL %s: rank %d iteration %d index %zu\n", what, rank, iteration, index);
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// ---------------------------------------------------------------------------
// The call sites
// ---------------------------------------------------------------------------

// Element-wise sum over all ranks.
template <typename T>
[[gnu::noinline]] std::vector<T> global_sum(const std::vector<T>& local, MPI_Comm comm) {
  std::vector<T> result(local.size());
  const int n = static_cast<int>(local.size());
  MPI_Allreduce(local.data(), result.data(), n, mpi_type<T>(), MPI_SUM, comm); site_log().note("global_sum<int>", "MPI_Allreduce", __LINE__);
  return result;
}

// Element-wise concatenation of every rank's block, in rank order.
template <typename T>
[[gnu::noinline]] std::vector<T> gather_all(const std::vector<T>& mine, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<T> all(mine.size() * static_cast<std::size_t>(size));
  MPI_Allgather(mine.data(), n, mpi_type<T>(), all.data(), n, mpi_type<T>(), comm); site_log().note("gather_all<int>", "MPI_Allgather", __LINE__);
  return all;
}

class Histogram {
 public:
  explicit Histogram(std::size_t bins) : counts_(bins, 0.0) {}
  double& operator[](std::size_t i) { return counts_[i]; }
  std::size_t size() const { return counts_.size(); }

  // Replaces every bin by its maximum over all ranks.
  [[gnu::noinline]] void merge_max_in_place(MPI_Comm comm) {
    const int n = static_cast<int>(counts_.size());
    MPI_Allreduce(MPI_IN_PLACE, counts_.data(), n, MPI_DOUBLE, MPI_MAX, comm); site_log().note("Histogram::merge_max_in_place", "MPI_Allreduce", __LINE__);
  }

 private:
  std::vector<double> counts_;
};

template <typename T>
class RootReducer {
 public:
  explicit RootReducer(MPI_Comm comm) : comm_(comm) {}

  // The element-wise sum over all ranks on rank 0; 'sentinel' elsewhere.
  [[gnu::noinline]] std::vector<T> sum_at_root(const std::vector<T>& local, T sentinel) const {
    std::vector<T> result(local.size(), sentinel);
    const int n = static_cast<int>(local.size());
    MPI_Reduce(local.data(), result.data(), n, mpi_type<T>(), MPI_SUM, 0, comm_); site_log().note("RootReducer<int>::sum_at_root", "MPI_Reduce", __LINE__);
    return result;
  }

 private:
  MPI_Comm comm_;
};

class EnergyTally {
 public:
  explicit EnergyTally(std::vector<double> terms) : terms_(std::move(terms)) {}

  // The sum of every term over all ranks, valid on rank 0.
  [[gnu::noinline]] std::vector<double> total_at_root(MPI_Comm comm) const {
    std::vector<double> total(terms_.size(), -1.0);
    const int n = static_cast<int>(terms_.size());
    MPI_Reduce(terms_.data(), total.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm); site_log().note("EnergyTally::total_at_root", "MPI_Reduce", __LINE__);
    return total;
  }

 private:
  std::vector<double> terms_;
};

class Trajectory {
 public:
  explicit Trajectory(std::vector<double> positions) : positions_(std::move(positions)) {}

  // Every rank's positions, in rank order.
  [[gnu::noinline]] std::vector<double> gather_positions(MPI_Comm comm) const {
    int size = 0;
    MPI_Comm_size(comm, &size);
    const int n = static_cast<int>(positions_.size());
    std::vector<double> all(positions_.size() * static_cast<std::size_t>(size), -1.0);
    MPI_Allgather(positions_.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, comm); site_log().note("Trajectory::gather_positions", "MPI_Allgather", __LINE__);
    return all;
  }

 private:
  std::vector<double> positions_;
};

// ---------------------------------------------------------------------------
// The checks: rank r contributes values with a closed-form result
// ---------------------------------------------------------------------------

constexpr std::size_t kN = 37;

class Checker {
 public:
  explicit Checker(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  // Sum over r of (r + i + it) = P (i + it) + P (P - 1) / 2.
  void allreduce_int(int it) const {
    std::vector<int> mine(kN);
    for (std::size_t i = 0; i < kN; ++i) mine[i] = rank_ + static_cast<int>(i) + it;
    const std::vector<int> sum = global_sum(mine, comm_);
    for (std::size_t i = 0; i < kN; ++i) {
      require(sum[i] == size_ * (static_cast<int>(i) + it) + size_ * (size_ - 1) / 2, "allreduce int sum", it, i);
    }
  }

  // Maximum over r of (r / 2 + i + it), in place.
  void allreduce_double_in_place(int it) const {
    Histogram h(kN);
    for (std::size_t i = 0; i < kN; ++i) h[i] = 0.5 * rank_ + static_cast<double>(i) + it;
    h.merge_max_in_place(comm_);
    for (std::size_t i = 0; i < kN; ++i) require(h[i] == 0.5 * (size_ - 1) + static_cast<double>(i) + it, "allreduce in place double max", it, i);
  }

  // Sum over r of (r + 1) i it = i it P (P + 1) / 2 at root 0.
  void reduce_int(int it) const {
    std::vector<int> mine(kN);
    for (std::size_t i = 0; i < kN; ++i) mine[i] = (rank_ + 1) * static_cast<int>(i) * it;
    const std::vector<int> sum = RootReducer<int>(comm_).sum_at_root(mine, -1);
    for (std::size_t i = 0; i < kN; ++i) {
      const int expected = rank_ == 0 ? static_cast<int>(i) * it * size_ * (size_ + 1) / 2 : -1;
      require(sum[i] == expected, rank_ == 0 ? "reduce int sum" : "reduce: receive buffer of a non-root rank written", it, i);
    }
  }

  // Sum over r of ((r + 1) / 4 + i + it) = P (P + 1) / 8 + P (i + it) at root 0.
  void reduce_double(int it) const {
    std::vector<double> terms(kN);
    for (std::size_t i = 0; i < kN; ++i) terms[i] = 0.25 * (rank_ + 1) + static_cast<double>(i) + it;
    const std::vector<double> total = EnergyTally(terms).total_at_root(comm_);
    if (rank_ != 0) return;
    for (std::size_t i = 0; i < kN; ++i) {
      require(total[i] == 0.125 * size_ * (size_ + 1) + size_ * (static_cast<double>(i) + it), "reduce double sum", it, i);
    }
  }

  // Block r holds 1000 r + i + it.
  void allgather_int(int it) const {
    std::vector<int> mine(kN);
    for (std::size_t i = 0; i < kN; ++i) mine[i] = 1000 * rank_ + static_cast<int>(i) + it;
    const std::vector<int> all = gather_all(mine, comm_);
    for (std::size_t k = 0; k < all.size(); ++k) {
      const int r = static_cast<int>(k / kN), i = static_cast<int>(k % kN);
      require(all[k] == 1000 * r + i + it, "allgather int", it, k);
    }
  }

  // Block r holds r + i / 2 + it.
  void allgather_double(int it) const {
    std::vector<double> mine(kN);
    for (std::size_t i = 0; i < kN; ++i) mine[i] = rank_ + 0.5 * static_cast<double>(i) + it;
    const std::vector<double> all = Trajectory(mine).gather_positions(comm_);
    for (std::size_t k = 0; k < all.size(); ++k) {
      const double r = static_cast<double>(k / kN), i = static_cast<double>(k % kN);
      require(all[k] == r + 0.5 * i + it, "allgather double", it, k);
    }
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace app

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const app::Checker check(MPI_COMM_WORLD);
    for (int it = 1; it <= 10; ++it) check.allreduce_int(it);
    for (int it = 1; it <= 5; ++it) check.allreduce_double_in_place(it);
    for (int it = 1; it <= 7; ++it) check.reduce_int(it);
    for (int it = 1; it <= 3; ++it) check.reduce_double(it);
    for (int it = 1; it <= 4; ++it) check.allgather_int(it);
    for (int it = 1; it <= 2; ++it) check.allgather_double(it);
  }
  // Every rank has checked its results before rank 0 reports success.
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    app::site_log().print("cxx_check.cpp");
    std::printf("OK\n");
  }
  MPI_Finalize();
  return 0;
}
