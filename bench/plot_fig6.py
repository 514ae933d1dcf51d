#!/usr/bin/env python3
"""Müller fig. 6 from bench/fig6.sh's CSVs: relative volume and tip height over
time, one line per method. usage: python3 bench/plot_fig6.py FOLDER"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

folder = sys.argv[1]
methods = ["linear", "warp-vertex", "warp-edge", "corot-element", "green"]
colours = {"linear": "tab:red", "warp-vertex": "tab:blue", "warp-edge": "tab:cyan",
           "corot-element": "tab:purple", "green": "tab:green"}
fig, (ax_v, ax_z) = plt.subplots(1, 2, figsize=(11, 4))
summary = []
for m in methods:
    path = os.path.join(folder, f"fig6_{m}.csv")
    if not os.path.exists(path):
        continue
    with open(path) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    t = [float(r["time"]) for r in rows]
    v0 = float(rows[0]["volume"])
    vol = [100 * (float(r["volume"]) / 0.01 - 1) for r in rows]
    z = [float(r["probe_uz"]) for r in rows]
    ax_v.plot(t, vol, label=m, color=colours[m])
    ax_z.plot(t, z, label=m, color=colours[m])
    summary.append((m, max(vol, key=abs), vol[-1], min(z)))
ax_v.set_xlabel("time (s)")
ax_v.set_ylabel("volume change (%, symlog)")
ax_v.set_yscale("symlog", linthresh=1)
ax_v.set_title("Bar under gravity: volume (Müller 2002, fig. 6)")
ax_z.set_xlabel("time (s)")
ax_z.set_ylabel("tip vertical displacement (m)")
ax_z.set_title("Tip height")
for ax in (ax_v, ax_z):
    ax.grid(alpha=0.3)
    ax.legend()
fig.tight_layout()
out = os.path.join(folder, "fig6_volume.png")
fig.savefig(out, dpi=110)
print(out)
print("method,max_volume_change_pct,final_volume_change_pct,lowest_tip_uz_m")
for m, vmax, vend, zmin in summary:
    print(f"{m},{vmax:.3f},{vend:.3f},{zmin:.4f}")
