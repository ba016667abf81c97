#!/usr/bin/env bash
# Sets up, builds, and runs an unmodified MPI program with an imbalanced
# loop twice (8 ranks): without papshim and with LD_PRELOAD=libpapshim.so,
# then prints the report papshim wrote and, with matplotlib, draws it
# (scripts/papshim-report: results/demo-report-html/index.html).
#   scripts/demo.sh [ranks] [steps] [floats] [late_ms]
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-8} steps=${2:-40} count=${3:-262144} late=${4:-20}
scripts/setup.sh
scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p results
run() { mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$@" build/bench/imbalanced_demo "$steps" "$count" "$late"; }
echo "== without papshim"
run
echo "== with papshim (LD_PRELOAD=build/libpapshim.so)"
run -x LD_PRELOAD="$PWD/build/libpapshim.so" -x PAPSHIM_REPORT="$PWD/results/demo-report"
echo
echo "== what papshim saw (results/demo-report.txt; JSON beside it)"
cat results/demo-report.txt
if python3 -c 'import matplotlib' 2>/dev/null; then
  echo
  echo "== the report drawn (scripts/papshim-report)"
  python3 scripts/papshim-report results/demo-report.json -o results/demo-report-html
fi
