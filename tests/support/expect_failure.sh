#!/usr/bin/env bash
# Passes when the command exits nonzero within its timeout (124 = timed out
# counts as failure of this test) and its stderr+stdout contain PATTERN.
#   expect_failure.sh PATTERN command...
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -eq 0 ]]; then echo "expected a nonzero exit, got 0"; exit 1; fi
if [[ $rc -eq 124 || $rc -eq 137 ]]; then echo "timed out (a hang)"; exit 1; fi
if ! grep -qF -- "$pattern" <<<"$out"; then echo "expected the message: $pattern"; exit 1; fi
echo "exit $rc with the expected message"
