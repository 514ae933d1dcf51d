"""bench/debunne_bunny_ref.sh's report: the finest level's convergence in
time and every run (debunne_bunny.csv's, debunne_bunny_ref_adaptive.csv's,
debunne_bunny_ref_five*.csv's and debunne_bunny_ref_alt.csv's) against the
converged reference, the undamped finest level at the smallest Courant
factor run (REF below).

Errors: the probe's distance from the reference's, of the bunny's 15.6 cm,
largest and mean over the 30 frames, largest while the tool presses in (to
t = 0.1 s), and largest over the frames where the reference is converged
(where the finest level at every other Courant factor run lies within
0.35 % of REF: the frames of the release where the probe meets the rising
tool again are not), and the largest of its vertical part alone (a
diagnostic: the probe slides sideways on the frictionless sphere); the tool force's z, largest and mean difference, of
REF's peak. Work: tet evaluations against the finest level's at the same
Courant factor (0.5 unless the run's name ends in -cC), damped alike.

The same for the liver's 8 mm tool (debunne_bunny_ref_tool8.csv and
debunne_bunny_ref_alt8.csv, against its finest level at Courant 0.125),
printed after.

Writes debunne_bunny_ref_summary.csv (scene, run, ...),
debunne_bunny_ref_frames.csv (each run's probe error per frame) and
debunne_bunny_ref.png; prints the tables.
usage: python3 bench/debunne_bunny_ref.py OUT_DIR"""
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

D = sys.argv[1]
SIZE = 0.1558  # m: the bunny's largest extent
OLD = {"finest": "finest-c0.5", "finest-semi": "finest-c0.5-semi", "finest-c35": "finest-c0.35",
       "finest-c35-semi": "finest-c0.35-semi"}  # debunne_bunny.csv's names


def load(parts):
    runs, source = defaultdict(list), {}
    for part in parts:
        path = f"{D}/{part}.csv"
        if not os.path.exists(path):
            continue
        here = set()
        for r in csv.DictReader(open(path)):
            name = OLD.get(r["run"], r["run"]) if part == "debunne_bunny" else r["run"]
            if name in source and name not in here:
                continue  # the first file read with it stands (c0.5 is in two; identical)
            here.add(name)
            source[name] = part
            runs[name].append({k: (v if k == "run" else float(v)) for k, v in r.items()})
    return runs, source


def dist(a, b):
    return math.dist((a["probe_x"], a["probe_y"], a["probe_z"]), (b["probe_x"], b["probe_y"], b["probe_z"]))


def courant_of(name):
    if "-c0." in name:
        return float(name.split("-c")[-1].split("-")[0])
    return 0.5


def score(runs, name, ref, frames=None):
    rs, R = runs[name], runs[ref]
    n = min(len(rs), len(R))
    e = [dist(rs[k], R[k]) / SIZE for k in range(n)]
    ez = [abs(rs[k]["probe_z"] - R[k]["probe_z"]) / SIZE for k in range(n)]
    fpeak = max(abs(r["tool_fz"]) for r in R)
    fe = [abs(rs[k]["tool_fz"] - R[k]["tool_fz"]) / fpeak for k in range(n)]
    press = [e[k] for k in range(n) if R[k]["time"] <= 0.1 + 1e-9]
    conv = [e[k] for k in (frames if frames is not None else range(n)) if k < n]
    return dict(max=max(e), mean=sum(e) / n, zmax=max(ez), pressing=max(press), conv=max(conv), fmax=max(fe), fmean=sum(fe) / n,
                frames=e, worst=max(range(n), key=lambda k: e[k]))


def table(scene, runs, source, REF, conv_frames, summary, frames_out):
    works = {name: sum(r["work"] for r in rs) for name, rs in runs.items()}
    for name in runs:
        c = courant_of(name)
        base = "finest-c%g" % c
        if base not in runs:
            continue
        if name.endswith("-semi") and base + "-semi" in runs:
            base += "-semi"  # damped runs: against the finest level's work damped alike
        s = score(runs, name, REF, conv_frames)
        s2 = score(runs, name, base)
        summary.append(dict(scene=scene, run=name, source=source[name], courant=c, work=works[name],
                            speedup_work=works[base] / works[name], err_max=s["max"], err_mean=s["mean"],
                            err_pressing=s["pressing"], err_max_converged_frames=s["conv"], err_z_max=s["zmax"],
                            worst_frame=s["worst"],
                            force_err_max=s["fmax"], force_err_mean=s["fmean"],
                            err_max_same_step_ref=s2["max"],
                            max_active=max(r["active_nodes"] for r in runs[name]),
                            peak_fz=max(abs(r["tool_fz"]) for r in runs[name])))
        for k, r in enumerate(runs[name][:len(s["frames"])]):
            frames_out.append([scene, name, k, "%.3f" % r["time"], "%.5f" % s["frames"][k], "%.3f" % (1e3 * r["probe_z"]),
                               int(r["active_nodes"]), int(r["work"]), "%.5f" % r["tool_fz"]])


summary, frames_out = [], []
runs, source = load(["debunne_bunny_ref_undamped", "debunne_bunny_ref_undamped2", "debunne_bunny_ref_semi",
                     "debunne_bunny_ref_adaptive", "debunne_bunny_ref_five", "debunne_bunny_ref_five-dec",
                     "debunne_bunny_ref_alt", "debunne_bunny"])
courants = sorted({courant_of(n) for n in runs if n.startswith("finest-c") and not n.endswith("-semi")})
REF = "finest-c%g" % courants[0]
# the frames where the finest level at every other factor lies within 0.35 % of REF
others = ["finest-c%g" % c for c in courants[1:]]
spread = [max(dist(runs[o][k], runs[REF][k]) for o in others) / SIZE for k in range(len(runs[REF]))]
conv_frames = [k for k, s in enumerate(spread) if s < 0.0035]
table("tool15", runs, source, REF, conv_frames, summary, frames_out)

print("15 mm tool: reference %s (undamped), %.4g M tet evaluations" % (REF, sum(r["work"] for r in runs[REF]) / 1e6))
print("the finest level's spread with its step (largest distance of the others from %s), %% per frame:" % REF)
print("  " + " ".join("%.2f" % (100 * s) for s in spread))
print("frames where it is under 0.35 %%: %s" % conv_frames)
print("\nconvergence in time: each against the next smaller step damped alike, and against %s" % REF)
for damp in ["", "-semi"]:
    names = [n for n in ("finest-c%g%s" % (c, damp) for c in courants) if n in runs]
    for i, name in enumerate(names):
        nxt = score(runs, name, names[i - 1]) if i > 0 else None
        s = score(runs, name, REF)
        print("%-20s %8.4g M  next smaller step: %-26s vs %s: max %.2f %% mean %.2f %% (pressing %.2f %%)"
              "  force max %.1f %% mean %.1f %%" % (
                  name, sum(r["work"] for r in runs[name]) / 1e6,
                  "max %.2f %% mean %.2f %%" % (100 * nxt["max"], 100 * nxt["mean"]) if nxt else "-", REF,
                  100 * s["max"], 100 * s["mean"], 100 * s["pressing"], 100 * s["fmax"], 100 * s["fmean"]))


def show(scene):
    rows = [r for r in summary if r["scene"] == scene]
    for r in sorted(rows, key=lambda r: -r["speedup_work"]):
        print("%-24s %6.1fx  err max %5.2f %% mean %5.2f %% pressing %5.2f %% converged frames %5.2f %% z alone %5.2f %% (worst frame %2d)"
              "  force max %5.1f %% mean %5.1f %%  | same-step ref: max %5.2f %%" % (
                  r["run"], r["speedup_work"], 100 * r["err_max"], 100 * r["err_mean"], 100 * r["err_pressing"],
                  100 * r["err_max_converged_frames"], 100 * r["err_z_max"], r["worst_frame"], 100 * r["force_err_max"],
                  100 * r["force_err_mean"], 100 * r["err_max_same_step_ref"]))


print("\nruns against %s (speed-up in work over the finest level at the same Courant factor)" % REF)
show("tool15")

runs8, source8 = load(["debunne_bunny_ref_tool8", "debunne_bunny_ref_alt8"])
if runs8:
    courants8 = sorted({courant_of(n) for n in runs8 if n.startswith("finest-c") and not n.endswith("-semi")})
    REF8 = "finest-c%g" % courants8[0]
    table("tool8", runs8, source8, REF8, None, summary, frames_out)
    print("\n8 mm tool: runs against %s (undamped)" % REF8)
    show("tool8")

cols = list(summary[0].keys())
with open(f"{D}/debunne_bunny_ref_summary.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for r in summary:
        w.writerow([r[c] if isinstance(r[c], str) else "%.6g" % r[c] for c in cols])
with open(f"{D}/debunne_bunny_ref_frames.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(["scene", "run", "frame", "time", "probe_error_vs_ref", "probe_z_mm", "active_nodes", "work", "tool_fz"])
    w.writerows(frames_out)

fig, ax = plt.subplots(2, 2, figsize=(15, 10))
for name in runs:
    if not name.startswith("finest-c"):
        continue
    t = [r["time"] for r in runs[name]]
    ls = "--" if name.endswith("-semi") else "-"
    ax[0][0].plot(t, [1e3 * r["probe_z"] for r in runs[name]], ls, label=name)
    ax[0][1].plot(t, [r["tool_fz"] for r in runs[name]], ls, label=name)
ax[0][0].set_ylabel("probe height, mm (the finest level at each Courant factor)")
ax[0][1].set_ylabel("force on the tool, z, N")
for a in ax[0]:
    a.set_xlabel("time, s")
    a.legend(fontsize=7)
    a.grid(alpha=0.3)
for name, col in [("g1", "C0"), ("g1-m8-l1", "C1"), ("g1-m12-l1", "C2"), ("g1-m20-l3", "C3"), ("g1-m30-l3", "C4"),
                  ("finest-c0.5", "k"), ("finest-c0.25", "gray"), ("finest-c0.5-semi", "C5")]:
    if name in runs:
        e = score(runs, name, REF)["frames"]
        ax[1][0].plot([r["time"] for r in runs[name]][:len(e)], [100 * x for x in e], color=col,
                      ls=":" if name.startswith("finest") else "-", label=name)
ax[1][0].axhline(1, color="gray", lw=1, ls="--")
ax[1][0].set_xlabel("time, s")
ax[1][0].set_ylabel("probe error against %s, %% of 15.6 cm" % REF)
ax[1][0].legend(fontsize=7)
ax[1][0].grid(alpha=0.3)
for r in summary:
    if r["scene"] != "tool15" or r["run"].startswith("finest"):
        continue
    mk = "o" if r["run"].endswith("-semi") else "x"
    col = "C0" if r["courant"] == 0.5 else "C2" if r["courant"] == 0.25 else "C3"
    ax[1][1].plot(r["speedup_work"], 100 * r["err_max"], mk, color=col)
    ax[1][1].annotate(r["run"], (r["speedup_work"], 100 * r["err_max"]), fontsize=5)
ax[1][1].axhline(1, color="gray", lw=1, ls="--")
ax[1][1].axvline(20, color="gray", lw=1, ls="--")
ax[1][1].set_xscale("log")
ax[1][1].set_xlabel("speed-up in tet evaluations over the finest level at the same Courant factor")
ax[1][1].set_ylabel("largest probe error against %s, %% of 15.6 cm" % REF)
ax[1][1].grid(alpha=0.3)
fig.suptitle("Bunny, 15 mm tool 15 mm in: the finest level at Courant 0.5 to %g (-semi: damped, eq. 11) and the runs "
             "against %s (x undamped, o damped; blue Courant 0.5, green 0.25, red 0.125)" % (courants[0], REF), fontsize=9)
fig.tight_layout()
fig.savefig(f"{D}/debunne_bunny_ref.png", dpi=100)
