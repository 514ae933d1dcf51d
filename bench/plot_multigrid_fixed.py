#!/usr/bin/env python3
"""Relative residual after the fixed CG iterations, per scene, block-Jacobi vs multigrid.

usage: python3 bench/plot_multigrid_fixed.py FOLDER

Reads FOLDER/multigrid_fixed20.csv (bench/multigrid_fixed.sh) and writes
FOLDER/multigrid_fixed20.png (mean and max over the steps, log scale).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "multigrid_fixed20.csv")) as f:
        rows = list(csv.DictReader(f))
    scenes = []
    for r in rows:
        name = f"{os.path.basename(r['scene']).split('.')[0]}\n{int(r['tets']):,} tets"
        if name not in scenes:
            scenes.append(name)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for k, (pc, colour) in enumerate((("jacobi", "tab:blue"), ("mg", "tab:green"))):
        sel = [r for r in rows if r["precond"] == pc]
        xs = [i + (k - 0.5) * width for i in range(len(sel))]
        ax.bar(xs, [float(r["residual_mean"]) for r in sel], width, color=colour, label=f"{pc}: mean")
        ax.plot(xs, [float(r["residual_max"]) for r in sel], "k_", markersize=14)
    ax.axhline(1e-3, color="grey", lw=0.8, ls="--", label="target with mg: 1e-3")
    ax.set_yscale("log")
    ax.set_xticks(range(len(scenes)))
    ax.set_xticklabels(scenes)
    ax.set_ylabel(f"|r| / |b| after {rows[0]['cg_fixed']} CG iterations (bars: mean, ticks: max)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "multigrid_fixed20.png"), dpi=110)


if __name__ == "__main__":
    main()
