#!/usr/bin/env bash
# sweep.sh - runs bench/papbench over algorithms, delays, sizes, process
# counts and delay modes, writes one CSV into a results folder and draws the
# seed papers' figures from it (scripts/plot_sweep.py).  See docs/benchmark.md.
#
#   scripts/sweep.sh --quick             # a few minutes, 8 ranks on this machine
#   scripts/sweep.sh --full              # the documented long sweep
#   scripts/sweep.sh --quick --cluster   # the same on the emulated cluster
#   scripts/sweep.sh --help              # every option
#
# Measurement rules: every configuration is run by every algorithm inside one
# repetition round, in an order that rotates from round to round, so drift of
# the machine hits all algorithms alike; results are medians; speedups are
# ratios of two numbers measured in the same round.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
PROG=sweep.sh

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }

usage() {
  cat <<'EOF'
usage: scripts/sweep.sh [--quick | --full] [--cluster] [options]

presets (applied first; later options override them):
  --quick            8 ranks, 256Ki floats, one-late, 3 rounds (default)
  --full             8 ranks (2..8 for scaling), 1Mi floats, both modes, 3 rounds
  --cluster          run through scripts/cluster.sh run (emulated hosts, 1 Gbit/s);
                     delays are then fewer multiples of the (much longer) transfer time

what to run:
  --ops LIST         collectives (default "allreduce reduce allgather")
  --algs-allreduce LIST   default "native native2 prr slt ring rabenseifner auto"
  --algs-reduce LIST      default "native native2 clairvoyant clairvoyant_linear binomial auto"
  --algs-allgather LIST   default "native native2 sparbit ring bruck recursive_doubling auto"
                     "native" = papshim preloaded, forced to the MPI library's own
                     algorithm; "native2" = the same again, an independent run in
                     each round whose ratio to native shows the noise floor;
                     "none" = no preload at all; anything else sets PAPSHIM_<OP>=<name>
  --np N             process count of the delay and size experiments (default 8)
  --np-list LIST     process counts of the scaling experiment (default "4 8")
  --size N           floats of the delay and scaling experiments (default 256Ki)
  --sizes LIST       floats of the size experiment (default "16Ki 64Ki 256Ki")
                     allgather: each process contributes size/np floats, so the
                     gathered vector has as many floats as the others' vector
  --delay-mult LIST  delays as multiples of delta, the measured one-transfer time
                     of the whole vector (default "0 8 32 128"; cluster "0 1 2 4")
  --fixed-mult M     delay of the size and scaling experiments (default 32; cluster 2)
  --delay-ms LIST    absolute delays in ms instead of multiples (the first nonzero
                     middle value is the fixed delay unless --fixed-ms is given)
  --fixed-ms D       absolute fixed delay in ms
  --modes LIST       "one-late", "rand-late" or both (default one-late)
  --late-rank R      one-late: always delay rank R (default: drawn per iteration)
  --iters N          timed iterations per configuration (default 8)
  --warmup N         untimed iterations per configuration (default 2)
  --reps N           repetition rounds (default 3)
  --base-ms B        common compute time per iteration in ms (default 5)
  --predictor NAME   PAPSHIM_PREDICTOR for preloaded runs (default edge; papbench
                     calls papshim_edge(0.5) halfway through every compute phase)
  --timeout SEC      per launch (default 900)

where:
  --out DIR          results folder (default results/sweep-<date>-<time>)
  --lib PATH         preload library (default build/libpapshim.so)
  --bench PATH       benchmark binary (default build/bench/papbench)
  --no-build         do not run scripts/build.sh first
  --reports          keep papshim's report of every preloaded launch in reports/
                     (shows what auto chose and any fallback to native)
  --no-plot          do not draw the plots
  --dry-run          print the launch plan and exit
EOF
}

# --- settings ------------------------------------------------------------------

preset=quick
cluster=0
for a in "$@"; do
  case $a in
    --quick) preset=quick ;;
    --full) preset=full ;;
    --cluster) cluster=1 ;;
    -h|--help) usage; exit 0 ;;
  esac
done

OPS="allreduce reduce allgather"
ALGS_allreduce="native native2 prr slt ring rabenseifner auto"
ALGS_reduce="native native2 clairvoyant clairvoyant_linear binomial auto"
ALGS_allgather="native native2 sparbit ring bruck recursive_doubling auto"
MODES="one-late"
LATE_RANK=""
PREDICTOR=edge
TIMEOUT=900
if [[ $preset == quick ]]; then
  NP0=8; NP_LIST="4 8"; SIZE0=256Ki; SIZES="16Ki 64Ki 256Ki"
  DELAY_MULT="0 8 32 128"; FIXED_MULT=32
  ITERS=8; WARMUP=2; REPS=3; BASE_MS=5
  if [[ $cluster == 1 ]]; then DELAY_MULT="0 1 2 4"; FIXED_MULT=2; fi
else
  NP0=8; NP_LIST="2 4 6 8"; SIZE0=1Mi; SIZES="16Ki 64Ki 256Ki 1Mi 4Mi"
  DELAY_MULT="0 1 4 16 64 256"; FIXED_MULT=64
  MODES="one-late rand-late"
  ITERS=30; WARMUP=5; REPS=3; BASE_MS=20
  ALGS_allreduce="none $ALGS_allreduce"
  ALGS_reduce="none $ALGS_reduce"
  ALGS_allgather="none $ALGS_allgather"
  if [[ $cluster == 1 ]]; then
    NP_LIST="4 6 8"; SIZES="128Ki 256Ki 512Ki 1Mi 2Mi"
    DELAY_MULT="0 0.5 1 2 4 8"; FIXED_MULT=2; ITERS=20; REPS=2
  fi
fi
DELAY_MS=""
FIXED_MS=""
OUT=""
LIB="$ROOT/build/libpapshim.so"
BENCH="$ROOT/build/bench/papbench"
BUILD=1
PLOT=1
REPORTS=0
DRY=0

need() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick|--full|--cluster) shift ;;
    --ops) need "$@"; OPS=$2; shift 2 ;;
    --algs-allreduce) need "$@"; ALGS_allreduce=$2; shift 2 ;;
    --algs-reduce) need "$@"; ALGS_reduce=$2; shift 2 ;;
    --algs-allgather) need "$@"; ALGS_allgather=$2; shift 2 ;;
    --np) need "$@"; NP0=$2; shift 2 ;;
    --np-list) need "$@"; NP_LIST=$2; shift 2 ;;
    --size) need "$@"; SIZE0=$2; shift 2 ;;
    --sizes) need "$@"; SIZES=$2; shift 2 ;;
    --delay-mult) need "$@"; DELAY_MULT=$2; shift 2 ;;
    --fixed-mult) need "$@"; FIXED_MULT=$2; shift 2 ;;
    --delay-ms) need "$@"; DELAY_MS=$2; shift 2 ;;
    --fixed-ms) need "$@"; FIXED_MS=$2; shift 2 ;;
    --modes) need "$@"; MODES=$2; shift 2 ;;
    --late-rank) need "$@"; LATE_RANK=$2; shift 2 ;;
    --iters) need "$@"; ITERS=$2; shift 2 ;;
    --warmup) need "$@"; WARMUP=$2; shift 2 ;;
    --reps) need "$@"; REPS=$2; shift 2 ;;
    --base-ms) need "$@"; BASE_MS=$2; shift 2 ;;
    --predictor) need "$@"; PREDICTOR=$2; shift 2 ;;
    --timeout) need "$@"; TIMEOUT=$2; shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    --lib) need "$@"; LIB=$2; shift 2 ;;
    --bench) need "$@"; BENCH=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-plot) PLOT=0; shift ;;
    --reports) REPORTS=1; shift ;;
    --dry-run) DRY=1; shift ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

# "256Ki" -> 262144, "1Mi" -> 1048576, plain integers unchanged
floats() {
  local v=$1
  case $v in
    *Ki|*K|*k) echo $(( ${v%%[Kk]*} * 1024 )) ;;
    *Mi|*M|*m) echo $(( ${v%%[Mm]*} * 1024 * 1024 )) ;;
    *[!0-9]*|"") die "not a float count: '$v' (use e.g. 65536, 64Ki, 1Mi)" ;;
    *) echo "$v" ;;
  esac
}
SIZE0=$(floats "$SIZE0")
read -r -a ops <<<"$OPS"
read -r -a modes <<<"$MODES"
read -r -a np_list <<<"$NP_LIST"
read -r -a delay_mult <<<"$DELAY_MULT"
sizes=()
for s in $SIZES; do sizes+=("$(floats "$s")"); done
for m in "${modes[@]}"; do [[ $m == one-late || $m == rand-late ]] || die "--modes: '$m' is not one-late or rand-late"; done
for p in "$NP0" "${np_list[@]}"; do [[ $p =~ ^[0-9]+$ && $p -ge 2 ]] || die "process counts must be integers >= 2 (got '$p')"; done
for op in "${ops[@]}"; do
  case $op in allreduce|reduce|allgather) ;; *) die "--ops: unknown collective '$op'" ;; esac
done
join_by_comma() { local IFS=,; echo "$*"; }

# --- launchers ---------------------------------------------------------------

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CLUSTER_SH="$ROOT/scripts/cluster.sh"

check_cluster() {
  local max_np=$NP0 p
  for p in "${np_list[@]}"; do (( p > max_np )) && max_np=$p; done
  [[ -x $CLUSTER_SH ]] || die "--cluster needs scripts/cluster.sh (the emulated cluster), which is not in this checkout"
  local status rc=0
  status=$("$CLUSTER_SH" status 2>&1) || rc=$?
  if (( rc == 77 )); then
    die "--cluster: the emulated cluster cannot run on this machine: $status"
  fi
  local hosts
  hosts=$(sed -n 's/^cluster: up, \([0-9][0-9]*\) hosts.*/\1/p' <<<"$status")
  if [[ -z $hosts ]]; then
    die "--cluster: the emulated cluster is not up; start it with
    scripts/cluster.sh up $max_np        # $max_np hosts, 1 Gbit/s links (see docs/cluster.md)
and run this sweep again (scripts/cluster.sh down removes it)."
  fi
  (( hosts >= max_np )) || die "--cluster: $hosts hosts are up but the sweep needs $max_np (one rank per host); run scripts/cluster.sh up $max_np"
  note "emulated cluster: $hosts hosts up"
}

# launch LABEL OP NP LOGFILE -- papbench args...
launch() {
  local label=$1 op=$2 np=$3 log=$4
  shift 5
  local -a xs=()
  if [[ $label != none ]]; then
    local algo=$label report=off
    [[ $label == native2 ]] && algo=native
    if [[ $REPORTS == 1 ]]; then
      report="$OUT/reports/$(basename "$log" .log)"
    fi
    xs+=(-x "LD_PRELOAD=$LIB" -x "PAPSHIM_REPORT=$report" -x "PAPSHIM_${op^^}=$algo" -x "PAPSHIM_PREDICTOR=$PREDICTOR")
  fi
  local rc=0
  if [[ $cluster == 1 ]]; then
    "$CLUSTER_SH" run -n "$np" --timeout "$TIMEOUT" "${xs[@]}" -- "$BENCH" "$@" >>"$log" 2>&1 || rc=$?
  else
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 --timeout "$TIMEOUT" -np "$np" "${xs[@]}" \
      "$BENCH" "$@" >>"$log" 2>&1 || rc=$?
  fi
  return $rc
}

# --- plan ----------------------------------------------------------------------

algs_of() { local v="ALGS_$1"; echo "${!v}"; }

# allgather contributions are size/np0 floats per process
count_for() {
  local op=$1 n=$2
  if [[ $op == allgather ]]; then echo $(( n / NP0 > 0 ? n / NP0 : 1 )); else echo "$n"; fi
}

if [[ -z $OUT ]]; then OUT="$ROOT/results/sweep-$(date +%Y%m%d-%H%M%S)"; fi
OUT=$(realpath -m -- "$OUT")  # launches may start in another directory (cluster hosts)

if [[ $DRY == 0 ]]; then
  if [[ $BUILD == 1 ]]; then
    note "building (scripts/build.sh)"
    "$ROOT/scripts/build.sh" >/dev/null || die "build failed; fix it or pass --no-build"
  fi
  [[ -x $BENCH ]] || die "benchmark $BENCH not found; run scripts/build.sh"
  [[ -r $LIB ]] || die "preload library $LIB not found; run scripts/build.sh"
  [[ $cluster == 0 ]] || check_cluster
  mkdir -p "$OUT/logs" "$OUT/bin"
  [[ $REPORTS == 0 ]] || mkdir -p "$OUT/reports"
  # Every launch uses these copies: a rebuild in the work tree during the
  # sweep cannot mix two versions of the library into one result.
  cp -- "$LIB" "$OUT/bin/libpapshim.so"
  cp -- "$BENCH" "$OUT/bin/papbench"
  LIB_ORIGIN=$LIB
  LIB="$OUT/bin/libpapshim.so"
  BENCH="$OUT/bin/papbench"
fi

common_args=(--iters "$ITERS" --warmup "$WARMUP" --base-ms "$BASE_MS" --edge --progress 60)
[[ -n $LATE_RANK ]] && common_args+=(--late-rank "$LATE_RANK")

# Calibration: native, no delay, the reference size: delta and the balanced time.
delta_us=""
balanced_us=""
if [[ -z $DELAY_MS ]]; then
  if [[ $DRY == 1 ]]; then
    delta_us=100  # placeholder: the real run measures it
    balanced_us=1000
    note "dry run: delays shown for an assumed delta of $delta_us us"
  else
    note "calibrating: allreduce of $SIZE0 floats on $NP0 processes, native, no delay"
    launch native allreduce "$NP0" "$OUT/logs/calibration.log" -- --op allreduce --count "$SIZE0" \
      --delay-ms 0 --iters 10 --warmup 3 --base-ms "$BASE_MS" --pingpong-reps 30 --progress 0 \
      --label calibration --csv "$OUT/calibration.csv" || die "calibration run failed; see $OUT/logs/calibration.log"
    read -r delta_us balanced_us < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      { print $c["delta_us"], $c["median_us"] }' "$OUT/calibration.csv" | tail -n 1)
  fi
  [[ -n $delta_us ]] || die "calibration gave no delta"
  DELAY_MS=""
  for m in "${delay_mult[@]}"; do DELAY_MS+="$(awk -v m="$m" -v d="$delta_us" 'BEGIN { printf "%.3f", m * d / 1000 }') "; done
  FIXED_MS=$(awk -v m="$FIXED_MULT" -v d="$delta_us" 'BEGIN { printf "%.3f", m * d / 1000 }')
  note "delta = $delta_us us, balanced native allreduce = $balanced_us us; delays (ms): $DELAY_MS; fixed: $FIXED_MS"
elif [[ -z $FIXED_MS ]]; then
  read -r -a _d <<<"$DELAY_MS"
  FIXED_MS=${_d[$(( ${#_d[@]} / 2 ))]}
fi
read -r -a delays <<<"$DELAY_MS"
in_list() { local x=$1; shift; local y; for y in "$@"; do [[ $x == "$y" ]] && return 0; done; return 1; }
in_list "$FIXED_MS" "${delays[@]}" || delays+=("$FIXED_MS")

# One launch = one (round, op, experiment, np, algorithm).  The delay
# experiment also holds the fixed-delay point of the reference size and
# process count, so the size and scaling experiments leave it out.
plan=()  # "rep|op|experiment|np|alg|papbench args"
rotate() {  # rotate a word list left by $1
  local k=$1; shift
  local -a w=("$@")
  local n=${#w[@]} i
  for ((i = 0; i < n; i++)); do printf '%s ' "${w[$(( (i + k) % n ))]}"; done
}
for ((rep = 1; rep <= REPS; rep++)); do
  for op in "${ops[@]}"; do
    read -r -a op_algs <<<"$(algs_of "$op")"
    read -r -a algs <<<"$(rotate $(( rep - 1 )) "${op_algs[@]}")"
    size_counts=()
    for s in "${sizes[@]}"; do [[ $s == "$SIZE0" ]] || size_counts+=("$(count_for "$op" "$s")"); done
    root_args=()
    [[ $op == reduce ]] && root_args=(--root 0)
    experiments=("delay|$NP0|--count $(count_for "$op" "$SIZE0") --delay-ms $(join_by_comma "${delays[@]}") --mode $(join_by_comma "${modes[@]}")")
    if ((${#size_counts[@]})); then
      experiments+=("size|$NP0|--count $(join_by_comma "${size_counts[@]}") --delay-ms $FIXED_MS --mode one-late")
    fi
    for p in "${np_list[@]}"; do
      [[ $p == "$NP0" ]] && continue
      experiments+=("nprocs|$p|--count $(count_for "$op" "$SIZE0") --delay-ms $FIXED_MS --mode one-late")
    done
    for e in "${experiments[@]}"; do
      IFS='|' read -r ename enp eargs <<<"$e"
      for alg in "${algs[@]}"; do
        plan+=("$rep|$op|$ename|$enp|$alg|--op $op ${root_args[*]} $eargs")
      done
    done
  done
done

if [[ $DRY == 1 ]]; then
  printf '%s\n' "${plan[@]}" | awk -F'|' '{ printf "round %s  %-9s %-6s np=%-3s %-20s papbench %s\n", $1, $2, $3, $4, $5, $6 }'
  echo "${#plan[@]} launches"
  exit 0
fi

# --- provenance ------------------------------------------------------------------

git_rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -c . || true)
lib_sum=$(md5sum "$LIB" | cut -c1-12)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
json_list() { local first=1 x; printf '['; for x in "$@"; do ((first)) || printf ', '; printf '"%s"' "$x"; first=0; done; printf ']'; }
write_meta() {
  cat >"$OUT/meta.json" <<EOF
{
  "preset": "$preset",
  "regime": "$([[ $cluster == 1 ]] && echo "emulated cluster" || echo "shared memory")",
  "host": "$(hostname)",
  "cores": $(nproc),
  "started": "$started",
  "finished": "${finished:-}",
  "duration_s": ${duration:-0},
  "load_start": "$load_start",
  "load_end": "${load_end:-}",
  "git": "$git_rev",
  "dirty_files": $git_dirty,
  "lib": "${LIB_ORIGIN:-$LIB}",
  "lib_md5": "$lib_sum",
  "mpi": "$(mpirun --version 2>/dev/null | head -n1)",
  "np0": $NP0,
  "np_list": $(json_list "${np_list[@]}"),
  "size0": $SIZE0,
  "sizes": $(json_list "${sizes[@]}"),
  "delays_ms": $(json_list "${delays[@]}"),
  "fixed_ms": "$FIXED_MS",
  "delay_mult": $(json_list "${delay_mult[@]}"),
  "delta_us": "${delta_us:-}",
  "balanced_us": "${balanced_us:-}",
  "modes": $(json_list "${modes[@]}"),
  "ops": $(json_list "${ops[@]}"),
  "iters": $ITERS,
  "warmup": $WARMUP,
  "reps": $REPS,
  "base_ms": $BASE_MS,
  "predictor": "$PREDICTOR",
  "late_rank": "${LATE_RANK:-random}",
  "launches": ${#plan[@]},
  "failed_launches": ${failed:-0}
}
EOF
}
started=$(date -Iseconds)
t_start=$(date +%s)
write_meta

# --- run -------------------------------------------------------------------------

note "${#plan[@]} launches into $OUT"
failed=0
i=0
for entry in "${plan[@]}"; do
  i=$((i + 1))
  IFS='|' read -r rep op ename np alg args <<<"$entry"
  log="$OUT/logs/r${rep}-${op}-${ename}-np${np}-${alg}.log"
  now=$(date +%s)
  elapsed=$((now - t_start))
  eta=""
  (( i > 1 )) && eta=", about $(( elapsed * (${#plan[@]} - i + 1) / (i - 1) )) s left"
  printf '%s: [%d/%d] round %s %s %s np=%s %s (%d s%s)\n' "$PROG" "$i" "${#plan[@]}" "$rep" "$op" "$ename" "$np" \
    "$alg" "$elapsed" "$eta" >&2
  # shellcheck disable=SC2086  # args is a word list built above
  if ! launch "$alg" "$op" "$np" "$log" -- $args "${common_args[@]}" --label "$alg" --rep "$rep" \
      --csv "$OUT/sweep.csv" --iter-csv "$OUT/iterations.csv"; then
    failed=$((failed + 1))
    echo "round $rep $op $ename np=$np $alg: failed (see $log)" >>"$OUT/failures.txt"
    note "  FAILED (see $log)"
  fi
  if grep -q "WRONG RESULTS" "$log" 2>/dev/null; then
    grep -q "^round $rep $op $ename np=$np $alg: wrong" "$OUT/failures.txt" 2>/dev/null ||
      echo "round $rep $op $ename np=$np $alg: wrong results (see $log)" >>"$OUT/failures.txt"
  fi
done

finished=$(date -Iseconds)
duration=$(( $(date +%s) - t_start ))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
write_meta
note "done in $duration s: $OUT/sweep.csv ($failed failed launches)"
if [[ -s $OUT/failures.txt ]]; then note "problems:"; sed 's/^/  /' "$OUT/failures.txt" >&2; fi

if [[ $PLOT == 1 ]]; then
  /usr/bin/python3 "$ROOT/scripts/plot_sweep.py" "$OUT" || note "plotting failed (the CSV is complete; rerun scripts/plot_sweep.py $OUT)"
fi
