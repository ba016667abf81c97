#!/usr/bin/env bash
# The real-application checks are the apps tier now (docs/apps.md): this
# name runs its light part (mpi4py programs, LAMMPS melt, hpcc; installs
# their packages when missing). scripts/apps.sh runs everything.
#   scripts/real_apps.sh [ctest arguments...]
exec "$(dirname "$0")/apps.sh" --ci "$@"
