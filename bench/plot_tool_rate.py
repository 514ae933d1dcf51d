"""The tool-force rate (bench/tool_rate.sh): per configuration the median
step time (wall and process CPU time, which a loaded machine inflates less)
against the force's error; the 1 ms (1 kHz) line is the haptic goal.
With --multirate (bench/tool_rate.sh --multirate): per configuration the
share of a core the slow simulation needs (CPU time per step over the
step; above 1 it cannot keep up) against the error of the 1 kHz force from
its models.

    python3 bench/plot_tool_rate.py tool_rate.csv tool_rate.png
    python3 bench/plot_tool_rate.py --multirate tool_rate_multirate.csv tool_rate_multirate.png
"""
import os
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


MARKS = {("linear", "1"): "o", ("linear", "2"): "s", ("corot-element", "1"): "^", ("corot-element", "2"): "D"}


def machine(src):
    """the results folder's name: bench/results/<machine>/"""
    return os.path.basename(os.path.dirname(os.path.abspath(src)))


def method_legend(ax):
    for (m, t), mk in MARKS.items():
        ax.scatter([], [], marker=mk, color="k", label=f"{m}, {t} thread{'s' if t != '1' else ''}")


def finish(fig, ax, dst, fontsize, title):
    """log errors, the title with the results folder's machine, the legend, the file"""
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize=fontsize, loc="best")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


def multirate(src, dst):
    rows = list(csv.DictReader(open(src)))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors = {"0.005": "tab:blue", "0.01": "tab:green", "0.02": "tab:red"}
    for r in rows:
        key = (r["method"], r["threads"])
        share = float(r["cpu_ms_slow_step"]) / (1e3 * float(r["slow_dt"]))
        c = colors.get(r["slow_dt"], "k")
        mk = MARKS.get(key, "x")
        ax.scatter(share, float(r["err_model_lag1"]), marker=mk, color=c)
        ax.scatter(share, float(r["err_model_lag0"]), marker=mk, facecolors="none", edgecolors=c)
        ax.scatter(share, float(r["err_hold_lag1"]), marker=mk, color="lightgray", s=12)
        budget = "tol 1e-4" if r["cg_fixed"] == "0" else r["cg_fixed"] + " it"
        ax.annotate(budget, (share, float(r["err_model_lag1"])), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.axvline(1.0, color="gray", ls="--", lw=1)
    method_legend(ax)
    for dt, c in colors.items():
        ax.scatter([], [], marker="o", color=c, label=f"slow step {float(dt) * 1e3:g} ms: model, lag 1 step")
    ax.scatter([], [], marker="o", facecolors="none", edgecolors="k", label="model, lag 0 (not realisable)")
    ax.scatter([], [], marker="o", color="lightgray", s=12, label="force held, lag 1 (no model)")
    ax.set_xlabel("CPU time per slow step (with its model) / the slow step: above 1 it cannot keep up")
    ax.set_ylabel("1 kHz force error: RMS |F - F(1 ms, CG 1e-6)| / RMS |F|")
    finish(fig, ax, dst, 6, f"Multirate force on a tool, {rows[0]['tets']}-tet block, 1 kHz ({machine(src)}, shared)")


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for r in rows:
        key = (r["method"], r["threads"])
        budget = "tol 1e-4" if r["cg_fixed"] == "0" else r["cg_fixed"] + " it"
        if r["max_passes"] != "8":
            budget += ", " + r["max_passes"] + " pass" + ("es" if r["max_passes"] != "1" else "")
        color = "tab:blue" if r["precond"] == "jacobi" else "tab:orange"
        y = max(float(r["force_error_rel"]), 1e-4)
        ax.scatter(float(r["ms_step_median"]), y, marker=MARKS.get(key, "x"), color=color, alpha=0.9)
        ax.annotate(budget, (float(r["ms_step_median"]), y), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.axvline(1.0, color="gray", ls="--", lw=1)
    ax.text(1.02, ax.get_ylim()[1] if ax.get_ylim()[1] < 10 else 1, " 1 kHz", color="gray", va="top", fontsize=8)
    method_legend(ax)
    ax.scatter([], [], marker="o", color="tab:blue", label="block-Jacobi")
    ax.scatter([], [], marker="o", color="tab:orange", label="multigrid")
    ax.set_xscale("log")
    ax.set_xlabel("median step time incl. the force, ms (wall clock)")
    ax.set_ylabel("force error: RMS |F - F(CG 1e-6)| / RMS |F|")
    t = rows[0]
    finish(fig, ax, dst, 7, f"Force on a tool, {t['tets']}-tet block, dt {t['dt']} s ({machine(src)}, shared)")


if __name__ == "__main__":
    if sys.argv[1] == "--multirate":
        multirate(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
