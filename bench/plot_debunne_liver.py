"""bench/debunne_liver.sh's runs against the finest level: time and tet
evaluations, the probe's error normalised by the liver's size and the tool
force's error normalised by its peak (debunne_liver_summary.csv, printed)
and debunne_liver.png; with a second argument NAME, NAME.csv in and
NAME_summary.csv and NAME.png out (bench/debunne_liver10k.sh), a third: the
plot's title, a fourth: the body's size in m (default the liver's 0.065), a
fifth: the runs to draw, comma-separated (default all; the summary has all).
probe_error_pressing is the probe's error while the tool presses in (to
t = 0.1 s), probe_error_press to t = 0.2 s."""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

D = sys.argv[1]
NAME = sys.argv[2] if len(sys.argv) > 2 else "debunne_liver"
TITLE = sys.argv[3] if len(sys.argv) > 3 else \
    "Liver (3 levels: 181, 622, 3112 nodes), 8 mm sphere pressed 8 mm in: adaptive vs finest level"
SIZE = float(sys.argv[4]) if len(sys.argv) > 4 else 0.065  # m: the body's largest extent (the liver's)
DRAW = sys.argv[5].split(",") if len(sys.argv) > 5 else None
runs = defaultdict(list)
for r in csv.DictReader(open(f"{D}/{NAME}.csv")):
    runs[r["run"]].append({k: (v if k == "run" else float(v)) for k, v in r.items()})
rows = []
for name, rs in runs.items():
    ref = runs["finest-semi" if name.endswith("-semi") else "finest"]  # the finest level, damped alike
    fpeak = max(abs(r["tool_fz"]) for r in ref)
    n = min(len(rs), len(ref))
    perr = max(((rs[k]["probe_x"] - ref[k]["probe_x"]) ** 2 + (rs[k]["probe_y"] - ref[k]["probe_y"]) ** 2 +
                (rs[k]["probe_z"] - ref[k]["probe_z"]) ** 2) ** 0.5 for k in range(n)) / SIZE
    ferr = max(abs(rs[k]["tool_fz"] - ref[k]["tool_fz"]) for k in range(n)) / fpeak
    # while the tool is down and coming back (t <= 0.2 s), before the free vibration dephases
    press = [k for k in range(n) if ref[k]["time"] <= 0.2 + 1e-9]
    perr_press = max(((rs[k]["probe_x"] - ref[k]["probe_x"]) ** 2 + (rs[k]["probe_y"] - ref[k]["probe_y"]) ** 2 +
                      (rs[k]["probe_z"] - ref[k]["probe_z"]) ** 2) ** 0.5 for k in press) / SIZE
    pressing = [k for k in range(n) if ref[k]["time"] <= 0.1 + 1e-9]
    perr_pressing = max(((rs[k]["probe_x"] - ref[k]["probe_x"]) ** 2 + (rs[k]["probe_y"] - ref[k]["probe_y"]) ** 2 +
                         (rs[k]["probe_z"] - ref[k]["probe_z"]) ** 2) ** 0.5 for k in pressing) / SIZE
    ms = sum(r["frame_ms"] for r in rs)
    work = sum(r["work"] for r in rs)
    rows.append(dict(run=name, frames=len(rs), ms=ms, work=work, speedup_time=sum(r["frame_ms"] for r in ref) / ms,
                     speedup_work=sum(r["work"] for r in ref) / work, probe_error=perr, probe_error_press=perr_press,
                     force_error=ferr,
                     max_active=max(r["active_nodes"] for r in rs), peak_fz=max(abs(r["tool_fz"]) for r in rs),
                     max_frame_work=max(r["work"] for r in rs), max_frame_ms=max(r["frame_ms"] for r in rs),
                     probe_error_pressing=perr_pressing))
cols = list(rows[0].keys())
with open(f"{D}/{NAME}_summary.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for r in rows:
        w.writerow([r[c] if isinstance(r[c], str) else "%.6g" % r[c] for c in cols])
for r in rows:
    print("%-16s %6.0f ms  %9.0f tet evaluations  speed-up %5.2fx time, %5.2fx work  probe error %.3g %% of the size"
          " (%.3g %% to t = 0.2 s, %.3g %% to 0.1 s)  tool force error %.3g %% of its peak  at most %d active nodes,"
          " %d tet evaluations a frame" % (
              r["run"], r["ms"], r["work"], r["speedup_time"], r["speedup_work"], 100 * r["probe_error"],
              100 * r["probe_error_press"], 100 * r["probe_error_pressing"], 100 * r["force_error"], r["max_active"],
              r["max_frame_work"]))
fig, ax = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
for name, rs in runs.items():
    if DRAW is not None and name not in DRAW:
        continue
    t = [r["time"] for r in rs]
    ax[0].plot(t, [1e3 * r["probe_z"] for r in rs], label=name)
    ax[1].plot(t, [r["tool_fz"] for r in rs], label=name)
    ax[2].plot(t, [r["active_nodes"] for r in rs], label=name)
    ax[3].plot(t, [r["work"] / 1e6 for r in rs], label=name)
if "adaptive-budget" in runs:
    ax[3].axhline(0.6, color="gray", ls="--", lw=1, label="budget (adaptive-budget)")
ax[3].set_ylabel("tet evaluations a frame, millions")
ax[0].set_ylabel("probe height, mm")
ax[1].set_ylabel("force on the tool, z, N")
ax[2].set_ylabel("active nodes")
ax[3].set_xlabel("time, s")
for a in ax:
    a.grid(alpha=0.3)
    a.legend(fontsize=8)
fig.suptitle(TITLE)
fig.tight_layout()
fig.savefig(f"{D}/{NAME}.png", dpi=100)
