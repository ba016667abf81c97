#!/usr/bin/env bash
# cluster-agent.sh HOST CMD... - remote-shell stand-in for the emulated cluster.
#
# Open MPI's rsh launcher (--mca plm_rsh_agent) calls this exactly like ssh:
# the first argument names the host (an address from the hostfile), the rest
# is a shell command line.  The command runs inside the network namespace
# that owns the address, in a private UTS namespace carrying that host's
# hostname, with a per-host TMPDIR / orte_tmpdir_base and an environment as
# clean as a fresh ssh login would give.  Set up by scripts/cluster.sh.

set -u
PROG=cluster-agent.sh
STATE=${PAPSHIM_CLUSTER_STATE:-/run/papshim-cluster-${PAPSHIM_CLUSTER_PREFIX:-papc}}

# ssh-style options (e.g. -x, -T) are accepted and ignored
while [[ $# -gt 0 && $1 == -* ]]; do
  shift
done
if [[ $# -lt 2 ]]; then
  echo "$PROG: usage: $PROG HOST COMMAND..." >&2
  exit 255
fi
host=$1
shift
# ssh joins its arguments with blanks and hands them to the remote shell
cmdline="$*"

if [[ ! -r $STATE/hosts ]]; then
  echo "$PROG: no emulated cluster state in $STATE (is the cluster up?)" >&2
  exit 255
fi
# hosts file lines: address hostname namespace tmpdir
entry=$(awk -v h="$host" '$1 == h || $2 == h { print; exit }' "$STATE/hosts")
if [[ -z $entry ]]; then
  echo "$PROG: unknown host '$host' (not listed in $STATE/hosts)" >&2
  exit 255
fi
read -r _addr hname ns tmp <<<"$entry"

# shellcheck disable=SC2016  # $1/$2 belong to the inner shell
exec ip netns exec "$ns" unshare --uts -- env -i \
  PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}" \
  ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
  HOME="${HOME:-/root}" USER="${USER:-root}" LOGNAME="${LOGNAME:-root}" \
  SHELL=/bin/bash LANG=C.UTF-8 \
  TMPDIR="$tmp" OMPI_MCA_orte_tmpdir_base="$tmp" \
  /bin/bash -c 'hostname "$1" || exit 255; exec /bin/bash -c "$2"' \
  "$PROG" "$hname" "$cmdline"
