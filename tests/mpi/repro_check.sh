#!/usr/bin/env bash
# Runs repro_check twice, once with rank 1 late and once with rank 3 late,
# and passes when both runs print the same result hashes and every rank got
# the same bits within each allreduce.
#   repro_check.sh RUN_MPI NP PROGRAM [VAR=VALUE ...] [-- PROGRAM_ARGS...]
# VAR=VALUE pairs go to every rank (through RUN_MPI); PROGRAM_ARGS follow the
# late rank on the program's command line (ITERS DELAY_MS COUNT).
set -uo pipefail
run_mpi=$1 np=$2 prog=$3
shift 3
envs=()
while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
declare -A out
for late in 1 3; do
  if ! raw=$("$run_mpi" "$np" "${envs[@]}" -- "$prog" "$late" "$@"); then
    printf '%s\n' "$raw"
    echo "repro_check with rank $late late failed"
    exit 1
  fi
  out[$late]=$(grep -E '^(allreduce|reduce_root[0-9]+|ranks_agree) ' <<<"$raw")
  echo "rank $late late:"
  printf '%s\n' "${out[$late]}"
done
for late in 1 3; do
  if ! grep -qx 'ranks_agree yes' <<<"${out[$late]}"; then
    echo "ranks got different bits within a call (rank $late late)"
    exit 1
  fi
  if [[ $(grep -c '^[a-z_0-9]* [0-9a-f]\{16\}$' <<<"${out[$late]}") -ne 4 ]]; then
    echo "expected four result hashes (rank $late late)"
    exit 1
  fi
done
if [[ "${out[1]}" != "${out[3]}" ]]; then
  echo "the results depend on which rank is late"
  exit 1
fi
echo "identical results with rank 1 and rank 3 late"
