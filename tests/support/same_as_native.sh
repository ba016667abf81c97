#!/usr/bin/env bash
# Runs an MPI program without and with the preload and passes when both runs
# exit with the same code and print the same lines (in any order: ranks
# interleave).  A timeout (a hang) fails.
#   same_as_native.sh NP [VAR=VALUE ...] -- program [args...]
# The variables (LD_PRELOAD=... among them) apply to the second run only.
set -uo pipefail
here=$(dirname "$0")
np=$1
shift
envs=()
while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/run_mpi.sh" "$np" -- "$@" >"$tmp/native" 2>"$tmp/native.err"
native_rc=$?
"$here/run_mpi.sh" "$np" "${envs[@]}" -- "$@" >"$tmp/preload" 2>"$tmp/preload.err"
preload_rc=$?
echo "--- without the preload (exit $native_rc)"; cat "$tmp/native"
echo "--- with ${envs[*]} (exit $preload_rc)"; cat "$tmp/preload"; cat "$tmp/preload.err" >&2
if [[ $native_rc -eq 124 || $preload_rc -eq 124 || $preload_rc -eq 137 ]]; then echo "timed out (a hang)"; exit 1; fi
if [[ $native_rc -ne $preload_rc ]]; then echo "exit codes differ: $native_rc without, $preload_rc with"; exit 1; fi
if ! diff <(sort "$tmp/native") <(sort "$tmp/preload"); then echo "outputs differ"; exit 1; fi
echo "same exit code ($preload_rc) and output"
