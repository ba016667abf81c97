#!/usr/bin/env bash
# Installs the build into a scratch prefix, checks the layout and run paths,
# then configures, builds and runs tests/install/consumer against it
# (find_package(papshim), papshim::papshim_stub and papshim::papshim):
# papshim_edge must resolve to the installed stub, to the installed
# libpapshim.so when that is preloaded, and to it when linked directly.
#   install_check.sh BUILD_DIR SOURCE_DIR LIBDIR BINDIR INCLUDEDIR DOCDIR
set -euo pipefail
build=$1 src=$2 libdir=$3 bindir=$4 incdir=$5 docdir=$6
# shellcheck source=SCRIPTDIR/check_lib.sh
source "$src/tests/install/check_lib.sh"
scratch=$build/install-check
prefix=$scratch/prefix
rm -rf -- "$scratch"
mkdir -p -- "$scratch"

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" || { cat "$scratch/install.log"; fail "cmake --install failed"; }
for f in "$libdir/libpapshim.so" "$libdir/libpapshim_stub.so" "$incdir/papshim.h" "$bindir/papshim-info" \
         "$bindir/papshim" "$libdir/cmake/papshim/papshimConfig.cmake" \
         "$libdir/cmake/papshim/papshimConfigVersion.cmake" "$libdir/cmake/papshim/papshimTargets.cmake" \
         "$docdir/README.md" "$docdir/algorithms.md" "$docdir/slurm.md" "$docdir/papshim.sbatch"; do
  [[ -f $prefix/$f ]] || fail "not installed: $f"
done
[[ -x $prefix/$bindir/papshim ]] || fail "$bindir/papshim is not executable"
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files under $prefix"
for f in "$libdir/libpapshim.so" "$libdir/libpapshim_stub.so" "$bindir/papshim-info"; do
  check_runpath "$prefix/$f" "$build" "$src"
done

"$prefix/$bindir/papshim-info" >"$scratch/info.txt" || fail "installed papshim-info failed"
grep -q PAPSHIM_ALLREDUCE "$scratch/info.txt" || fail "installed papshim-info does not list PAPSHIM_ALLREDUCE"

# The installed launcher finds the installed library by itself.
dry=$("$prefix/$bindir/papshim" --dry-run -- mpirun -np 2 ./app)
echo "launcher: $dry"
[[ $dry == *"LD_PRELOAD=$prefix/$libdir/libpapshim.so"* ]] || fail "installed launcher did not pick $prefix/$libdir/libpapshim.so"

cmake -S "$src/tests/install/consumer" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$scratch/consumer.log" 2>&1 || { cat "$scratch/consumer.log"; fail "consumer did not configure"; }
grep -F "papshim_DIR:PATH=$prefix/$libdir/cmake/papshim" "$scratch/consumer/CMakeCache.txt" ||
  fail "the consumer found papshim elsewhere than $prefix: $(grep papshim_DIR "$scratch/consumer/CMakeCache.txt")"
cmake --build "$scratch/consumer" >>"$scratch/consumer.log" 2>&1 || { cat "$scratch/consumer.log"; fail "consumer did not build"; }

out=$("$scratch/consumer/consumer") || fail "consumer exited $?: $out"
echo "$out"
[[ $out == "consumer: papshim_edge called twice, defined in $prefix/$libdir/libpapshim_stub.so" ]] ||
  fail "expected papshim_edge from the installed stub"
out=$(LD_PRELOAD=$prefix/$libdir/libpapshim.so "$scratch/consumer/consumer") || fail "preloaded consumer exited $?: $out"
echo "$out"
[[ $out == "consumer: papshim_edge called twice, defined in $prefix/$libdir/libpapshim.so" ]] ||
  fail "expected papshim_edge from the preloaded libpapshim.so"
out=$("$scratch/consumer/consumer_direct") || fail "consumer_direct (linked with papshim::papshim) exited $?: $out"
echo "$out"
[[ $out == "consumer: papshim_edge called twice, defined in $prefix/$libdir/libpapshim.so" ]] ||
  fail "expected papshim_edge from the installed libpapshim.so that consumer_direct links"
echo "install: layout, run paths, papshim-info, launcher and the find_package consumer all good"
