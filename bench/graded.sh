#!/bin/sh
# Graded vs uniform bunny lattice coming to rest under gravity (bench/graded.c
# says how: corot-element, implicit Euler, dt 0.01, E 1e5, pinned base, rest
# when every speed stays below 1e-5 m/s for 30 steps), at fine sizes 8 and
# 5 mm: graded.csv (one row per mesh), graded_trace.csv (every step's largest
# speed), graded.log (progress and machine), graded.png (speed vs step).
#
# Usage: bench/graded.sh BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]
#   e.g. bench/graded.sh build bench/results/cpu-2core-intel-xeon
# BEFORE_BUILD_DIR: a build of an earlier commit whose rows are written too,
# as graded_before.csv / graded_before_trace.csv (the plot draws them dashed).
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]}
BEFORE=$3
S=$(dirname "$0")/../data/meshes/bunny_closed_3485v.off
export OMP_WAIT_POLICY=PASSIVE
LOG=$OUT/graded.log
{
    echo "# bench/graded.sh $*  (commit $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
"$B/bench/tw_bench_graded" "$S" 0.008 0.005 --trace "$OUT/graded_trace.csv" > "$OUT/graded.csv" 2>> "$LOG"
if [ -n "$BEFORE" ]; then
    echo "# before: $BEFORE" >> "$LOG"
    "$BEFORE/bench/tw_bench_graded" "$S" 0.008 0.005 --trace "$OUT/graded_before_trace.csv" \
        > "$OUT/graded_before.csv" 2>> "$LOG"
fi
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
python3 "$(dirname "$0")/plot_graded.py" "$OUT"
