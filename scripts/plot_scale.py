#!/usr/bin/env python3
"""Plot scale_bench's JSON lines: decision and program time against P.

    build/bench/scale_bench --json scale.json
    scripts/plot_scale.py scale.json [docs/img/scale.png]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/img/scale.png"
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, key, title in ((axes[0], "decision_ms", "decision (select_algorithm)"),
                           (axes[1], "program_ms", "this rank's program of the pick")):
        for coll in ("allreduce", "reduce", "allgather"):
            pts = sorted((r["P"], r[key]) for r in rows if r["collective"] == coll and r[key] > 0)
            if pts:
                ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o", label=coll)
        if key == "decision_ms":
            for coll in ("allreduce", "reduce", "allgather"):
                pts = sorted((r["P"], r["simulated_decision_ms"]) for r in rows
                             if r["collective"] == coll and r.get("simulated_decision_ms"))
                if pts:
                    ax.plot([p for p, _ in pts], [v for _, v in pts], marker="x", linestyle="--",
                            label=coll + " (simulating every candidate)")
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("P (ranks)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("milliseconds")
    axes[0].legend(fontsize=7)
    fig.suptitle("auto mode at scale: 1 Mi floats, arrivals within 50 ms")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", out)


if __name__ == "__main__":
    main()
