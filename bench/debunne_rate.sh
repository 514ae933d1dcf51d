#!/bin/sh
# The frame rate of the viewer's mr-liver scene (demos/mr_scene.c) on the
# CLI: its three levels (data/meshes/liver_mr{0,1,2}, cm scaled to m), E 5
# kPa, no gravity, base (z < -12 mm) pinned, gamma 0.1, 0.5 mm, a budget of
# 600,000 tet evaluations a frame, 10 ms frames, an 8 mm sphere pressing 9
# mm down over 0.4 s and back: 80 frames. Runs: `before` (BEFORE_BUILD's
# tetwarp, when given: a build of an earlier commit), `altitude` (this build,
# eq. 10's altitude step limit) and `stiffness` (this build, the default
# limit). Writes OUT_DIR/debunne_rate.csv (every frame), debunne_rate_summary.csv
# (frames/s, ms a frame, tet evaluations, the tool force's update rate, and
# each run's largest probe and tool-force difference from the first run),
# debunne_rate.log and debunne_rate.png.
# usage: bench/debunne_rate.sh [BUILD_DIR] [OUT_DIR] [BEFORE_BUILD_DIR]
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
BEFORE=${3:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$D"
PY=python3
$PY -c "import matplotlib" 2>/dev/null || PY=/usr/bin/python3
for l in 0 1 2; do # the scene scales SOFA's cm to m on load
    awk 'NR == 1 || /^#/ { print; next } NF >= 4 { printf "%s %.17g %.17g %.17g\n", $1, 0.01 * $2, 0.01 * $3, 0.01 * $4; next } { print }' \
        "data/meshes/liver_mr$l.node" > "$W/l$l.node"
    cp "data/meshes/liver_mr$l.ele" "$W/l$l.ele"
done
LOG="$D/debunne_rate.log"
: > "$LOG"
COMMON="--multires 3 --levels $W/l0.node,$W/l1.node,$W/l2.node --E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0
        --fix z<-0.012 --gamma 1e-4,5e-4 --work-budget 600000 --frame-dt 0.01 --frames 80
        --tool -0.0144,0.0269,0.0363,0.008 --tool-move 0,0,-0.009,0.4 --probe-at -0.0144,0.0269,0.0273"
echo "run,frame,active_nodes,interface_nodes,work,frame_ms,probe_x,probe_y,probe_z,tool_fx,tool_fy,tool_fz" > "$D/debunne_rate.csv"
run() { # name, tetwarp, options
    name=$1
    t=$2
    shift 2
    echo "== $name: $t run $COMMON $*" >> "$LOG"
    # shellcheck disable=SC2086
    "$t" run $COMMON "$@" --csv "$W/run.csv" > "$W/run.out" 2>&1
    cat "$W/run.out" >> "$LOG"
    awk -F, -v n="$name" 'NR > 1 { print n "," $1 "," $3 "," $4 "," $5 "," $7 "," $14 "," $15 "," $16 "," $17 "," $18 "," $19 }' \
        "$W/run.csv" >> "$D/debunne_rate.csv"
}
if [ -n "$BEFORE" ]; then
    run before "$BEFORE/tetwarp"
fi
run altitude "$B/tetwarp" --step-limit altitude
run stiffness "$B/tetwarp"
$PY bench/debunne_rate_plot.py "$D"
