#!/usr/bin/env bash
# Clean-stop tests: the job must end within a bound and leave no process.
#   stop_test.sh abort|sigterm RUN_MPI NP PRELOAD PROGRAM
set -u
kind=$1 run_mpi=$2 np=$3 preload=$4 prog=$5
# A token on the command line (the program ignores extra arguments) tells
# this job's processes from any other run of the same program.
token="stop-test-$$-$RANDOM"
leftovers() { pgrep -f -- "$token" >/dev/null; }
case $kind in
  abort)
    PAPSHIM_TEST_TIMEOUT=60 "$run_mpi" "$np" "$preload" PAPSHIM_REPORT=off -- "$prog" abort "$token"
    rc=$?
    [[ $rc -ne 0 && $rc -ne 124 ]] || { echo "expected a nonzero exit from MPI_Abort, got $rc"; exit 1; }
    ;;
  sigterm)
    PAPSHIM_TEST_TIMEOUT=120 "$run_mpi" "$np" "$preload" PAPSHIM_REPORT=off -- "$prog" loop "$token" &
    job=$!
    sleep 4
    # The launcher (child of `timeout`, which run_mpi.sh execs) gets SIGTERM,
    # as from a batch system.
    pkill -TERM -P "$job" || kill -TERM "$job"
    for _ in $(seq 1 30); do kill -0 "$job" 2>/dev/null || break; sleep 1; done
    if kill -0 "$job" 2>/dev/null; then echo "the job did not end within 30 s of SIGTERM"; kill -KILL "$job"; exit 1; fi
    ;;
esac
for _ in $(seq 1 10); do leftovers || break; sleep 1; done
if leftovers; then echo "processes left behind:"; pgrep -af -- "$token"; pkill -KILL -f -- "$token"; exit 1; fi
echo "$kind: ended cleanly, nothing left behind"
