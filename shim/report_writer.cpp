// Works as follows.  Every rank takes its statistics (Stats::snapshot) and
// joins two allreduces on the private world communicator: the maxima of its
// sampling level, clock offset and helper CPU time, and the sums of helper
// CPU time and of the distinct calls its samples cover at each level.  From
// these every rank computes the same final level: the highest any rank
// reached, raised until the job's sampled calls are at most kMaxMergedCalls,
// which bounds what rank 0 holds while merging whatever the communicators.
// The same allreduce counts the job's sampled arrivals per level: rank 0
// keeps every rank's arrival of a call (for each rank's lateness) only for
// the calls of a level at which they are at most kMaxLatenessArrivals.
// Each rank drops its samples below that level.  Then rank 0 asks the ranks
// one at a time for their message (a token, the 64-bit length, the bytes in
// pieces of at most 1 GiB), so it never holds more than one message and no
// rank's message waits unexpected in the MPI library; it folds each into the
// ReportMerger (and writes its timeline events) before asking the next.
#include "shim/report_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "config/log.h"
#include "predictor/helper_thread.h"
#include "predictor/predictor.h"
#include "shim/report.h"
#include "shim/stats.h"

namespace papshim {

namespace {

// Sampled calls rank 0 may have to track at once (about 100 bytes each).
constexpr std::uint64_t kMaxMergedCalls = std::uint64_t{1} << 17;
// Arrivals rank 0 may hold at once for the lateness (16 bytes each).
constexpr std::uint64_t kMaxLatenessArrivals = std::uint64_t{1} << 20;
constexpr std::size_t kPiece = std::size_t{1} << 30;
constexpr int kTagGo = 0x7a11, kTagLength = 0x7a12, kTagBytes = 0x7a13;

std::string non_default_settings(const Config& cfg) {
  std::string out;
  for (const auto& spec : param_specs())
    for (const auto& [name, v] : cfg.values)
      if (name == spec.name && v != spec.def) out += (out.empty() ? "" : " ") + name + "=" + v;
  return out;
}

std::string mpi_library() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  PMPI_Get_library_version(buf, &len);
  std::string s(buf, static_cast<std::size_t>(len));
  if (const auto nl = s.find_first_of("\n,"); nl != std::string::npos) s.resize(nl);
  return s;
}

// A non-root rank: waits for rank 0's token, then sends its message.
void send_to_root(const std::string& msg, MPI_Comm comm) {
  PMPI_Recv(nullptr, 0, MPI_BYTE, 0, kTagGo, comm, MPI_STATUS_IGNORE);
  const std::uint64_t length = msg.size();
  PMPI_Send(&length, 1, MPI_UINT64_T, 0, kTagLength, comm);
  for (std::size_t at = 0; at < msg.size(); at += kPiece)
    PMPI_Send(msg.data() + at, static_cast<int>(std::min(kPiece, msg.size() - at)), MPI_BYTE, 0, kTagBytes, comm);
}

// Rank 0: the message of rank `from`.
std::string receive_from(int from, MPI_Comm comm) {
  PMPI_Send(nullptr, 0, MPI_BYTE, from, kTagGo, comm);
  std::uint64_t length = 0;
  PMPI_Recv(&length, 1, MPI_UINT64_T, from, kTagLength, comm, MPI_STATUS_IGNORE);
  std::string msg(static_cast<std::size_t>(length), '\0');
  for (std::size_t at = 0; at < msg.size(); at += kPiece)
    PMPI_Recv(&msg[at], static_cast<int>(std::min(kPiece, msg.size() - at)), MPI_BYTE, from, kTagBytes, comm,
              MPI_STATUS_IGNORE);
  return msg;
}

// This rank's host as the report names it: the host name, and the
// emulated host under PAPSHIM_TEST_RANKS_PER_NODE.
std::string host_name(const Runtime& rt) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string out = host;
  if (rt.cfg.test_ranks_per_node > 0) out += "/emulated-host-" + std::to_string(rt.host_key);
  return out;
}

std::vector<std::string> site_names(const ReportMerger& m, const std::vector<std::size_t>& rows) {
  std::vector<std::string> names;
  names.reserve(rows.size());
  for (auto r : rows) names.push_back(timeline_site_name(m.row(r)));
  return names;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    tmp_ = path_ + ".tmp." + host + "." + std::to_string(getpid()) + "." + std::to_string(attempt);
    fd_ = open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  ok_ = fd_ >= 0;
  if (!ok_) std::fprintf(stderr, "papshim: warning: cannot write %s: %s\n", path_.c_str(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(tmp_.c_str());
  }
}

bool AtomicFile::write(const std::string& text) {
  std::size_t at = 0;
  while (ok_ && at < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "papshim: warning: cannot write %s: %s\n", tmp_.c_str(), std::strerror(errno));
      ok_ = false;
    } else {
      at += static_cast<std::size_t>(n);
    }
  }
  return ok_;
}

bool AtomicFile::commit() {
  if (fd_ < 0) return false;
  const bool closed = close(fd_) == 0;
  fd_ = -1;
  if (ok_ && closed && rename(tmp_.c_str(), path_.c_str()) == 0) return true;
  std::fprintf(stderr, "papshim: warning: cannot write %s: %s\n", path_.c_str(), std::strerror(errno));
  unlink(tmp_.c_str());
  ok_ = false;
  return false;
}

bool write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  return f.write(text) && f.commit();
}

void write_report(Runtime& rt) {
  const double wall = common_now() - rt.t_init;
  RankStats mine = Stats::instance().snapshot();

  // Maxima: sampling level, |clock offset|, helper CPU; sums: helper CPU and
  // the calls the samples cover per level.
  const double cpu = HelperThread::instance().cpu_seconds();
  double maxima[3] = {static_cast<double>(mine.level), std::fabs(rt.cal.clock_offset), cpu}, maxed[3] = {0, 0, 0};
  PMPI_Allreduce(maxima, maxed, 3, MPI_DOUBLE, MPI_MAX, rt.world_priv);
  // The calls the samples cover per level, then the records (arrivals) per level.
  std::vector<std::uint64_t> weights = sample_call_weights(mine);
  const std::size_t levels = weights.size();
  const std::vector<std::uint64_t> records = sample_record_counts(mine);
  weights.insert(weights.end(), records.begin(), records.end());
  PMPI_Allreduce(MPI_IN_PLACE, weights.data(), static_cast<int>(weights.size()), MPI_UINT64_T, MPI_SUM,
                 rt.world_priv);
  double cpu_sum = 0;
  PMPI_Allreduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, rt.world_priv);
  std::uint64_t rounds[2] = {Predictor::rounds_opened(), Predictor::rounds_skipped()};
  PMPI_Allreduce(MPI_IN_PLACE, rounds, 2, MPI_UINT64_T, MPI_SUM, rt.world_priv);
  const std::vector<std::uint64_t> job_records(weights.begin() + static_cast<std::ptrdiff_t>(levels), weights.end());
  weights.resize(levels);
  const int level = choose_sample_level(weights, static_cast<int>(maxed[0]), kMaxMergedCalls);
  thin_samples(mine, level);
  mine.host = host_name(rt);
  if (rt.world_rank != 0) {
    send_to_root(pack_rank_stats(mine), rt.world_priv);
    return;
  }

  ReportHeader h;
  h.ranks = rt.world_size;
  h.mpi_library = mpi_library();
  h.config = non_default_settings(rt.cfg);
  h.sample_level = level;
  h.lateness_level = choose_record_level(job_records, level, kMaxLatenessArrivals);
  h.wall_seconds = wall;
  h.alpha = rt.cal.cost.alpha;
  h.beta = rt.cal.cost.beta;
  h.gamma = rt.cal.cost.gamma;
  h.max_clock_offset = maxed[1];
  h.thread_mode = rt.thread_mode;
  h.helper_cpu_mean = cpu_sum / rt.world_size;
  h.helper_cpu_max = maxed[2];
  h.rounds_opened = rounds[0];
  h.rounds_skipped = rounds[1];

  ReportMerger merger(h, rt.world_size, resolve_callsite_key);
  std::unique_ptr<AtomicFile> timeline;
  if (!rt.cfg.timeline.empty()) {
    timeline = std::make_unique<AtomicFile>(rt.cfg.timeline);
    timeline->write(timeline_begin());
  }
  auto fold_in = [&](int rank, const RankStats& s) {
    const auto rows = merger.add_rank(rank, s);
    if (timeline) timeline->write(timeline_rank_events(rank, s, site_names(merger, rows), rt.t_init, rank == 0));
  };
  fold_in(0, mine);
  mine = RankStats{};
  for (int r = 1; r < rt.world_size; ++r) {
    const std::string msg = receive_from(r, rt.world_priv);
    RankStats s;
    if (unpack_rank_stats(msg.data(), msg.size(), s)) fold_in(r, s);
    else
      log().warn("report: the statistics of rank {} are damaged ({} bytes); the report leaves them out", r,
                 msg.size());
  }
  if (timeline && timeline->write(timeline_end()) && timeline->commit())
    log().info("timeline written to {}", rt.cfg.timeline);
  const Report rep = merger.finish();
  if (rt.cfg.report != "off" && write_file_atomically(rt.cfg.report + ".txt", format_text(rep)) &&
      write_file_atomically(rt.cfg.report + ".json", format_json(rep)))
    log().info("report written to {}.txt and {}.json", rt.cfg.report, rt.cfg.report);
}

}  // namespace papshim
