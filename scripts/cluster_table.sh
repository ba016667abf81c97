#!/usr/bin/env bash
# The seeds' regime in one table: 8 emulated hosts of the profile
# (scripts/profile.sh: PAPSHIM_CLUSTER_PROFILE=network, the default, is
# 100 Mbit/s and 256 Ki floats; cpu is 1 Gbit/s and 1 Mi floats), one host
# (rank 3) late by DELAY ms (and, for reduce, a random host late by
# up to DELAY ms every iteration with the edge predictor: "rand-late"),
# every algorithm of interest and auto against native, in rounds that interleave the algorithms.  Prints the
# median over rounds of papbench's median average elapsed time, the ratio to
# native and the share of the absorbable time removed,
# (native - alg) / (native - e_lo), e_lo = (P-1)/P * delay + one transfer
# (one pair alone); "of machine" takes the transfer with every rank
# sending at once instead (papbench's delta_all), what 8 emulated hosts on
# a few cores can carry after the last arrival.
# The regime, as measured by scripts/cluster.sh check, heads the table.
#   scripts/cluster_table.sh [rounds] [delays_ms]     (default: 3 "0 LATE",
#                                                     LATE 125 ms network, 50 cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/profile.sh
rounds=${1:-3} delays=${2:-"0 $PROFILE_LATE_MS"}
out=results/cluster-table
mkdir -p "$out"
csv=$out/runs.csv
rm -f "$csv"
profile_up 8
regime=$(profile_regime)
echo "regime: $regime"
source scripts/progress.sh
ndelays=$(wc -w <<<"$delays")
progress_start $((rounds * ndelays * 16))
run() {  # op algorithm delay round [rand]
  progress_step "round $(($4 + 1)): $1 $2, delay $3 ms${5:+ ($5-late)}"
  local var=PAPSHIM_${1^^} op=$1 mode=(--mode one-late --late-rank 3) pred=() label=$1
  if [[ ${5:-} == rand ]]; then
    # A different host late every iteration: only the edge predictor can
    # know which one (papbench calls papshim_edge halfway through).
    mode=(--mode rand-late --edge) pred=(-x PAPSHIM_PREDICTOR=edge) label="$1 rand-late"
  fi
  scripts/cluster.sh run -x LD_PRELOAD="$PWD/build/libpapshim.so" -x "$var=$2" "${pred[@]}" -x PAPSHIM_REPORT=off -- \
    "$PWD/build/bench/papbench" --op "$op" --count "$PROFILE_FLOATS" "${mode[@]}" --delay-ms "$3" \
    --iters 12 --warmup 4 --base-ms 5 --progress 0 --csv "$csv" --label "$label/$2/$3/$4" >/dev/null 2>&1
}
for ((r = 0; r < rounds; r++)); do
  for d in $delays; do
    for a in native prr slt straggler auto; do run allreduce "$a" "$d" "$r"; done
    for a in native clairvoyant sorted_binomial auto; do run reduce "$a" "$d" "$r"; done
    for a in native sorted_binomial auto; do run reduce "$a" "$d" "$r" rand; done
    for a in native sparbit straggler auto; do run allgather "$a" "$d" "$r"; done
  done
done
progress_end
echo "regime: $regime; $PROFILE_FLOATS floats per rank"
/usr/bin/python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {}
for r in rows:
    op, alg, d, _ = r["label"].split("/")
    med.setdefault((op, d, alg), []).append(
        (float(r["median_us"]), float(r["delta_us"]), float(r.get("delta_all_us") or r["delta_us"])))
print("%-18s %6s %-16s %12s %8s %10s %10s" % ("op", "delay", "algorithm", "median ms", "x native", "absorbed",
                                               "of machine"))
for (op, d, alg) in sorted(med, key=lambda k: (k[0], float(k[1]), k[2] != "native", k[2])):
    v = med[(op, d, alg)]
    m = statistics.median(x[0] for x in v) / 1e3
    nat = statistics.median(x[0] for x in med[(op, d, "native")]) / 1e3
    shares = []
    for col in (1, 2):
        lo = 7 / 8 * float(d) + statistics.median(x[col] for x in v) / 1e3
        skip = alg == "native" or op.startswith("reduce") or float(d) == 0
        shares.append("" if skip else "%9.0f%%" % (100 * (nat - m) / (nat - lo)))
    print("%-18s %6s %-16s %12.1f %8.2f %10s %10s" % (op, d, alg, m, nat / m, shares[0], shares[1]))
PY
