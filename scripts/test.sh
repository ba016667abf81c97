#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs every test with ctest;
# then builds the same library against MPICH and runs the MPI tests labelled
# `portable` with it (tests/mpi/CMakeLists.txt says why only those).
#   scripts/test.sh [ctest arguments...]   e.g. scripts/test.sh -L unit
# With ctest arguments, or PAPSHIM_TEST_MPICH=0, the MPICH stage is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPAPSHIM_WERROR=ON
(cd build && ctest --output-on-failure -j 2 "$@")
if [[ $# -eq 0 && ${PAPSHIM_TEST_MPICH:-1} != 0 ]]; then
  echo "test.sh: the portable MPI tests against MPICH (build-mpich/)"
  cmake -S . -B build-mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPSHIM_WERROR=ON -DPAPSHIM_BUILD_BENCH=OFF \
    -DMPI_C_COMPILER="$(command -v mpicc.mpich)" -DMPI_CXX_COMPILER="$(command -v mpicxx.mpich)" \
    -DMPI_Fortran_COMPILER="$(command -v mpif90.mpich)" \
    -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" >/dev/null
  cmake --build build-mpich -j "$(nproc)"
  (cd build-mpich && ctest --output-on-failure -j 2 -L portable)
fi
