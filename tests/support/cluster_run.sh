#!/usr/bin/env bash
# Runs an MPI command across 4 emulated hosts for the `cluster` test label.
# Uses its own prefix and subnet, so a cluster a user brought up is left
# alone.  Exits 77 (ctest: skipped, with the reason) where network
# namespaces are not available.
#   cluster_run.sh up|down|run [-x VAR=VAL ...] -- program args...
#   cluster_run.sh check NETCHECK   the regime check: it must measure, print
#                                   the regime and keep it (either regime passes)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
export PAPSHIM_CLUSTER_PREFIX=papt PAPSHIM_CLUSTER_SUBNET=10.213.79.0/24
cluster=$here/scripts/cluster.sh
case ${1:-} in
  up) exec "$cluster" up 4 ;;
  down) exec "$cluster" down ;;
  run)
    shift
    "$cluster" status >/dev/null 2>&1 || { "$cluster" up 4 || exit $?; }
    exec timeout -k 10 300 "$cluster" run "$@"
    ;;
  check)
    "$cluster" status >/dev/null 2>&1 || { "$cluster" up 4 || exit $?; }
    out=$(PAPSHIM_NETCHECK=$2 timeout -k 10 300 "$cluster" check 262144)
    rc=$?
    echo "$out"
    [[ $rc -eq 0 || $rc -eq 4 ]] || { echo "cluster_run.sh: check failed (exit $rc)" >&2; exit 1; }
    for want in '^one transfer of 262144 bytes: [0-9.]+ ms' '^TCP segments retransmitted per host during the check:( [0-9]+){4} ' \
                '^regime: (network|CPU)-bound \(checked: ' ; do
      grep -Eq "$want" <<<"$out" || { echo "cluster_run.sh: the check printed no line matching '$want'" >&2; exit 1; }
    done
    regime=$("$cluster" regime)
    grep -Fqx "regime: $regime" <<<"$out" || { echo "cluster_run.sh: 'regime' says '$regime', not what the check found" >&2; exit 1; }
    ;;
  *) echo "usage: cluster_run.sh up|down|run|check ..." >&2; exit 2 ;;
esac
