#!/bin/sh
# Debunne et al. 2001 §5: the adaptive simulation against the fixed finest
# level, on the liver with the tool pressing in. Levels: SOFA's coarse liver
# (data/meshes/liver_sofa.msh, 181 nodes, cm scaled to m) and TetGen meshes
# of its boundary at about 4,000 and 12,000 tets (622 and 3,112 nodes). The
# base (z < -12 mm) is pinned, no gravity; an 8 mm sphere starts 1 mm above
# the top, goes 9 mm down over 0.1 s and back over 0.1 s; 0.3 s at 10 ms
# frames. The reference is the finest level alone (--fixed-level 2); the
# adaptive runs start on the coarsest level; one of them with a budget of
# tet evaluations a frame (the frame-rate guarantee, in counts); the last
# pair is damped by the semi-implicit filter, undamped otherwise. Writes OUT_DIR/debunne_liver.csv
# (every frame of every run), debunne_liver_summary.csv (time, tet
# evaluations, the probe's and the tool force's error against the
# reference), debunne_liver.log and debunne_liver.png.
# usage: bench/debunne_liver.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_liver_scene.sh
. "$(dirname "$0")/debunne_liver_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
T="$B/tetwarp"
bench_setup "$D"
LOG="$D/debunne_liver.log"
: > "$LOG"
$PY bench/liver_levels.py data/meshes/liver_sofa.msh "$W/liver0" >> "$LOG"
"$T" mesh "$W/liver0_surface.obj" --tets 4000 --out "$W/liver1" --no-cache >> "$LOG" 2>&1
"$T" mesh "$W/liver0_surface.obj" --tets 12000 --out "$W/liver2" --no-cache >> "$LOG" 2>&1
LEVELS="$W/liver0.node,$W/liver1.node,$W/liver2.node"
multires_frames_header "$D/debunne_liver.csv"
run() { # name, options
    liver_run "$D/debunne_liver.csv" 3 "$@"
}
run finest --fixed-level 2
run adaptive --gamma 1e-4,5e-4
# the guaranteed frame rate in counts: at most 6e5 tet evaluations a frame
run adaptive-budget --gamma 1e-4,5e-4 --work-budget 600000
# damped by the semi-implicit filter (eq. 11), each against the finest level damped alike
run finest-semi --fixed-level 2 --semi-implicit
run adaptive-semi --gamma 1e-4,5e-4 --semi-implicit
$PY bench/plot_debunne_liver.py "$D"
