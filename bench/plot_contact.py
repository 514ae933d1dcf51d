"""The contact report as a figure: per run of the matrix, the largest energy
regained above its running minimum (max_rise, in drop energies; max_gain,
the gain over the start, is at most 0 in every run) against dt; for the rest
table (10 s on the floor), the rest strain against its references (the
static solve with pinned contacts, the body set down without a drop on the
same floor and on a frictionless one; with friction the held reference, the
run's own contact set, a black bar across the rest strain's) and
the kinetic energy per kg at the end against the 1e-8 J/kg bound.

Usage: python3 bench/plot_contact.py MATRIX_CSV REST_CSV  (writes MATRIX_CSV
with .png for .csv)"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

main = list(csv.DictReader(open(sys.argv[1])))
rest = list(csv.DictReader(open(sys.argv[2])))
fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
ax = axes[0]
marks = {"cube": "s", "tube": "o", "bunny": "^", "armadillo": "D"}
colors = {"corot-element": "C0", "warp-vertex": "C1", "green": "C2", "linear": "C3"}
for r in main:
    if r["status"] != "ok":
        continue
    dt = float(r["dt"]) * (1.04 if r["integrator"] == "bdf2" else 1) * (1.02 if r["friction"] != "0" else 1)
    ax.scatter(dt, max(float(r["max_rise"]), 1e-12), marker=marks[r["scene"]], color=colors[r["method"]],
               facecolors="none" if r["integrator"] == "bdf2" else colors[r["method"]], s=22)
ax.axhline(0.01, color="gray", ls="--", lw=0.8)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("dt, s (BDF2: hollow; friction 0.5 shifted right)")
ax.set_ylabel("max (E_k - min_j<k E_j) / E_drop (floor 1e-12)")
ax.set_title("energy regained after a loss, every run")
for s, mk in marks.items():
    ax.scatter([], [], marker=mk, color="k", label=s)
for m, c in colors.items():
    ax.scatter([], [], marker="s", color=c, label=m)
ax.legend(fontsize=7, ncol=2)

ax = axes[1]
labels, x, any_held = [], 0, False
for r in rest:
    if r["status"] != "ok":
        continue
    lab = "%s 1/%.0f mu %s" % (r["scene"], 1 / float(r["dt"]), r["friction"])
    ax.bar(x - 0.3, float(r["rest_strain"]), 0.2, color="C0", label="dropped, at the end" if x == 0 else None)
    if r["static_strain"]:
        ax.bar(x - 0.1, float(r["static_strain"]), 0.2, color="C1", label="static, contacts pinned" if x == 0 else None)
    if r["placed_strain"]:
        ax.bar(x + 0.1, float(r["placed_strain"]), 0.2, color="C2", label="set down, no drop" if x == 0 else None)
    if r.get("frictionless_strain"):
        ax.bar(x + 0.3, float(r["frictionless_strain"]), 0.2, color="C4",
               label="set down, frictionless floor" if x == 0 else None)
    if r.get("held_strain"):
        ax.scatter(x - 0.3, float(r["held_strain"]), marker="_", s=150, color="k",
                   label="held: its own contact set" if not any_held else None)
        any_held = True
    labels.append(lab)
    x += 1
ax.set_xticks(range(len(labels)))
ax.set_xticklabels(labels, rotation=90, fontsize=6)
ax.set_yscale("log")
ax.set_ylabel("elastic energy / E_drop")
ax.set_title("rest strain against its references")
ax.legend(fontsize=7)

ax = axes[2]
for k, r in enumerate(x for x in rest if x["status"] == "ok"):
    ax.scatter(k, max(float(r["ke_per_kg"]), 1e-16), color="C0", s=14, label="kinetic" if k == 0 else None)
    ax.scatter(k, max(float(r["ke_cm_per_kg"]), 1e-16), color="C3", marker="x", s=14,
               label="centre of mass's part" if k == 0 else None)
ax.axhline(1e-8, color="gray", ls="--", lw=0.8)
ax.set_yscale("log")
ax.set_xticks(range(len(labels)))
ax.set_xticklabels(labels, rotation=90, fontsize=6)
ax.set_ylabel("J/kg at the end")
ax.set_title("kinetic energy at the end, 10 s (bound 1e-8)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[1][:-4] + ".png", dpi=110)
