"""Plots bench/hauth_bar.sh's and bench/hauth_liver.sh's results: the
probe's displacement over time for each run at the accuracy step, and the
stable-step search. usage: hauth_plot.py RESULTS.csv TRACE.csv OUT.png NAME"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

res, trace, out, name = sys.argv[1:5]
rows = list(csv.DictReader(open(res)))
tr = {}
for r in csv.DictReader(open(trace)):
    tr.setdefault(r["run"], []).append(
        (float(r["time"]), math.sqrt(sum(float(r[k]) ** 2 for k in ("probe_ux", "probe_uy", "probe_uz")))))

fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
for run, pts in tr.items():
    style = "k-" if run.startswith("reference") else "-"
    ax[0].plot([p[0] for p in pts], [p[1] for p in pts], style, label=run, lw=2 if run.startswith("reference") else 1)
ax[0].set_xlabel("time, s")
ax[0].set_ylabel("probe displacement, m")
ax[0].set_title(f"{name}: the probe (reference: fine green, dt/4, 3 Newton)")
ax[0].legend(fontsize=7)

stab = [r for r in rows if r["run"].startswith("stable-")]
methods = sorted(set(r["run"] for r in stab))
for k, m in enumerate(methods):
    pts = [(float(r["dt"]), int(r["ok"])) for r in stab if r["run"] == m]
    ax[1].scatter([p[0] for p in pts], [k] * len(pts), c=["tab:green" if p[1] else "tab:red" for p in pts], s=60)
ax[1].set_xscale("log")
ax[1].set_yticks(range(len(methods)))
ax[1].set_yticklabels([m.replace("stable-", "") for m in methods])
ax[1].set_xlabel("dt, s")
ax[1].set_title("stable (green) / diverged or flopped (red)")
fig.tight_layout()
fig.savefig(out, dpi=110)
for m in methods:
    ok = [float(r["dt"]) for r in stab if r["run"] == m and r["ok"] == "1"]
    print(f"{m}: largest stable dt {max(ok) if ok else 'none'} s")

# the probe's error of every traced run against the accurate reference of its
# level count (same steps), over the reference's largest displacement
full = {}
for r in csv.DictReader(open(trace)):
    full.setdefault(r["run"], []).append([float(r[k]) for k in ("probe_ux", "probe_uy", "probe_uz")])
for ref in [k for k in full if k.startswith("reference-")]:
    lv = ref.split("-")[1]
    R = full[ref]
    umax = max(math.sqrt(sum(c * c for c in u)) for u in R)
    for run, U in full.items():
        if run.startswith("reference") or not run.endswith(lv) or len(U) != len(R):
            continue
        e = [math.sqrt(sum((a - b) ** 2 for a, b in zip(u, v))) for u, v in zip(U, R)]
        print(f"probe error {run}: max {max(e):.4g} m, last {e[-1]:.4g} m, "
              f"{100 * max(e) / umax:.3g} % / {100 * e[-1] / umax:.3g} % of the reference's largest displacement {umax:.4g} m")
