#!/usr/bin/env bash
# The `slurm` label's job: on the 2-node cluster of tests/support/slurm_run.sh
# (slurm_up), the README's srun line with the preload runs the demo on
# 2 nodes x 2 ranks (the demo checks its results; papshim's report must
# exist and name the demo's call sites), then docs/papshim.sbatch through
# sbatch --wait, then the papshim launcher with srun.
#   slurm_check.sh SOURCE_DIR LIBPAPSHIM DEMO SCRATCH_DIR
set -euo pipefail
src=$1 lib=$2 demo=$3 scratch=$4
in_cluster() { "$src/tests/support/slurm_run.sh" run "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
in_cluster true || exit $?  # 77 (skipped) where Slurm cannot start here
rm -rf -- "$scratch"
mkdir -p -- "$scratch"
cd "$scratch"

# The line of the demo's timed MPI_Allreduce, the call site the report must name.
site_line=$(grep -n "MPI_Allreduce(x, sum" "$src/bench/imbalanced_demo.c" | cut -d: -f1)
[[ -n $site_line ]] || fail "cannot find the demo's MPI_Allreduce in $src/bench/imbalanced_demo.c"

# check_job NAME LOG REPORT: exact results in LOG, REPORT.txt naming the call sites
check_job() {
  local name=$1 log=$2 report=$3
  cat "$log"
  grep -q "4 ranks, .* results exact" "$log" || fail "$name: the demo did not report exact results on 4 ranks"
  [[ -f $report.txt && -f $report.json ]] || fail "$name: no papshim report at $report.txt/.json"
  grep -q "^  ranks: *4$" "$report.txt" || fail "$name: the report does not say 4 ranks"
  grep -q "imbalanced_demo.c:$site_line\b" "$report.txt" ||
    fail "$name: the report does not name the call site imbalanced_demo.c:$site_line"
  echo "$name: exact results, report $report.txt with the demo's call sites"
}

nodes=$(in_cluster srun -N 2 --ntasks-per-node=2 hostname | sort -u | tr '\n' ' ')
echo "srun -N 2 ran on: $nodes"
[[ $(wc -w <<<"$nodes") -eq 2 ]] || fail "expected 2 distinct nodes, got: $nodes"

# The README's line.
in_cluster timeout -k 10 120 srun -N 2 --ntasks-per-node=2 --mpi=pmix \
  "--export=ALL,LD_PRELOAD=$lib,PAPSHIM_REPORT=$scratch/srun" "$demo" 12 4096 2 >"$scratch/srun.log" 2>&1 ||
  { cat "$scratch/srun.log"; fail "srun with the preload exited nonzero"; }
check_job srun "$scratch/srun.log" "$scratch/srun"

# docs/papshim.sbatch
PAPSHIM_LIB=$lib PAPSHIM_REPORT=$scratch/sbatch in_cluster timeout -k 10 120 \
  sbatch --wait --quiet --output="$scratch/sbatch.log" "$src/docs/papshim.sbatch" "$demo" 12 4096 2 ||
  { cat "$scratch/sbatch.log" 2>/dev/null; fail "sbatch --wait docs/papshim.sbatch failed"; }
check_job sbatch "$scratch/sbatch.log" "$scratch/sbatch"

# The launcher turns srun into srun --export=ALL,LD_PRELOAD=...
PAPSHIM_REPORT=$scratch/launcher in_cluster timeout -k 10 120 "$src/scripts/papshim" --lib "$lib" -- \
  srun -N 2 --ntasks-per-node=2 --mpi=pmix "$demo" 12 4096 2 >"$scratch/launcher.log" 2>&1 ||
  { cat "$scratch/launcher.log"; fail "papshim -- srun exited nonzero"; }
grep -qF "papshim: report in $scratch/launcher.txt" "$scratch/launcher.log" || fail "the launcher did not name the report"
check_job launcher "$scratch/launcher.log" "$scratch/launcher"
echo "slurm: srun, sbatch and the launcher ran the preloaded demo on 2 nodes"
