#!/usr/bin/python3
"""The simulated-cluster table of docs/smpi.md: allreduce of 1 MiB per rank
on the 1 Gbit/s star (bench/smpi/platforms/star-1g.xml), P = 16, 64, 256 and
1024 simulated ranks, native (SMPI's imitation of Open MPI's rules) against
papshim's algorithms and auto, with nobody late, one rank late by 1.5
transfers of the whole vector and every rank late by a uniform draw up to
1.5 transfers.

    scripts/smpi_table.py [--model smpi|nominal] [--sizes 16,64,256,1024] [--resume] [--table-only]
    scripts/smpi_table.py --calibration [--model smpi|nominal]

Each (P, pattern) is one run of bench/smpi/smpi_coll through scripts/smpi.sh
with every algorithm in turn.  Up to 256 ranks every allreduce of the
catalog runs; at 1024 only native and auto, because every papshim allreduce
sends about 2P messages per rank (none has the log P messages of the
library's Rabenseifner) and one such run costs SMPI about 20 minutes of
host time there.  --model: SMPI's network factors (smpi, the default) or
nominal links (scripts/smpi.sh -m).  Rows go to
results/smpi/smpi_table_<model>.csv (--resume keeps the configurations
already there), the table to stdout as Markdown, the plot of every model
with results to docs/img/smpi.png.  Simulated time is deterministic: a rerun gives
the same numbers.  --calibration runs the 8-rank, 100 Mbit/s point that
docs/smpi.md compares with the emulated cluster.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMPI = os.path.join(ROOT, "scripts", "smpi.sh")
RESULTS = os.path.join(ROOT, "results", "smpi")
MODELS = ["smpi", "nominal"]
PLOT = os.path.join(ROOT, "docs", "img", "smpi.png")

COUNT = "256K"  # floats per rank: 1 MiB
PLATFORM = "star-1g"
PATTERNS = ["balanced", "one-late:1.5x", "rand-late:1.5x"]
ALL = ["native", "auto", "prr", "slt", "ring", "rabenseifner", "direct", "straggler"]
# Iterations: a star is symmetric and simulated time deterministic, so the
# balanced and one-late iterations repeat each other; rand-late draws anew.
ITERS = {16: 4, 64: 4, 256: 1, 1024: 1}
TIMEOUT_S = 3 * 3600  # one (P, pattern) run


def algorithms_at(p):
    return ALL if p <= 256 else ["native", "auto"]


def parse_line(line):
    """The key=value pairs of one smpi_coll result line."""
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def csv_path(model):
    return os.path.join(RESULTS, f"smpi_table_{model}.csv")


def run(p, pattern, algos, iters, model, platform=PLATFORM, count=COUNT):
    """Runs one configuration; the parsed result lines and the host seconds."""
    cmd = [SMPI, "run", "-q", "-p", platform, "-m", model, "-n", str(p), "--",
           "allreduce", ",".join(algos), count, pattern, str(iters)]
    print("+ " + " ".join(cmd[1:]), file=sys.stderr, flush=True)
    t0 = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    rows = [parse_line(l) for l in proc.stdout.splitlines() if l.startswith("smpi_coll ")]
    if proc.returncode != 0 or len(rows) != len(algos):
        sys.exit(f"smpi_table: {' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-2000:]}")
    return rows, time.time() - t0


FIELDS = ["platform", "model", "P", "pattern", "algo", "e_ms", "e_min_ms", "e_max_ms", "e_lo_ms", "delta_ms", "D_ms",
          "iters", "pick", "picks", "predicted_ms", "native_model_ms", "sends_max", "check", "wall_s"]


def load(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def absorbed(native, alg, e_lo):
    """The share of native's time above the lower bound that alg removes."""
    return (native - alg) / (native - e_lo) if native > e_lo else float("nan")


def table(rows, sizes):
    by = {(int(r["P"]), r["pattern"], r["algo"]): r for r in rows}
    algos = [a for a in ALL if a != "auto"]
    out = []
    head = "| P | pattern | e_lo | " + " | ".join(algos) + " | auto: pick, predicted -> measured |"
    out.append("Mean elapsed time e (ms) per call; absorbed share (native - alg) / (native - e_lo) in brackets.\n")
    out.append(head)
    out.append("|" + "---|" * (head.count("|") - 1))
    for p in sizes:
        for pat in PATTERNS:
            nat = by.get((p, pat, "native"))
            if not nat:
                continue
            n, lo = float(nat["e_ms"]), float(nat["e_lo_ms"])
            cells = []
            for a in algos:
                r = by.get((p, pat, a))
                if not r:
                    cells.append("not run")
                elif a == "native":
                    cells.append(f"{n:.1f}")
                else:
                    e = float(r["e_ms"])
                    cells.append(f"{e:.1f} ({absorbed(n, e, lo):+.2f})")
            au = by.get((p, pat, "auto"))
            if au:
                e = float(au["e_ms"])
                pick = au["picks"] if "/" in au["picks"] else au["pick"]
                pred = float(au["predicted_ms"])
                # 0: balanced arrivals, native without a model
                pred = f"{pred:.1f}" if pred > 0 else "balanced"
                cells.append(f"{pick}, {pred} -> {e:.1f} ({absorbed(n, e, lo):+.2f})")
            else:
                cells.append("not run")
            out.append(f"| {p} | {pat} | {lo:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


STYLE = {"native": dict(color="black", lw=2.5, marker="o"),
         "auto": dict(color="magenta", lw=1.5, ls="--", marker="s", mfc="none", ms=9),
         "prr": dict(color="tab:blue", marker="o"), "slt": dict(color="tab:orange", marker="o"),
         "ring": dict(color="tab:green", marker="o"), "rabenseifner": dict(color="tab:red", marker="o"),
         "direct": dict(color="tab:purple", marker="o"), "straggler": dict(color="tab:brown", marker="o")}


def plot(rows_by_model, sizes, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = [m for m in MODELS if rows_by_model.get(m)]
    fig, grid = plt.subplots(len(models), len(PATTERNS), figsize=(15, 4.6 * len(models)), squeeze=False)
    for model, axes in zip(models, grid):
        plot_model(rows_by_model[model], model, sizes, axes)
    fig.suptitle("Simulated (SimGrid SMPI 3.32): allreduce of 1 MiB per rank, 1 Gbit/s star, 25 us; "
                 "papshim's schedules and executor vs SMPI's Open MPI rules", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"smpi_table: plot {os.path.relpath(path, ROOT)}", file=sys.stderr)


def plot_model(rows, model, sizes, axes):
    by = {(int(r["P"]), r["pattern"], r["algo"]): float(r["e_ms"]) for r in rows}
    lo = {(int(r["P"]), r["pattern"]): float(r["e_lo_ms"]) for r in rows if r["algo"] == "native"}
    for ax, pat in zip(axes, PATTERNS):
        for a in ALL:
            pts = [(p, by[(p, pat, a)]) for p in sizes if (p, pat, a) in by]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], label=a, **STYLE[a])
        pts = [(p, lo[(p, pat)]) for p in sizes if (p, pat) in lo]
        ax.plot([x for x, _ in pts], [y for _, y in pts], color="gray", ls=":", lw=2, label="lower bound e_lo")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes])
        ax.set_title(f"{pat} ({'SMPI network factors' if model == 'smpi' else 'nominal links'})", fontsize=10)
        ax.set_xlabel("simulated ranks P")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean elapsed time per call (ms)")
    axes[-1].legend(fontsize=8)


def calibration(model):
    """8 ranks, 100 Mbit/s star, 1 MiB: the emulated cluster's network-bound point."""
    for pattern in ["balanced", "one-late:125"]:
        rows, _ = run(8, pattern, ["native", "prr", "auto"], 1, model, platform="star-100m")
        for r in rows:
            extra = ""
            if r["algo"] == "auto":
                pred = float(r["predicted_ms"])
                extra = f" (picked {r['pick']}, " + (f"predicted {pred:.1f} ms)" if pred > 0 else "arrivals balanced)")
            print(f"{pattern:14s} {r['algo']:7s} e = {float(r['e_ms']):6.1f} ms  e_lo = {float(r['e_lo_ms']):6.1f} ms"
                  f"  delta = {float(r['delta_ms']):.1f} ms{extra}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="16,64,256,1024", help="comma-separated P values")
    ap.add_argument("--resume", action="store_true", help="keep the configurations already in the CSV")
    ap.add_argument("--table-only", action="store_true", help="print the table and plot from the CSV, run nothing")
    ap.add_argument("--calibration", action="store_true", help="the 8-rank 100 Mbit/s calibration point only")
    ap.add_argument("--model", default="smpi", choices=MODELS, help="SMPI's network factors or nominal links")
    ap.add_argument("--csv", help="default: results/smpi/smpi_table_<model>.csv")
    ap.add_argument("--plot", default=PLOT)
    args = ap.parse_args()
    if args.calibration:
        calibration(args.model)
        return
    path = args.csv or csv_path(args.model)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sys.exit(f"smpi_table: --sizes takes integers separated by commas (got '{args.sizes}')")
    for p in sizes:
        if p not in ITERS:
            sys.exit(f"smpi_table: P must be one of {sorted(ITERS)} (got {p})")
    rows = load(path) if (args.resume or args.table_only) else []
    if not args.table_only:
        done = {(int(r["P"]), r["pattern"]) for r in rows}
        for p in sizes:
            for pat in PATTERNS:
                if (p, pat) in done:
                    continue
                got, secs = run(p, pat, algorithms_at(p), ITERS[p], args.model)
                for r in got:
                    r["platform"] = PLATFORM
                    r["model"] = args.model
                    r["pattern"] = pat
                rows += got
                save(path, rows)
                print(f"smpi_table: P={p} {pat}: {secs:.0f} s", file=sys.stderr, flush=True)
    print(table(rows, sizes))
    by_model = {m: load(csv_path(m)) for m in MODELS}
    by_model[args.model] = rows
    plot(by_model, sizes, args.plot)


if __name__ == "__main__":
    main()
