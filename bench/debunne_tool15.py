"""bench/debunne_tool15.sh's report: each run's finest-level field against
the reference's (run `ref`, the finest level alone at a small Courant
factor), frame by frame.

Per run and frame, each finest vertex's distance from the reference's, of
the bunny's 15.6 cm: the probe's (the vertex the frames CSV follows: the
finest vertex under the tool), the largest vertex's, the RMS over all
vertices, their 99th percentile, and the same in the dent (vertices whose
rest point lies within R_DENT of the probe's) and outside it; each the
largest over the 30 frames. Per level: the largest error of the vertices
that level simulates, over the frames. Cost: the run's CPU time (cpu_ms
summed over the frames; the median over the repetitions) and tet evaluations, and the speed-ups over the
finest level alone at the runs' Courant factor (run `finest`).

Writes OUT_DIR/NAME.csv (a row a run), NAME_frames.csv (a row a run and
frame) and NAME.png (NAME: debunne_tool15 unless given); prints the table.
usage: python3 bench/debunne_tool15.py FIELDS_DIR OUT_DIR [NAME]"""
import csv
import glob
import os
import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt

F, D = sys.argv[1], sys.argv[2]
N = sys.argv[3] if len(sys.argv) > 3 else "debunne_tool15"
SIZE = 0.1558  # m: the bunny's largest extent
R_DENT = 0.03  # m: the dent region's radius about the probe's rest point
PRESS_END = 0.1  # s: the tool turns back
TOOL_END = 0.2  # s: the tool is back up


def load_field(name):
    a = np.loadtxt(f"{F}/{name}.field.csv", delimiter=",", skiprows=1)
    frames = int(a[:, 0].max())
    nv = int(a[:, 1].max()) + 1
    return a[:, 2].reshape(frames, nv).astype(int), a[:, 3:6].reshape(frames, nv, 3)


def load_frames(name):
    return list(csv.DictReader(open(f"{F}/{name}.frames.csv")))


names = sorted(os.path.basename(p)[: -len(".field.csv")] for p in glob.glob(f"{F}/*.field.csv"))
_, xref = load_field("ref")
fr_ref = load_frames("ref")
# the rest positions: the finest level's own frame-0 field is not written; the
# probe is the vertex nearest the tool's axis at the top, so take it from the
# frames CSV's first position's vertex: the one whose reference path matches
pref = np.array([[float(r["probe_x"]), float(r["probe_y"]), float(r["probe_z"])] for r in fr_ref])
probe = int(np.argmin(np.linalg.norm(xref - pref[:, None, :], axis=2).sum(axis=0)))
times = np.array([float(r["time"]) for r in fr_ref])
press = times <= PRESS_END + 1e-9
tool = times <= TOOL_END + 1e-9
rest_probe = xref[0, probe]
TOOL_C0, TOOL_R, TOOL_DZ, TOOL_T = np.array([0.0049, -0.009, 0.1147]), 0.015, -0.016, 0.1  # the scene's


def tool_center(t):
    """the sphere's centre at t: down by TOOL_DZ over TOOL_T and back"""
    u = t / TOOL_T if t <= TOOL_T else max(0.0, 2 - t / TOOL_T)
    return TOOL_C0 + np.array([0, 0, TOOL_DZ * u])


# the contact patch of the reference: its vertices within 0.2 mm of the
# sphere's surface, and how far (at rest, from the probe) it reaches
r0 = np.linalg.norm(xref[0] - rest_probe, axis=1)
contact = np.array([np.linalg.norm(xref[k] - tool_center(times[k]), axis=1) < TOOL_R + 2e-4 for k in range(len(times))])
contact_radius = np.array([r0[c].max() if c.any() else 0.0 for c in contact])  # close to its rest point (0.01 s in): only for the dent's radius
base_cpu = base_work = None
rows, frame_rows = [], []
for name in ["finest"] + [n for n in names if n != "finest"]:
    if not os.path.exists(f"{F}/{name}.field.csv"):
        continue
    lev, x = load_field(name)
    fr = load_frames(name)
    if x.shape != xref.shape:
        print(f"{name}: {x.shape} frames/vertices against the reference's {xref.shape}: skipped")
        continue
    e = np.linalg.norm(x - xref, axis=2) / SIZE * 100  # %, frames x vertices
    dent = np.linalg.norm(xref[0] - rest_probe, axis=1) < R_DENT
    # CPU time: the median over the repetitions (name.frames.csv, name.repN.frames.csv)
    cpus = sorted(sum(float(r["cpu_ms"]) for r in q) for q in
                  [fr] + [list(csv.DictReader(open(p))) for p in sorted(glob.glob(f"{F}/{name}.rep*.frames.csv"))])
    cpu = cpus[len(cpus) // 2]
    work = sum(float(r["work"]) for r in fr)
    if name == "finest":
        base_cpu, base_work = cpu, work
    per_level = {}
    for lv in range(4):
        m = lev == lv
        per_level[lv] = (float(e[m].max()) if m.any() else float("nan"), float(m.sum(axis=1).mean()))
    row = {
        "run": name, "cpu_s": cpu / 1e3, "cpu_s_min": cpus[0] / 1e3, "cpu_s_max": cpus[-1] / 1e3,
        "repetitions": len(cpus), "work_M": work / 1e6,
        "speedup_cpu": base_cpu / cpu, "speedup_work": base_work / work,
        "probe_max": e[:, probe].max(), "probe_press": e[press, probe].max(),
        "probe_tool": e[tool, probe].max(), "field_max_tool": e[tool].max(),
        "dent_max_tool": e[tool][:, dent].max(), "far_max_tool": e[tool][:, ~dent].max(),
        "field_10th": np.sort(e, axis=1)[:, -10].max(),
        "field_max": e.max(), "field_rms": np.sqrt((e ** 2).mean(axis=1)).max(),
        "field_mean": e.mean(axis=1).max(), "field_p99": np.percentile(e, 99, axis=1).max(),
        "dent_max": e[:, dent].max(), "dent_rms": np.sqrt((e[:, dent] ** 2).mean(axis=1)).max(),
        "far_max": e[:, ~dent].max(), "far_rms": np.sqrt((e[:, ~dent] ** 2).mean(axis=1)).max(),
        "n_over_1pct": int((e > 1).sum(axis=1).max()),
        "n_over_1pct_tool": int((e[tool] > 1).sum(axis=1).max()),
        "contact_max": max(float(e[k, contact[k]].max()) for k in range(len(times)) if contact[k].any()),
        "frame_field_max": int(np.argmax(e.max(axis=1))) + 1,
    }
    for lv in range(4):
        row[f"l{lv}_max"], row[f"l{lv}_vertices"] = per_level[lv]
    rows.append(row)
    for k in range(e.shape[0]):
        frame_rows.append({"run": name, "frame": k + 1, "time": times[k], "probe": e[k, probe], "max": e[k].max(),
                           "rms": np.sqrt((e[k] ** 2).mean()), "p99": np.percentile(e[k], 99),
                           "dent_max": e[k, dent].max(), "far_max": e[k, ~dent].max(),
                           "dent_rms": np.sqrt((e[k, dent] ** 2).mean()),
                           "far_rms": np.sqrt((e[k, ~dent] ** 2).mean()),
                           "cpu_ms": float(fr[k]["cpu_ms"]), "work": float(fr[k]["work"]),
                           "active": int(fr[k]["active_nodes"]), "contact_vertices": int(contact[k].sum()),
                           "contact_radius_mm": 1e3 * contact_radius[k],
                           "contact_max": e[k, contact[k]].max() if contact[k].any() else 0.0,
                           "contact_not_finest": int((contact[k] & (lev[k] != 3)).sum()),
                           # the finest level's reach: the nearest vertex (from the probe, at
                           # rest) that the finest level does not simulate
                           "fine_reach_mm": 1e3 * (r0[lev[k] != 3].min() if (lev[k] != 3).any() else r0.max())})

keys = list(rows[0].keys())
with open(f"{D}/{N}.csv", "w", newline="") as f:
    w = csv.DictWriter(f, keys)
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
with open(f"{D}/{N}_frames.csv", "w", newline="") as f:
    w = csv.DictWriter(f, list(frame_rows[0].keys()))
    w.writeheader()
    for r in frame_rows:
        w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})

print(f"probe vertex {probe}; dent: {int(dent.sum())} of {dent.size} vertices within {R_DENT * 1e3:.0f} mm")
print("| run | CPU s, median (range) | speed-up CPU / work | probe max (to 0.2 s; pressing) | contact patch max | field max (to 0.2 s) / "
      "10th / p99 / RMS | dent max (to 0.2 s) / RMS | far max (to 0.2 s) / RMS | vertices > 1 % (to 0.2 s) | "
      "largest per level 0-3 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['run']} | {r['cpu_s']:.2f} ({r['cpu_s_min']:.2f}-{r['cpu_s_max']:.2f}) | {r['speedup_cpu']:.1f}x / {r['speedup_work']:.1f}x | "
          f"{r['probe_max']:.2f} ({r['probe_tool']:.2f}; {r['probe_press']:.2f}) % | {r['contact_max']:.2f} % | "
          f"{r['field_max']:.2f} "
          f"({r['field_max_tool']:.2f}) / {r['field_10th']:.2f} / {r['field_p99']:.2f} / {r['field_rms']:.2f} % | "
          f"{r['dent_max']:.2f} ({r['dent_max_tool']:.2f}) / {r['dent_rms']:.2f} % | {r['far_max']:.2f} "
          f"({r['far_max_tool']:.2f}) / {r['far_rms']:.2f} % | {r['n_over_1pct']} ({r['n_over_1pct_tool']}) | "
          + " / ".join("-" if np.isnan(r[f'l{lv}_max']) else f"{r[f'l{lv}_max']:.2f}" for lv in range(4)) + " |")

fig, ax = plt.subplots(1, 3, figsize=(17, 5.2))
MARKS = (("probe_max", "probe (the vertex under the tool)", "C0", "o"),
         ("contact_max", "the reference's contact patch, largest", "C4", "D"),
         ("field_max", "every vertex, largest", "C3", "^"),
         ("field_p99", "every vertex, 99th percentile", "C2", "s"),
         ("field_rms", "every vertex, RMS", "C1", "x"))
scored = [r for r in rows if r["run"] != "ref"]
for key, label, color, marker in MARKS:
    ax[0].scatter([r["speedup_cpu"] for r in scored], [r[key] for r in scored], color=color, marker=marker,
                  label=label)
for r in scored:
    ax[0].annotate(r["run"], (r["speedup_cpu"], r["probe_max"]), fontsize=6)
ax[0].axhline(1, color="gray", ls="--", lw=1)
ax[0].axvline(20, color="gray", ls="--", lw=1)
ax[0].set_xscale("log")
ax[0].set_xlabel("speed-up in CPU time of the same 0.3 s over the finest level (Courant 0.5)")
ax[0].set_ylabel("error, % of 15.6 cm (largest over the 30 frames)")
ax[0].legend(fontsize=7)
ax[0].grid(alpha=0.3)
SHOWN = ("finest", "level2", "g1", "g3-m8-l1", "g1-m12-l1", "g1-m30-l3")
for r in scored:
    if r["run"] not in SHOWN:
        continue
    q = [q for q in frame_rows if q["run"] == r["run"]]
    ax[1].plot([v["time"] for v in q], [v["dent_max"] for v in q], lw=1, label=r["run"])
    ax[2].plot([v["time"] for v in q], [v["far_max"] for v in q], lw=1, label=r["run"])
ax[1].set_title(f"largest error within {R_DENT * 1e3:.0f} mm of the probe (the dent)", fontsize=9)
ax[2].set_title("largest error farther (the ears, once the tool lifts)", fontsize=9)
for a in ax[1:]:
    a.axhline(1, color="gray", ls="--", lw=1)
    a.axvline(PRESS_END, color="gray", ls=":", lw=1)
    a.axvline(TOOL_END, color="gray", ls=":", lw=1)
    a.set_xlabel("t, s (the tool turns back at 0.1 s, is up at 0.2 s)")
    a.set_ylabel("% of 15.6 cm")
    a.grid(alpha=0.3)
ax[2].legend(fontsize=7)
fig.suptitle("Bunny, 15 mm sphere 15 mm in: each run's field against the finest level at Courant %s (%s)" %
             (os.environ.get("REF", "0.03125"), N), fontsize=10)
fig.tight_layout()
fig.savefig(f"{D}/{N}.png", dpi=100)
