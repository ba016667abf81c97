#!/usr/bin/env bash
# Runs scripts/slurm.sh for the `slurm` test label with its own directory,
# namespace prefix, subnet and ports, so a cluster a user brought up is left
# alone.  Exits 77 (ctest: skipped, with the reason) where Slurm cannot
# start here (not root, no Slurm packages, no network namespaces).
#   slurm_run.sh up|down|run CMD...
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
export PAPSHIM_SLURM_DIR=/tmp/papshim-slurm-ctest PAPSHIM_SLURM_PREFIX=pslt \
  PAPSHIM_SLURM_SUBNET=10.213.83.0/24 PAPSHIM_SLURM_PORT=6927
case ${1:-} in
  up)
    # What an interrupted earlier run left in this private directory goes first.
    [[ ! -e $PAPSHIM_SLURM_DIR ]] || "$here/scripts/slurm.sh" down >&2
    exec "$here/scripts/slurm.sh" up 2
    ;;
  down) exec "$here/scripts/slurm.sh" down ;;
  run)
    shift
    # Without slurm_up (ctest -R, or up skipped): up now, or exit 77 with the reason.
    [[ -f $PAPSHIM_SLURM_DIR/slurm.conf ]] || "$here/scripts/slurm.sh" up 2 >&2
    exec "$here/scripts/slurm.sh" run "$@"
    ;;
  *) echo "usage: slurm_run.sh up|down|run CMD..." >&2; exit 2 ;;
esac
