"""green's tangent before and after (bench/green_tangent.sh run on two
builds): per row of the matrix, the energy gain over the start (max_gain, in
drop energies; a run that diverged is drawn at the top, red) and the CG
iterations a step, before against after.

Usage: python3 bench/plot_green_tangent.py BEFORE_CSV AFTER_CSV OUT_PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

key = lambda r: (r["scene"], r["integrator"], float(r["dt"]), r["friction"])
before = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
after = {key(r): r for r in csv.DictReader(open(sys.argv[2]))}
rows = sorted(set(before) & set(after))
labels = ["%s %s 1/%d mu %s" % (s, "IE" if i == "implicit-euler" else "BDF2", round(1 / dt), mu)
          for s, i, dt, mu in rows]
fig, axes = plt.subplots(1, 2, figsize=(15, 7.5), sharey=True)
y = range(len(rows))
top = 30.0
for ax, col, title in ((axes[0], "max_gain", "max (E - E0) / E_drop (diverged: drawn at %g, red)" % top),
                       (axes[1], "cg_mean", "CG iterations a step (diverged: over the steps it ran)")):
    for dy, (name, runs, c) in ((-0.18, ("before", before, "C0")), (0.18, ("after", after, "C2"))):
        vals, cols = [], []
        for k in rows:
            r = runs[k]
            v = float(r[col])
            if col == "max_gain" and r["status"] != "ok":
                v = top
            vals.append(v)
            cols.append("red" if r["status"] != "ok" else c)
        ax.barh([i + dy for i in y], vals, height=0.34, color=cols)
    ax.set_title(title, fontsize=10)
    if col == "max_gain":
        ax.set_xscale("symlog", linthresh=0.01)
        ax.axvline(0.01, color="gray", ls="--", lw=0.8)
    ax.legend(handles=[Patch(color="C0", label="before"), Patch(color="C2", label="after"),
                       Patch(color="red", label="before, diverged")], loc="lower right")
axes[0].set_yticks(list(y))
axes[0].set_yticklabels(labels, fontsize=8)
axes[0].invert_yaxis()
fig.suptitle("green (StVK) dropped 0.1 m on a floor: the StVK tangent (before) and its geometric part at S+ (after)")
fig.tight_layout()
fig.savefig(sys.argv[3], dpi=90)
