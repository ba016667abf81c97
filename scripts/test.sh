#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs every test with ctest;
# then the light part of the apps tier (scripts/apps.sh --ci: mpi4py
# programs, a LAMMPS example and hpcc, natively and under the preload; it
# installs their packages); then the sanitizer build (build-asan/: AddressSanitizer and
# UndefinedBehaviorSanitizer) with the unit tests and the MPI tests labelled
# `sanitize`; then builds the same library against MPICH and runs the MPI
# tests labelled `portable` with it (tests/mpi/CMakeLists.txt says why only
# those).
#   scripts/test.sh [ctest arguments...]   e.g. scripts/test.sh -L unit
# With ctest arguments the apps, sanitizer and MPICH stages are skipped;
# PAPSHIM_TEST_APPS=0, PAPSHIM_TEST_SANITIZE=0 or PAPSHIM_TEST_MPICH=0 skips one,
# PAPSHIM_TEST_SANITIZE=only runs the sanitizer stage alone, and
# PAPSHIM_TEST_SANITIZE=thread the same with ThreadSanitizer (build-tsan/;
# not part of the full run, see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
sanitize=${PAPSHIM_TEST_SANITIZE:-1}

# sanitizer_stage DIR SANITIZERS: build DIR with -DPAPSHIM_SANITIZE=SANITIZERS,
# run the unit tests and the MPI tests labelled `sanitize` there, then an
# uninstrumented program (as every real application is) with the preload:
# the sanitizer's runtime must come first in LD_PRELOAD, then papshim.
# Any report fails the stage (leaks: in the unit tests; cmake/warnings.cmake
# says why not in MPI runs).
sanitizer_stage() {
  local dir=$1 kinds=$2
  echo "test.sh: the sanitizer build ($dir/, $kinds): unit tests and the MPI tests labelled sanitize"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPSHIM_WERROR=ON -DPAPSHIM_BUILD_BENCH=OFF \
    -DPAPSHIM_SANITIZE="$kinds" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
  (cd "$dir" && ctest --output-on-failure -j 2 -L 'unit|sanitize')
  echo "test.sh: an uninstrumented MPI program with the instrumented preload"
  local cache=$dir/CMakeCache.txt supp=$PWD/$dir/sanitizer
  "$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$cache")" -O2 bench/imbalanced_demo.c -o "$dir/sanitizer/demo_plain"
  MPIEXEC="$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$cache")" PAPSHIM_TEST_TIMEOUT=300 tests/support/run_mpi.sh 4 \
    LD_PRELOAD="$(cat "$dir/sanitizer/runtime"):$PWD/$dir/libpapshim.so" PAPSHIM_REPORT=off \
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS="halt_on_error=1:suppressions=$supp/tsan-mpi.supp" \
    -- "$dir/sanitizer/demo_plain" 12 65536 2
}
case $sanitize in
  only) sanitizer_stage build-asan address,undefined; exit 0 ;;
  thread) sanitizer_stage build-tsan thread; exit 0 ;;
esac

scripts/build.sh -DPAPSHIM_WERROR=ON
(cd build && ctest --output-on-failure -j 2 "$@")
if [[ $# -eq 0 && ${PAPSHIM_TEST_APPS:-1} != 0 ]]; then
  echo "test.sh: the light part of the apps tier (build-apps/; scripts/apps.sh runs all of it)"
  scripts/apps.sh --ci
fi
if [[ $# -eq 0 && $sanitize != 0 ]]; then
  sanitizer_stage build-asan address,undefined
fi
if [[ $# -eq 0 && ${PAPSHIM_TEST_MPICH:-1} != 0 ]]; then
  echo "test.sh: the portable MPI tests against MPICH (build-mpich/)"
  cmake -S . -B build-mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPSHIM_WERROR=ON -DPAPSHIM_BUILD_BENCH=OFF \
    -DMPI_C_COMPILER="$(command -v mpicc.mpich)" -DMPI_CXX_COMPILER="$(command -v mpicxx.mpich)" \
    -DMPI_Fortran_COMPILER="$(command -v mpif90.mpich)" \
    -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" >/dev/null
  cmake --build build-mpich -j "$(nproc)"
  (cd build-mpich && ctest --output-on-failure -j 2 -L portable)
fi
