#!/usr/bin/env bash
# Runs a command and passes when it exits 0 and its combined output matches
# every --present pattern and none of the --absent ones (fixed strings).
#   expect_output.sh [--present P]... [--absent P]... -- command...
set -uo pipefail
present=() absent=()
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --present) present+=("$2"); shift 2 ;;
    --absent) absent+=("$2"); shift 2 ;;
    *) echo "expect_output.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne 0 ]]; then echo "expected exit 0, got $rc"; exit 1; fi
for p in "${present[@]}"; do grep -qF -- "$p" <<<"$out" || { echo "missing: $p"; exit 1; }; done
for p in "${absent[@]}"; do ! grep -qF -- "$p" <<<"$out" || { echo "unexpected: $p"; exit 1; }; done
echo "exit 0 with the expected output"
