#!/bin/sh
# Paper reproductions: Müller 2002 §4.1 and §4.2,
# Hauth & Straßer force error, Debunne 2001 fig. 4/5, Zhuang & Canny
# explicit vs implicit. Writes CSV, logs, key-number .txt files and PNG plots
# to OUT_DIR. About 4-5 minutes on a 2-core machine, one thread per program.
# usage: bench/repro_papers.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build-repro, bench/results/cpu-2core-amd-epyc)
set -eu
B=${1:-build-repro}/bench
D=${2:-bench/results/cpu-2core-amd-epyc}
mkdir -p "$D"
# 3. Hauth & Straßer: force error against Green strain (instant)
"$B/tw_repro_force_error" --csv "$D/repro_force_error.csv" > "$D/repro_force_error.log" 2>&1
# 4. Debunne fig. 4/5: cube corner at 27/64/125 nodes (+729), linear/green, damped/undamped
"$B/tw_repro_cube_corner" --E 1e5 --cells 2,3,4,8 --csv "$D/repro_cube_corner.csv" 2> "$D/repro_cube_corner.log"
# the same at E 2e4 (large sag): undamped explicit green diverges at 125 nodes
"$B/tw_repro_cube_corner" --E 2e4 --cells 2,3,4 --csv "$D/repro_cube_corner_soft.csv" 2> "$D/repro_cube_corner_soft.log" || true
# 5. Zhuang & Canny: explicit green (auto dt) vs implicit corot (dt 0.01), cube dropped on a corner
"$B/tw_repro_explicit_implicit" --csv "$D/repro_explicit_implicit.csv" --sweep "$D/repro_explicit_implicit_sweep.csv" \
    > "$D/repro_explicit_implicit.log" 2>&1
"$B/tw_repro_explicit_implicit" --courant-factor 0.45 --csv "$D/repro_explicit_implicit_half.csv" --sweep "$D/repro_explicit_implicit_sweep_half.csv" \
    > "$D/repro_explicit_implicit_half.log" 2>&1
# 2. Müller §4.1: ms per step on the sagging bar
"$B/tw_repro_timing" --csv "$D/repro_timing.csv" > "$D/repro_timing.log" 2>&1
# 1. Müller §4.2: largest stable dt of the dropped tube (the longest, ~3 min)
"$B/tw_repro_tube_dt" --csv "$D/repro_tube_dt.csv" --trials "$D/repro_tube_dt_trials.csv" > "$D/repro_tube_dt.log" 2>&1
python3 bench/plot_repro_papers.py "$D"
