#!/usr/bin/env python3
"""Runs an MPI program under the preload and checks papshim's JSON report
against what the program says it did.

    check_report.py --report PREFIX [--max-spread-us X] [--min-clock-offset-us Y]
                    [--min-spread-calls N] [--expect-fallback TEXT] [--late-rank R]
                    [--no-children TRACE] -- command...

The program prints lines such as
    EXPECT site=name file=prog.f90 line=87 collective=MPI_Allreduce calls=10
    EXPECT total collective=MPI_Allreduce calls=15
(per rank counts).  Every site must appear in the report at file:line with
exactly that many calls on every rank (and, with communicators=K, K
communicators; with function=NAME, the report's row names that function);
every total must equal, on every rank, the sum over the report's sites of
that collective.  --no-children: each rank ran under
`strace -ff -e trace=execve,fork,vfork,clone,clone3 -o TRACE` (a file
TRACE.<pid> per thread); no rank may have started another process (fork,
vfork, clone without CLONE_THREAD, or an execve beside the program's own);
exit 77 (skipped) when strace cannot trace here.  --min-spread-calls:
every site of a communicator of two or more ranks has at least N calls
whose arrival spread was measured (every rank's arrival found).
--expect-fallback: some site
ran native for a reason containing TEXT.  --late-rank: at the site of the largest
mean arrival spread (where the program makes rank R late), rank R has the
largest mean lateness and arrived last most often, the report's worst rank
is R with its host, and the text report names it first among the latest
ranks there.
Without --late-rank the program may print no EXPECT lines.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

OPS = {"MPI_Allreduce": "allreduce", "MPI_Reduce": "reduce", "MPI_Allgather": "allgather"}


def fail(msg):
    print("check_report: FAIL: " + msg)
    sys.exit(1)


def run_program(command):
    """Runs command (argparse.REMAINDER, after an optional "--") and prints its output."""
    cmd = command[1:] if command and command[0] == "--" else command
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout)
    return run


def strace_missing():
    """Why strace cannot trace a program here, or None."""
    if shutil.which("strace") is None:
        return "strace not found"
    probe = subprocess.run(["strace", "-f", "-o", os.devnull, "true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    return None if probe.returncode == 0 else "strace cannot trace here: " + probe.stderr.strip()


def check_no_children(trace, ranks):
    """Fails when the traces under the prefix `trace` show a process the ranks started."""
    files = sorted(glob.glob(trace + ".*"))
    execs = []
    for path in files:
        with open(path) as f:
            for line in f:
                spawn = re.search(r"\b(v?fork|clone3?)\(", line)
                if spawn and "CLONE_THREAD" not in line:
                    fail("%s: a rank started another process: %s" % (path, line.strip()))
                if re.search(r"\bexecve\(", line):
                    execs.append(line.strip())
    if len(execs) != ranks:
        fail("%d execve calls under %s for %d ranks: %s" % (len(execs), trace, ranks, execs))
    print("check_report: no rank started another process (%d traces)" % len(files))


def check_late_rank(prefix, rep, late):
    sites = [s for s in rep["callsites"] if s["comm_size"] > 1]
    if not sites:
        fail("no site of two or more ranks to check the lateness of")
    sites = [max(sites, key=lambda s: s["arrival_spread_us"])]
    for s in sites:
        where = "%s at %s" % (s["op"], s["file_line"] or s["location"])
        lat = s["lateness"]
        if len(lat["mean_us"]) != rep["ranks"] or len(lat["last"]) != rep["ranks"]:
            fail("%s: lateness vectors of %d and %d ranks" % (where, len(lat["mean_us"]), len(lat["last"])))
        mean = lat["mean_us"]
        if max(range(len(mean)), key=lambda r: mean[r]) != late:
            fail("%s: rank %d is not the latest on average: %s" % (where, late, mean))
        if max(range(len(lat["last"])), key=lambda r: lat["last"][r]) != late:
            fail("%s: rank %d did not arrive last most often: %s" % (where, late, lat["last"]))
        worst = lat["worst"]
        if not worst or worst[0]["rank"] != late or worst[0]["host"] != rep["hosts"][late]:
            fail("%s: the worst rank is not %d on %s: %s" % (where, late, rep["hosts"][late], worst))
    with open(prefix + ".txt") as f:
        text = f.read()
    if "latest ranks: rank %d on %s" % (late, rep["hosts"][late]) not in text:
        fail("the text report does not name rank %d first among the latest ranks" % late)
    print("check_report: rank %d is the latest at %s, %.0f us after the earliest on average"
          % (late, sites[0]["file_line"] or sites[0]["location"], sites[0]["lateness"]["mean_us"][late]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--max-spread-us", type=float)
    ap.add_argument("--min-clock-offset-us", type=float)
    ap.add_argument("--min-spread-calls", type=int)
    ap.add_argument("--expect-fallback", help="some site ran native for a reason containing this text")
    ap.add_argument("--late-rank", type=int, help="this rank must be the latest where the spread is largest")
    ap.add_argument("--no-children", metavar="TRACE", help="strace -ff output prefix of every rank")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.no_children is not None:
        missing = strace_missing()
        if missing:
            print("skipped: " + missing)
            sys.exit(77)
        for stale in glob.glob(a.no_children + ".*"):
            os.remove(stale)
    run = run_program(a.command)
    if run.returncode != 0:
        fail("the program exited with %d" % run.returncode)
    with open(a.report + ".json") as f:
        rep = json.load(f)
    ranks = rep["ranks"]
    sites = rep["callsites"]
    expects = [dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
               for line in run.stdout.splitlines() if line.startswith("EXPECT ")]
    if not expects and a.late_rank is None:
        fail("the program printed no EXPECT lines")
    checked = 0
    for e in expects:
        op = OPS[e["collective"]]
        want = int(e["calls"])
        if "site" in e:
            where = "%s:%s" % (e["file"], e["line"])
            found = [s for s in sites if s["op"] == op and s["file_line"].endswith(where)]
            if len(found) != 1:
                fail("%s %s: %d report rows at %s (rows: %s)" % (op, e["site"], len(found), where,
                     [(s["op"], s["file_line"], s["calls_per_rank"]) for s in sites]))
            if found[0]["calls_per_rank"] != [want] * ranks:
                fail("%s at %s: calls per rank %s, expected %d" % (op, where, found[0]["calls_per_rank"], want))
            if "function" in e and e["function"] not in found[0]["location"]:
                fail("%s at %s: the report names %s, not the function %s" % (op, where, found[0]["location"],
                                                                             e["function"]))
            if "communicators" in e and found[0]["communicators"] != int(e["communicators"]):
                fail("%s at %s: %d communicators, expected %s" % (op, where, found[0]["communicators"],
                                                                  e["communicators"]))
        else:
            for r in range(ranks):
                got = sum(s["calls_per_rank"][r] for s in sites if s["op"] == op)
                if got != want:
                    fail("rank %d made %d %s calls by the report, expected %d" % (r, got, op, want))
        checked += 1
    if a.max_spread_us is not None:
        for s in sites:
            if s["comm_size"] > 1 and s["arrival_spread_us"] > a.max_spread_us:
                fail("%s at %s: mean arrival spread %.0f us > %.0f us (clock offsets not removed?)"
                     % (s["op"], s["location"], s["arrival_spread_us"], a.max_spread_us))
    if a.min_spread_calls is not None:
        for s in sites:
            if s["comm_size"] > 1 and s["spread_calls"] < a.min_spread_calls:
                fail("%s at %s: arrival spread of %d calls, expected at least %d"
                     % (s["op"], s["file_line"] or s["location"], s["spread_calls"], a.min_spread_calls))
    if a.expect_fallback is not None:
        reasons = [r for s in sites for r in s.get("fallbacks", {})]
        if not any(a.expect_fallback in r for r in reasons):
            fail("no site ran native because of '%s' (reasons: %s)" % (a.expect_fallback, reasons))
    if a.late_rank is not None:
        check_late_rank(a.report, rep, a.late_rank)
    if a.no_children is not None:
        check_no_children(a.no_children, ranks)
    if a.min_clock_offset_us is not None:
        with open(a.report + ".txt") as f:
            m = re.search(r"largest offset to rank 0 ([0-9.]+) us", f.read())
        if not m or float(m.group(1)) < a.min_clock_offset_us:
            fail("clock offset not detected: %s" % (m.group(0) if m else "no clocks line"))
    print("check_report: %d expectations hold over %d ranks and %d report rows" % (checked, ranks, len(sites)))


if __name__ == "__main__":
    main()
