"""warp-vertex on the armadillo before and after its turn test (a second
linearisation on a step that turns a vertex rotation by more than
TW_WARP_TURN): per row of bench/warp_vertex_armadillo.sh, the largest
energy gain over the start (drop energies; a diverged run is drawn at its
last passed step's gain, in red), the volume change at the end and the mean
CG iterations per step.

Usage: python3 bench/plot_warp_vertex_turn.py BEFORE_CSV AFTER_CSV OUT_PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def rows(path):
    return {(r["integrator"], float(r["dt"]), r["friction"]): r for r in csv.DictReader(open(path))}


before, after = rows(sys.argv[1]), rows(sys.argv[2])
keys = sorted(before, key=lambda k: (k[0] != "implicit-euler", -k[1], k[2]))
label = lambda k: "%s 1/%d mu %s" % ("IE" if k[0] == "implicit-euler" else "BDF2", round(1 / k[1]), k[2])
fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
x = range(len(keys))
for ax, col, title, fn in (
    (axes[0], "max_gain", "max (E - E0) / drop energy", lambda v: v),
    (axes[1], "volume_pct", "volume change at the end, %", lambda v: v),
    (axes[2], "cg_mean", "CG iterations per step (mean)", lambda v: v),
):
    for off, runs, color in ((-0.2, before, "C0"), (0.2, after, "C1")):
        vals = [fn(float(runs[k][col])) for k in keys]
        bad = [runs[k]["status"] != "ok" for k in keys]
        ax.bar([i + off for i in x], vals, width=0.4,
               color=["red" if b else color for b in bad])
    ax.set_xticks(list(x))
    ax.set_xticklabels([label(k) for k in keys], rotation=60, ha="right", fontsize=8)
    ax.set_title(title)
    ax.axhline(0, color="k", lw=0.5)
axes[0].set_yscale("symlog", linthresh=0.01)
axes[1].set_yscale("symlog", linthresh=1)
from matplotlib.patches import Patch

axes[0].legend(handles=[Patch(color="C0", label="before"), Patch(color="C1", label="after"),
                        Patch(color="red", label="diverged")])
fig.suptitle("warp-vertex, armadillo_4k dropped 0.1 m: single linearisation (before) and the turn test (after)")
fig.tight_layout()
fig.savefig(sys.argv[3], dpi=110)
