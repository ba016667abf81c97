#!/usr/bin/env bash
# One `smpi` test: runs bench/smpi/smpi_coll under SMPI (scripts/smpi.sh) and
# passes when every algorithm asked for printed its result line with
# check=ok (its result equal, bit for bit, to the PMPI collective's on every
# iteration) and, with --pick, auto picked that algorithm; with
# --expect-error, when smpi_coll refused its arguments (exit 2) with MESSAGE.
#   smpi_check.sh [--pick ALGO | --expect-error MESSAGE] -n P [-p PLATFORM] -- COLL ALGOS COUNT PATTERN ITERS [options]
#   smpi_check.sh build
# Exit 77 (skipped) when smpicxx or smpirun is missing.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SMPI=$ROOT/scripts/smpi.sh
if [[ ${1:-} == build ]]; then exec "$SMPI" build; fi

pick=""
error=""
run_args=()
while (($# > 0)) && [[ $1 != -- ]]; do
  case $1 in
    --pick) pick=$2; shift 2 ;;
    --expect-error) error=$2; shift 2 ;;
    *) run_args+=("$1"); shift ;;
  esac
done
[[ ${1:-} == -- ]] || { echo "usage: smpi_check.sh [--pick ALGO] -n P [-p PLATFORM] -- COLL ALGOS ..." >&2; exit 2; }
shift
algos=$2

out=$("$SMPI" run -q "${run_args[@]}" -- "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
((rc == 77)) && exit 77
fail() { echo "FAIL: $*"; exit 1; }
if [[ -n $error ]]; then
  ((rc == 2)) || fail "expected exit 2 (bad arguments), got $rc"
  grep -qF -- "$error" <<<"$out" || fail "expected the message: $error"
  echo "ok: refused with the expected message"
  exit 0
fi
((rc == 0)) || fail "smpi_coll exited with $rc"
IFS=, read -ra want <<<"$algos"
for a in "${want[@]}"; do
  line=$(grep -E "^smpi_coll .* algo=$a( |$)" <<<"$out") || fail "no result line for $a"
  grep -q ' check=ok' <<<"$line" || fail "$a: the result differs from PMPI's"
done
if [[ -n $pick ]]; then
  grep -E '^smpi_coll .* algo=auto ' <<<"$out" | grep -q " pick=$pick " || fail "auto did not pick $pick"
fi
echo "ok: ${#want[@]} algorithm(s), results equal to PMPI's${pick:+, auto picked $pick}"
