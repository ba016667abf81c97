#!/usr/bin/env bash
# Builds the Debian package with cpack, checks its fields and that Depends
# names the package of every library libpapshim.so needs, extracts it with
# dpkg -x into a scratch root, runs the extracted papshim-info, and runs an
# MPI job with LD_PRELOAD on the extracted libpapshim.so (the report must
# be written and name the demo's call site).
#   deb_check.sh BUILD_DIR SOURCE_DIR RUN_MPI DEMO
set -euo pipefail
build=$1 src=$2 run_mpi=$3 demo=$4
# shellcheck source=SCRIPTDIR/check_lib.sh
source "$src/tests/install/check_lib.sh"
for tool in cpack dpkg dpkg-deb readelf ldconfig; do
  command -v "$tool" >/dev/null || { echo "skipped: '$tool' not found"; exit 77; }
done
scratch=$build/deb-check
root=$scratch/root
rm -rf -- "$scratch"
mkdir -p -- "$root"

cpack -G DEB -B "$scratch" --config "$build/CPackConfig.cmake" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$scratch"/papshim_*.deb)
[[ -f ${debs[0]} ]] || fail "cpack wrote no papshim_*.deb into $scratch"
deb=${debs[0]}
echo "package: ${deb##*/}"
dpkg-deb -f "$deb" Package Version Architecture Maintainer Depends Description | sed -n '1,6p'
[[ $(dpkg-deb -f "$deb" Package) == papshim ]] || fail "Package is not papshim"
[[ -n $(dpkg-deb -f "$deb" Maintainer) ]] || fail "no Maintainer"
[[ -n $(dpkg-deb -f "$deb" Description) ]] || fail "no Description"
depends=$(dpkg-deb -f "$deb" Depends)

dpkg -x "$deb" "$root"
lib=$(find "$root" -name libpapshim.so -type f)
[[ -n $lib ]] || fail "no libpapshim.so in the package"
for f in libpapshim_stub.so papshim.h papshim-info papshim papshimConfig.cmake README.md; do
  [[ -n $(find "$root" -name "$f") ]] || fail "$f is not in the package"
done
check_runpath "$lib" "$build" "$src"

# Every library libpapshim.so needs must come from a package in Depends.
owner_of() {  # soname -> Debian package owning the file ld.so would load
  local path
  path=$(ldconfig -p | awk -v n="$1" '$1 == n && /x86-64/ {print $NF; exit}')
  [[ -n $path ]] || return 1
  { dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || dpkg -S "$(readlink -f "$path")"; } |
    head -n1 | cut -d: -f1
}
for soname in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  [[ $soname == ld-linux* ]] && continue
  pkg=$(owner_of "$soname") || fail "cannot tell which package provides $soname"
  echo "needs $soname from $pkg"
  [[ ", $depends," == *", $pkg,"* || ", $depends," == *", $pkg "* ]] || fail "Depends ($depends) lacks $pkg (for $soname)"
done

info=$(find "$root" -name papshim-info -type f)
out=$("$info") || fail "extracted papshim-info exited $?"
grep -q "PAPSHIM_REPORT" <<<"$out" || fail "extracted papshim-info does not list PAPSHIM_REPORT"
echo "extracted papshim-info lists $(grep -c '^  PAPSHIM_' <<<"$out") parameters"

report=$scratch/report
PAPSHIM_TEST_TIMEOUT=90 "$run_mpi" 3 "LD_PRELOAD=$lib" "PAPSHIM_REPORT=$report" -- "$demo" 12 4096 2 |
  tee "$scratch/job.log"
grep -q "results exact" "$scratch/job.log" || fail "the demo did not report exact results"
[[ -f $report.txt && -f $report.json ]] || fail "no report at $report.txt/.json: the extracted library did not run"
grep -q "imbalanced_demo.c:" "$report.txt" || fail "the report does not name the demo's call sites"
echo "deb: package, dependencies, papshim-info and a preloaded 3-rank job with its report all good"
