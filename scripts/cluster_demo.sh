#!/usr/bin/env bash
# One command for the emulated cluster: builds papshim if needed, brings up
# 8 emulated hosts of the profile (scripts/profile.sh: network, the default,
# 100 Mbit/s, 256 Ki floats, 125 ms late; PAPSHIM_CLUSTER_PROFILE=cpu
# 1 Gbit/s, 1 Mi floats, 50 ms), measures their regime, runs the imbalanced demo (an unmodified MPI
# program that checks its own results) across them without and with the
# preload, prints papshim's report, and takes the hosts down again (also on
# failure or Ctrl-C).
#   scripts/cluster_demo.sh [hosts] [steps] [floats] [late_ms]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/profile.sh
hosts=${1:-8} steps=${2:-20} count=${3:-$PROFILE_FLOATS} late=${4:-$PROFILE_LATE_MS}
scripts/setup.sh
[[ -f build/libpapshim.so && -x build/bench/imbalanced_demo && -x build/bench/netcheck ]] || scripts/build.sh >/dev/null
trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
scripts/cluster.sh up "$hosts" "$PROFILE"
scripts/cluster.sh check || true
mkdir -p results
echo "== without papshim"
scripts/cluster.sh run -- "$PWD/build/bench/imbalanced_demo" "$steps" "$count" "$late"
echo "== with papshim"
scripts/cluster.sh run -x LD_PRELOAD="$PWD/build/libpapshim.so" -x PAPSHIM_REPORT="$PWD/results/cluster-demo-report" -- \
  "$PWD/build/bench/imbalanced_demo" "$steps" "$count" "$late"
echo
cat results/cluster-demo-report.txt
echo "regime: $(scripts/cluster.sh regime)"
