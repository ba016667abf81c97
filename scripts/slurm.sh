#!/usr/bin/env bash
# slurm.sh - a throw-away Slurm cluster on one Linux machine, for trying and
# testing papshim under srun/sbatch.
#
# One slurmctld runs in the root namespace; every node is an emulated host
# of scripts/cluster.sh (a network namespace with its own address) running
# its own slurmd under its own hostname (a private UTS namespace).  The
# configuration, state, spool, logs and pid files all live in one scratch
# directory; nothing under /etc is touched.  Authentication is auth/none
# (no munge daemon), so it is for a private test machine only.
#
#   slurm.sh up [N]          start slurmctld and N slurmd nodes (default 2)
#   slurm.sh run CMD...      run CMD (srun, sbatch, sinfo, ...) against this cluster
#   slurm.sh env             print the SLURM_CONF export for a shell
#   slurm.sh status          sinfo of this cluster
#   slurm.sh down            stop every daemon and job, remove namespaces and the directory
#
#   scripts/slurm.sh up 2
#   scripts/slurm.sh run srun -N 2 -n 4 --mpi=pmix --export=ALL,LD_PRELOAD=$PWD/build/libpapshim.so ./app
#   scripts/slurm.sh down
#
# Environment: PAPSHIM_SLURM_DIR (default /tmp/papshim-slurm),
# PAPSHIM_SLURM_PREFIX (namespace prefix, default pslm), PAPSHIM_SLURM_SUBNET
# (default 10.213.81.0/24), PAPSHIM_SLURM_PORT (slurmctld's port, default
# 6917; slurmd uses the next), PAPSHIM_SLURM_CPUS (CPUs per node, default 4).
# Exit codes: 0 ok, 1 failure, 2 usage, 77 not available here (not root, no
# Slurm packages, no network namespaces): ctest's SKIP_RETURN_CODE.
# See docs/slurm.md.
set -euo pipefail

PROG=slurm.sh
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
DIR=${PAPSHIM_SLURM_DIR:-/tmp/papshim-slurm}
PORT=${PAPSHIM_SLURM_PORT:-6917}
CPUS=${PAPSHIM_SLURM_CPUS:-4}
CONF=$DIR/slurm.conf
PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
export PAPSHIM_CLUSTER_PREFIX=${PAPSHIM_SLURM_PREFIX:-pslm}
export PAPSHIM_CLUSTER_SUBNET=${PAPSHIM_SLURM_SUBNET:-10.213.81.0/24}
export PAPSHIM_CLUSTER_STATE=$DIR/cluster
CLUSTER=$SCRIPT_DIR/cluster.sh

die() { echo "$PROG: $*" >&2; exit 1; }
usage_error() { echo "$PROG: $*" >&2; echo "usage: $PROG up [N] | run CMD... | env | status | down" >&2; exit 2; }
unavailable() { echo "$PROG: not available here: $*" >&2; exit 77; }
note() { echo "$PROG: $*" >&2; }

require_slurm() {
  [[ $(id -u) -eq 0 ]] || unavailable "must be run as root (slurmd and network namespaces)"
  local c
  for c in slurmctld slurmd srun sinfo scontrol; do
    command -v "$c" >/dev/null 2>&1 || unavailable "'$c' not found (Debian: apt-get install slurmctld slurmd slurm-client)"
  done
  [[ -d $PLUGINS ]] || PLUGINS=$(dirname "$(find /usr/lib* -name auth_none.so -path '*slurm*' 2>/dev/null | head -n1)")
  [[ -f $PLUGINS/auth_none.so ]] || unavailable "this Slurm has no auth/none plugin (auth_none.so)"
  [[ $DIR == /* && $DIR != / ]] || usage_error "PAPSHIM_SLURM_DIR must be an absolute path other than / (got '$DIR')"
  [[ $PORT =~ ^[0-9]+$ && $CPUS =~ ^[0-9]+$ ]] || usage_error "PAPSHIM_SLURM_PORT and PAPSHIM_SLURM_CPUS must be integers"
}

# pids of the daemons started with this directory's configuration
our_daemons() {
  pgrep -f -- "^[^ ]*slurm(ctld|d) -f $CONF( |\$)" | tr '\n' ' ' || true
}

stop_daemons() {
  local pids
  pids=$(our_daemons)
  [[ -n ${pids// /} ]] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in {1..50}; do
    [[ -n $(our_daemons) ]] || return 0
    sleep 0.2
  done
  pids=$(our_daemons)
  note "daemons still running after 10 s, killing: $pids"
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

write_conf() {
  local n=$1 net=$2 i
  cat >"$CONF" <<EOF
# Written by scripts/slurm.sh up; removed by scripts/slurm.sh down.
ClusterName=papshim
SlurmctldHost=$(hostname -s)($net.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
PluginDir=$PLUGINS
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
EOF
  echo "PMIxCliTmpDirBase=$DIR/pmix" >"$DIR/mpi.conf"
  for ((i = 0; i < n; i++)); do
    echo "NodeName=$PAPSHIM_CLUSTER_PREFIX-n$i NodeAddr=$net.$((10 + i)) CPUs=$CPUS State=UNKNOWN" >>"$CONF"
  done
  echo "PartitionName=papshim Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >>"$CONF"
}

show_logs() {
  local f
  for f in "$DIR"/log/*.log; do
    [[ -f $f ]] || continue
    echo "--- $f (last lines)" >&2
    tail -n 15 "$f" >&2
  done
}

cmd_up() {
  local n=${1:-2}
  if ! [[ $n =~ ^[0-9]+$ ]] || (( n < 1 || n > 16 )); then usage_error "N must be 1..16 (got '$n')"; fi
  require_slurm
  [[ -z $(our_daemons) ]] || die "a cluster from $DIR is already running; '$PROG down' first"
  [[ ! -e $DIR ]] || die "$DIR exists (left by an earlier run?); '$PROG down' removes it"
  mkdir -p -- "$DIR"/{state,spool,run,log,pmix}
  trap 'echo "$PROG: up failed; \"$PROG down\" removes what was made" >&2' ERR
  "$CLUSTER" up "$n" 10gbit
  local net=${PAPSHIM_CLUSTER_SUBNET%.0/24}
  write_conf "$n" "$net"
  export SLURM_CONF=$CONF
  slurmctld -f "$CONF" -i || { show_logs; die "slurmctld did not start"; }
  local i ns
  for ((i = 0; i < n; i++)); do
    ns=$PAPSHIM_CLUSTER_PREFIX-n$i
    mkdir -p -- "$DIR/spool/$ns" "$DIR/pmix-$ns"
    # The node's network namespace (not `ip netns exec`, which would hide
    # the cgroup mounts slurmd needs under a fresh /sys), its own hostname,
    # and its own PMIx client directory: every node uses the same path.
    # shellcheck disable=SC2016  # $1..$4 belong to the inner shell
    nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private -- /bin/sh -c \
      'hostname "$1" && mount --bind "$3" "$4" && exec slurmd -f "$2"' sh "$ns" "$CONF" "$DIR/pmix-$ns" "$DIR/pmix" ||
      { show_logs; die "slurmd of $ns did not start"; }
  done
  local t idle=0
  for ((t = 0; t < 150; t++)); do
    idle=$(sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$' || true)
    (( idle >= n )) && break
    sleep 0.2
  done
  if (( idle < n )); then
    sinfo -N >&2 || true
    show_logs
    die "only $idle of $n nodes became idle within 30 s"
  fi
  trap - ERR
  note "up: slurmctld and $n slurmd nodes ($(sinfo -h -o %N)), configuration $CONF"
  note "use: $PROG run srun -N $n ... or: export SLURM_CONF=$CONF"
}

cmd_run() {
  [[ $# -ge 1 ]] || usage_error "run needs a command"
  [[ $1 == -- ]] && shift
  [[ -f $CONF ]] || die "no cluster configuration at $CONF; '$PROG up' first"
  export SLURM_CONF=$CONF
  exec "$@"
}

cmd_down() {
  require_slurm
  if [[ -f $CONF ]]; then
    SLURM_CONF=$CONF scancel --quiet --full --user root --partition papshim >/dev/null 2>&1 || true
  fi
  stop_daemons
  "$CLUSTER" down
  rm -rf -- "${DIR:?}"
  [[ -z $(our_daemons) ]] || die "daemons are still running: $(our_daemons)"
  [[ ! -e $DIR ]] || die "could not remove $DIR"
  local left
  left=$(ip netns list | grep -oE "^$PAPSHIM_CLUSTER_PREFIX-n[0-9]+" | tr '\n' ' ' || true)
  [[ -z $left ]] || die "namespaces left behind: $left"
  note "down: removed"
}

[[ $# -ge 1 ]] || usage_error "no command"
sub=$1
shift
case $sub in
  up) [[ $# -le 1 ]] || usage_error "up takes at most N"; cmd_up "$@" ;;
  run) cmd_run "$@" ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  status) [[ -f $CONF ]] || { echo "slurm: down"; exit 3; }; SLURM_CONF=$CONF sinfo -N ;;
  down) [[ $# -eq 0 ]] || usage_error "down takes no arguments"; cmd_down ;;
  -h|--help|help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
  *) usage_error "unknown command '$sub'" ;;
esac
