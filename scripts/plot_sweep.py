#!/usr/bin/python3
"""Draws the plots and the summary of a papbench sweep (scripts/sweep.py).

    scripts/plot_sweep.py RESULTS_DIR

Reads RESULTS_DIR/sweep.csv (one row per configuration, algorithm and round)
and RESULTS_DIR/meta.json, writes RESULTS_DIR/plots/*.png,
RESULTS_DIR/summary.csv and RESULTS_DIR/summary.txt.

Aggregation: the value of a configuration is the median over rounds of the
per-run median of the average elapsed time; the error bars span the smallest
and largest per-round median.  Speedup (native / algorithm) and the fraction
of absorbable time removed ((native - algorithm) / (native - e_lo)) are
computed within each round, from two runs made next to each other, and then
the median over rounds is taken.
"""
import csv
import json
import math
import os
import statistics
import sys
import textwrap
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

# One colour and marker per algorithm, the same in every figure.
STYLE = {
    "native": ("black", "o", "-"),
    "native2": ("black", ".", (0, (4, 3))),
    "none": ("dimgray", "x", ":"),
    "auto": ("gray", "s", "--"),
    "prr": ("tab:red", "^", "-"),
    "slt": ("tab:orange", "v", "-"),
    "ring": ("tab:blue", "D", "-"),
    "rabenseifner": ("tab:green", "P", "-"),
    "clairvoyant": ("tab:red", "^", "-"),
    "clairvoyant_linear": ("tab:purple", "v", "--"),
    "binomial": ("tab:blue", "D", "-"),
    "sparbit": ("tab:red", "^", "-"),
    "bruck": ("tab:green", "P", "-"),
    "recursive_doubling": ("tab:purple", "v", "-"),
}
OP_ORDER = ["allreduce", "reduce", "allgather"]
LOWER_BOUND_OPS = ("allreduce", "allgather")  # reduce: compare with native directly


def style(label):
    return STYLE.get(label, (None, "o", "-"))


def label_order(labels):
    preferred = ["native", "native2", "none", "auto"]
    rest = sorted(l for l in labels if l not in preferred)
    return [l for l in preferred if l in labels] + rest


def load(results):
    with open(os.path.join(results, "meta.json")) as f:
        meta = json.load(f)
    rows = []
    with open(os.path.join(results, "sweep.csv")) as f:
        for r in csv.DictReader(f):
            rows.append({
                "label": r["label"],
                "rep": int(r["rep"]),
                "op": r["op"],
                "count": int(r["count"]),
                "bytes": int(r["bytes"]),
                "nprocs": int(r["nprocs"]),
                "mode": r["mode"],
                "delay_ms": float(r["delay_ms"]),
                "median_us": float(r["median_us"]),
                "e_lo_us": float(r["e_lo_us"]),
                "delta_us": float(r["delta_us"]),
                "errors": int(r["errors"]),
            })
    return meta, rows


class Table:
    """Rows indexed by (op, count, nprocs, mode, delay) -> label -> rep -> row."""

    def __init__(self, rows):
        self.cells = defaultdict(lambda: defaultdict(dict))
        for r in rows:
            key = (r["op"], r["count"], r["nprocs"], r["mode"], r["delay_ms"])
            self.cells[key][r["label"]][r["rep"]] = r

    def labels(self, op):
        found = set()
        for key, by_label in self.cells.items():
            if key[0] == op:
                found.update(by_label)
        return label_order(found)

    def keys(self, op, **fixed):
        out = []
        names = ("op", "count", "nprocs", "mode", "delay_ms")
        for key in self.cells:
            k = dict(zip(names, key))
            if k["op"] == op and all(k[n] == v for n, v in fixed.items()):
                out.append(key)
        return out

    def elapsed(self, key, label):
        """(median, low, high) over rounds of the per-run median, in us."""
        runs = [r["median_us"] for r in self.cells[key].get(label, {}).values()]
        if not runs:
            return None
        return statistics.median(runs), min(runs), max(runs)

    def e_lo(self, key):
        values = [r["e_lo_us"] for by_rep in self.cells[key].values() for r in by_rep.values()]
        return statistics.median(values) if values else None

    def paired(self, key, label, fn):
        """Median over rounds of fn(native_row, label_row), rounds with both."""
        native = self.cells[key].get("native", {})
        mine = self.cells[key].get(label, {})
        values = []
        for rep, row in mine.items():
            if rep in native:
                v = fn(native[rep], row)
                if v is not None and math.isfinite(v):
                    values.append(v)
        return statistics.median(values) if values else None

    def speedup(self, key, label):
        return self.paired(key, label, lambda n, a: n["median_us"] / a["median_us"] if a["median_us"] > 0 else None)

    def absorbed(self, key, label):
        def frac(n, a):
            room = n["median_us"] - n["e_lo_us"]
            return (n["median_us"] - a["median_us"]) / room if room > 0 else None

        return self.paired(key, label, frac)

    def errors(self, key, label):
        return sum(r["errors"] for r in self.cells[key].get(label, {}).values())


def xval(key, xname):
    """The x coordinate of a configuration key for the given axis."""
    return {"count": key[1], "nprocs": key[2], "delay_ms": key[4]}[xname]


def count_for(op, floats, np0):
    return max(1, floats // np0) if op == "allgather" else floats


# --- figures -------------------------------------------------------------------

def panel_grid(ops, title):
    fig, axes = plt.subplots(1, len(ops), figsize=(5.2 * len(ops), 4.6), squeeze=False)
    # Each line wrapped to the figure's width (about 11 characters per inch
    # at 11 pt).
    width = int(11 * 5.2 * len(ops))
    lines = [part for line in title.split("\n") for part in (textwrap.wrap(line, width=width) or [""])]
    fig.suptitle("\n".join(lines), fontsize=11)
    fig.papshim_title_lines = len(lines)
    return fig, axes[0]


def finish(fig, path):
    lines = getattr(fig, "papshim_title_lines", 1)
    fig.tight_layout(rect=(0, 0, 1, 1.0 - 0.05 - 0.035 * lines))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def series(table, op, fixed, xname, label, metric):
    xs, ys, lo, hi = [], [], [], []
    for key in sorted(table.keys(op, **fixed), key=lambda k: xval(k, xname)):
        x = xval(key, xname)
        if metric == "elapsed":
            v = table.elapsed(key, label)
            if v is None:
                continue
            xs.append(x)
            ys.append(v[0] / 1000)
            lo.append((v[0] - v[1]) / 1000)
            hi.append((v[2] - v[0]) / 1000)
        else:
            v = table.speedup(key, label) if metric == "speedup" else table.absorbed(key, label)
            if v is None:
                continue
            xs.append(x)
            ys.append(v)
    return xs, ys, (lo, hi) if metric == "elapsed" else None


def delay_ticks(meta):
    """Tick labels of delay axes: milliseconds and, when the sweep chose the
    delays as multiples of delta, the multiple."""
    names = {}
    try:
        delta_ms = float(meta.get("delta_us") or 0) / 1000
    except ValueError:
        delta_ms = 0
    for m in meta.get("delay_mult", []) if delta_ms > 0 else []:
        ms = float(m) * delta_ms
        names[round(ms, 3)] = "{:g}\n{:g}δ".format(float("{:.3g}".format(ms)), float(m))
    return lambda x: names.get(round(x, 3), "{:g}".format(x))


def draw(table, meta, ops, fixed_of_op, xname, metric, title, path, xlabel, xscale=None, xfmt=None):
    # an experiment with a single x value has nothing to plot
    ops = [op for op in ops if len({xval(k, xname) for k in table.keys(op, **fixed_of_op(op))}) >= 2]
    if not ops:
        return
    fig, axes = panel_grid(ops, title)
    for ax, op in zip(axes, ops):
        fixed = fixed_of_op(op)
        drawn = False
        xs_all = set()
        for label in table.labels(op):
            if metric != "elapsed" and label == "native":
                continue
            xs, ys, err = series(table, op, fixed, xname, label, metric)
            if not xs:
                continue
            if xfmt:
                xs = [xfmt(op, x) for x in xs]
            xs_all.update(xs)
            colour, marker, line = style(label)
            ax.errorbar(xs, ys, yerr=err, color=colour, marker=marker, linestyle=line, capsize=3, label=label,
                        markersize=5)
            drawn = True
        if metric == "elapsed" and op in LOWER_BOUND_OPS:
            keys = sorted(table.keys(op, **fixed), key=lambda k: xval(k, xname))
            xs = [xval(k, xname) for k in keys]
            if xfmt:
                xs = [xfmt(op, x) for x in xs]
            ys = [table.e_lo(k) / 1000 for k in keys]
            ax.plot(xs, ys, color="black", linestyle=(0, (1, 2)), linewidth=1.2, label="lower bound e_lo")
        if metric == "speedup":
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_ylabel("speedup over native (native / algorithm)")
        elif metric == "absorbed":
            ax.axhline(0.0, color="black", linewidth=0.8)
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
            ax.set_ylabel("absorbable time removed\n(native - alg) / (native - e_lo)")
        else:
            ax.set_ylabel("average elapsed time (ms)")
        ax.set_xlabel(xlabel)
        xs_all = sorted(xs_all)
        if xscale == "symlog":
            nonzero = [x for x in xs_all if x > 0]
            ax.set_xscale("symlog", linthresh=nonzero[0] if nonzero else 1.0, linscale=0.6)
            ax.set_xticks(xs_all)
            ax.set_xticklabels([delay_ticks(meta)(x) for x in xs_all], fontsize=8)
            ax.minorticks_off()
        elif xscale == "log":
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs_all)
            ax.set_xticklabels([human_bytes(x) for x in xs_all], fontsize=8)
            ax.minorticks_off()
        elif xname == "nprocs":
            ax.set_xticks(xs_all)
        ax.set_title(op)
        ax.grid(True, which="major", alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
    finish(fig, path)


def vector_bytes(np0):
    """x value of the size plots: bytes of the vector (allgather: the gathered result)."""
    return lambda op, count: count * 4 * (np0 if op == "allgather" else 1)


def human_bytes(n):
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return "{:g} {}".format(float("{:.3g}".format(n / scale)), unit)
    return "{:g} B".format(n)


# --- summary ---------------------------------------------------------------------

def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def what_ran(results):
    """(op, label) -> {algorithm: calls} from the papshim reports the sweep
    kept (--reports); report names are r<round>-<op>-<experiment>-np<N>-<label>."""
    folder = os.path.join(results, "reports")
    out = defaultdict(lambda: defaultdict(int))
    if not os.path.isdir(folder):
        return out
    for name in os.listdir(folder):
        if not name.endswith(".txt"):
            continue
        parts = name[:-4].split("-", 4)
        if len(parts) < 5:
            continue
        op, label = parts[1], parts[4]
        with open(os.path.join(folder, name)) as f:
            for line in f:
                line = line.strip()
                if line.startswith("algorithms:"):
                    for item in line.split(":", 1)[1].split():
                        algo, _, calls = item.rstrip(",").rpartition(":")
                        if calls.isdigit():
                            out[(op, label)][algo] += int(calls)
    return out


def summarise(table, meta, ops, results):
    np0, size0 = meta["np0"], meta["size0"]
    fixed_ms = float(meta["fixed_ms"])
    lines, out_rows = [], []
    lines.append("papbench sweep summary ({}, {}, {} processes, {} floats, {} rounds)".format(
        meta.get("preset"), meta.get("regime"), np0, size0, meta.get("reps")))
    lines.append("started {}, {} s, load average {} -> {}, library {} (git {}, {} changed files)".format(
        meta.get("started"), meta.get("duration_s"), meta.get("load_start"), meta.get("load_end"),
        meta.get("lib_md5"), meta.get("git"), meta.get("dirty_files")))
    if meta.get("delta_us"):
        lines.append("calibration: delta = {} us (one transfer of the vector), balanced native allreduce = {} us".format(
            meta["delta_us"], meta.get("balanced_us")))
    lines.append("values: median over rounds of the per-run median average elapsed time, ms;"
                 " x = speedup over native; abs = share of (native - e_lo) removed")

    def block(title, op, keys, xname):
        labels = table.labels(op)
        if not keys or (xname != "delay_ms" and len(keys) < 2):
            return  # nothing varies: the point is already in the delay table
        keys = sorted(keys, key=lambda k: xval(k, xname))
        head = {"delay_ms": "delay ms", "count": "floats", "nprocs": "procs"}[xname]
        lines.append("")
        lines.append(title)
        lines.append("  {:>10} {:>9}  ".format(head, "e_lo ms") + "  ".join("{:>22}".format(l) for l in labels))
        for k in keys:
            x = xval(k, xname)
            cells = []
            for l in labels:
                e = table.elapsed(k, l)
                s = table.speedup(k, l) if l != "native" else None
                a = table.absorbed(k, l) if l != "native" and op in LOWER_BOUND_OPS else None
                err = table.errors(k, l)
                text = fmt(e[0] / 1000 if e else None, ".2f")
                if s is not None:
                    text += " x" + fmt(s, ".2f")
                if a is not None:
                    text += " abs" + fmt(a, "+.2f")
                if err:
                    text += " ERR" + str(err)
                cells.append("{:>22}".format(text))
                out_rows.append({
                    "op": op, "experiment": title.split(":")[0], "label": l, "count": k[1], "nprocs": k[2],
                    "mode": k[3], "delay_ms": k[4],
                    "median_us": fmt(e[0] if e else None, ".1f"), "round_min_us": fmt(e[1] if e else None, ".1f"),
                    "round_max_us": fmt(e[2] if e else None, ".1f"), "e_lo_us": fmt(table.e_lo(k), ".1f"),
                    "speedup": fmt(s, ".4f"), "absorbed": fmt(a, ".4f"),
                    "rounds": len(table.cells[k].get(l, {})), "errors": err,
                })
            e_lo = table.e_lo(k)
            lines.append("  {:>10} {:>9}  ".format(x, fmt(e_lo / 1000 if e_lo else None, ".2f")) + "  ".join(cells))
        if "native2" in labels:
            ratios = [table.speedup(k, "native2") for k in keys]
            ratios = [r for r in ratios if r is not None]
            if ratios:
                lines.append("  noise floor: native/native2 (the same code run twice per round) from {:.2f} to {:.2f}"
                             .format(min(ratios), max(ratios)))

    for op in ops:
        c0 = count_for(op, size0, np0)
        for mode in meta.get("modes", ["one-late"]):
            block("delay: {} {}, {} floats, {} processes".format(op, mode, c0, np0), op,
                  table.keys(op, count=c0, nprocs=np0, mode=mode), "delay_ms")
        block("size: {} one-late, delay {} ms, {} processes".format(op, fixed_ms, np0), op,
              table.keys(op, nprocs=np0, mode="one-late", delay_ms=fixed_ms), "count")
        block("nprocs: {} one-late, delay {} ms, {} floats".format(op, fixed_ms, c0), op,
              table.keys(op, count=c0, mode="one-late", delay_ms=fixed_ms), "nprocs")

    ran = what_ran(results)
    if ran:
        lines.append("")
        lines.append("what papshim ran (reports/, calls per algorithm summed over rounds and ranks):")
        for (op, label), counts in sorted(ran.items()):
            lines.append("  {:<10} {:<20} {}".format(op, label, ", ".join(
                "{}:{}".format(k, v) for k, v in sorted(counts.items()))))

    with open(os.path.join(results, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if out_rows:
        with open(os.path.join(results, "summary.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
            w.writeheader()
            w.writerows(out_rows)
    print("\n".join(lines))


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    results = sys.argv[1]
    meta, rows = load(results)
    if not rows:
        print("plot_sweep.py: no rows in", os.path.join(results, "sweep.csv"), file=sys.stderr)
        return 1
    table = Table(rows)
    present = {r["op"] for r in rows}
    ops = [op for op in OP_ORDER if op in present]
    np0, size0 = meta["np0"], meta["size0"]
    fixed_ms = float(meta["fixed_ms"])
    regime = "{}, {}".format(meta.get("regime", ""), meta.get("mpi", ""))
    plots = os.path.join(results, "plots")
    os.makedirs(plots, exist_ok=True)

    for mode in meta.get("modes", ["one-late"]):
        def at_delay(op, mode=mode):
            return {"count": count_for(op, size0, np0), "nprocs": np0, "mode": mode}

        what = "{} floats per vector, {} processes, {}".format(size0, np0, mode)
        for metric, name, title in (
                ("elapsed", "delay", "Average elapsed time vs maximum delay"),
                ("speedup", "speedup_delay", "Speedup over native vs maximum delay"),
                ("absorbed", "absorbed_delay", "Share of the absorbable time removed vs maximum delay")):
            ops_here = [op for op in ops if metric != "absorbed" or op in LOWER_BOUND_OPS]
            draw(table, meta, ops_here, at_delay, "delay_ms", metric, "{}\n{}; {}".format(title, what, regime),
                 os.path.join(plots, "{}_{}.png".format(name, mode)), "maximum delay (ms)", xscale="symlog")

    def at_size(op):
        return {"nprocs": np0, "mode": "one-late", "delay_ms": fixed_ms}

    def at_nprocs(op):
        return {"count": count_for(op, size0, np0), "mode": "one-late", "delay_ms": fixed_ms}

    for metric, prefix in (("elapsed", ""), ("speedup", "speedup_")):
        draw(table, meta, ops, at_size, "count", metric,
             "{} vs vector size\none-late, delay {} ms, {} processes; {}".format(
                 "Average elapsed time" if metric == "elapsed" else "Speedup over native", fixed_ms, np0, regime),
             os.path.join(plots, prefix + "size.png"), "vector size (allgather: the gathered result)",
             xscale="log", xfmt=vector_bytes(np0))
        draw(table, meta, ops, at_nprocs, "nprocs", metric,
             "{} vs process count\none-late, delay {} ms, {} floats; {}".format(
                 "Average elapsed time" if metric == "elapsed" else "Speedup over native", fixed_ms, size0, regime),
             os.path.join(plots, prefix + "nprocs.png"), "processes")

    summarise(table, meta, ops, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
