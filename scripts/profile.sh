# profile.sh - sourced by the benchmark scripts: the emulated cluster's
# profile, what each profile measures with, and the regime line they print.
#
#   PAPSHIM_CLUSTER_PROFILE=network (default) | cpu
#     network  links at 100 Mbit/s, 1 MiB per rank (256 Ki floats), a late
#              rank 125 ms (1.5 transfers of 82 ms) late: the links limit a
#              collective, as on a real cluster (time dilation)
#     cpu      links at 1 Gbit/s, 4 MiB per rank (1 Mi floats), 50 ms late
#              (1.4 transfers of 36 ms): this machine's cores limit it
#
# After sourcing: PROFILE, PROFILE_FLOATS (per rank), PROFILE_LATE_MS;
# profile_up N brings the cluster up at the profile's rate unless it is up
# with N or more hosts at that rate already (then it stays as it is), and
# profile_regime measures the regime (`scripts/cluster.sh check`, about
# 10 s: the machine's load now, not at some earlier check) and prints its
# line.

PROFILE=${PAPSHIM_CLUSTER_PROFILE:-network}
case $PROFILE in
  network) PROFILE_FLOATS=262144 PROFILE_LATE_MS=125 ;;
  cpu) PROFILE_FLOATS=1048576 PROFILE_LATE_MS=50 ;;
  *)
    echo "PAPSHIM_CLUSTER_PROFILE must be network (100 Mbit/s links: network-bound) or cpu (1 Gbit/s: CPU-bound), not '$PROFILE'" >&2
    exit 2 ;;
esac

_profile_cluster=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)/cluster.sh

profile_up() {  # N
  local want=$1 rate status
  rate=$([[ $PROFILE == network ]] && echo 100mbit || echo 1gbit)
  status=$("$_profile_cluster" status 2>/dev/null | head -n1) || true
  if [[ $status =~ ^cluster:\ up,\ ([0-9]+)\ hosts,.*\ rate\ ([^ ]+)\  ]] &&
     (( BASH_REMATCH[1] >= want )) && [[ ${BASH_REMATCH[2]} == "$rate" ]]; then
    return 0
  fi
  "$_profile_cluster" up "$want" "$PROFILE"
}

profile_regime() {
  "$_profile_cluster" check >/dev/null 2>&1 || true
  "$_profile_cluster" regime
}
