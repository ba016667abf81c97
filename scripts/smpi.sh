#!/usr/bin/env bash
# papshim's own schedules and executor on a simulated cluster (SimGrid's
# SMPI, Debian package libsimgrid-dev): builds bench/smpi/smpi_coll with
# smpicxx into build-smpi/ and runs it under smpirun on the platforms in
# bench/smpi/platforms/.  docs/smpi.md explains the settings and the output.
#
#   scripts/smpi.sh build
#   scripts/smpi.sh run [-p PLATFORM] [-n P] [-m MODEL] [-q] -- COLL ALGO COUNT PATTERN ITERS [options]
#   scripts/smpi.sh platforms
#
# run: PLATFORM is a name in bench/smpi/platforms/ (without .xml; default
# star-1g) or a path; P simulated ranks (default 16), one per host; MODEL
# smpi (default: SMPI's piecewise latency and bandwidth factors, fitted to
# MPI over TCP on Gigabit Ethernet) or nominal (factors 1: every message
# takes the links' latency plus bytes / bandwidth); -q drops SimGrid's
# start-up messages.  Everything after -- goes to smpi_coll (its options:
# scripts/smpi.sh run -n 2 -q -- -h), and --cfg=... options there to SimGrid.
# Exit status: smpi_coll's (0 ok, 1 a result differed from PMPI's, 2 bad
# arguments); 77 when smpicxx or smpirun is missing (scripts/setup.sh
# installs libsimgrid-dev).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PAPSHIM_SMPI_BUILD:-$ROOT/build-smpi}
PLATFORMS=$ROOT/bench/smpi/platforms
PROG=smpi.sh

usage() { sed -n '7,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "$PROG: $*" >&2; exit 2; }

need_smpi() {
  local tool
  for tool in smpicxx smpirun; do
    if ! command -v "$tool" >/dev/null; then
      echo "$PROG: $tool not found: install libsimgrid-dev (scripts/setup.sh does)" >&2
      exit 77
    fi
  done
}

# The sources the driver is built from: every algorithm, the executor, the
# start-up calibration and the driver itself (common/ is header-only).
sources() {
  ls "$ROOT"/algorithms/*.cpp
  echo "$ROOT/predictor/calibrate.cpp"
  ls "$ROOT"/bench/smpi/*.cpp
}

# Compiles what changed (a source, or any header it may include, newer than
# its object) and links build-smpi/smpi_coll.
build() {
  need_smpi
  mkdir -p "$BUILD/obj"
  local newest_header src obj objs=() stale=()
  newest_header=$(ls -t "$ROOT"/algorithms/*.h "$ROOT"/common/*.h "$ROOT"/predictor/calibrate.h \
                  "$ROOT"/bench/smpi/*.h | head -n1)
  while read -r src; do
    obj=$BUILD/obj/$(basename "$(dirname "$src")")_$(basename "${src%.cpp}").o
    objs+=("$obj")
    if [[ ! -f $obj || $src -nt $obj || $newest_header -nt $obj ]]; then stale+=("$src"); fi
  done < <(sources)
  if ((${#stale[@]} > 0)); then
    echo "$PROG: compiling ${#stale[@]} file(s) with smpicxx" >&2
    printf '%s\n' "${stale[@]}" | xargs -P "$(nproc)" -I{} sh -c '
      src=$1; build=$2; root=$3
      obj=$build/obj/$(basename "$(dirname "$src")")_$(basename "${src%.cpp}").o
      smpicxx -std=c++17 -O2 -DNDEBUG -DPAPSHIM_SMPI -Wall -Wextra -Wshadow -Wpedantic -I"$root" -c "$src" -o "$obj"' _ {} "$BUILD" "$ROOT"
  fi
  local exe=$BUILD/smpi_coll
  local o
  for o in "${objs[@]}"; do
    if [[ ! -f $exe || $o -nt $exe ]]; then
      smpicxx -O2 "${objs[@]}" -o "$exe"
      echo "$PROG: built $exe" >&2
      break
    fi
  done
}

# The platform file for a name or a path.
platform_file() {
  local p=$1
  if [[ -f $p ]]; then echo "$p"; return; fi
  [[ -f $PLATFORMS/$p.xml ]] || die "no platform '$p' (bench/smpi/platforms/: $(cd "$PLATFORMS" && ls *.xml | sed 's/\.xml$//' | tr '\n' ' '))"
  echo "$PLATFORMS/$p.xml"
}

# The hosts of a platform in its order (one per line): <host id=...> and
# the hosts of <cluster prefix= radical= suffix=> tags.
platform_hosts() {
  python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
for el in ET.parse(sys.argv[1]).iter():
    if el.tag == "host":
        print(el.get("id"))
    elif el.tag == "cluster":
        for part in el.get("radical").split(","):
            lo, _, hi = part.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                print(f"{el.get('prefix')}{i}{el.get('suffix')}")
EOF
}

run() {
  local platform=star-1g np=16 quiet=0 model=smpi
  while (($# > 0)); do
    case $1 in
      -p) platform=${2:?-p needs a platform}; shift 2 ;;
      -n) np=${2:?-n needs a rank count}; shift 2 ;;
      -m) model=${2:?-m needs smpi or nominal}; shift 2 ;;
      -q) quiet=1; shift ;;
      --) shift; break ;;
      *) die "run: unknown option '$1' (options before --: -p PLATFORM -n P -m MODEL -q)" ;;
    esac
  done
  local factors=()
  case $model in
    smpi) ;;
    nominal) factors=(--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1) ;;
    *) die "run: -m takes smpi or nominal (got '$model')" ;;
  esac
  [[ $np =~ ^[0-9]+$ ]] && ((np >= 1)) || die "run: -n needs a positive rank count (got '$np')"
  build
  local file
  file=$(platform_file "$platform")
  hosts=$(mktemp "${TMPDIR:-/tmp}/papshim-smpi-hosts.XXXXXX")  # global: the EXIT trap removes it
  trap 'rm -f "$hosts"' EXIT
  platform_hosts "$file" >"$hosts"
  local have
  have=$(wc -l <"$hosts")
  ((np <= have)) || die "run: platform $platform has $have hosts, fewer than -n $np"
  # Settings (docs/smpi.md): dlopen privatization (each simulated rank its
  # own globals and thread_locals), no benchmarked computation, no time
  # invented per MPI_Test/Waitsome, and Open MPI's decision rules for the
  # native collectives.
  local cfg=(--cfg=smpi/privatization:dlopen --cfg=smpi/simulate-computation:no --cfg=smpi/test:0
             --cfg=smpi/coll-selector:ompi)
  local log=()
  ((quiet)) && log=(--log=root.thres:warning --log=xbt_cfg.thres:warning --log=smpi_config.thres:error)
  smpirun -np "$np" -platform "$file" -hostfile "$hosts" "${cfg[@]}" "${factors[@]}" "${log[@]}" \
    "$BUILD/smpi_coll" "$@"
}

cmd=${1:-}
(($# > 0)) && shift
case $cmd in
  build) build ;;
  run) run "$@" ;;
  platforms) ls "$PLATFORMS"/*.xml | xargs -n1 basename | sed 's/\.xml$//' ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
