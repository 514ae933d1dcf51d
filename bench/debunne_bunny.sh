#!/bin/sh
# Debunne et al. 2001 §5 on the Stanford bunny: the adaptive simulation
# against the fixed finest level, with a sphere tool pressing into its back,
# as bench/debunne_liver10k.sh and debunne_liver10k_frontier.sh do for the
# liver. Levels and scene: bench/debunne_bunny_scene.sh (169, 688, 2,330 and
# 10,093 nodes; 15.6 cm across; E 5 kPa, no gravity, base pinned, a 15 mm
# sphere 15 mm into the back over 0.1 s and back over 0.1 s, 0.3 s in 10 ms
# frames). The reference is the finest level alone (--fixed-level 3),
# undamped (`finest`) and damped by the semi-implicit filter of eq. 11
# (`finest-semi`); each run is compared with the reference damped alike
# (names ending in -semi are damped). Also run: the reference at --courant
# 0.35 (`finest-c35`, `finest-c35-semi`: how far the reference itself moves
# with its steps), each coarser level alone (`levelL`, `levelL-semi`) and
# every node on the finest level while the tool moves (`all-fine`,
# `all-fine-semi`: --tool-margin 0.2 m, from the coarsest
# level: what the first two frames on coarse levels cost; `all-fine-l3`,
# `all-fine-l3-semi`: from the finest level, the engine against the fixed
# level with every node active on it);
# the adaptive runs start on the coarsest level (`-lN`: on level N; from
# level 3 every node merges away at once but those near the tool) at
# gamma 0.1, 0.5 mm (`g01`) or 1, 5 mm (`g1`), with --tool-margin M mm
# (`-mM`) and the coarse levels softened to the finest level's peak tool
# force (`-soft`, --level-stiffness 0.86,0.45,0.77,1: the damped finest
# level's peak over each fixed level's, 0.380 N against 0.442, 0.841 and
# 0.490 N).
# With SCENE tool8, the liver's tool as it is instead (an 8 mm sphere 8 mm
# in: BUNNY_SCENE_TOOL8) and a shorter list of runs, written as
# debunne_bunny_tool8.*.
# Writes OUT_DIR/debunne_bunny.csv (every frame of every run),
# debunne_bunny_summary.csv (time, tet evaluations, the probe's error of the
# bunny's 15.6 cm over the whole run, to 0.2 s and while pressing, to 0.1 s,
# the tool force's of its peak), debunne_bunny.log, debunne_bunny.png (a few
# runs over time) and debunne_bunny_frontier.png (work against error).
# usage: bench/debunne_bunny.sh [BUILD_DIR] [OUT_DIR] [SCENE]
#        (defaults: build, bench/results/cpu-2core-intel-xeon, tool15)
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_bunny_scene.sh
. "$(dirname "$0")/debunne_bunny_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
SCENE=${3:-tool15}
case $SCENE in
    tool15) N=debunne_bunny; TOOL="15 mm sphere 15 mm into its back" ;;
    tool8) N=debunne_bunny_tool8; BUNNY_SCENE=$BUNNY_SCENE_TOOL8; TOOL="8 mm sphere 8 mm into its back (the liver's tool)" ;;
    *) echo "SCENE: tool15 or tool8" >&2; exit 2 ;;
esac
T="$B/tetwarp"
bench_setup "$D"
test -x "$B/bench/tw_decimate" || { echo "$B/bench/tw_decimate not built (apt-get install libopenmesh-dev)" >&2; exit 1; }
LOG="$D/$N.log"
: > "$LOG"
bunny_levels "$B" "$W" >> "$LOG"
LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
SOFT=0.86,0.45,0.77,1
multires_frames_header "$D/$N.csv"
run() { # name, options
    bunny_run "$D/$N.csv" "$@"
}
run finest --fixed-level 3
run finest-semi --fixed-level 3 --semi-implicit
run finest-c35 --fixed-level 3 --courant 0.35
run finest-c35-semi --fixed-level 3 --courant 0.35 --semi-implicit
for l in 0 1 2; do
    run "level$l" --fixed-level $l
    run "level$l-semi" --fixed-level $l --semi-implicit
done
if [ "$SCENE" = tool15 ]; then
run all-fine --gamma 1e-4,5e-4 --tool-margin 0.2
run all-fine-semi --gamma 1e-4,5e-4 --tool-margin 0.2 --semi-implicit
run all-fine-l3 --gamma 1e-4,5e-4 --tool-margin 0.2 --start-level 3
run all-fine-l3-semi --gamma 1e-4,5e-4 --tool-margin 0.2 --start-level 3 --semi-implicit
# damped
run g01-semi --gamma 1e-4,5e-4 --semi-implicit
run g01-soft-semi --gamma 1e-4,5e-4 --level-stiffness $SOFT --semi-implicit
run g01-m8-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --semi-implicit
run g01-m8-soft-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --level-stiffness $SOFT --semi-implicit
run g01-m15-semi --gamma 1e-4,5e-4 --tool-margin 0.015 --semi-implicit
run g01-m15-soft-l1-semi --gamma 1e-4,5e-4 --tool-margin 0.015 --level-stiffness $SOFT --start-level 1 --semi-implicit
run g01-hyst-m8-semi --gamma 1.4e-4,1.5e-4 --tool-margin 0.008 --semi-implicit
run g1-m8-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --semi-implicit
run g1-m15-semi --gamma 1e-3,5e-3 --tool-margin 0.015 --semi-implicit
run g1-m15-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.015 --start-level 1 --semi-implicit
run g1-m20-semi --gamma 1e-3,5e-3 --tool-margin 0.02 --semi-implicit
run g1-m20-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.02 --start-level 1 --semi-implicit
run g1-m25-semi --gamma 1e-3,5e-3 --tool-margin 0.025 --semi-implicit
run g1-m15-l3-semi --gamma 1e-3,5e-3 --tool-margin 0.015 --start-level 3 --semi-implicit
run g1-m18-l3-semi --gamma 1e-3,5e-3 --tool-margin 0.018 --start-level 3 --semi-implicit
run g1-m20-l3-semi --gamma 1e-3,5e-3 --tool-margin 0.02 --start-level 3 --semi-implicit
run g1-m20-l2-semi --gamma 1e-3,5e-3 --tool-margin 0.02 --start-level 2 --semi-implicit
run g1-m25-l3-semi --gamma 1e-3,5e-3 --tool-margin 0.025 --start-level 3 --semi-implicit
run g01-m8-l3-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --start-level 3 --semi-implicit
# undamped
run g01 --gamma 1e-4,5e-4
run g01-m15 --gamma 1e-4,5e-4 --tool-margin 0.015
run g1 --gamma 1e-3,5e-3
run g1-m15 --gamma 1e-3,5e-3 --tool-margin 0.015
run g1-m25 --gamma 1e-3,5e-3 --tool-margin 0.025
run g1-m15-l3 --gamma 1e-3,5e-3 --tool-margin 0.015 --start-level 3
run g1-m20-l3 --gamma 1e-3,5e-3 --tool-margin 0.02 --start-level 3
DRAW=finest,finest-semi,finest-c35-semi,g01-m8-semi,g1-m15-l1-semi,g1-m20-l2-semi,g1
else
# damped
run g01-semi --gamma 1e-4,5e-4 --semi-implicit
run g01-m8-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --semi-implicit
run g01-m8-l1-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --start-level 1 --semi-implicit
run g1-m8-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --semi-implicit
run g1-m4-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.004 --start-level 1 --semi-implicit
run g1-m8-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 1 --semi-implicit
run g1-m12-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.012 --start-level 1 --semi-implicit
run g1-m8-l2-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 2 --semi-implicit
run g1-m8-l3-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 3 --semi-implicit
# undamped
run g01 --gamma 1e-4,5e-4
run g1-m8 --gamma 1e-3,5e-3 --tool-margin 0.008
run g1-m8-l1 --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 1
DRAW=finest,finest-semi,finest-c35-semi,g1-m8-semi,g1-m8-l1-semi,g1-m8-l2-semi,g1-m8-l1
fi
$PY bench/plot_debunne_liver.py "$D" "$N" "Bunny (169, 688, 2330, 10093 nodes), $TOOL" 0.1558 "$DRAW"
# work against error, each run against the finest level damped alike
$PY - "$D" "$N" "$TOOL" <<'PYEOF'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
D, N, TOOL = sys.argv[1:4]
rows = list(csv.DictReader(open(f"{D}/{N}_summary.csv")))
fig, ax = plt.subplots(1, 3, figsize=(16, 5))
for damped, mk in [(1, "o"), (0, "x")]:
    pts = [r for r in rows if r["run"].endswith("-semi") == bool(damped) and not r["run"].startswith("finest-semi")
           and r["run"] != "finest"]
    for a, key in zip(ax, ["probe_error", "probe_error_pressing", "force_error"]):
        a.plot([float(r["speedup_work"]) for r in pts], [100 * float(r[key]) for r in pts], mk,
               label="damped (eq. 11)" if damped else "undamped")
        for r in pts:
            a.annotate(r["run"].replace("-semi", ""), (float(r["speedup_work"]), 100 * float(r[key])), fontsize=6)
for a in ax[:2]:
    a.axhline(1, color="gray", lw=1, ls="--")
    a.axvline(20, color="gray", lw=1, ls="--")
ax[0].set_ylabel("probe error, % of 15.6 cm (largest over the 30 frames)")
ax[1].set_ylabel("probe error, % of 15.6 cm, while the tool presses in (to 0.1 s)")
ax[2].set_ylabel("tool force error, % of its peak")
for a in ax:
    a.set_xlabel("speed-up in tet evaluations over the finest level")
    a.set_xscale("log")
    a.grid(alpha=0.3)
    a.legend(fontsize=8)
fig.suptitle("Bunny, 10k-node finest level, %s: work against error (finest-c35: the reference at "
             "--courant 0.35; all-fine: every node finest while the tool moves)" % TOOL, fontsize=10)
fig.tight_layout()
fig.savefig(f"{D}/{N}_frontier.png", dpi=100)
PYEOF
