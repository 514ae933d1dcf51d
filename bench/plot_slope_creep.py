#!/usr/bin/env python3
"""Plot bench/slope_creep.sh's before/after CSVs: the creep over 1 s after
settling (mm, log scale of its size) and the contact solves per step at rest.

Usage: bench/plot_slope_creep.py BEFORE_CSV AFTER_CSV OUT_PNG [BEFORE_LABEL AFTER_LABEL [TITLE]]
(the labels default to the damping / stick-constraint comparison of slope_creep.png)"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


before, after, out = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
names = sys.argv[4:6] if len(sys.argv) > 5 else ["before (damping)", "after (stick constraint)"]
title = sys.argv[6] if len(sys.argv) > 6 else "0.2 m block on a slope, mu 0.5 (bench/slope_creep.sh)"
labels = ["%s\n%s\n%.3g s\ntan %s%s" % (r["start"], "IE" if r["integrator"] == "implicit-euler" else "BDF2",
                                        float(r["dt"]), r["tan"],
                                        "\nat %s m" % r["offset_m"] if float(r.get("offset_m") or 0) else "")
          for r in before]
x = range(len(labels))
fig, ax = plt.subplots(1, 2, figsize=(13, 4.5))
for data, name, off in ((before, names[0], -0.2), (after, names[1], 0.2)):
    creep = [max(abs(float(r["creep_mm_0.5_1.5s"])), 1e-9) for r in data]
    solves = [float(r["solves_per_step_1_1.5s"]) for r in data]
    ax[0].bar([i + off for i in x], creep, width=0.4, label=name)
    ax[1].bar([i + off for i in x], solves, width=0.4, label=name)
ax[0].set_yscale("log")
ax[0].set_ylabel("|distance down the slope| from 0.5 to 1.5 s, mm")
ax[1].set_ylabel("contact solves per step (1.0-1.5 s)")
for a in ax:
    a.set_xticks(list(x))
    a.set_xticklabels(labels, fontsize=7)
    a.legend(fontsize=8)
fig.suptitle(title)
fig.tight_layout()
fig.savefig(out, dpi=110)
