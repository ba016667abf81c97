// Logging: one spdlog logger per process, lines prefixed with host, pid and
// rank; per-rank files under PAPSHIM_LOG_DIR, else stderr.  Levels are checked
// before formatting (spdlog does this for us).
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace papshim {

// Before init_logging() runs, log() returns a stderr logger at level warn.
spdlog::logger& log();

// Called once the rank is known.  Safe to call again (replaces the logger).
void init_logging(const std::string& level, const std::string& dir, int rank);

// Error line for the user: "papshim: error: <msg>" on stderr, also logged.
void user_error(const std::string& msg);

}  // namespace papshim
