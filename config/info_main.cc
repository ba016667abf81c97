// papshim-info: prints every papshim parameter with its default, accepted
// values and help, then validates the current environment.
//   papshim-info              the parameters, then the check of the environment
//   papshim-info --all        the same, test-only parameters included
//   papshim-info --markdown   the README's parameter table
//   papshim-info --algorithms one line per algorithm: collective name
//                             (native included, once per collective)
#include <cstdio>
#include <cstring>

#include "algorithms/catalog.h"
#include "config/params.h"

int main(int argc, char** argv) {
  const char* opt = argc > 1 ? argv[1] : "";
  if (std::strcmp(opt, "--markdown") == 0) {
    std::fputs(papshim::params_markdown().c_str(), stdout);
    return 0;
  }
  if (std::strcmp(opt, "--algorithms") == 0) {
    using papshim::Collective;
    for (Collective c : {Collective::Allreduce, Collective::Reduce, Collective::Allgather}) {
      std::printf("%s native\n", papshim::to_string(c));
      for (const papshim::AlgoInfo* a : papshim::algorithms_for(c)) std::printf("%s %s\n", papshim::to_string(c), a->name);
    }
    return 0;
  }
  const bool all = std::strcmp(opt, "--all") == 0;
  std::fputs(papshim::describe_params(all).c_str(), stdout);
  try {
    papshim::parse_config_from_environment();
    std::puts("\ncurrent environment: every PAPSHIM_* value is accepted");
    return 0;
  } catch (const papshim::ConfigError& e) {
    std::fprintf(stderr, "\npapshim: error: %s\n", e.what());
    return 1;
  }
}
