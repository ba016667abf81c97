#!/usr/bin/env bash
# Runs real programs from Debian's packages (lammps' melt example, hpcc)
# without and with papshim and checks that (1) the physics/verification
# output is the same and (2) papshim's report counts, per rank and
# collective, equal what a minimal counting preload sees in the same run
# (LD_PRELOAD=count_calls.so:libpapshim.so; hpcc's counts vary from run to
# run, so separate runs cannot be compared).
#   scripts/real_apps.sh [ranks]      (installs lammps, lammps-examples, hpcc if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-4}
root=$PWD
for p in lammps lammps-examples hpcc; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    { [[ $(id -u) -eq 0 ]] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$p" >/dev/null; }
done
[[ -x build/libpapshim.so || -f build/libpapshim.so ]] || scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -shared -fPIC tests/support/count_calls.c -o "$work/count_calls.so" -ldl
run() { mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$@"; }
report_counts() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tot = {}
for s in r["callsites"]:
    for i, c in enumerate(s["calls_per_rank"]):
        tot[(s["op"], i)] = tot.get((s["op"], i), 0) + c
for i in range(r["ranks"]):
    print("count rank=%d %s" % (i, " ".join("%s=%d" % (op, tot.get((op, i), 0)) for op in ("allreduce", "reduce", "allgather"))))
PY
}
check() {  # name, command dir, command..., output filter
  local name=$1 filter=$2
  shift 2
  mkdir -p "$work/$name"/{plain,shim}
  for v in plain shim; do cp -r "$work/input/." "$work/$name/$v/" 2>/dev/null || true; done
  (cd "$work/$name/plain" && run "$@" >out.txt 2>&1)
  (cd "$work/$name/shim" && run -x LD_PRELOAD="$work/count_calls.so:$root/build/libpapshim.so" \
    -x PAPSHIM_REPORT="$work/$name/rep" "$@" >out.txt 2>err.txt; grep '^count' err.txt | sort >counted.txt)
  report_counts "$work/$name/rep.json" >"$work/$name/shim/counts.txt"
  if diff <(eval "$filter" <"$work/$name/plain/out.txt") <(eval "$filter" <"$work/$name/shim/out.txt") >/dev/null; then
    echo "$name: results identical with and without papshim"
  else
    echo "$name: RESULTS DIFFER"; diff <(eval "$filter" <"$work/$name/plain/out.txt") <(eval "$filter" <"$work/$name/shim/out.txt") | head; exit 1
  fi
  if diff "$work/$name/shim/counted.txt" "$work/$name/shim/counts.txt"; then
    echo "$name: report counts equal the counting preload's:"; sed 's/^/    /' "$work/$name/shim/counts.txt"
  else
    echo "$name: COUNTS DIFFER"; exit 1
  fi
}
mkdir -p "$work/input"
cp /usr/share/lammps/examples/melt/in.melt "$work/input/"
check lammps-melt "grep -A12 '^ *Step' | grep -v 'Loop time\|Performance\|CPU use'" lmp -in in.melt -log none
rm -f "$work/input/in.melt"
cp /usr/share/doc/hpcc/examples/_hpccinf.txt "$work/input/hpccinf.txt"
# hpcc writes hpccoutf.txt; compare its verification lines.
check hpcc "true" hpcc  # hpcc prints to hpccoutf.txt, compared below
for v in plain shim; do
  # Residuals and error fractions, and the PASSED/FAILED verdicts (the
  # lines around them carry timings).
  { grep -E 'residual=|ErrorsFraction=|maxErr=|\.\.\.\.\.\. (PASSED|FAILED)' "$work/hpcc/$v/hpccoutf.txt"
    grep -oE 'PASSED|FAILED' "$work/hpcc/$v/hpccoutf.txt" | sort | uniq -c; } >"$work/hpcc/$v.verify"
done
if diff "$work/hpcc/plain.verify" "$work/hpcc/shim.verify" >/dev/null; then
  echo "hpcc: residuals, error fractions and verdicts identical:"; sed 's/^/    /' "$work/hpcc/shim.verify"
else
  echo "hpcc: VERIFICATION DIFFERS"; diff "$work/hpcc/plain.verify" "$work/hpcc/shim.verify" | head; exit 1
fi
