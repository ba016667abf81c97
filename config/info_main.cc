// papshim-info: prints every papshim parameter with its default, accepted
// values and help, then validates the current environment.
#include <cstdio>
#include <cstring>

#include "config/params.h"

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::strcmp(argv[1], "--all") == 0;
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
