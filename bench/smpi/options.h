// The command line of smpi_coll and the arrival patterns it imposes: plain
// C++, no MPI, so that every simulated rank parses the same arguments into
// the same configuration and draws the same delays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/catalog.h"

namespace papshim::smpi {

enum class PatternKind { Balanced, OneLate, RandLate };

// balanced: no delay.  one-late:D: one rank is late by D (the rank drawn
// per iteration from the seed, or Options::late_rank).  rand-late:D: every
// rank is late by a uniform draw in [0, D].  D is milliseconds, or with an
// `x` suffix a multiple of delta (one transfer of the whole vector,
// measured in the simulation at start-up).
struct Pattern {
  PatternKind kind = PatternKind::Balanced;
  double delay = 0;        // ms, or transfers when in_transfers
  bool in_transfers = false;
};

// One algorithm to run: native, auto (no Algo) or a catalog entry.
struct Choice {
  std::string name;
  std::optional<Algo> algo;
};

struct Options {
  Collective coll = Collective::Allreduce;
  std::vector<Choice> algos;        // ALGO, a comma-separated list: run one after the other
  long count = 0;                   // elements per rank (allgather: per block)
  Pattern pattern;
  int iters = 1;
  std::uint64_t seed = 1;
  int late_rank = -1;               // one-late: -1 draws it per iteration
  int root = 0;                     // reduce
  double gamma = 2e-10;             // simulated seconds per reduced byte
  bool check = true;
  bool verbose = false;             // one line per iteration too
  std::string label;
};

// Parses argv (argv[0] excluded from the positional arguments).  On a bad
// argument returns nullopt and sets `error` to a message naming it.
std::optional<Options> parse_options(int argc, char** argv, std::string& error);

// The usage text.
std::string usage();

// The pattern's delay in seconds once delta (seconds) is known.
double pattern_delay(const Pattern& p, double delta);

// Each rank's delay in iteration `iter` (seconds): identical on every rank.
std::vector<double> delays_for(const Options& o, int nprocs, int iter, double delay);

// The pattern as text, e.g. "one-late:1.5x".
std::string pattern_text(const Pattern& p);

}  // namespace papshim::smpi
