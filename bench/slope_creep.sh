#!/bin/sh
# Creep near the friction angle (bench/slope_creep.c): the block placed on
# or held on a slope, tan 0.49 = 0.98 mu and tan 0.4, implicit Euler and
# BDF2; the placed block also 100 m from the origin. Run it on two builds to compare them.
#
# Usage: bench/slope_creep.sh BUILD_DIR OUT_CSV
# Plot two runs: bench/plot_slope_creep.py BEFORE_CSV AFTER_CSV OUT_PNG [LABELS TITLE]
# (slope_creep.png: before = 078ca98, after = 34b3b7d; slope_creep_double.png
# and slope_creep_float.png: 2161cd2 against b68e325, each build).
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
echo "integrator,dt,start,tan,settle_mm_0_0.5s,creep_mm_0.5_1.5s,solves_per_step_1_1.5s,cg_per_step_1_1.5s,ke_end_J,offset_m" > "$OUT"
while read -r tan dt bdf2 hold off; do
    "$B/bench/tw_bench_slope_creep" "$tan" "$dt" "$bdf2" $hold $off >> "$OUT"
done <<JOBS
0.49 0.001 0
0.49 0.016666666666666666 0
0.49 0.001 1
0.49 0.016666666666666666 1
0.49 0.001 0 0.3
0.49 0.01 0 0.3
0.4 0.001 0
0.4 0.01 0
0.49 0.001 0 0 100
0.49 0.016666666666666666 0 0 100
0.49 0.001 1 0 100
0.49 0.016666666666666666 1 0 100
JOBS
