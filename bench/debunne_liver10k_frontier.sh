#!/bin/sh
# The adaptive simulation's work against its error on the 10k-node liver
# (bench/debunne_liver10k.sh's scene, damped by the semi-implicit filter,
# and undamped): how far ahead of the tool the finest level is reached
# (--tool-margin 0 to 12 mm), the split and merge thresholds (gamma 0.1,
# 0.5 mm; 0.03, 0.15 mm; and a narrow hysteresis, 0.12-0.15, 0.15 mm, 0.145,
# 0.15 mm and 0.15, 0.16 mm, that lets the region merge once the tool has left) and the coarse levels softened towards the finest level's
# compliance (--level-stiffness 0.89,0.65,0.96,1: the finest level's peak
# tool force over each fixed level's, damped). The references are the
# finest and finest-semi runs of OUT_DIR/debunne_liver10k.csv (run
# bench/debunne_liver10k.sh first, same build): time, tet evaluations, the
# probe's error (of the liver's 6.5 cm; largest over the whole run, to 0.2 s,
# and while the tool presses in, to 0.1 s) and the tool force's (of its
# peak) as debunne_liver10k.sh reports them.
# Writes OUT_DIR/debunne_liver10k_frontier.csv (one row a run),
# debunne_liver10k_frontier.log and debunne_liver10k_frontier.png.
# usage: bench/debunne_liver10k_frontier.sh [BUILD_DIR] [OUT_DIR]
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_liver_scene.sh
. "$(dirname "$0")/debunne_liver_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
T="$B/tetwarp"
test -f "$D/debunne_liver10k.csv" || { echo "run bench/debunne_liver10k.sh first" >&2; exit 1; }
bench_setup "$D"
liver_levels "$W"
LOG="$D/debunne_liver10k_frontier.log"
: > "$LOG"
LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
COMMON=$LIVER_SCENE
SOFT=0.89,0.65,0.96,1
echo "gamma_min,gamma_max,margin,stiffness,damped,file" > "$W/runs"
run() { # gamma_min gamma_max margin (m) stiffness (1 or soft) damped (1 or 0)
    f="$W/run$(wc -l < "$W/runs").csv"
    echo "$1,$2,$3,$4,$5,$f" >> "$W/runs"
    s=""
    [ "$4" = soft ] && s="--level-stiffness $SOFT"
    [ "$5" = 1 ] && s="$s --semi-implicit"
    echo "== gamma $1,$2, margin $3, stiffness $4, damped $5" >> "$LOG"
    # shellcheck disable=SC2086
    nice "$T" run --multires 4 --levels "$LEVELS" $COMMON --gamma "$1,$2" --tool-margin "$3" $s --csv "$f" >> "$LOG" 2>&1 || echo "failed" >> "$LOG"
}
for mg in 0 0.004 0.006 0.007 0.008 0.009 0.01 0.012; do run 1e-4 5e-4 $mg 1 1; done
for mg in 0 0.008; do run 1e-4 5e-4 $mg soft 1; done
for mg in 0 0.008; do run 3e-5 1.5e-4 $mg 1 1; done
for mg in 0 0.006 0.008 0.01; do run 1e-4 5e-4 $mg 1 0; done
for mg in 0.0075 0.008 0.009; do run 1.4e-4 1.5e-4 $mg 1 1; done
run 1.2e-4 1.5e-4 0.008 1 1
run 1.5e-4 1.6e-4 0.008 1 1
run 1.45e-4 1.5e-4 0.008 1 1
run 1.4e-4 1.5e-4 0.008 1 0
$PY - "$D" "$W/runs" <<'PYEOF'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
D, runs = sys.argv[1], sys.argv[2]
SIZE = 0.065
refs = {n: [{k: float(v) for k, v in r.items() if k != "run"} for r in csv.DictReader(open(f"{D}/debunne_liver10k.csv"))
            if r["run"] == n] for n in ("finest", "finest-semi")}
out = []
for spec in csv.DictReader(open(runs)):
    ref = refs["finest-semi" if spec["damped"] == "1" else "finest"]
    fpeak = max(abs(r["tool_fz"]) for r in ref)
    try:
        rs = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(spec["file"]))]
    except FileNotFoundError:
        rs = []
    n = min(len(rs), len(ref))
    if n < len(ref):
        out.append(dict(gamma_min_mm=1e3 * float(spec["gamma_min"]), gamma_max_mm=1e3 * float(spec["gamma_max"]),
                        margin_mm=1e3 * float(spec["margin"]), stiffness=spec["stiffness"], damped=int(spec["damped"]),
                        frames=n))
        continue
    d = [sum((rs[k]["probe_" + c] - ref[k]["probe_" + c]) ** 2 for c in "xyz") ** 0.5 for k in range(n)]
    out.append(dict(gamma_min_mm=1e3 * float(spec["gamma_min"]), gamma_max_mm=1e3 * float(spec["gamma_max"]),
                    margin_mm=1e3 * float(spec["margin"]), stiffness=spec["stiffness"], damped=int(spec["damped"]), frames=n,
                    work=sum(r["work"] for r in rs), ms=sum(r["frame_ms"] for r in rs),
                    speedup_work=sum(r["work"] for r in ref) / sum(r["work"] for r in rs),
                    speedup_time=sum(r["frame_ms"] for r in ref) / sum(r["frame_ms"] for r in rs),
                    probe_error=max(d) / SIZE,
                    probe_error_to_02=max(d[k] for k in range(n) if ref[k]["time"] <= 0.2 + 1e-9) / SIZE,
                    probe_error_pressing=max(d[k] for k in range(n) if ref[k]["time"] <= 0.1 + 1e-9) / SIZE,
                    force_error=max(abs(rs[k]["tool_fz"] - ref[k]["tool_fz"]) for k in range(n)) / fpeak,
                    max_active=max(r["active_nodes"] for r in rs)))
cols = ["damped", "gamma_min_mm", "gamma_max_mm", "margin_mm", "stiffness", "frames", "work", "ms", "speedup_work", "speedup_time",
        "probe_error", "probe_error_to_02", "probe_error_pressing", "force_error", "max_active"]
with open(f"{D}/debunne_liver10k_frontier.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for r in out:
        w.writerow([("%.6g" % r[c] if isinstance(r[c], float) else r[c]) if c in r else "" for c in cols])
for r in out:
    if "work" not in r:
        print("damped %d gamma %.3g,%.3g mm margin %4.1f mm stiffness %-4s: stopped after %d frames" % (
            r["damped"], r["gamma_min_mm"], r["gamma_max_mm"], r["margin_mm"], r["stiffness"], r["frames"]))
        continue
    print("damped %d gamma %.3g,%.3g mm margin %4.1f mm stiffness %-4s: work %5.1fx, time %5.1fx, probe %.3f %% (to 0.2 s"
          " %.3f %%, pressing %.3f %%), tool force %.1f %%, %d active at most" % (
              r["damped"], r["gamma_min_mm"], r["gamma_max_mm"], r["margin_mm"], r["stiffness"], r["speedup_work"], r["speedup_time"],
              100 * r["probe_error"], 100 * r["probe_error_to_02"], 100 * r["probe_error_pressing"],
              100 * r["force_error"], r["max_active"]))
fig, ax = plt.subplots(1, 3, figsize=(16, 5))
for (g0, g, s, dm), mk in [((0.1, 0.5, "1", 1), "o-"), ((0.1, 0.5, "soft", 1), "s--"), ((0.03, 0.15, "1", 1), "^:"),
                           ((0.1, 0.5, "1", 0), "x-."), ((0.14, 0.15, "1", 1), "D-"), ((0.12, 0.15, "1", 1), "v"),
                           ((0.15, 0.16, "1", 1), "P"), ((0.145, 0.15, "1", 1), "*"), ((0.14, 0.15, "1", 0), "X")]:
    pts = [r for r in out if "work" in r and abs(r["gamma_max_mm"] - g) < 1e-9 and abs(r["gamma_min_mm"] - g0) < 1e-9
           and r["stiffness"] == s and r["damped"] == dm]
    lab = "%s, gamma %.3g, %.3g mm%s" % ("damped" if dm else "undamped", g0, g, ", coarse levels softened" if s == "soft" else "")
    for a, key in zip(ax, ["probe_error", "probe_error_pressing", "force_error"]):
        a.plot([r["speedup_work"] for r in pts], [100 * r[key] for r in pts], mk, label=lab)
        for r in pts:
            a.annotate("%g" % r["margin_mm"], (r["speedup_work"], 100 * r[key]), fontsize=7)
ax[0].axhline(1, color="gray", lw=1, ls="--")
ax[0].axvline(20, color="gray", lw=1, ls="--")
ax[1].axhline(1, color="gray", lw=1, ls="--")
ax[1].axvline(20, color="gray", lw=1, ls="--")
ax[0].set_ylabel("probe error, % of 6.5 cm (largest over the 30 frames)")
ax[1].set_ylabel("probe error, % of 6.5 cm, while the tool presses in (to 0.1 s)")
ax[2].set_ylabel("tool force error, % of its peak")
for a in ax:
    a.set_xlabel("speed-up in tet evaluations over the finest level")
    a.set_xscale("log")
    a.grid(alpha=0.3)
    a.legend(fontsize=8)
fig.suptitle("10k-node liver: work against error, each run against the finest level damped alike; labels: --tool-margin, mm")
fig.tight_layout()
fig.savefig(f"{D}/debunne_liver10k_frontier.png", dpi=100)
PYEOF
