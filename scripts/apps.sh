#!/usr/bin/env bash
# The apps tier (docs/apps.md): real MPI programs from Debian's packages
# (LAMMPS examples, hpcc, CP2K, mpi4py programs) and other projects' MPI test
# suites (ScaLAPACK's and BLACS's testers) run natively and under the preload
# (auto, and forced algorithms), each compared with the native run; ctest
# label `apps` in build-apps/ (tests/apps/apps.py does the runs).
#   scripts/apps.sh            everything (about half an hour on 2 cores)
#   scripts/apps.sh --ci       the light part scripts/test.sh runs (mpi4py, LAMMPS melt, hpcc; a few minutes)
#   scripts/apps.sh [--ci] -R lammps     further arguments go to ctest
# Installs the applications' packages with apt when missing, builds
# libpapshim.so in build-apps/, and prints the table of results at the end
# (from build-apps/tests/apps/results.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
level=ON
if [[ ${1:-} == --ci ]]; then
  level=ci
  shift
fi
packages=(python3-mpi4py python3-numpy lammps lammps-examples hpcc)
[[ $level == ON ]] && packages+=(cp2k cp2k-data scalapack-mpi-test)
scripts/setup.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "apps: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "apps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
fi
cmake -S . -B build-apps -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPSHIM_BUILD_BENCH=OFF \
  -DPAPSHIM_APPS_TESTS=$level >/dev/null
cmake --build build-apps -j "$(nproc)" --target papshim >/dev/null
results=build-apps/tests/apps/results.jsonl
rm -f "$results"
rc=0
(cd build-apps && ctest --output-on-failure -L apps "$@") || rc=$?
if [[ -s $results ]]; then
  echo "apps: results (compared with the native run; tolerances in docs/apps.md)"
  /usr/bin/python3 tests/apps/apps.py table "$results"
fi
exit $rc
