#!/usr/bin/env python3
"""How well papshim predicts arrivals, on the seeds' mini-benchmark.

Runs papbench (one late rank, the late rank moving on every N iterations)
with the preload and PAPSHIM_TIMELINE, then reads each rank's predicted and
actual arrival per call from the timeline and prints, per delay:
  - the median |predicted - actual| arrival over all ranks and calls that
    are at least WINDOW+1 calls after the late rank last moved, as a
    fraction of the injected delay ("abs"), and the same for the arrival
    pattern, i.e. arrivals relative to the earliest one ("pattern": a shift
    common to every rank changes no decision);
  - after each move, how many calls pass until the new late rank's
    prediction is within 10% of the delay again.

    scripts/prediction_accuracy.py [--np 8] [--count 1M] [--delays 5,20,50]
        [--every 10] [--iters 60] [--window 2] [--predictor sma] [--cluster]
        [--check-every 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, delay_ms, timeline):
    env_vars = ["LD_PRELOAD=%s/build/libpapshim.so" % ROOT, "PAPSHIM_TIMELINE=%s" % timeline,
                "PAPSHIM_REPORT=off", "PAPSHIM_SMA_WINDOW=%d" % args.window, "PAPSHIM_PREDICTOR=%s" % args.predictor]
    bench = ["%s/build/bench/papbench" % ROOT, "--op", "allreduce", "--count", args.count, "--mode", "one-late",
             "--delay-ms", str(delay_ms), "--late-every", str(args.every), "--iters", str(args.iters),
             "--warmup", "0", "--base-ms", str(args.base_ms), "--progress", "0",
             "--check-every", str(args.check_every)]
    if args.predictor == "edge":
        bench.append("--edge")
    if args.cluster:
        cmd = [ROOT + "/scripts/cluster.sh", "run", "-n", str(args.np)]
        for e in env_vars:
            cmd += ["-x", e]
        cmd += ["--"] + bench
    else:
        cmd = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", str(args.np)]
        for e in env_vars:
            cmd += ["-x", e]
        cmd += bench
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def analyse(timeline, args, delay_ms):
    with open(timeline) as f:
        events = json.load(f)["traceEvents"]
    # rank -> list of (call, actual, predicted) for the allreduce site (the
    # one with the most calls), in call order.
    calls = {}
    for e in events:
        if e.get("ph") != "X" or not e["name"].startswith("allreduce"):
            continue
        calls.setdefault(e["pid"], []).append((e["args"]["call"], e["ts"], e["args"].get("predicted_ts"),
                                               e["ts"] + e["dur"]))
    delay_us = delay_ms * 1000.0
    errors, pattern_errors, follow, jitter = [], [], [], []
    nranks = len(calls)
    for rows in calls.values():
        rows.sort()
    ncalls = min(len(rows) for rows in calls.values())
    for i in range(ncalls):
        # papbench: iteration i has late rank (i // every) % P
        if i % args.every < args.window + 1:
            continue
        preds = [calls[r][i][2] for r in calls]
        actual = [calls[r][i][1] for r in calls]
        # The noise floor: how much a rank's compute phase (previous exit to
        # this arrival) changed from the call before, with nothing injected
        # changing in between.
        if i >= 2:
            for r in calls:
                phase = calls[r][i][1] - calls[r][i - 1][3]
                before = calls[r][i - 1][1] - calls[r][i - 2][3]
                jitter.append(abs(phase - before))
        if any(p is None for p in preds):
            continue
        errors += [abs(p - a) for p, a in zip(preds, actual)]
        # The pattern: arrivals relative to the first one (what the
        # algorithms use), so a shift common to all ranks does not count.
        p0, a0 = min(preds), min(actual)
        pattern_errors += [abs((p - p0) - (a - a0)) for p, a in zip(preds, actual)]
    # Following a move: calls until the new late rank's error is below 10%.
    for start in range(args.every, args.iters, args.every):
        late = (start // args.every) % nranks
        rows = sorted(calls.get(late, []))
        n = None
        for k in range(start, min(start + args.every, len(rows))):
            _, actual, predicted, _ = rows[k]
            if predicted is not None and abs(predicted - actual) < 0.1 * delay_us:
                n = k - start
                break
        # and until the new late rank is the one predicted latest (what
        # decides which process the schedules wait for)
        m = None
        for k in range(start, min(start + args.every, ncalls)):
            preds = {r: calls[r][k][2] for r in calls}
            if all(p is not None for p in preds.values()) and max(preds, key=preds.get) == late:
                m = k - start
                break
        follow.append((n, m))
    return errors, pattern_errors, follow, jitter


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--count", default="1M")
    ap.add_argument("--delays", default="5,20,50")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--base-ms", type=float, default=5)
    ap.add_argument("--predictor", default="sma", choices=["sma", "edge"])
    ap.add_argument("--cluster", action="store_true")
    ap.add_argument("--check-every", type=int, default=1, help="papbench --check-every (default 1)")
    args = ap.parse_args()
    print("papbench allreduce one-late, %d ranks, %s floats, late rank moves every %d iterations, "
          "PAPSHIM_PREDICTOR=%s, window %d" % (args.np, args.count, args.every, args.predictor, args.window))
    print("%9s %14s %10s %18s %12s %16s %10s %24s" % ("delay_ms", "abs_err_us", "/delay", "pattern_err_us", "/delay",
                                                      "phase_jitter_us", "/delay", "follow: within 10% / latest"))
    for d in [float(x) for x in args.delays.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            tl = os.path.join(tmp, "timeline.json")
            run(args, d, tl)
            errors, pattern, follow, jitter = analyse(tl, args, d)
        med = statistics.median(errors) if errors else float("nan")
        pmed = statistics.median(pattern) if pattern else float("nan")
        jmed = statistics.median(jitter) if jitter else float("nan")
        print("%9.1f %14.1f %9.1f%% %18.1f %11.1f%% %16.1f %9.1f%% %24s" % (
            d, med, 100.0 * med / (d * 1000.0), pmed, 100.0 * pmed / (d * 1000.0), jmed, 100.0 * jmed / (d * 1000.0),
            " ".join("%s/%s" % tuple("-" if n is None else str(n) for n in f) for f in follow)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
