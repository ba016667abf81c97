#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs every test with ctest.
#   scripts/test.sh [ctest arguments...]   e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPAPSHIM_WERROR=ON
cd build
ctest --output-on-failure -j 2 "$@"
