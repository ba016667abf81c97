#!/usr/bin/env bash
# A real iterative application: data-parallel SGD (bench/train/train_sgd.py:
# PyTorch computes a small CNN's gradients on Fashion-MNIST, one mpi4py
# Allreduce of all of them per step; one rank holds twice the samples of the
# others) natively, under papshim's auto mode (LD_PRELOAD only) and with
# forced PRR (PAPSHIM_ALLREDUCE=prr), interleaved over rounds, on 8 emulated
# hosts at 100 Mbit/s (scripts/cluster.sh).  Prints time per epoch, total
# time, final accuracy and loss, the ratios to native (median over rounds of
# each round's ratio) and the regime; writes results/train/runs.csv and
# summary.csv, every run's JSON and log and papshim's reports.
#
#   scripts/train_bench.sh [--quick] [--rounds N] [--epochs N] [--steps N] [-- train_sgd.py options...]
#
#   --quick      1 round of 2 epochs (about 2 minutes)
#   default      3 rounds of 5 epochs of 60 steps (about 13 minutes)
#   after --     more options for train_sgd.py (they come after the bench's own:
#                -- --imbalance 3 --slow-ranks 5)
#
# The cluster: the one scripts/cluster.sh would use (PAPSHIM_CLUSTER_PREFIX)
# when it is up with 8 hosts at 100mbit and no added latency; otherwise this
# script makes its own (prefix papsgd, subnet 10.213.85.0/24) and removes it
# at the end, so it never reconfigures or removes a cluster someone else may
# be using.  Where network namespaces are not available (not root, no
# iproute2), it runs on shared memory instead and says so (a compute-bound
# regime: the gradients cross memory, not a 100 Mbit/s link).
set -euo pipefail
cd "$(dirname "$0")/.."
PROG=train_bench.sh
usage() {  # exit code
  sed -n '12,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit "$1"
}
bad() { echo "$PROG: $*" >&2; usage 2; }
whole() { [[ $2 =~ ^[0-9]+$ && $2 -ge 1 ]] || bad "$1 needs a whole number of at least 1, got '$2'"; }

rounds=3 epochs=5 steps=60
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) rounds=1 epochs=2; shift ;;
    --rounds|--epochs|--steps)
      [[ $# -ge 2 ]] || bad "$1 needs a value"
      whole "$1" "$2"
      declare "${1#--}=$2"
      shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage 0 ;;
    *) bad "unknown option '$1'" ;;
  esac
done

PY=/usr/bin/python3
lib=$PWD/build/libpapshim.so
[[ -f $lib ]] || { echo "$PROG: $lib missing: build it first (scripts/build.sh)" >&2; exit 1; }
[[ -x $PY ]] || { echo "$PROG: $PY missing (Debian's python3)" >&2; exit 1; }
if ! err=$($PY -c "import numpy, torch, mpi4py" 2>&1); then
  echo "$PROG: $PY cannot import numpy, torch and mpi4py (${err##*$'\n'});" \
    "install python3-numpy python3-torch python3-mpi4py" >&2
  exit 1
fi
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [[ -r /usr/share/datasets/fashion-mnist/$f ]] ||
    { echo "$PROG: /usr/share/datasets/fashion-mnist/$f missing: install dataset-fashion-mnist" >&2; exit 1; }
done

# --- where the ranks run ------------------------------------------------------
np=8 rate=100mbit
made_cluster=0
cluster_matches() {  # the cluster of the current PAPSHIM_CLUSTER_* is up as wanted
  scripts/cluster.sh status 2>/dev/null | head -n1 |
    grep -Eq "^cluster: up, $np hosts, .* rate $rate per direction, latency 0(s|ms|us)?$"
}
cluster_down() {
  if ((made_cluster)); then
    scripts/cluster.sh down >/dev/null 2>&1 || echo "$PROG: could not remove the cluster $PAPSHIM_CLUSTER_PREFIX" >&2
  fi
}
set +e
status=$(scripts/cluster.sh status 2>&1)
status_rc=$?
set -e
if ((status_rc == 77)); then
  mode=shm
  regime="shared memory: $np ranks on $(nproc) cores (no emulated cluster here: ${status#cluster.sh: not available here: })"
else
  mode=cluster
  if ! cluster_matches; then
    export PAPSHIM_CLUSTER_PREFIX=papsgd PAPSHIM_CLUSTER_SUBNET=10.213.85.0/24
    unset PAPSHIM_CLUSTER_STATE
    if ! cluster_matches; then
      trap cluster_down EXIT
      made_cluster=1
      set +e
      up=$(scripts/cluster.sh up $np $rate 2>&1)
      up_rc=$?
      set -e
      if ((up_rc == 77)); then
        made_cluster=0 mode=shm
        regime="shared memory: $np ranks on $(nproc) cores (no emulated cluster here: ${up##*not available here: })"
      elif ((up_rc != 0)); then
        echo "$PROG: scripts/cluster.sh up $np $rate failed:" >&2
        echo "$up" >&2
        exit 1
      fi
    fi
  fi
  if [[ $mode == cluster ]]; then
    # The regime as measured (scripts/cluster.sh check), not as meant.
    scripts/cluster.sh check >/dev/null 2>&1 || true
    regime="$(scripts/cluster.sh regime) (scripts/cluster.sh, prefix ${PAPSHIM_CLUSTER_PREFIX:-papc}$( ((made_cluster)) && echo ", made for this run"))"
  fi
fi

launch() {  # -x VAR=VAL ... -- command...
  if [[ $mode == cluster ]]; then
    scripts/cluster.sh run -n $np --timeout 1800 "$@"
  else
    local xs=()
    while [[ $1 != -- ]]; do xs+=("$1" "$2"); shift 2; done
    shift
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 1800 mpirun --oversubscribe \
      --bind-to none --mca btl self,vader --mca mpi_yield_when_idle 1 -np $np "${xs[@]}" "$@"
  fi
}

# --- the runs -----------------------------------------------------------------
out=$PWD/results/train
mkdir -p "$out"
rm -f "$out"/run-*.json "$out"/run-*.log "$out"/papshim-*.txt "$out"/papshim-*.json "$out"/runs.csv "$out"/summary.csv
train=(--epochs "$epochs" --steps "$steps" --batch 64 --width 8 --imbalance 2 --slow-ranks 3 --noise 0.1 --seed 1
  --test-samples 1000 "${extra[@]}")
variants=(native auto prr)
echo "$PROG: $regime"
echo "$PROG: $rounds round(s) of native, auto and forced PRR, in turn; each: train_sgd.py ${train[*]}"
echo "$PROG: load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
source scripts/progress.sh
progress_start $((rounds * ${#variants[@]}))
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < ${#variants[@]}; k++)); do
    v=${variants[$(((k + r) % ${#variants[@]}))]}  # each round starts with the next variant
    progress_step "round $((r + 1)): $v"
    xs=()
    if [[ $v != native ]]; then
      xs=(-x LD_PRELOAD="$lib" -x PAPSHIM_REPORT="$out/papshim-$v-r$r")
      [[ $v == prr ]] && xs+=(-x PAPSHIM_ALLREDUCE=prr)
    fi
    log=$out/run-$v-r$r.log
    if ! launch "${xs[@]}" -- $PY "$PWD/bench/train/train_sgd.py" "${train[@]}" --json "$out/run-$v-r$r.json" \
        --label "$v/$r" >"$log" 2>&1; then
      progress_clear
      echo "$PROG: the $v run of round $((r + 1)) failed; the end of $log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
  done
done
progress_end
echo "$PROG: load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
$PY bench/train/train_summary.py "$out" "$regime"
