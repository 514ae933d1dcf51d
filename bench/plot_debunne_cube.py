"""Debunne et al. 2001 figs. 4-5 from bench/debunne_cube.sh's CSV: the cube
corner's height over time per level, Cauchy and Green, undamped and damped;
the period and amplitude of each run and their differences to the finest
level (debunne_cube_summary.csv, printed too)."""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

D = sys.argv[1]
runs = defaultdict(list)
meta = {}
for r in csv.DictReader(open(f"{D}/debunne_cube.csv")):
    runs[r["run"]].append((float(r["time"]), float(r["z"])))
    meta[r["run"]] = (r["strain"], float(r["damping"]), int(r["nodes"]), float(r["E"]))


def extrema(ts, zs):
    """Times and values of the local minima and maxima, refined by a parabola."""
    mins, maxs = [], []
    for k in range(1, len(zs) - 1):
        a, b, c = zs[k - 1], zs[k], zs[k + 1]
        lo, hi = b < a and b <= c, b > a and b >= c
        if not (lo or hi):
            continue
        den = a - 2 * b + c
        s = 0.5 * (a - c) / den if den != 0 else 0
        t = ts[k] + s * (ts[1] - ts[0])
        z = b - 0.25 * (a - c) * s
        (mins if lo else maxs).append((t, z))
    return mins, maxs


summary = []
for name, pts in runs.items():
    ts = [p[0] for p in pts]
    zs = [p[1] for p in pts]
    mins, maxs = extrema(ts, zs)
    period = (mins[-1][0] - mins[0][0]) / (len(mins) - 1) if len(mins) > 1 else float("nan")
    first = -mins[0][1] if mins else float("nan")  # depth of the first trough below rest
    # mean peak-to-peak over the run: mean of the maxima less the mean of the minima
    p2p = (sum(z for _, z in maxs) / len(maxs) - sum(z for _, z in mins) / len(mins)) if maxs and mins else float("nan")
    last = (maxs[-1][1] - mins[-1][1]) if maxs and mins else float("nan")
    strain, damp, nodes, E = meta[name]
    summary.append(dict(run=name, E=E, strain=strain, damping=damp, nodes=nodes, period=period, first_trough=first,
                        mean_peak_to_peak=p2p, last_peak_to_peak=last, mean_z=sum(zs) / len(zs)))
summary.sort(key=lambda s: (-s["E"], s["strain"], s["damping"], s["nodes"]))
fine = {}
for s in summary:
    key = (s["E"], s["strain"], s["damping"])
    if key not in fine or s["nodes"] > fine[key]["nodes"]:
        fine[key] = s
for s in summary:
    f = fine[(s["E"], s["strain"], s["damping"])]
    s["period_vs_finest"] = s["period"] / f["period"] - 1
    s["first_trough_vs_finest"] = s["first_trough"] / f["first_trough"] - 1
    s["peak_to_peak_vs_finest"] = s["mean_peak_to_peak"] / f["mean_peak_to_peak"] - 1
cols = ["run", "E", "strain", "damping", "nodes", "period", "first_trough", "mean_peak_to_peak", "last_peak_to_peak",
        "mean_z", "period_vs_finest", "first_trough_vs_finest", "peak_to_peak_vs_finest"]
with open(f"{D}/debunne_cube_summary.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for s in summary:
        w.writerow([s[c] if isinstance(s[c], str) else ("%.6g" % s[c]) for c in cols])
for s in summary:
    print("%-26s period %.4f s (%+.1f %%)  first trough %.2f mm (%+.1f %%)  mean p2p %.2f mm (%+.1f %%)" % (
        s["run"], s["period"], 100 * s["period_vs_finest"], 1e3 * s["first_trough"],
        100 * s["first_trough_vs_finest"], 1e3 * s["mean_peak_to_peak"], 100 * s["peak_to_peak_vs_finest"]))
for key in sorted(fine):
    group = [s for s in summary if (s["E"], s["strain"], s["damping"]) == key]
    sp = (max(s["period"] for s in group) - min(s["period"] for s in group)) / fine[key]["period"]
    sa = (max(s["first_trough"] for s in group) - min(s["first_trough"] for s in group)) / fine[key]["first_trough"]
    print("E %g Pa, %s, damping %g Pa s: spread across levels: period %.1f %%, first trough %.1f %%" % (
        key[0], key[1], key[2], 100 * sp, 100 * sa))

colors = {0: "tab:red", 1: "black", 2: "tab:blue"}
for E in sorted({m[3] for m in meta.values()}, reverse=True):
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True, sharey=True)
    for col, strain in enumerate(["cauchy", "green"]):
        for row, damp in enumerate([0.0, 10.0]):
            ax = axes[row][col]
            group = sorted([n for n in runs if meta[n][:2] == (strain, damp) and meta[n][3] == E],
                           key=lambda n: meta[n][2])
            for k, name in enumerate(group):
                ts = [p[0] for p in runs[name]]
                zs = [1e3 * p[1] for p in runs[name]]
                ax.plot(ts, zs, color=colors[k], lw=1, label="%d nodes" % meta[name][2])
            ax.set_title("%s strain, %s" % (strain.capitalize(),
                                            "undamped" if damp == 0 else "phi = psi = %g Pa s" % damp))
            ax.grid(alpha=0.3)
            if row == 1:
                ax.set_xlabel("time, s")
            if col == 0:
                ax.set_ylabel("corner height, mm")
            ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("Debunne 2001 figs. 4-5: 0.1 m cube clamped at x = 0, released under gravity "
                 "(E %g kPa, nu 0.3)" % (E / 1e3))
    fig.tight_layout()
    fig.savefig(f"{D}/debunne_cube_E{E / 1e3:g}kPa.png", dpi=110)
