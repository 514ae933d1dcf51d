"""The contact-between-bodies report as a figure: (E - E0) / drop energy over
time per scene at each dt (the traces bodies_report.sh wrote), and per run
the step time split into body contact's own work and the rest.

Usage: python3 bench/plot_bodies.py OUT_DIR   (reads OUT_DIR/bodies_report.csv
and OUT_DIR/bodies_trace_*.csv, writes OUT_DIR/bodies_report.png)"""
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "bodies_report.csv"))))
scenes = ["bunny-block", "stack", "dane-floor"]
fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
for ax, scene in zip(axes[:3], scenes):
    for path in sorted(glob.glob(os.path.join(out, "bodies_trace_%s_*.csv" % scene))):
        dt = float(path.rsplit("_", 1)[1][:-4])
        t, g = [], []
        for line in open(path):
            f = line.split(",")
            t.append(float(f[1]))
            g.append(float(f[2]))
        ax.plot(t, g, label="dt 1/%.0f s" % (1 / dt))
    ax.axhline(0.01, color="gray", ls="--", lw=0.8)
    ax.set_title(scene)
    ax.set_xlabel("t, s")
    ax.set_ylabel("(E - E0) / drop energy")
    ax.legend(fontsize=8)
ax = axes[3]
labels, body, rest = [], [], []
for r in rows:
    mu = "" if r["scene"] != "stack" or (r["mu_body"], r["mu_floor"]) == ("0.5", "0.5") else " mu %s/%s" % (r["mu_body"], r["mu_floor"])
    labels.append("%s%s 1/%.0f" % (r["scene"], mu, 1 / float(r["dt"])))
    body.append(float(r["body_ms_step"]))
    rest.append(float(r["ms_step"]) - float(r["body_ms_step"]))
ax.barh(labels, rest, label="rest of the step (solves)")
ax.barh(labels, body, left=rest, label="body contact (BVH, detection, projection)")
ax.set_xlabel("ms per step (2 shared cores, 1 thread)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(out, "bodies_report.png"), dpi=90)
print("wrote", os.path.join(out, "bodies_report.png"))
