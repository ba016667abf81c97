#!/usr/bin/env bash
# Sets VAR to one value on rank 0 and another on every other rank, then runs
# the program: the way a user's inconsistent environment looks to papshim.
#   per_rank_env.sh VAR VALUE_ON_RANK0 VALUE_ELSEWHERE program [args...]
# VALUE_ELSEWHERE '*N': rank times N (every rank a value of its own).
var=$1 v0=$2 v1=$3
shift 3
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
[[ $v1 == '*'* ]] && v1=$((rank * ${v1#\*}))
if [[ $rank == 0 ]]; then export "$var=$v0"; else export "$var=$v1"; fi
exec "$@"
