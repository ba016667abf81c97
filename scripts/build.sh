#!/usr/bin/env bash
# Configures and builds papshim into build/ (build/libpapshim.so).
#   scripts/build.sh [extra cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j "$(nproc)"
