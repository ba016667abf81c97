#!/usr/bin/env bash
# Sets up, builds, and shows papshim where it helps: an unmodified MPI
# program with an imbalanced loop (bench/imbalanced_demo, which checks its
# own results), run without and with LD_PRELOAD=libpapshim.so, three times
# each, alternating.  Prints the mean time per step in the timed collective
# of every run, the medians and their ratio, then papshim's report and,
# with matplotlib, its drawing (scripts/papshim-report:
# results/demo-report-html/index.html).
#
# The regime: when this machine can make network namespaces (root, a kernel
# with veth, bridge and tbf), 8 emulated hosts of the network-bound profile
# (scripts/cluster.sh, 100 Mbit/s links, taken down again at the end;
# PAPSHIM_CLUSTER_PROFILE=cpu for 1 Gbit/s, where the cores limit instead)
# and MPI_Allreduce of 256 Ki floats with one host 125 ms (1.5 transfers)
# late; the regime is measured first (scripts/cluster.sh check) and printed
# with the times.  Otherwise 8 ranks on this machine's shared memory and
# MPI_Reduce of 1 Mi floats with one rank 20 ms late.
#   scripts/demo.sh [cluster|shared] [steps]
# PAPSHIM_DEMO_REPS sets the runs per side (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
regime=${1:-auto} steps=${2:-}
reps=${PAPSHIM_DEMO_REPS:-3}
case $regime in auto | cluster | shared) ;; *)
  echo "demo.sh: the regime must be cluster or shared (or nothing: cluster when possible), not '$regime'" >&2
  exit 2 ;;
esac
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "demo.sh: PAPSHIM_DEMO_REPS must be a positive integer, not '$reps'" >&2; exit 2; }
source scripts/profile.sh
scripts/setup.sh
scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p results
lib=$PWD/build/libpapshim.so demo=$PWD/build/bench/imbalanced_demo report=$PWD/results/demo-report

# The demo's hosts have their own names and subnet, apart from a user's
# cluster and the tests'.
export PAPSHIM_CLUSTER_PREFIX=papd PAPSHIM_CLUSTER_SUBNET=10.213.79.0/24
if [[ $regime != shared ]]; then
  trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
  if scripts/cluster.sh up 8 "$PROFILE" >/dev/null 2>results/demo-cluster.err; then
    regime=cluster
  elif [[ $regime == cluster ]]; then
    cat results/demo-cluster.err >&2
    exit 1
  else
    echo "demo.sh: no emulated cluster here ($(tail -n1 results/demo-cluster.err)); running on shared memory"
    regime=shared
  fi
fi

if [[ $regime == cluster ]]; then
  args=("${steps:-30}" "$PROFILE_FLOATS" "$PROFILE_LATE_MS" -1 allreduce)
  echo "== measuring the emulated hosts (scripts/cluster.sh check)"
  scripts/cluster.sh check | sed 's/^/   /' || true
  regime_line="$(scripts/cluster.sh regime), one rank each; MPI_Allreduce of $PROFILE_FLOATS floats, one host $PROFILE_LATE_MS ms late"
  run() { scripts/cluster.sh run "$@" -- "$demo" "${args[@]}"; }
else
  args=("${steps:-40}" 1048576 20 -1 reduce)
  regime_line="shared memory: 8 ranks on this machine's cores; MPI_Reduce of 1 Mi floats, one rank 20 ms late"
  run() { mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 8 "$@" "$demo" "${args[@]}"; }
fi
echo "== regime: $regime_line"
echo "   (the late rank moves every 10 steps; $reps runs without and with papshim, alternating)"

# ms per step from the program's line, which it prints after checking its results.
ms_of() { sed -n 's/.*mean time in MPI_[A-Za-z]* \([0-9.]*\) ms\/step.*results exact.*/\1/p' <<<"$1"; }
without=() with=()
source scripts/progress.sh
progress_start $((2 * reps))
for ((i = 1; i <= reps; i++)); do
  progress_step "run $i without papshim"
  out=$(run) || { echo "$out" >&2; exit 1; }
  t=$(ms_of "$out")
  [[ -n $t ]] || { echo "demo.sh: the run without papshim printed no timing: $out" >&2; exit 1; }
  without+=("$t")
  progress_step "run $i with papshim"
  out=$(run -x LD_PRELOAD="$lib" -x PAPSHIM_REPORT="$report") || { echo "$out" >&2; exit 1; }
  t=$(ms_of "$out")
  [[ -n $t ]] || { echo "demo.sh: the run with papshim printed no timing: $out" >&2; exit 1; }
  with+=("$t")
  progress_clear
  printf '   run %d: without %8.3f ms/step   with papshim %8.3f ms/step\n' "$i" "${without[-1]}" "${with[-1]}"
done
progress_end
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m0=$(median "${without[@]}") m1=$(median "${with[@]}")
echo
echo "== regime: $regime_line"
printf '== median time in the collective per step: without %.3f ms, with papshim %.3f ms: %.2f x (%s)\n' \
  "$m0" "$m1" "$(awk -v a="$m1" -v b="$m0" 'BEGIN {print a / b}')" \
  "$(awk -v a="$m1" -v b="$m0" 'BEGIN {print (a < b) ? "papshim faster" : "papshim not faster here"}')"
echo
echo "== what papshim saw in the last run (results/demo-report.txt; JSON beside it)"
cat "$report.txt"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo
  echo "== the report drawn (scripts/papshim-report)"
  /usr/bin/python3 scripts/papshim-report "$report.json" -o results/demo-report-html
fi
