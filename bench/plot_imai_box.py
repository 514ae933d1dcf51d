"""Plots bench/imai_box.sh's CSV like Imai et al. 2013 figs. 7-8: active tets,
the error against the finest level (mean and max, % of the longest edge) and
CPU ms per step, adaptive against the finest level."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1] if len(sys.argv) > 1 else "bench/results/cpu-2core-intel-xeon"

for name in ("imai_box", "imai_box_creep", "imai_box_big"):
    path = f"{d}/{name}.csv"
    if not os.path.exists(path):
        continue
    rows = list(csv.DictReader(open(path)))
    step = [int(r["step"]) for r in rows]
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    ax[0].plot(step, [int(r["active_tets"]) for r in rows], label="adaptive")
    ax[0].plot(step, [int(r["finest_tets"]) for r in rows], "--", label="finest")
    ax[0].set_xlabel("step")
    ax[0].set_ylabel("tetrahedra")
    ax[0].set_title("active tets (fig. 7a)")
    ax[0].legend()
    ax[1].plot(step, [100 * float(r["err_mean"]) for r in rows], label="mean")
    ax[1].plot(step, [100 * float(r["err_max"]) for r in rows], ":", label="max")
    ax[1].set_xlabel("step")
    ax[1].set_ylabel("error, % of the longest edge")
    ax[1].set_title("error against the finest level (fig. 7b)")
    ax[1].legend()
    ax[2].plot(step, [float(r["ms_adapt"]) for r in rows], label="adaptive", lw=0.7)
    ax[2].plot(step, [float(r["ms_finest"]) for r in rows], label="finest", lw=0.7)
    ax[2].set_xlabel("step")
    ax[2].set_ylabel("CPU ms per step")
    ax[2].set_yscale("log")
    ax[2].set_title("time per step (fig. 8)")
    ax[2].legend()
    fig.tight_layout()
    fig.savefig(f"{d}/{name}.png", dpi=110)
    print(f"wrote {d}/{name}.png")

# fig. 3: the sampled stress of one coarse tet against alpha, the fitted line
# and the valid range
path = f"{d}/imai_fig3.csv"
if os.path.exists(path):
    rows = list(csv.DictReader(open(path)))
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for k, (basis, comp) in enumerate((("zz", "zz"), ("xy", "xy"))):
        sel = [r for r in rows if r["basis"] == basis and r["component"] == comp]
        a = [float(r["alpha"]) for r in sel]
        ax[k].plot(a, [float(r["sigma"]) for r in sel], ".", label="sampled (relaxed finest tets)")
        ax[k].plot(a, [float(r["fit"]) for r in sel], "-", label="fitted slope")
        inr = [float(r["alpha"]) for r in sel if r["in_range"] == "1"]
        if inr:
            ax[k].axvspan(min(inr), max(inr), alpha=0.2, color="green", label="valid range")
        ax[k].set_xlabel(f"alpha ({basis} basis)")
        ax[k].set_ylabel(f"sigma_{comp}, Pa")
        ax[k].set_title(f"fig. 3: basis {basis}, layered tet")
        ax[k].legend()
    fig.tight_layout()
    fig.savefig(f"{d}/imai_fig3.png", dpi=110)
    print(f"wrote {d}/imai_fig3.png")

# the 92k box: each adaptive step's CPU split, the multigrid kept across
# switches against one set up anew after every switch (--mg-lag 0)
parts = (("cpu_decide", "decide"), ("cpu_energy", "energy check"), ("cpu_rebuild", "front rebuild"),
         ("cpu_assemble", "assembly"), ("cpu_setup", "mg set-up"), ("cpu_update", "mg update"), ("cpu_pcg", "PCG"))
runs = [(n, t) for n, t in (("imai_box_big_nolag", "multigrid anew after every switch (--mg-lag 0)"),
                            ("imai_box_big", "multigrid kept across switches"))
        if os.path.exists(f"{d}/{n}.csv")]
if runs and all("cpu_setup" in open(f"{d}/{n}.csv").readline() for n, _ in runs):
    fig, ax = plt.subplots(1, len(runs), figsize=(7 * len(runs), 4), sharey=True, squeeze=False)
    for k, (n, title) in enumerate(runs):
        rows = list(csv.DictReader(open(f"{d}/{n}.csv")))
        step = [int(r["step"]) for r in rows]
        base = [0.0] * len(rows)
        for key, label in parts:
            h = [float(r[key]) for r in rows]
            ax[0][k].bar(step, h, bottom=base, label=label, width=0.8)
            base = [b + v for b, v in zip(base, h)]
        ax[0][k].plot(step, [float(r["ms_finest"]) for r in rows], "k.-", lw=0.7, label="finest level, whole step")
        sw = [int(r["step"]) for r in rows if int(r["refined"]) + int(r["coarsened"]) > 0]
        ax[0][k].plot(sw, [-8] * len(sw), "rv", ms=4, label="switch")
        ax[0][k].set_xlabel("step")
        ax[0][k].set_title(title, fontsize=10)
    ax[0][0].set_ylabel("adaptive step, CPU ms")
    ax[0][-1].legend(fontsize=7, loc="upper right")
    fig.suptitle("92k-tet box: the adaptive step's parts")
    fig.tight_layout()
    fig.savefig(f"{d}/imai_box_big_split.png", dpi=110)
    print(f"wrote {d}/imai_box_big_split.png")
