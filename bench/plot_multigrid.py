#!/usr/bin/env python3
"""Block-Jacobi vs multigrid PCG per scene: time per step and CG iterations.

usage: python3 bench/plot_multigrid.py FOLDER

Reads FOLDER/multigrid.csv (bench/multigrid.sh), writes FOLDER/multigrid.png
(one thread: process CPU ms per step; all threads: wall ms per step; CG
iterations per step) and prints a Markdown table of the ratios.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def scene_name(r):
    s = r["scene"]
    return "bunny" if "bunny" in s else "bar"


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "multigrid.csv")) as f:
        rows = list(csv.DictReader(f))
    scenes = []
    for r in rows:
        key = (r["scene"], int(r["tets"]))
        if key not in scenes:
            scenes.append(key)
    scenes.sort(key=lambda k: k[1])
    series = [("after", "jacobi", "tab:blue", "block-Jacobi"), ("before", "mg", "tab:orange", "mg before"),
              ("after", "mg", "tab:green", "mg")]
    series = [s for s in series if any(r["build"] == s[0] and r["precond"] == s[1] for r in rows)]

    def pick(scene, build, pc, threads):
        for r in rows:
            if (r["scene"], int(r["tets"])) == scene and r["build"] == build and r["precond"] == pc \
                    and r["threads"] == threads:
                return r
        return None

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    width = 0.8 / len(series)
    labels = [f"{scene_name({'scene': s})}\n{t:,} tets" for s, t in scenes]
    panels = (("1", "cpu_ms_step", "one thread: CPU ms per step"),
              ("0", "ms_step", "all threads: wall ms per step"),
              ("1", "cg_mean", "CG iterations per step (one thread)"))
    for ax, (threads, col, title) in zip(axes, panels):
        for k, (build, pc, colour, name) in enumerate(series):
            xs, ys = [], []
            for i, sc in enumerate(scenes):
                r = pick(sc, build, pc, threads)
                if r:
                    xs.append(i + (k - (len(series) - 1) / 2) * width)
                    ys.append(float(r[col]))
            ax.bar(xs, ys, width, color=colour, label=name)
        ax.set_yscale("log")
        ax.set_xticks(range(len(scenes)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(title, fontsize=9)
        if col != "cg_mean":
            for i, sc in enumerate(scenes):
                j, m = pick(sc, "after", "jacobi", threads), pick(sc, "after", "mg", threads)
                if j and m:
                    ax.text(i, float(j[col]) * 1.15, f"{float(j[col]) / float(m[col]):.1f}x", ha="center", fontsize=8)
    axes[2].axhline(25, color="grey", lw=0.8, ls="--", label="target, bars: 25")
    axes[0].legend(fontsize=8)
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "multigrid.png"), dpi=110)

    print("| scene | tets | jacobi it | mg it (max) | mg before it | jacobi / mg, 1 thread CPU ms | ratio | "
          "1 thread wall | all threads wall ms | ratio | mg update ms | mg before, 1 thread CPU ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for sc in scenes:
        j1, m1 = pick(sc, "after", "jacobi", "1"), pick(sc, "after", "mg", "1")
        j0, m0 = pick(sc, "after", "jacobi", "0"), pick(sc, "after", "mg", "0")
        b1 = pick(sc, "before", "mg", "1")
        if not (j1 and m1 and j0 and m0):
            continue
        f = lambda r, c: float(r[c])  # noqa: E731
        print(f"| {scene_name(j1)} | {sc[1]:,} | {f(j1, 'cg_mean'):.1f} | {f(m1, 'cg_mean'):.1f} ({m1['cg_max']}) | "
              f"{(b1['cg_mean'] if b1 else '-')} | {f(j1, 'cpu_ms_step'):.1f} / {f(m1, 'cpu_ms_step'):.1f} | "
              f"{f(j1, 'cpu_ms_step') / f(m1, 'cpu_ms_step'):.1f}x | "
              f"{f(j1, 'ms_step') / f(m1, 'ms_step'):.1f}x | {f(j0, 'ms_step'):.1f} / {f(m0, 'ms_step'):.1f} | "
              f"{f(j0, 'ms_step') / f(m0, 'ms_step'):.1f}x | {f(m1, 'ms_mg_update'):.1f} | "
              f"{(b1['cpu_ms_step'] if b1 else '-')} |")


if __name__ == "__main__":
    main()
