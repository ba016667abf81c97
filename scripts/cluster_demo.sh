#!/usr/bin/env bash
# One command for the emulated cluster: builds papshim if needed, brings up
# 8 emulated hosts at 1 Gbit/s, runs the imbalanced demo (an unmodified MPI
# program that checks its own results) across them without and with the
# preload, prints papshim's report, and takes the hosts down again (also on
# failure or Ctrl-C).
#   scripts/cluster_demo.sh [hosts] [steps] [floats] [late_ms]
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-8} steps=${2:-20} count=${3:-1048576} late=${4:-50}
scripts/setup.sh
[[ -f build/libpapshim.so && -x build/bench/imbalanced_demo ]] || scripts/build.sh >/dev/null
trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
scripts/cluster.sh up "$hosts" 1gbit
mkdir -p results
echo "== without papshim"
scripts/cluster.sh run -- "$PWD/build/bench/imbalanced_demo" "$steps" "$count" "$late"
echo "== with papshim"
scripts/cluster.sh run -x LD_PRELOAD="$PWD/build/libpapshim.so" -x PAPSHIM_REPORT="$PWD/results/cluster-demo-report" -- \
  "$PWD/build/bench/imbalanced_demo" "$steps" "$count" "$late"
echo
cat results/cluster-demo-report.txt
