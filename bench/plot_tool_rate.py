"""The tool-force rate (bench/tool_rate.sh): per configuration the median
step time (wall and process CPU time, which a loaded machine inflates less)
against the force's error; the 1 ms (1 kHz) line is the haptic goal.

    python3 bench/plot_tool_rate.py tool_rate.csv tool_rate.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    marks = {("linear", "1"): "o", ("linear", "2"): "s", ("corot-element", "1"): "^", ("corot-element", "2"): "D"}
    for r in rows:
        key = (r["method"], r["threads"])
        budget = "tol 1e-4" if r["cg_fixed"] == "0" else r["cg_fixed"] + " it"
        if r["max_passes"] != "8":
            budget += ", " + r["max_passes"] + " pass" + ("es" if r["max_passes"] != "1" else "")
        color = "tab:blue" if r["precond"] == "jacobi" else "tab:orange"
        y = max(float(r["force_error_rel"]), 1e-4)
        ax.scatter(float(r["ms_step_median"]), y, marker=marks.get(key, "x"), color=color, alpha=0.9)
        ax.annotate(budget, (float(r["ms_step_median"]), y), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.axvline(1.0, color="gray", ls="--", lw=1)
    ax.text(1.02, ax.get_ylim()[1] if ax.get_ylim()[1] < 10 else 1, " 1 kHz", color="gray", va="top", fontsize=8)
    for (m, t), mk in marks.items():
        ax.scatter([], [], marker=mk, color="k", label=f"{m}, {t} thread{'s' if t != '1' else ''}")
    ax.scatter([], [], marker="o", color="tab:blue", label="block-Jacobi")
    ax.scatter([], [], marker="o", color="tab:orange", label="multigrid")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("median step time incl. the force, ms (wall clock)")
    ax.set_ylabel("force error: RMS |F - F(CG 1e-6)| / RMS |F|")
    t = rows[0]
    ax.set_title(f"Force on a tool, {t['tets']}-tet block, dt {t['dt']} s (2-core Xeon, shared)")
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
