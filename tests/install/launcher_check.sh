#!/usr/bin/env bash
# The papshim launcher (scripts/papshim): a 2-rank job through Open MPI's
# mpirun with the preload (exact results, the report written and announced),
# the syntax it adds for MPICH's Hydra and for srun (--dry-run), and clear
# errors with exit 2 for an unknown launcher and a missing library.
#   launcher_check.sh SOURCE_DIR LIBPAPSHIM DEMO
set -euo pipefail
src=$1 lib=$2 demo=$3
# shellcheck source=SCRIPTDIR/check_lib.sh
source "$src/tests/install/check_lib.sh"
launcher=$src/scripts/papshim
scratch=$(mktemp -d)
trap 'rm -rf -- "$scratch"' EXIT

# expect_dry ARGS... -- WANTED: --dry-run output must contain WANTED
expect_dry() {
  local args=() out
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  out=$("$launcher" --lib "$lib" --dry-run -- "${args[@]}") || fail "dry run of ${args[*]} exited $?"
  echo "dry run: $out"
  [[ $out == *"$2"* ]] || fail "expected '$2' in the command for ${args[0]}"
}
expect_dry mpiexec.hydra -n 4 ./app -- "mpiexec.hydra -genv LD_PRELOAD $lib -n 4 ./app"
expect_dry srun -N 2 ./app -- "srun --export=ALL,LD_PRELOAD=$lib -N 2 ./app"
expect_dry srun --export=NONE -N 2 ./app -- "srun --export=NONE,LD_PRELOAD=$lib -N 2 ./app"
# The program's own arguments are the program's, even one spelled like srun's option.
expect_dry srun -n 4 ./app --export=x -- "srun --export=ALL,LD_PRELOAD=$lib -n 4 ./app --export=x"
expect_dry srun --mpi=pmix --pty -n 2 ./app --export y -- "srun --export=ALL,LD_PRELOAD=$lib --mpi=pmix --pty -n 2 ./app --export y"
PAPSHIM_ALLREDUCE=prr expect_dry mpirun -np 2 ./app -- "mpirun -x LD_PRELOAD=$lib -x PAPSHIM_ALLREDUCE -np 2 ./app"

# expect_error WANTED ARGS...: exit 2 and WANTED in stderr
expect_error() {
  local wanted=$1 out rc=0
  shift
  out=$("$launcher" "$@" 2>&1) || rc=$?
  echo "error case ($*): exit $rc: $out"
  [[ $rc -eq 2 ]] || fail "expected exit 2, got $rc"
  [[ $out == *"$wanted"* ]] || fail "expected the message: $wanted"
}
expect_error "unknown launcher 'mystery-run'" --lib "$lib" -- mystery-run -n 2 ./app
expect_error "library '$scratch/none.so' does not exist" --lib "$scratch/none.so" -- mpirun -np 2 ./app
expect_error "no launcher command given" --lib "$lib" --

# A real job: rank 0 writes the report into the working directory.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$scratch"
out=$(timeout -k 10 90 "$launcher" --lib "$lib" -- mpirun --oversubscribe --mca btl self,vader -np 2 \
  "$demo" 8 4096 2 2>&1) || fail "the job exited $?: $out"
echo "$out"
grep -q "results exact" <<<"$out" || fail "the demo did not report exact results"
grep -qF "papshim: report in $scratch/papshim-report.txt" <<<"$out" || fail "the launcher did not say where the report went"
grep -q "imbalanced_demo.c:" "$scratch/papshim-report.txt" || fail "the report does not name the demo's call sites"
echo "launcher: dry runs, errors and a preloaded mpirun job with its report all good"
