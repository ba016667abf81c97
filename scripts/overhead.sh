#!/usr/bin/env bash
# What interception costs: 8-byte MPI_Allreduce, microseconds per call,
# without the preload and with it in several settings.  Each run of
# bench/overhead alternates batches of MPI_Allreduce (through the preload)
# with batches of PMPI_Allreduce (the library directly) in the same
# process, so the "added" column, the median of the paired differences, is
# what papshim adds to a call with the machine's noise paired out; the
# "without" row shows that difference when nothing is interposed (the noise
# floor).  The variants are interleaved over several repetitions and each
# column is the median over them.
#   scripts/overhead.sh [ranks] [repetitions] [--self]
# --self: the calls run on MPI_COMM_SELF (no partner, the bookkeeping alone).
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2} reps=${2:-5} self=${3:-}
[[ -z $self || $self == --self ]] || { echo "overhead.sh: third argument must be --self, not '$self'" >&2; exit 2; }
[[ -x build/bench/overhead ]] || scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks spin while they wait when each has a core (as on a cluster node);
# with more ranks than cores they yield, or the run would crawl.  Yielding
# turns any delay before a send into a partner's sched_yield, which
# multiplies what a few nanoseconds cost.
yield=$((np > $(nproc) ? 1 : 0))
lib=$PWD/build/libpapshim.so
declare -A runs=(
  [1-without]=""
  [2-disabled]="-x LD_PRELOAD=$lib -x PAPSHIM_DISABLE=1"
  [3-inline]="-x LD_PRELOAD=$lib -x PAPSHIM_HELPER_THREAD=0"
  [4-default]="-x LD_PRELOAD=$lib"
  [5-helper]="-x LD_PRELOAD=$lib -x PAPSHIM_HELPER_THREAD=1"
)
declare -A col1 col2 col3
source scripts/progress.sh
progress_start $((reps * ${#runs[@]}))
for ((i = 0; i < reps; i++)); do
  for k in $(printf '%s\n' "${!runs[@]}" | sort); do
    progress_step "repetition $((i + 1)), ${k#*-}"
    # shellcheck disable=SC2086
    out=$(mpirun --oversubscribe --mca mpi_yield_when_idle "$yield" -np "$np" -x PAPSHIM_REPORT=off ${runs[$k]} \
      build/bench/overhead $self) || { echo "overhead.sh: the run '${k#*-}' failed: $out" >&2; exit 1; }
    read -r a b c <<<"$out"
    col1[$k]+="$a " col2[$k]+="$b " col3[$k]+="$c "
  done
done
progress_end
med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "8-byte MPI_Allreduce on ${self:+MPI_COMM_SELF of }$np ranks ($( ((yield)) && echo yielding || echo spinning) while waiting), us per call, median of $reps runs"
echo "(each run: medians of 15 batches of 2000 calls; 'added' = MPI_ minus PMPI_ batches, paired)"
echo "('over native' = MPI_ minus the run without papshim: papshim's code and whatever it changes in the library)"
native=$(med "${col1[1-without]}")
printf '  %-16s %8s %8s %8s %12s   %s\n' variant MPI_ PMPI_ added "over native" "added, per run"
for k in $(printf '%s\n' "${!col1[@]}" | sort); do
  m=$(med "${col1[$k]}")
  printf '  %-16s %8s %8s %8s %12.3f   (%s)\n' "${k#*-}" "$m" "$(med "${col2[$k]}")" \
    "$(med "${col3[$k]}")" "$(awk -v a="$m" -v b="$native" 'BEGIN {print a - b}')" "${col3[$k]% }"
done
