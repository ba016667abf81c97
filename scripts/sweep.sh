#!/bin/sh
exec python3 "$(dirname -- "$0")/sweep.py" "$@"  # the sweep is scripts/sweep.py
