#!/usr/bin/env bash
# Installs what papshim needs to build, test and benchmark, with apt, only
# when something is missing (quick when everything is present).
set -euo pipefail
packages=(g++ gfortran cmake make pkg-config binutils iproute2 strace python3 python3-matplotlib
          libopenmpi-dev openmpi-bin libmpich-dev mpich libunwind-dev libdw-dev libspdlog-dev libboost-dev
          libgtest-dev libbenchmark-dev slurmctld slurmd slurm-client libsimgrid-dev
          python3-torch python3-mpi4py python3-numpy dataset-fashion-mnist)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
