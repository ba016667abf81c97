#!/usr/bin/env bash
# cluster.sh - an emulated Ethernet cluster on one Linux machine.
#
# Every emulated host is a network namespace with one veth link into a
# bridge in the root namespace.  Both directions of every link are shaped
# with tbf (and optionally delayed with netem), so Open MPI's TCP BTL sees
# roughly what it would see on a switched Ethernet.
#
# Two profiles name the regimes papshim is measured in (RATE may be either):
#   network  100 Mbit/s links: the links, not this machine's cores, limit a
#            collective (time dilation: ratios as on a real cluster)
#   cpu      1 Gbit/s links: on a few cores the cores limit it
#
#   cluster.sh up N [RATE|PROFILE] [LATENCY]   create/reconfigure N hosts
#   cluster.sh down                    remove everything `up` created
#   cluster.sh status                  hosts, addresses, qdiscs
#   cluster.sh check [BYTES]           measure which regime the hosts are in
#   cluster.sh regime                  one line naming it (for benchmarks)
#   cluster.sh run [-n NP] [--per-host K] [-x VAR[=VAL]]... -- cmd args...
#
# Exit codes: 0 ok, 1 failure, 2 usage error, 77 not available on this
# machine (not root, no network namespaces, no tc, ...): ctest's
# SKIP_RETURN_CODE.  See docs/cluster.md.

set -euo pipefail

readonly EX_UNAVAILABLE=77
readonly EX_USAGE=2

PROG=cluster.sh
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
AGENT="$SCRIPT_DIR/cluster-agent.sh"

PREFIX=${PAPSHIM_CLUSTER_PREFIX:-papc}
SUBNET=${PAPSHIM_CLUSTER_SUBNET:-10.213.77.0/24}
STATE=${PAPSHIM_CLUSTER_STATE:-/run/papshim-cluster-$PREFIX}
BRIDGE="$PREFIX-br"
FIRST_HOST_OCTET=10          # host i gets <net>.(10+i); the bridge gets <net>.1
MAX_HOSTS=240
NETWORK_RATE=100mbit         # the profiles (see the header)
CPU_RATE=1gbit
readonly EX_CPU_BOUND=4      # check: the hosts are not network-bound

check_prefix() {
  # interface names are limited to 15 characters ("<prefix>-probe-p")
  [[ $PREFIX =~ ^[a-z][a-z0-9]{0,6}$ ]] || usage_error "PAPSHIM_CLUSTER_PREFIX must be 1-7 lower-case letters/digits, starting with a letter (got '$PREFIX')"
}

die()   { echo "$PROG: $*" >&2; exit 1; }
usage_error() { echo "$PROG: $*" >&2; echo "usage: $PROG up N [RATE|network|cpu] [LATENCY] | down | status | check [BYTES] | regime | run [options] -- cmd args..." >&2; exit $EX_USAGE; }
unavailable() { echo "$PROG: not available here: $*" >&2; exit $EX_UNAVAILABLE; }
note()  { [[ ${QUIET:-0} == 1 ]] || echo "$PROG: $*" >&2; }

usage() {
  cat <<EOF
usage: $PROG <command> [args]

  up N [RATE|PROFILE] [LATENCY]
                         create (or reconfigure to) N emulated hosts whose links
                         are shaped to RATE (tc syntax, default 1gbit) in each
                         direction, plus LATENCY one-way delay per host-to-host
                         hop (tc time syntax, default 0 = none; needs netem).
                         PROFILE: 'network' (100mbit: the links limit a
                         collective) or 'cpu' (1gbit: this machine's cores do)
  down                   remove every namespace, link, bridge and file 'up' made
  status                 show hosts, addresses and qdiscs
  check [BYTES]          measure with build/bench/netcheck (one rank per host,
                         BYTES default 1 MiB at 100mbit and below, else 4 MiB):
                         one pair's transfer against BYTES/RATE, every host
                         sending to a neighbour at once against one pair, the
                         library's allreduce against its bandwidth term, TCP
                         retransmits per host; prints the regime and keeps it
                         for 'regime' (exit 0 network-bound, 4 CPU-bound)
  regime                 one line: the regime the last check measured for this
                         configuration, or the profile's, marked unchecked
  run [-n NP] [--per-host K] [-x VAR[=VAL]]... [--mca KEY VAL]...
      [--timeout SEC] [--] cmd args...
                         start cmd with mpirun across the hosts: K ranks per host
                         (default 1), NP ranks (default hosts*K)

environment:
  PAPSHIM_CLUSTER_SUBNET  private /24 for the hosts (default 10.213.77.0/24)
  PAPSHIM_CLUSTER_PREFIX  name prefix of namespaces and links (default papc)
  PAPSHIM_CLUSTER_STATE   state directory (default /run/papshim-cluster-PREFIX)
  PAPSHIM_CLUSTER_BURST   tbf burst in bytes (default 72000: one 64 KiB GSO
                          packet with headers)
  PAPSHIM_CLUSTER_QUEUE   tbf queue limit in bytes (default: 20 ms worth of
                          RATE, at least 256 KiB)
  PAPSHIM_CLUSTER_DOWN_WAIT  seconds 'down' waits for running jobs before
                          ending them (default 10)
  PAPSHIM_CLUSTER_VERBOSE=1  print the mpirun command line before running it

exit codes: 0 ok, 1 failure, 2 usage, 77 not available on this machine
EOF
}

# --- environment checks ------------------------------------------------------

require_tools() {
  [[ $(id -u) -eq 0 ]] || unavailable "must be run as root (network namespaces need CAP_NET_ADMIN/CAP_SYS_ADMIN)"
  command -v ip >/dev/null 2>&1 || unavailable "'ip' (iproute2) not found in PATH"
  command -v tc >/dev/null 2>&1 || unavailable "'tc' (iproute2) not found in PATH"
  command -v unshare >/dev/null 2>&1 || unavailable "'unshare' (util-linux) not found in PATH"
  command -v flock >/dev/null 2>&1 || unavailable "'flock' (util-linux) not found in PATH"
  ip netns list >/dev/null 2>&1 || unavailable "'ip netns' does not work here (no network namespace support?)"
}

# Creates a throw-away veth pair to prove veth, bridge, tbf (and netem if a
# delay was asked for) exist in this kernel.  Everything is removed again.
probe_kernel() {
  local want_netem=$1 probe="$PREFIX-probe" err
  ip link del "$probe" >/dev/null 2>&1 || true
  if ! err=$(ip link add "$probe" type veth peer name "$probe-p" 2>&1); then
    unavailable "cannot create veth links: ${err//$'\n'/ }"
  fi
  local reason=""
  if ! err=$(tc qdisc add dev "$probe" root tbf rate 1gbit burst 32k limit 64k 2>&1); then
    reason="tc qdisc tbf not supported by this kernel (CONFIG_NET_SCH_TBF): ${err//$'\n'/ }"
  elif [[ $want_netem == 1 ]] && ! tc qdisc replace dev "$probe" root netem delay 1ms >/dev/null 2>&1; then
    reason="LATENCY $LATENCY needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM); use LATENCY 0"
  fi
  ip link del "$probe" >/dev/null 2>&1 || true
  [[ -z $reason ]] || unavailable "$reason"
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    if ! err=$(ip link add "$probe" type bridge 2>&1); then
      unavailable "cannot create a bridge (CONFIG_BRIDGE): ${err//$'\n'/ }"
    fi
    ip link del "$probe" >/dev/null 2>&1 || true
  fi
}

# Serialise up/down/run of this script: up/down exclusive, run shared.
# take_lock MODE [SECONDS [soft]]: with "soft", carry on without the lock
# when it cannot be had in time (down must be able to clear hung jobs).
take_lock() {
  local mode=$1 wait=${2:-600} soft=${3:-}
  exec 9<"${BASH_SOURCE[0]}"
  if ! flock "$mode" -w "$wait" 9; then
    if [[ $soft == soft ]]; then
      note "jobs are still running on the cluster after ${wait}s; ending them"
      return 0
    fi
    die "timed out after ${wait}s waiting for another $PROG (lock on ${BASH_SOURCE[0]})"
  fi
}

# --- parsing -----------------------------------------------------------------

# Sets NET (first three octets) from SUBNET, which must be a.b.c.0/24.
parse_subnet() {
  local re='^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.0/24$'
  [[ $SUBNET =~ $re ]] || usage_error "PAPSHIM_CLUSTER_SUBNET must look like a.b.c.0/24 (got '$SUBNET')"
  local o
  for o in "${BASH_REMATCH[@]:1:3}"; do
    (( 10#$o <= 255 )) || usage_error "bad octet in PAPSHIM_CLUSTER_SUBNET '$SUBNET'"
  done
  NET="$((10#${BASH_REMATCH[1]})).$((10#${BASH_REMATCH[2]})).$((10#${BASH_REMATCH[3]}))"
  SUBNET="$NET.0/24"
}

# rate in tc syntax -> bytes per second (integer), or empty on failure.
rate_to_bytes() {
  local r=${1,,} num unit mult
  [[ $r =~ ^([0-9]+(\.[0-9]+)?)([a-z]*)$ ]] || return 1
  num=${BASH_REMATCH[1]}; unit=${BASH_REMATCH[3]}
  case $unit in
    bit)         mult=0.125 ;;
    kbit)        mult=125 ;;
    mbit)        mult=125000 ;;
    gbit)        mult=125000000 ;;
    tbit)        mult=125000000000 ;;
    kibit)       mult=128 ;;
    mibit)       mult=131072 ;;
    gibit)       mult=134217728 ;;
    ""|bps)      mult=1 ;;
    kbps)        mult=1000 ;;
    mbps)        mult=1000000 ;;
    gbps)        mult=1000000000 ;;
    *) return 1 ;;
  esac
  awk -v n="$num" -v m="$mult" 'BEGIN { v = n * m; if (v < 1) exit 1; printf "%.0f\n", v }'
}

# "0", "0ms", "0us", "" -> 0 ; anything else -> 1
is_nonzero_time() {
  local t=${1,,}
  [[ -z $t ]] && return 1
  [[ $t =~ ^0*(\.0*)?(s|sec|secs|ms|msec|msecs|us|usec|usecs)?$ ]] && return 1
  return 0
}

valid_time() {
  [[ ${1,,} =~ ^[0-9]+(\.[0-9]+)?(s|sec|secs|ms|msec|msecs|us|usec|usecs)?$ ]]
}

# --- names -------------------------------------------------------------------

ns_name()   { echo "$PREFIX-n$1"; }          # namespace == host name
veth_name() { echo "$PREFIX-v$1"; }          # root-namespace end (bridge port)
host_addr() { echo "$NET.$((FIRST_HOST_OCTET + $1))"; }

# indices of our namespaces that currently exist
existing_indices() {
  ip netns list 2>/dev/null | awk '{print $1}' | sed -n "s/^${PREFIX}-n\([0-9][0-9]*\)\$/\1/p" | sort -n
}

set_sysctl() {  # path value ; silently ignored when the knob does not exist
  if [[ -w $1 ]]; then echo "$2" >"$1" 2>/dev/null || true; fi
}

# --- shaping -----------------------------------------------------------------

# apply_qdisc <ns or ""> <dev> <with delay 0|1>
apply_qdisc() {
  local ns=$1 dev=$2 delay=$3
  local -a tcx=(tc)
  if [[ -n $ns ]]; then tcx=(ip netns exec "$ns" tc); fi
  "${tcx[@]}" qdisc del dev "$dev" root >/dev/null 2>&1 || true
  if [[ $delay == 1 ]]; then
    "${tcx[@]}" qdisc add dev "$dev" root handle 1: netem delay "$LATENCY" limit 100000
    "${tcx[@]}" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$RATE" burst "$BURST" limit "$QLIMIT"
  else
    "${tcx[@]}" qdisc add dev "$dev" root handle 10: tbf rate "$RATE" burst "$BURST" limit "$QLIMIT"
  fi
}

# --- up ----------------------------------------------------------------------

# Processes still running inside a namespace (a hung job) would keep it
# alive after `ip netns del`; they were started through this cluster, so end
# them: TERM, then KILL after two seconds.
kill_ns_procs() {
  local ns=$1 pids t
  pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
  [[ -n ${pids// /} ]] || return 0
  note "ending processes left in $ns: $pids"
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for ((t = 0; t < 20; t++)); do
    sleep 0.1
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
    [[ -n ${pids// /} ]] || return 0
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

# pids of mpirun processes started by `run` for this cluster (their command
# line names a hostfile in the state directory)
cluster_mpiruns() {
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [[ $pid == "$$" ]] && continue
    if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "--hostfile $STATE/hostfile."; then
      echo "$pid"
    fi
  done
}

# mpirun of a job still running when the cluster goes away would wait for
# its vanished daemons forever: end it first (it then ends its daemons).
end_mpiruns() {
  local pids t
  pids=$(cluster_mpiruns | tr '\n' ' ')
  [[ -n ${pids// /} ]] || return 0
  note "ending mpirun of running jobs: $pids"
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for ((t = 0; t < 50; t++)); do
    sleep 0.1
    pids=$(cluster_mpiruns | tr '\n' ' ')
    [[ -n ${pids// /} ]] || return 0
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

remove_host() {
  local i=$1
  kill_ns_procs "$(ns_name "$i")"
  ip netns del "$(ns_name "$i")" >/dev/null 2>&1 || true
  ip link del "$(veth_name "$i")" >/dev/null 2>&1 || true
  rm -rf -- "${STATE:?}/tmp/$(ns_name "$i")"
}

check_subnet_free() {
  local line
  line=$(ip -4 -o addr show to "$SUBNET" 2>/dev/null | awk -v br="$BRIDGE" '$2 != br {print $2 " " $4; exit}')
  [[ -z $line ]] || die "subnet $SUBNET already used in the root namespace ($line); set PAPSHIM_CLUSTER_SUBNET to another a.b.c.0/24"
  line=$(ip -4 route show root "$SUBNET" 2>/dev/null | grep -v "dev $BRIDGE" | head -n1 || true)
  [[ -z $line ]] || die "subnet $SUBNET already routed in the root namespace ($line); set PAPSHIM_CLUSTER_SUBNET to another a.b.c.0/24"
}

read_config() {  # fills CFG_* from $STATE/config; returns 1 if absent
  CFG_N=""; CFG_RATE=""; CFG_LATENCY=""; CFG_SUBNET=""
  [[ -r $STATE/config ]] || return 1
  local k v
  while IFS='=' read -r k v; do
    case $k in
      N) CFG_N=$v ;; RATE) CFG_RATE=$v ;; LATENCY) CFG_LATENCY=$v ;;
      SUBNET) CFG_SUBNET=$v ;;
    esac
  done <"$STATE/config"
}

cmd_up() {
  [[ $# -ge 1 && $# -le 3 ]] || usage_error "up needs N [RATE] [LATENCY]"
  local n=$1
  RATE=${2:-1gbit}
  LATENCY=${3:-0ms}
  case ${RATE,,} in
    network) RATE=$NETWORK_RATE ;;
    cpu) RATE=$CPU_RATE ;;
  esac
  if ! [[ $n =~ ^[0-9]+$ ]] || (( 10#$n < 1 || 10#$n > MAX_HOSTS )); then
    usage_error "N must be an integer 1..$MAX_HOSTS (got '$n')"
  fi
  n=$((10#$n))
  local rate_bytes
  rate_bytes=$(rate_to_bytes "$RATE") || usage_error "RATE '$RATE' is not a tc rate such as 1gbit, 100mbit, 10gbit"
  valid_time "$LATENCY" || usage_error "LATENCY '$LATENCY' is not a tc time such as 0ms, 50us, 1ms"
  local delay=0
  is_nonzero_time "$LATENCY" && delay=1
  [[ $delay == 1 ]] || LATENCY=0ms
  parse_subnet
  # The burst only has to hold the largest packet the stack hands to the
  # qdisc (a 64 KiB GSO packet plus per-segment headers), so that messages
  # are paced at RATE from their first 70 KB on.  20 ms worth of queue.
  BURST=${PAPSHIM_CLUSTER_BURST:-72000}
  QLIMIT=${PAPSHIM_CLUSTER_QUEUE:-$(( rate_bytes / 50 > 262144 ? rate_bytes / 50 : 262144 ))}
  if ! [[ $BURST =~ ^[0-9]+$ && $QLIMIT =~ ^[0-9]+$ ]] || (( BURST < 1600 || QLIMIT < BURST )); then
    usage_error "PAPSHIM_CLUSTER_BURST must be a byte count >= 1600 and PAPSHIM_CLUSTER_QUEUE one >= the burst"
  fi

  require_tools
  take_lock -x
  probe_kernel "$delay"
  trap 'echo "$PROG: up failed (line $LINENO); \"$PROG down\" removes what was made" >&2' ERR

  # A different subnet in the old state: start from scratch (once the new
  # subnet is known to be free).
  if read_config && [[ $CFG_SUBNET != "$SUBNET" ]]; then
    check_subnet_free
    note "subnet changed ($CFG_SUBNET -> $SUBNET): tearing down first"
    teardown
  fi
  check_subnet_free

  mkdir -p -- "$STATE/tmp/mpirun"
  chmod 755 -- "$STATE"
  # Write the config first so that `down` finds everything even if `up`
  # dies half-way.
  printf 'N=%s\nRATE=%s\nLATENCY=%s\nSUBNET=%s\nPREFIX=%s\nBURST=%s\nQUEUE=%s\n' \
    "$n" "$RATE" "$LATENCY" "$SUBNET" "$PREFIX" "$BURST" "$QLIMIT" >"$STATE/config.tmp"
  mv -f -- "$STATE/config.tmp" "$STATE/config"
  rm -f -- "$STATE/regime"

  # bridge (the "switch") with the address mpirun uses in the root namespace
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add name "$BRIDGE" type bridge stp_state 0 forward_delay 0
  fi
  set_sysctl "/proc/sys/net/ipv6/conf/$BRIDGE/disable_ipv6" 1
  ip addr replace "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up

  # hosts that should no longer exist
  local i
  for i in $(existing_indices); do
    if (( i >= n )); then remove_host "$i"; fi
  done

  local ns veth addr
  : >"$STATE/hosts.tmp"
  for ((i = 0; i < n; i++)); do
    ns=$(ns_name "$i"); veth=$(veth_name "$i"); addr=$(host_addr "$i")
    if ! ip netns exec "$ns" true >/dev/null 2>&1; then
      ip link del "$veth" >/dev/null 2>&1 || true
      ip netns del "$ns" >/dev/null 2>&1 || true
      ip netns add "$ns"
    fi
    if ! ip link show "$veth" >/dev/null 2>&1 || ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
      ip link del "$veth" >/dev/null 2>&1 || true
      ip -n "$ns" link del eth0 >/dev/null 2>&1 || true
      ip link add "$veth" type veth peer name eth0 netns "$ns"
    fi
    set_sysctl "/proc/sys/net/ipv6/conf/$veth/disable_ipv6" 1
    ip link set "$veth" master "$BRIDGE"
    ip link set "$veth" up
    # shellcheck disable=SC2016
    ip netns exec "$ns" sh -c '
      for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6 /proc/sys/net/ipv6/conf/eth0/disable_ipv6; do
        [ -w "$f" ] && echo 1 >"$f" 2>/dev/null; done; true'
    ip -n "$ns" link set lo up
    ip -n "$ns" addr flush dev eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    # host transmit: the namespace end; host receive: the bridge port
    apply_qdisc "$ns" eth0 "$delay"
    apply_qdisc "" "$veth" 0
    mkdir -p -- "$STATE/tmp/$ns"
    chmod 1777 -- "$STATE/tmp/$ns"
    # address  hostname  namespace  tmpdir
    printf '%s %s %s %s\n' "$addr" "$ns" "$ns" "$STATE/tmp/$ns" >>"$STATE/hosts.tmp"
  done
  mv -f -- "$STATE/hosts.tmp" "$STATE/hosts"
  rm -f -- "$STATE"/hostfile.*

  wait_links_up "$n"
  trap - ERR
  note "up: $n hosts on $SUBNET, $RATE per direction, latency $LATENCY (tbf burst $BURST B, queue $QLIMIT B)"
}

wait_links_up() {
  local n=$1 i tries ns
  for ((i = 0; i < n; i++)); do
    ns=$(ns_name "$i")
    for ((tries = 0; tries < 50; tries++)); do
      if ip -n "$ns" -o link show eth0 2>/dev/null | grep -q 'state UP'; then
        break
      fi
      sleep 0.1
    done
  done
}

# --- down --------------------------------------------------------------------

teardown() {
  local i
  end_mpiruns
  for i in $(existing_indices); do
    remove_host "$i"
  done
  # bridge ports whose namespace has already gone
  local l
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${PREFIX}-v[0-9]+\$" || true); do
    ip link del "$l" >/dev/null 2>&1 || true
  done
  ip link del "$BRIDGE" >/dev/null 2>&1 || true
  ip link del "$PREFIX-probe" >/dev/null 2>&1 || true
  if [[ -d $STATE ]]; then
    rm -rf -- "${STATE:?}"
  fi
}

cmd_down() {
  [[ $# -eq 0 ]] || usage_error "down takes no arguments"
  require_tools
  take_lock -x "${PAPSHIM_CLUSTER_DOWN_WAIT:-10}" soft
  if ! read_config && ! ip link show "$BRIDGE" >/dev/null 2>&1 && [[ -z $(existing_indices) ]]; then
    note "down: nothing to remove"
    return 0
  fi
  [[ -n ${CFG_SUBNET:-} ]] && SUBNET=$CFG_SUBNET
  teardown
  note "down: removed"
}

# --- status ------------------------------------------------------------------

cmd_status() {
  [[ $# -eq 0 ]] || usage_error "status takes no arguments"
  require_tools
  local idx
  idx=$(existing_indices | tr '\n' ' ')
  if ! read_config; then
    if [[ -z $idx ]] && ! ip link show "$BRIDGE" >/dev/null 2>&1; then
      echo "cluster: down"
      return 3
    fi
    echo "cluster: partial (no state in $STATE; run '$PROG down')"
  else
    echo "cluster: up, $CFG_N hosts, subnet $CFG_SUBNET, rate $CFG_RATE per direction, latency $CFG_LATENCY"
    echo "state:   $STATE"
  fi
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    printf 'bridge:  %s %s\n' "$BRIDGE" "$(ip -4 -o addr show dev "$BRIDGE" | awk '{print $4}' | tr '\n' ' ')"
  else
    echo "bridge:  $BRIDGE MISSING"
  fi
  local i ns veth addr
  printf '%-10s %-18s %-10s %s\n' HOST ADDRESS PORT QDISCS
  for i in $idx; do
    ns=$(ns_name "$i"); veth=$(veth_name "$i")
    addr=$(ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | head -n1)
    printf '%-10s %-18s %-10s\n' "$ns" "${addr:-none}" "$veth"
    ip netns exec "$ns" tc qdisc show dev eth0 2>/dev/null | sed 's/^/    tx (eth0): /'
    tc qdisc show dev "$veth" 2>/dev/null | sed 's/^/    rx (port): /'
  done
  local mismatch=0
  if [[ -n ${CFG_N:-} ]]; then
    for ((i = 0; i < CFG_N; i++)); do
      ip netns exec "$(ns_name "$i")" true >/dev/null 2>&1 || { echo "host $(ns_name "$i") MISSING"; mismatch=1; }
    done
  fi
  return $mismatch
}

# --- check and regime --------------------------------------------------------

# retransmitted TCP segments of namespace $1 (its /proc/net/snmp)
retrans_of() {
  ip netns exec "$1" awk '$1 == "Tcp:" { if (!h) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i; h = 1 } else print $c }' /proc/net/snmp
}

# The regime a rate is meant for, before any check.
profile_of() {
  case ${1,,} in
    "$NETWORK_RATE") echo "network-bound profile" ;;
    "$CPU_RATE") echo "CPU-bound profile" ;;
    *) echo "custom rate" ;;
  esac
}

cmd_check() {
  [[ $# -le 1 ]] || usage_error "check takes at most BYTES"
  require_tools
  read_config || die "cluster is not up (no $STATE/config); run '$PROG up N network' first"
  (( CFG_N >= 2 )) || die "check needs at least 2 hosts (the cluster has $CFG_N)"
  local prog=${PAPSHIM_NETCHECK:-$SCRIPT_DIR/../build/bench/netcheck}
  [[ -x $prog ]] || die "$prog not found: build it with scripts/build.sh (or set PAPSHIM_NETCHECK)"
  local rate_bytes bytes
  rate_bytes=$(rate_to_bytes "$CFG_RATE")
  bytes=${1:-$(( rate_bytes <= 12500000 ? 1048576 : 4194304 ))}
  [[ $bytes =~ ^[0-9]+$ ]] && (( bytes >= 65536 )) || usage_error "BYTES must be a whole number of bytes >= 65536 (got '$bytes')"
  local i before=() after=() line
  for ((i = 0; i < CFG_N; i++)); do before+=("$(retrans_of "$(ns_name "$i")")"); done
  line=$("${BASH_SOURCE[0]}" run -- "$prog" "$bytes" 7 | grep '^netcheck ') || die "netcheck failed on the cluster"
  for ((i = 0; i < CFG_N; i++)); do after+=("$(retrans_of "$(ns_name "$i")")"); done
  local retrans="" total=0 d
  for ((i = 0; i < CFG_N; i++)); do
    d=$(( after[i] - before[i] )); total=$(( total + d )); retrans+=" $d"
  done
  local verdict
  verdict=$(awk -v line="$line" -v rate="$rate_bytes" -v n="$CFG_N" -v r="$CFG_RATE" '
    BEGIN {
      k = split(line, f, " ")
      for (i = 2; i <= k; i++) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
      wire = 1e3 * v["bytes"] / rate
      pair = v["pair_ms"] / wire; ring = v["ring_ms"] / v["pair_ms"]
      bw = 2 * (n - 1) / n * wire
      printf "one transfer of %d bytes: %.1f ms, %.2f x bytes/rate (%.1f ms)\n", v["bytes"], v["pair_ms"], pair, wire
      printf "two hosts exchanging at once: %.1f ms; all %d hosts sending to a neighbour at once: %.1f ms, %.2f x one pair\n", v["exchange_ms"], n, v["ring_ms"], ring
      printf "the library'\''s balanced MPI_Allreduce: %.1f ms, %.2f x its bandwidth term 2(P-1)/P x bytes/rate (%.1f ms)\n", v["allreduce_ms"], v["allreduce_ms"] / bw, bw
      bound = (pair <= 1.10 && ring <= 1.10) ? "network-bound" : "CPU-bound"
      printf "REGIME %s (checked: one transfer %.2f x bytes/rate, %d hosts at once %.2f x one pair): %d emulated hosts at %s\n", bound, pair, n, ring, n, r
    }')
  echo "$verdict" | grep -v '^REGIME '
  echo "TCP segments retransmitted per host during the check:$retrans ($total in all)"
  local regime
  regime=$(sed -n 's/^REGIME //p' <<<"$verdict")
  echo "regime: $regime"
  echo "$regime" >"$STATE/regime"
  [[ $regime == network-bound* ]] || return $EX_CPU_BOUND
}

cmd_regime() {
  [[ $# -eq 0 ]] || usage_error "regime takes no arguments"
  if ! read_config; then
    echo "no emulated cluster (shared memory)"
    return 0
  fi
  if [[ -s $STATE/regime ]]; then
    cat "$STATE/regime"
  else
    echo "$(profile_of "$CFG_RATE"), unchecked ($PROG check measures it): $CFG_N emulated hosts at $CFG_RATE"
  fi
}

# --- run ---------------------------------------------------------------------

cmd_run() {
  local np="" per_host=1 timeout=""
  local -a xs=() mcas=()
  while [[ $# -gt 0 ]]; do
    case $1 in
      -n|-np|--np)  [[ $# -ge 2 ]] || usage_error "$1 needs a value"; np=$2; shift 2 ;;
      --per-host)   [[ $# -ge 2 ]] || usage_error "$1 needs a value"; per_host=$2; shift 2 ;;
      -x)           [[ $# -ge 2 ]] || usage_error "-x needs VAR=VAL"; xs+=(-x "$2"); shift 2 ;;
      --mca)        [[ $# -ge 3 ]] || usage_error "--mca needs KEY VALUE"; mcas+=(--mca "$2" "$3"); shift 3 ;;
      --timeout)    [[ $# -ge 2 ]] || usage_error "$1 needs seconds"; timeout=$2; shift 2 ;;
      --)           shift; break ;;
      -h|--help)    usage; exit 0 ;;
      -*)           usage_error "run: unknown option '$1'" ;;
      *)            break ;;
    esac
  done
  [[ $# -ge 1 ]] || usage_error "run needs a command after --"
  if ! [[ $per_host =~ ^[0-9]+$ ]] || (( per_host < 1 )); then
    usage_error "--per-host must be a positive integer"
  fi
  [[ -z $np || ( $np =~ ^[0-9]+$ && np -ge 1 ) ]] || usage_error "-n must be a positive integer"
  [[ -z $timeout || $timeout =~ ^[0-9]+$ ]] || usage_error "--timeout must be whole seconds"

  require_tools
  command -v mpirun >/dev/null 2>&1 || unavailable "'mpirun' not found in PATH"
  [[ -x $AGENT ]] || die "launch agent $AGENT missing or not executable"
  take_lock -s
  read_config || die "cluster is not up (no $STATE/config); run '$PROG up N' first"
  [[ -r $STATE/hosts ]] || die "cluster state incomplete ($STATE/hosts missing); run '$PROG up N' again"

  local nhosts
  nhosts=$(wc -l <"$STATE/hosts")
  (( nhosts >= 1 )) || die "no hosts in $STATE/hosts"
  local cap=$(( nhosts * per_host ))
  [[ -n $np ]] || np=$cap
  (( np <= cap )) || die "-n $np exceeds $nhosts hosts x $per_host per host = $cap; use --per-host"
  local used=$(( (np + per_host - 1) / per_host ))

  local hostfile="$STATE/hostfile.$used.$per_host"
  if [[ ! -s $hostfile ]]; then
    awk -v k="$per_host" -v m="$used" 'NR <= m { print $1 " slots=" k " max_slots=" k }' \
      "$STATE/hosts" >"$hostfile.$$"
    mv -f -- "$hostfile.$$" "$hostfile"
  fi

  # shellcheck disable=SC2054  # "tcp,self" is one argument
  local -a cmd=(mpirun --allow-run-as-root --oversubscribe
    --hostfile "$hostfile" -n "$np" --map-by slot --bind-to none
    --mca plm rsh
    --mca plm_rsh_agent "$AGENT"
    --mca plm_rsh_no_tree_spawn 1
    --mca plm_rsh_num_concurrent 128
    --mca oob_tcp_if_include "$CFG_SUBNET"
    --mca btl_tcp_if_include "$CFG_SUBNET"
    --mca btl tcp,self
    --mca mpi_yield_when_idle 1
    --mca rtc '^hwloc')
  [[ -n $timeout ]] && cmd+=(--timeout "$timeout")
  cmd+=("${mcas[@]}" "${xs[@]}" "$@")

  if [[ ${PAPSHIM_CLUSTER_VERBOSE:-0} == 1 ]]; then
    echo "$PROG: running: ${cmd[*]}" >&2
  fi
  # mpirun's own session directory; per-host ones are set by the agent.
  # Anything that would pin every daemon to the same directory is dropped.
  export PAPSHIM_CLUSTER_STATE="$STATE"
  export TMPDIR="$STATE/tmp/mpirun"
  export SHELL=/bin/bash
  unset OMPI_MCA_orte_tmpdir_base
  # Open MPI's rsh launcher prints a harmless warning when the agent it
  # forked has already exec'd before the parent's setpgid(); drop just that.
  local errfd filter_pid
  exec {errfd}> >(grep --line-buffered -v -E \
      'plm:rsh: Warning: setpgid\([0-9]+,[0-9]+\) failed in parent with errno=Permission denied' >&2 9<&-)
  filter_pid=$!
  set +e
  "${cmd[@]}" 2>&"$errfd" 9<&-
  local rc=$?
  exec {errfd}>&-
  wait "$filter_pid" 2>/dev/null
  set -e
  return $rc
}

# --- main --------------------------------------------------------------------

[[ $# -ge 1 ]] || { usage >&2; exit $EX_USAGE; }
check_prefix
sub=$1; shift
case $sub in
  up)     cmd_up "$@" ;;
  down)   cmd_down "$@" ;;
  status) cmd_status "$@" ;;
  run)    cmd_run "$@" ;;
  check)  cmd_check "$@" ;;
  regime) cmd_regime "$@" ;;
  -h|--help|help) usage ;;
  *) usage_error "unknown command '$sub'" ;;
esac
