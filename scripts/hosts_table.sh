#!/usr/bin/env bash
# Several ranks per host: 4 emulated hosts x 4 ranks of the profile
# (scripts/profile.sh: network, the default, 100 Mbit/s and 256 Ki floats;
# cpu 1 Gbit/s and 1 Mi floats), the ranks of one host (ranks 4..7) late by DELAY ms.  Allreduce:
# native, auto (between hosts, shim/hierarchy.h), auto between all ranks
# (PAPSHIM_HIERARCHY=0) and forced PRR (between hosts); reduce: native, auto
# and auto between all ranks; in rounds that interleave them.  Prints the median over rounds of papbench's median average elapsed
# time, the ratio to native and, for allreduce, the share of the absorbable
# time removed, (native - alg) / (native - e_lo), with papbench's e_lo
# ((P-K)/P * delay + one transfer for K late ranks).
#   scripts/hosts_table.sh [rounds] [delays_ms]     (default: 3 "0 LATE",
#                                                   LATE 125 ms network, 50 cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/profile.sh
rounds=${1:-3} delays=${2:-"0 $PROFILE_LATE_MS"}
out=results/hosts-table
mkdir -p "$out"
csv=$out/runs.csv
rm -f "$csv"
profile_up 4
regime=$(profile_regime)
echo "regime: $regime (4 ranks on each of 4 hosts)"
source scripts/progress.sh
progress_start $((rounds * $(wc -w <<<"$delays") * 7))
run() {  # op label delay round [VAR=VAL...]
  local op=$1 label=$2 d=$3 r=$4
  progress_step "round $((r + 1)): $op $label, delay $d ms"
  shift 4
  local xs=()
  for v in "$@"; do xs+=(-x "$v"); done
  scripts/cluster.sh run --per-host 4 -x LD_PRELOAD="$PWD/build/libpapshim.so" -x PAPSHIM_REPORT=off "${xs[@]}" -- \
    "$PWD/build/bench/papbench" --op "$op" --count "$PROFILE_FLOATS" --mode one-late --late-rank 4 --late-group 4 \
    --delay-ms "$d" --iters 8 --warmup 3 --base-ms 5 --progress 0 --csv "$csv" --label "$op/$label/$d/$r" \
    >/dev/null 2>&1
}
for ((r = 0; r < rounds; r++)); do
  for d in $delays; do
    for op in allreduce reduce; do
      var=PAPSHIM_${op^^}
      run "$op" native "$d" "$r" "$var=native"
      run "$op" auto "$d" "$r"
      run "$op" auto-flat "$d" "$r" PAPSHIM_HIERARCHY=0
      if [[ $op == allreduce ]]; then run "$op" prr "$d" "$r" "$var=prr"; fi
    done
  done
done
progress_end
echo "regime: $regime (4 ranks on each of 4 hosts); $PROFILE_FLOATS floats per rank"
/usr/bin/python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {}
for r in rows:
    op, alg, d, _ = r["label"].split("/")
    runs.setdefault((op, d, alg), []).append((float(r["median_us"]), float(r["e_lo_us"])))
print("%-10s %6s %-16s %12s %8s %10s" % ("op", "delay", "algorithm", "median ms", "x native", "absorbed"))
for (op, d, alg) in sorted(runs, key=lambda k: (k[0], float(k[1]), k[2] != "native", k[2])):
    m = statistics.median(x[0] for x in runs[(op, d, alg)]) / 1e3
    nat = statistics.median(x[0] for x in runs[(op, d, "native")]) / 1e3
    lo = statistics.median(x[1] for x in runs[(op, d, alg)]) / 1e3
    share = ""
    if alg != "native" and op == "allreduce" and float(d) > 0 and nat > lo:
        share = "%9.0f%%" % (100 * (nat - m) / (nat - lo))
    print("%-10s %6s %-16s %12.1f %8.2f %10s" % (op, d, alg, m, nat / m, share))
PY
