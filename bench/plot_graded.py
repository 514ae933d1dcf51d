#!/usr/bin/env python3
"""Largest speed vs step, graded vs uniform lattice, per fine size.

usage: python3 bench/plot_graded.py FOLDER

Reads FOLDER/graded_trace.csv (and graded_before_trace.csv when present,
drawn dashed) from bench/graded.sh and writes FOLDER/graded.png.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    runs = {}
    if not os.path.exists(path):
        return runs
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (float(r["fine_size_m"]), int(r["levels"]))
            runs.setdefault(key, ([], []))
            runs[key][0].append(int(r["step"]))
            runs[key][1].append(max(float(r["max_speed"]), 1e-9))
    return runs


def main():
    folder = sys.argv[1]
    now = read(os.path.join(folder, "graded_trace.csv"))
    before = read(os.path.join(folder, "graded_before_trace.csv"))
    sizes = sorted({k[0] for k in now}, reverse=True)
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.2), squeeze=False)
    for ax, h in zip(axes[0], sizes):
        for (runs, style, tag) in ((now, "-", ""), (before, "--", " (before: kinematic hanging)")):
            for levels, colour in ((1, "tab:blue"), (4, "tab:orange")):
                if (h, levels) not in runs or (tag and levels == 1):
                    continue
                s, v = runs[(h, levels)]
                name = "uniform" if levels == 1 else "graded"
                ax.semilogy(s, v, style, color=colour, label=f"{name}{tag}: {s[-1]} steps")
        ax.axhline(1e-5, color="grey", lw=0.8)
        ax.set_title(f"bunny lattice, fine size {h * 1e3:g} mm")
        ax.set_xlabel("step (dt 0.01 s)")
        ax.set_ylabel("largest speed, m/s")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "graded.png"), dpi=110)


if __name__ == "__main__":
    main()
