#!/usr/bin/env bash
# Helpers shared by the install tests (sourced, not run): failing with a
# message, and checking an installed ELF file's run paths.
#   source check_lib.sh; fail "why"; check_runpath FILE FORBIDDEN_DIR...

fail() { echo "FAIL: $*"; exit 1; }

# An installed library or program must not search the build or source tree
# (that would hide a broken install) nor the current directory (an empty
# RUNPATH element).
check_runpath() {
  local file=$1 paths entry dir
  shift
  [[ -f $file ]] || fail "$file is missing"
  paths=$(readelf -d "$file" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  echo "run path of ${file##*/}: ${paths:-(none)}"
  [[ -z $paths ]] && return 0
  IFS=: read -r -a entry <<<"$paths:"
  for dir in "${entry[@]}"; do
    [[ -n $dir ]] || fail "$file has an empty run path element (the current directory): '$paths'"
  done
  for dir in "$@"; do
    [[ $paths != *"$dir"* ]] || fail "$file has a run path into $dir: '$paths'"
  done
}
