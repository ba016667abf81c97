#!/usr/bin/env bash
# Runs an MPI program for the test suite, oversubscribed, with a hard timeout.
#   run_mpi.sh NP [VAR=VALUE ...] -- program [args...]
# Variables are passed to every rank (Open MPI -x, MPICH -env).
set -euo pipefail
np=$1
shift
envs=()
while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
launcher=${MPIEXEC:-mpiexec}
if "$launcher" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # A session directory of this run's own: Open MPI 4.1's mpiruns share
  # /tmp/ompi.<host>.<uid>, and one that removes it while another creates
  # it fails at start ("unable to create the desired directory").  Open MPI
  # empties it at the end; empty ones an hour old are removed here.
  sessions=${TMPDIR:-/tmp}/papshim-mpi-sessions
  mkdir -p "$sessions"
  find "$sessions" -mindepth 1 -maxdepth 1 -type d -empty -mmin +60 -delete 2>/dev/null || true
  args=(--oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -np "$np"
        --mca orte_tmpdir_base "$(mktemp -d "$sessions/run.XXXXXX")")
  for e in "${envs[@]}"; do args+=(-x "$e"); done
else
  # MPICH 4.0.2 (Debian 12) crashes in MPI_Reduce with MPI_IN_PLACE at a
  # nonzero root in its shared-memory device collectives, with or without
  # papshim; its generic collectives are correct.
  export MPIR_CVAR_DEVICE_COLLECTIVES=${MPIR_CVAR_DEVICE_COLLECTIVES:-none}
  args=(-n "$np")
  for e in "${envs[@]}"; do args+=(-env "${e%%=*}" "${e#*=}"); done
fi
exec timeout -k 10 "${PAPSHIM_TEST_TIMEOUT:-600}" "$launcher" "${args[@]}" "$@"
