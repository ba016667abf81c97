#!/usr/bin/env bash
# Runs an MPI command across 4 emulated hosts for the `cluster` test label.
# Uses its own prefix and subnet, so a cluster a user brought up is left
# alone.  Exits 77 (ctest: skipped, with the reason) where network
# namespaces are not available.
#   cluster_run.sh up|down|run [-x VAR=VAL ...] -- program args...
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
  *) echo "usage: cluster_run.sh up|down|run ..." >&2; exit 2 ;;
esac
