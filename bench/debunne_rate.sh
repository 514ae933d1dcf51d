#!/bin/bash
# The frame rate of the viewer's mr-liver scene (demos/mr_scene.c) on the
# CLI, and the tool force's rate on a 10k-node liver. The scene: its three
# levels (data/meshes/liver_mr{0,1,2}, cm scaled to m), E 5 kPa, no gravity,
# base (z < -12 mm) pinned, gamma 0.1, 0.5 mm, a budget of 600,000 tet
# evaluations a frame, 10 ms frames, an 8 mm sphere pressing 9 mm down over
# 0.4 s and back: 80 frames. The 10k-node liver is the same scene with a
# fourth level below them (data/meshes/liver_mr3, 10,724 nodes).
# Runs, back to back: `before` (BEFORE_BUILD's tetwarp, when given: a build
# of an earlier commit) and `after` (this build) on the scene; `budget`
# (this build, --frame-budget 10: the work budget follows the measured cost
# of a tet evaluation so that a frame takes the display step, §3.4);
# `10k-before`, `10k` and `10k-budget` likewise on the four levels. Each run
# also runs for 1 frame to time the set-up, so that the CPU time of its
# frames (user + sys, less the set-up's) can be told apart from the wall
# time another process on the shared cores takes (each frame's CPU time is
# in the CSV's cpu_ms where the build writes it). The runs are at nice -5
# when allowed. Writes OUT_DIR/debunne_rate.csv (every frame),
# debunne_rate_summary.csv (frames/s, ms a frame on the clock and in CPU
# time, tet evaluations, the tool force's update rate, and each run's
# largest probe and tool-force difference from its set's first run),
# debunne_rate.log and debunne_rate.png.
# usage: bench/debunne_rate.sh [BUILD_DIR] [OUT_DIR] [BEFORE_BUILD_DIR]
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_liver_scene.sh
. "$(dirname "$0")/debunne_liver_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
BEFORE=${3:-}
bench_setup "$D"
bench_nice
liver_levels "$W"
LOG="$D/debunne_rate.log"
: > "$LOG"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); load average: $(cut -d' ' -f1-3 /proc/loadavg); ${NICE:-no nice}" >> "$LOG"
L3="--multires 3 --levels $W/l0.node,$W/l1.node,$W/l2.node"
L4="--multires 4 --levels $W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
COMMON=$RATE_SCENE
echo "run,frame,active_nodes,interface_nodes,work,frame_ms,probe_x,probe_y,probe_z,tool_fx,tool_fy,tool_fz,cpu_ms" > "$D/debunne_rate.csv"
run() { # name, tetwarp, options
    name=$1
    t=$2
    shift 2
    echo "== $name: $t run $COMMON $* --frames 80" >> "$LOG"
    # shellcheck disable=SC2086
    bench_frames_cpu 80 $NICE "$t" run $COMMON "$@" --csv "$W/run.csv"
    awk -F, -v n="$name" 'NR > 1 { print n "," $1 "," $3 "," $4 "," $5 "," $7 "," $14 "," $15 "," $16 "," $17 "," $18 "," $19 "," (NF >= 22 ? $22 : "") }' \
        "$W/run.csv" >> "$D/debunne_rate.csv"
}
if [ -n "$BEFORE" ]; then
    run before "$BEFORE/tetwarp" $L3
fi
run after "$B/tetwarp" $L3
run budget "$B/tetwarp" $L3 --frame-budget 10
if [ -n "$BEFORE" ]; then
    run 10k-before "$BEFORE/tetwarp" $L4
fi
run 10k "$B/tetwarp" $L4
run 10k-budget "$B/tetwarp" $L4 --frame-budget 10
$PY bench/debunne_rate_plot.py "$D"
