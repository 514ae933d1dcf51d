#!/usr/bin/env python3
"""Iterations and one-thread time (setup + solve) per solver and scene, from
bench/boomeramg.sh's CSV.

usage: python3 bench/plot_boomeramg.py CSV PNG
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["threads"] == "1"]
scenes = list(dict.fromkeys(r["scene"] for r in rows))
solvers = list(dict.fromkeys(r["solver"] for r in rows))
fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
width = 0.8 / len(solvers)
for k, s in enumerate(solvers):
    its, ms = [], []
    for sc in scenes:
        r = next((r for r in rows if r["scene"] == sc and r["solver"] == s), None)
        its.append(int(r["iterations"]) if r else 0)
        ms.append(float(r["ms_total"]) if r else 0)
    xs = [i + k * width for i in range(len(scenes))]
    ax[0].bar(xs, its, width, label=s)
    ax[1].bar(xs, ms, width, label=s)
labels = ["%s\n%s tets" % (sc.split("/")[-1], next(r["tets"] for r in rows if r["scene"] == sc)) for sc in scenes]
for a, t in zip(ax, ["PCG iterations to 1e-4", "ms, setup + solve, 1 thread"]):
    a.set_xticks([i + 0.4 - width / 2 for i in range(len(scenes))])
    a.set_xticklabels(labels, fontsize=8)
    a.set_yscale("log")
    a.set_title(t)
ax[0].legend(fontsize=8)
fig.suptitle("One step's system (corot-element, dt 0.01, E 1e6): engine vs hypre BoomerAMG")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
