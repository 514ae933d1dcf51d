#!/usr/bin/env python3
"""Plots and key-number .txt files for bench/repro_papers.sh's CSVs.
usage: python3 bench/plot_repro_papers.py FOLDER"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = sys.argv[1]


def rows(name):
    path = os.path.join(D, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def write(name, text):
    with open(os.path.join(D, name), "w") as f:
        f.write(text)
    print(text)


COL = {"linear": "tab:red", "warp-vertex": "tab:blue", "warp-edge": "tab:cyan",
       "corot-element": "tab:purple", "green": "tab:green", "hybrid": "tab:orange"}

# 1. Müller §4.2 tube
r = rows("repro_tube_dt.csv")
if r:
    fig, ax = plt.subplots(figsize=(6, 4))
    txt = ["Müller 2002 §4.2: largest stable dt, tube dropped 50 cm (implicit Euler, 1 s)",
           "stable = no TW_ERR_DIVERGED, no vertex > 1 mm below the floor, |V/V0-1| <= 10 %,",
           "         KE + elastic + gravity energy <= m g 0.5 m (never gains more than the drop gave)",
           "paper (E unit unreadable; 2.0/1.0/0.5/0.2/0.1 x 10^? Pa): warp 30/20/10/10/10 ms, non-linear 5/5/2/1/1 ms",
           "method,E_Pa,dt_stable_max_ms,dt_unstable_min_ms,first_failure"]
    by = defaultdict(list)
    for x in r:
        by[x["method"]].append((float(x["youngs_pa"]), float(x["dt_stable_max_s"]), float(x["dt_unstable_min_s"])))
        txt.append(f"{x['method']},{float(x['youngs_pa']):g},{1e3 * float(x['dt_stable_max_s']):.3g},"
                   f"{1e3 * float(x['dt_unstable_min_s']):.3g},{x['first_failure']}")
    for m, v in by.items():
        ax.plot([a for a, _, _ in v], [max(b, 1e-5) * 1e3 for _, b, _ in v], "o-", color=COL.get(m), label=m)
    ax.axhline(0.1, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Young's modulus (Pa)")
    ax.set_ylabel("largest stable dt (ms); 0.01 = none >= 0.1 ms")
    ax.set_title("Tube dropped 50 cm: largest stable dt (Müller §4.2)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(D, "repro_tube_dt.png"), dpi=110)
    write("repro_tube_dt.txt", "\n".join(txt) + "\n")

# 2. Müller §4.1 timing
r = rows("repro_timing.csv")
if r:
    txt = ["Müller 2002 §4.1: ms per 10 ms step of the sagging bar (1 thread, CG tol 1e-4)",
           "paper: 5 / 6 / 12 ms (linear / warped / non-linear), ~2002 PC, bar size unreadable",
           "bar,tets,method,ms_mean,ms_median,cg_iterations,paper_ms"]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = sorted(set(x["bar"] for x in r), key=lambda b: [x["bar"] for x in r].index(b))
    methods = ["linear", "warp-vertex", "green", "corot-element"]
    w = 0.8 / (len(bars) + 1)
    for i, b in enumerate(bars):
        v = {x["method"]: x for x in r if x["bar"] == b}
        ax.bar([k + i * w for k in range(len(methods))], [float(v[m]["ms_step_mean"]) for m in methods], w,
               label=f"tetwarp, {b} ({v[methods[0]]['tets']} tets)")
        for m in methods:
            txt.append(f"{b},{v[m]['tets']},{m},{float(v[m]['ms_step_mean']):.3f},{float(v[m]['ms_step_median']):.3f},"
                       f"{float(v[m]['cg_iterations']):.0f},{v[m]['paper_ms']}")
    ax.bar([k + len(bars) * w for k in range(3)], [5, 6, 12], w, color="grey", label="Müller 2002 (paper)")
    ax.set_xticks([k + w * len(bars) / 2 for k in range(len(methods))])
    ax.set_xticklabels(methods)
    ax.set_yscale("log")
    ax.set_ylabel("ms per step")
    ax.set_title("Sagging bar, ms per step (Müller §4.1)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(D, "repro_timing.png"), dpi=110)
    write("repro_timing.txt", "\n".join(txt) + "\n")

# 3. Hauth & Straßer force error
r = rows("repro_force_error.csv")
if r:
    methods = ["linear", "warp-edge", "warp-vertex", "corot-element", "hybrid"]
    fig, axs = plt.subplots(2, 3, figsize=(14, 7))
    cols = [("rel_error", "total"), ("rel_error_pressure", "pressure (bulk) part"), ("rel_error_shear", "shear part")]
    th_fix, g_fix = 30.0, 0.2
    for j, (c, lab) in enumerate(cols):
        for m in methods:
            a = [(float(x["gamma"]), float(x[c])) for x in r if x["method"] == m and float(x["theta_deg"]) == th_fix
                 and float(x["gamma"]) > 0]
            axs[0][j].plot(*zip(*a), "o-", ms=3, color=COL[m], label=m)
            b = [(float(x["theta_deg"]), float(x[c])) for x in r if x["method"] == m
                 and abs(float(x["gamma"]) - g_fix) < 1e-9]
            axs[1][j].plot(*zip(*b), "o-", ms=3, color=COL[m], label=m)
        axs[0][j].set_xlabel("shear gamma")
        axs[0][j].set_title(f"{lab}: |f - f_green| / |f_green|, theta {th_fix:g} deg")
        axs[1][j].set_xlabel("rotation theta (deg)")
        axs[1][j].set_title(f"{lab}, gamma {g_fix:g}")
        for ax in (axs[0][j], axs[1][j]):
            ax.set_yscale("log")
            ax.grid(alpha=0.3)
    axs[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(D, "repro_force_error.png"), dpi=100)
    txt = ["Hauth & Straßer: relative force error vs green (StVK), cube 4x4x4, x = R_y(theta)(I + gamma e_x e_z^T) X",
           "method,gamma,theta_deg,total,pressure,shear"]
    for m in methods:
        for g, th in [(0.05, 0), (0.2, 0), (0.2, 30), (0.2, 90), (0.5, 30)]:
            x = next(x for x in r if x["method"] == m and abs(float(x["gamma"]) - g) < 1e-9
                     and float(x["theta_deg"]) == th)
            txt.append(f"{m},{g},{th},{float(x['rel_error']):.4g},{float(x['rel_error_pressure']):.4g},"
                       f"{float(x['rel_error_shear']):.4g}")
    write("repro_force_error.txt", "\n".join(txt) + "\n")

# 4. Debunne fig. 4/5
for name, E in [("repro_cube_corner", "1e5"), ("repro_cube_corner_soft", "2e4")]:
    r = rows(name + ".csv")
    if not r:
        continue
    cells = sorted(set(int(x["cells"]) for x in r))
    fig, axs = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    txt = [f"Debunne 2001 fig. 4/5: cube corner z, 0.2 m cube fixed at x=0, E {E}, explicit Newmark auto dt",
           "cells,nodes,method,alpha,dt_s,min_z_m,final_z_m,mean_z_last_0.5s_m,first_min_time_s"]
    cc = {2: "tab:red", 3: "black", 4: "tab:blue", 8: "tab:green"}
    for i, m in enumerate(["linear", "green"]):
        for j, alpha in enumerate(["0", "4"]):
            ax = axs[i][j]
            for n in cells:
                v = [x for x in r if int(x["cells"]) == n and x["method"] == m and x["damping_alpha"] == alpha]
                if not v:
                    continue
                t = [float(x["time_s"]) for x in v]
                z = [float(x["corner_z_m"]) for x in v]
                ax.plot(t, z, color=cc.get(n), label=f"{v[0]['nodes']} nodes")
                k = next((k for k in range(1, len(z) - 1) if z[k] <= z[k - 1] and z[k] < z[k + 1]), len(z) - 1)
                tail = [zz for tt, zz in zip(t, z) if tt >= t[-1] - 0.5]
                txt.append(f"{n},{v[0]['nodes']},{m},{alpha},{v[0]['dt_s']},{min(z):.4f},{z[-1]:.4f},"
                           f"{sum(tail) / len(tail):.4f},{t[k]:.3f}")
            ax.set_title(f"{m}, {'no damping' if alpha == '0' else 'damping alpha 4 1/s'}")
            ax.set_ylabel("corner z (m)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    for ax in axs[1]:
        ax.set_xlabel("time (s)")
    fig.suptitle(f"Cube corner over time at several resolutions (Debunne 2001 fig. 4/5), E {E} Pa")
    fig.tight_layout()
    fig.savefig(os.path.join(D, name + ".png"), dpi=100)
    write(name + ".txt", "\n".join(txt) + "\n")

# 5. Zhuang & Canny
tr = rows("repro_explicit_implicit.csv")
trh = rows("repro_explicit_implicit_half.csv")
sw = rows("repro_explicit_implicit_sweep.csv")
swh = rows("repro_explicit_implicit_sweep_half.csv")
if tr and sw:
    fig, axs = plt.subplots(1, 3, figsize=(15, 4))
    for data, lab, ls in [(tr, "explicit green, 0.5 Courant (auto)", "-"), (trh, "explicit green, 0.45 Courant", "--")]:
        if data:
            t = [float(x["time_s"]) for x in data]
            axs[0].plot(t, [float(x["explicit_com_z"]) for x in data], ls, color="tab:green", label=lab)
            axs[1].plot(t, [float(x["explicit_deform"]) for x in data], ls, color="tab:green", label=lab)
    t = [float(x["time_s"]) for x in trh or tr]
    axs[0].plot(t, [float(x["implicit_com_z"]) for x in trh or tr], color="tab:purple", label="implicit corot, dt 0.01")
    axs[1].plot(t, [float(x["implicit_deform"]) for x in trh or tr], color="tab:purple", label="implicit corot, dt 0.01")
    axs[0].set_ylabel("centre height (m)")
    axs[1].set_ylabel("max vertex distance from rest shape, translation removed (m)")
    for ax in axs[:2]:
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for data, lab, mk in [(sw, "0.5 Courant (auto)", "o"), (swh, "0.45 Courant", "s")]:
        if not data:
            continue
        for run, c in [("explicit-green", "tab:green"), ("implicit-corot", "tab:purple")]:
            if run == "implicit-corot" and data is swh:
                continue
            v = [x for x in data if x["run"] == run]
            axs[2].plot([float(x["youngs_pa"]) for x in v], [float(x["wall_s_per_sim_s"]) for x in v], mk + "-",
                        color=c, label=f"{run}" + (f" ({lab})" if run == "explicit-green" else " (dt 0.01)"))
            for x in v:
                if x["ok"] != "1":
                    axs[2].plot(float(x["youngs_pa"]), float(x["wall_s_per_sim_s"]), "x", color="red", ms=12)
    axs[2].set_xscale("log")
    axs[2].set_yscale("log")
    axs[2].set_xlabel("Young's modulus (Pa)")
    axs[2].set_ylabel("wall s per simulated s (red x: diverged)")
    axs[2].grid(alpha=0.3)
    axs[2].legend(fontsize=8)
    fig.suptitle("Zhuang & Canny: explicit Green vs implicit corotated, cube dropped on a corner")
    fig.tight_layout()
    fig.savefig(os.path.join(D, "repro_explicit_implicit.png"), dpi=100)
    txt = ["Zhuang & Canny: explicit Newmark green vs implicit Euler corot-element, 0.2 m cube 4x4x4 dropped 0.5 m",
           "E sweep (0.5 s simulated each): E_Pa,run,dt_s,steps_per_sim_s,wall_s_per_sim_s,ok"]
    for lab, data in [("0.5 x Courant (automatic)", sw), ("0.45 x Courant", swh)]:
        if data:
            txt.append(f"-- explicit dt = {lab}")
            txt += [f"{x['youngs_pa']},{x['run']},{x['dt_s']},{x['steps_per_sim_s']},{x['wall_s_per_sim_s']},{x['ok']}"
                    for x in data]
    for name in ["repro_explicit_implicit.log", "repro_explicit_implicit_half.log"]:
        p = os.path.join(D, name)
        if os.path.exists(p):
            txt.append(f"-- {name} (E 1e5, 2 s)")
            txt += [l.rstrip() for l in open(p) if not l.startswith("sweep")]
    write("repro_explicit_implicit.txt", "\n".join(txt) + "\n")
