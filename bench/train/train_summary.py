#!/usr/bin/python3
"""The table of scripts/train_bench.sh from the runs' JSON in DIR
(run-VARIANT-rROUND.json, written by train_sgd.py --json) and papshim's
reports (papshim-VARIANT-rROUND.json); writes DIR/runs.csv (a row per run)
and DIR/summary.csv (a row per variant).

    train_summary.py DIR "regime text"

Times are medians over rounds; "x native" is the median over rounds of the
variant's time divided by native's in the same round (below 1: faster).
The final loss and accuracy of the preloaded runs differ from native's:
papshim adds the ranks' float32 gradients in another order, and training
carries the last-bit differences forward and lets them grow.  How much
that alone does, measured with the --quick configuration (8 ranks, 2 epochs
of 60 steps): native with every averaged gradient element changed by a
random +-1.2e-7 of itself at every step ended with test loss 0.4901
instead of 0.4828 and test accuracy 81.1% instead of 81.6%.
"""
import csv
import glob
import json
import os
import re
import statistics
import sys


def load_runs(out):
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "run-*-r*.json"))):
        m = re.match(r"run-(.+)-r(\d+)\.json$", os.path.basename(path))
        with open(path) as f:
            run = json.load(f)
        run["variant"], run["round"] = m.group(1), int(m.group(2))
        run["algorithms"] = ran(os.path.join(out, "papshim-%s-r%s.json" % m.groups()), run)
        runs.append(run)
    return runs


def ran(report_path, run):
    """What papshim ran at the gradients' allreduce, summed over ranks (empty without a report)."""
    try:
        with open(report_path) as f:
            report = json.load(f)
    except OSError:
        return {}
    out = {}
    for site in report["callsites"]:
        if site["op"] == "allreduce" and site["calls"] and site["bytes"] == site["calls"] * run["allreduce_bytes"]:
            for alg, n in site["algorithms"].items():
                out[alg] = out.get(alg, 0) + n
    return out


def figures(run):
    steps, times = run["steps"], [e["time_s"] for e in run["epochs"]]
    return {"total_s": run["total_s"], "epoch_s": statistics.mean(times), "epoch_times": times,
            "allreduce_ms": 1e3 * run["allreduce_s"]["mean"] / steps,
            "compute_ms": 1e3 * run["compute_s"]["mean"] / steps,
            "slowest_compute_ms": 1e3 * run["compute_s"]["max"] / steps,
            "train_loss": run["final"]["train_loss"], "test_loss": run["final"]["test_loss"],
            "test_accuracy": run["final"]["test_accuracy"]}


def mix(counts):
    return ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1]))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: train_summary.py DIR REGIME")
    out, regime = sys.argv[1], sys.argv[2]
    runs = load_runs(out)
    if not runs:
        sys.exit("train_summary.py: no run-*-r*.json in %s" % out)
    order = [v for v in ("native", "auto", "prr") if any(r["variant"] == v for r in runs)]
    order += sorted({r["variant"] for r in runs} - set(order))
    by = {(r["variant"], r["round"]): figures(r) for r in runs}
    rounds = sorted({r["round"] for r in runs})

    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "variant", "epochs", "steps", "total_s", "epoch_mean_s", "epoch_times_s",
                    "allreduce_ms_per_step", "compute_ms_per_step", "slowest_compute_ms_per_step", "train_loss",
                    "test_loss", "test_accuracy", "param_hash", "papshim_algorithms"])
        for r in sorted(runs, key=lambda r: (r["round"], order.index(r["variant"]))):
            x = by[(r["variant"], r["round"])]
            w.writerow([r["round"] + 1, r["variant"], len(r["epochs"]), r["steps"], "%.3f" % x["total_s"],
                        "%.3f" % x["epoch_s"], ";".join("%.3f" % t for t in x["epoch_times"]),
                        "%.2f" % x["allreduce_ms"], "%.2f" % x["compute_ms"], "%.2f" % x["slowest_compute_ms"],
                        "%.6f" % x["train_loss"], "%.6f" % x["test_loss"], "%.4f" % x["test_accuracy"],
                        r["param_hash"][:16], mix(r["algorithms"]).replace(", ", ";")])

    def med(variant, key):
        return statistics.median(by[(variant, k)][key] for k in rounds if (variant, k) in by)

    def ratio(variant, key):
        rs = [by[(variant, k)][key] / by[("native", k)][key] for k in rounds
              if (variant, k) in by and ("native", k) in by]
        return statistics.median(rs) if rs else float("nan")

    first = runs[0]
    cfg = first["config"]
    slow = ",".join(map(str, cfg["slow_ranks"])) or "none"
    print()
    print("regime: " + regime)
    print("train_sgd.py: %d ranks, %d parameters (%d KiB per allreduce), %d epochs x %d steps, batch %d per rank, "
          "slow rank %s with x%g the samples, noise %g; %d round(s)"
          % (first["ranks"], first["parameters"], first["allreduce_bytes"] // 1024, cfg["epochs"], cfg["steps"],
             cfg["batch"], slow, cfg["imbalance"], cfg["noise"], len(rounds)))
    head = ("%-8s %9s %9s %10s %10s %9s %9s %9s %9s %10s %10s"
            % ("variant", "epoch s", "total s", "allreduce", "compute", "total", "epoch", "allreduce", "test acc",
               "test loss", "train loss"))
    print("%-8s %9s %9s %10s %10s %29s" % ("", "", "", "ms/step", "ms/step", "------ x native ------"))
    print(head)
    rows = []
    for v in order:
        row = {k: med(v, k) for k in ("epoch_s", "total_s", "allreduce_ms", "compute_ms", "test_accuracy",
                                      "test_loss", "train_loss")}
        row.update({"variant": v, "total_x": ratio(v, "total_s"), "epoch_x": ratio(v, "epoch_s"),
                    "allreduce_x": ratio(v, "allreduce_ms")})
        rows.append(row)
        print("%-8s %9.2f %9.2f %10.1f %10.1f %9.3f %9.3f %9.3f %8.2f%% %10.5f %10.5f"
              % (v, row["epoch_s"], row["total_s"], row["allreduce_ms"], row["compute_ms"], row["total_x"],
                 row["epoch_x"], row["allreduce_x"], 100 * row["test_accuracy"], row["test_loss"],
                 row["train_loss"]))
    print("time per epoch (s, median over rounds; epoch 1 includes papshim's first calls, which it learns from):")
    for v in order:
        per = [statistics.median(by[(v, k)]["epoch_times"][e] for k in rounds if (v, k) in by)
               for e in range(cfg["epochs"])]
        print("  %-8s %s" % (v, " ".join("%.2f" % t for t in per)))
    for v in order:
        counts = {}
        for r in runs:
            if r["variant"] == v:
                for alg, n in r["algorithms"].items():
                    counts[alg] = counts.get(alg, 0) + n
        if counts:
            print("papshim ran at the gradients' allreduce under %s: %s (calls summed over ranks and rounds)"
                  % (v, mix(counts)))
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        keys = ["variant", "epoch_s", "total_s", "allreduce_ms", "compute_ms", "total_x", "epoch_x", "allreduce_x",
                "test_accuracy", "test_loss", "train_loss"]
        w = csv.DictWriter(f, fieldnames=["regime", "rounds"] + keys)
        w.writeheader()
        for row in rows:
            w.writerow(dict({k: ("%.6g" % row[k] if isinstance(row[k], float) else row[k]) for k in keys},
                            regime=regime, rounds=len(rounds)))
    print("x native: the median over rounds of time / native's time in the same round (below 1: faster). "
          "Loss and accuracy differ from native's by about what a 1e-7 change of every gradient makes "
          "(float32 sums in another order, grown by training; see bench/train/train_summary.py). CSV: %s/runs.csv, %s/summary.csv" % (out, out))


if __name__ == "__main__":
    main()
