#!/usr/bin/env bash
# What interception costs: 8-byte MPI_Allreduce, microseconds per call
# (median over batches), without the preload and with it in several
# settings, the variants interleaved over several repetitions so machine
# noise hits them alike.  Prints each variant's median over repetitions.
#   scripts/overhead.sh [ranks] [repetitions]
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2} reps=${2:-5}
[[ -x build/bench/overhead ]] || scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$PWD/build/libpapshim.so
declare -A runs=(
  [1-without]=""
  [2-disabled]="-x LD_PRELOAD=$lib -x PAPSHIM_DISABLE=1"
  [3-inline]="-x LD_PRELOAD=$lib -x PAPSHIM_HELPER_THREAD=0"
  [4-helper]="-x LD_PRELOAD=$lib"
  [5-multiple-only]="-x LD_PRELOAD=$lib -x PAPSHIM_PREDICTOR=off"
)
declare -A results
for ((i = 0; i < reps; i++)); do
  for k in $(printf '%s\n' "${!runs[@]}" | sort); do
    # shellcheck disable=SC2086
    v=$(mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" -x PAPSHIM_REPORT=off ${runs[$k]} build/bench/overhead)
    results[$k]+="$v "
  done
done
echo "8-byte MPI_Allreduce, $np ranks, us per call (median of $reps runs; each run: median of 15 batches of 2000)"
for k in $(printf '%s\n' "${!results[@]}" | sort); do
  med=$(tr ' ' '\n' <<<"${results[$k]}" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '  %-16s %8s   (runs: %s)\n' "${k#*-}" "$med" "${results[$k]}"
done
