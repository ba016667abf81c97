#include "config/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

namespace papshim {

namespace {
std::shared_ptr<spdlog::logger>& current() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("papshim", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_level(spdlog::level::warn);
    l->set_pattern("[papshim %l] %v");
    return l;
  }();
  return logger;
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}
}  // namespace

spdlog::logger& log() { return *current(); }

void init_logging(const std::string& level, const std::string& dir, int rank) {
  const std::string host = hostname();
  const long pid = static_cast<long>(getpid());
  spdlog::sink_ptr sink;
  if (!dir.empty()) {
    const std::string path = dir + "/papshim." + host + "." + std::to_string(pid) + ".r" + std::to_string(rank) + ".log";
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true);
    } catch (const spdlog::spdlog_ex& e) {
      std::fprintf(stderr, "papshim: warning: cannot open log file %s (%s); logging to stderr\n", path.c_str(), e.what());
    }
  }
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto l = std::make_shared<spdlog::logger>("papshim", sink);
  l->set_level(spdlog::level::from_str(level));
  l->set_pattern("[papshim %H:%M:%S.%f " + host + ":" + std::to_string(pid) + " r" + std::to_string(rank) + " %l] %v");
  l->flush_on(spdlog::level::warn);
  current() = l;
}

void user_error(const std::string& msg) {
  std::fprintf(stderr, "papshim: error: %s\n", msg.c_str());
  std::fflush(stderr);
}

}  // namespace papshim
