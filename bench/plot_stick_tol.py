#!/usr/bin/env python3
"""Plot bench/stick_tol.sh's CSV: per row (dt, seconds) and build, the
largest tangential / normal floor force on a loaded vertex at the end
(max_tan_ratio; the line is mu) and the contact solves per step.

Usage: bench/plot_stick_tol.py CSV OUT_PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

with open(sys.argv[1]) as f:
    rows = list(csv.DictReader(f))
builds = list(dict.fromkeys(r["build"] for r in rows))
cases = list(dict.fromkeys((r["dt"], r["seconds"]) for r in rows))
fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
for k, b in enumerate(builds):
    sel = {(r["dt"], r["seconds"]): r for r in rows if r["build"] == b}
    xs = [i + (k - 0.5) * 0.4 for i in range(len(cases))]
    ax[0].bar(xs, [float(sel[c]["max_tan_ratio"]) for c in cases], width=0.4, label=b)
    ax[1].bar(xs, [float(sel[c]["passes_mean"]) for c in cases], width=0.4, label=b)
ax[0].axhline(0.5, color="k", lw=0.8)
ax[0].set_ylim(0.45, max(0.52, 1.05 * max(float(r["max_tan_ratio"]) for r in rows)))
ax[0].set_ylabel("max |F_t| / F_n on a loaded floor vertex (mu = 0.5)")
ax[1].set_ylabel("contact solves per step")
for a in ax:
    a.set_xticks(range(len(cases)))
    a.set_xticklabels(["dt %s, %s s" % c for c in cases], fontsize=8)
    a.legend(fontsize=8)
fig.suptitle("armadillo, green, implicit Euler, friction 0.5, at rest (bench/stick_tol.sh)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
