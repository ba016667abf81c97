#!/usr/bin/env python3
"""Runs a program natively and in one or more other ways (with the preload)
and checks that each rank's resident memory stays close to the native run's.

    check_memory.py --max-extra-kb KB -- native command... [::: command... ...]

Each command must exit with 0 and print, per rank,
    memory rank=R vmrss_kb=X vmhwm_kb=Y      (before MPI_Finalize)
    memory rank=R final_vmhwm_kb=Z           (after it)
(tests/mpi/long_run.c does).  For every later command and rank, VmRSS before
MPI_Finalize and the peak after it may exceed the native run's by at most KB
(with --kept-only, VmRSS alone: what stays after the calls).
"""
import argparse
import re
import subprocess
import sys


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("$ " + " ".join(cmd))
    print(out.stdout)
    if out.returncode != 0:
        print("check_memory: FAIL: exited with %d" % out.returncode)
        sys.exit(1)
    mem = {}
    for m in re.finditer(r"^memory rank=(\d+) ((?:\w+=-?\d+ ?)+)$", out.stdout, re.M):
        mem.setdefault(int(m.group(1)), {}).update(
            {k: int(v) for k, v in (kv.split("=") for kv in m.group(2).split())})
    if not mem or any({"vmrss_kb", "final_vmhwm_kb"} - set(v) for v in mem.values()):
        print("check_memory: FAIL: no complete memory lines in the output")
        sys.exit(1)
    return mem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-extra-kb", type=int, required=True)
    ap.add_argument("--kept-only", action="store_true",
                    help="compare only the memory kept after the calls (VmRSS), not the peak")
    ap.add_argument("commands", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    words = a.commands[1:] if a.commands and a.commands[0] == "--" else a.commands
    cmds, cur = [], []
    for w in words + [":::"]:
        if w == ":::":
            cmds.append(cur)
            cur = []
        else:
            cur.append(w)
    if len(cmds) < 2 or not all(cmds):
        ap.error("need a native command and at least one other, separated by :::")
    native = run(cmds[0])
    worst = 0
    failed = False
    for i, cmd in enumerate(cmds[1:], 1):
        mem = run(cmd)
        for r in sorted(native):
            for field in ("vmrss_kb",) if a.kept_only else ("vmrss_kb", "final_vmhwm_kb"):
                extra = mem.get(r, {}).get(field, 10 ** 9) - native[r][field]
                print("run %d rank %d %-15s native %7d kB  this run %7d kB  extra %+6d kB" %
                      (i, r, field, native[r][field], mem.get(r, {}).get(field, -1), extra))
                worst = max(worst, extra)
                failed |= extra > a.max_extra_kb
    if failed:
        print("check_memory: FAIL: %d kB above the native run (limit %d kB)" % (worst, a.max_extra_kb))
        sys.exit(1)
    print("check_memory: every rank within %d kB of the native run (at most %+d kB)" % (a.max_extra_kb, worst))


if __name__ == "__main__":
    main()
