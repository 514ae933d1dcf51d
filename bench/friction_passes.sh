#!/bin/sh
# Contact passes and CG iterations per step on friction scenes (mu 0.5,
# corot-element), by tw_contact_report: one CSV row per scene, as in
# contact_report.csv. Run it on two builds to compare them (the friction
# pass cap before and after: contact_report.md, "Friction passes").
#
# Usage: bench/friction_passes.sh BUILD_DIR OUT_CSV
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
R=$B/bench/tw_contact_report
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
"$R" --header > "$OUT"
while read -r scene method integ dt mu seconds; do
    "$R" "$scene" "$method" "$integ" "$dt" "$mu" "$seconds" >> "$OUT"
done <<JOBS
cube corot-element implicit-euler 0.0333333 0.5 1
cube corot-element implicit-euler 0.0166667 0.5 1
cube corot-element implicit-euler 0.01 0.5 1
cube corot-element implicit-euler 0.001 0.5 1
tube corot-element implicit-euler 0.0333333 0.5 1
tube corot-element implicit-euler 0.01 0.5 1
armadillo corot-element implicit-euler 0.0333333 0.5 0.6
armadillo corot-element implicit-euler 0.0166667 0.5 0.6
bunny corot-element implicit-euler 0.0333333 0.5 0.6
cube corot-element bdf2 0.0333333 0.5 0.6
JOBS
