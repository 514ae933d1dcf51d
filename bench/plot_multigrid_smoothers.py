#!/usr/bin/env python3
"""CG iterations and one-thread solve time per multigrid variant and scene,
from bench/multigrid_smoothers.sh's CSV (the time relative to the first
variant's on the same scene).

usage: python3 bench/plot_multigrid_smoothers.py CSV PNG
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["variant"] != "jacobi"]
scenes = list(dict.fromkeys(r["scene"] for r in rows))
variants = list(dict.fromkeys(r["variant"] for r in rows))
fig, ax = plt.subplots(1, 2, figsize=(13, 4.8))
width = 0.8 / len(variants)
for k, v in enumerate(variants):
    its, rel = [], []
    for sc in scenes:
        r = next((r for r in rows if r["scene"] == sc and r["variant"] == v), None)
        base = next(r for r in rows if r["scene"] == sc and r["variant"] == variants[0])
        its.append(int(r["iterations"]) if r else 0)
        rel.append(float(r["ms_solve"]) / float(base["ms_solve"]) if r else 0)
    xs = [i + k * width for i in range(len(scenes))]
    ax[0].bar(xs, its, width, label=v)
    ax[1].bar(xs, rel, width, label=v)
labels = ["%s\n%s tets" % (sc.split("/")[-1], next(r["tets"] for r in rows if r["scene"] == sc)) for sc in scenes]
titles = ["PCG iterations to 1e-4 (from zero)", "solve CPU time, 1 thread, relative to %s" % variants[0]]
for a, t in zip(ax, titles):
    a.set_xticks([i + 0.4 - width / 2 for i in range(len(scenes))])
    a.set_xticklabels(labels, fontsize=8)
    a.set_title(t)
ax[1].axhline(1, color="k", lw=0.8)
ax[0].legend(fontsize=7, ncol=2)
fig.suptitle("Multigrid smoothers on one step's system (corot-element, dt 0.01, E 1e6)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
