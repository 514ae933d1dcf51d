#!/bin/sh
# Müller 2002 fig. 6: a 1 m x 10 cm x 10 cm bar fixed at x = 0 sags under
# gravity for 3 s; the volume of the linear bar grows, the warped, corotated
# and non-linear bars keep theirs. One CSV per method and a plot.
# usage: bench/fig6.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, bench/results/<machine>)
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-amd-epyc}
mkdir -p "$D"
for m in linear warp-vertex warp-edge corot-element green; do
    "$B/tetwarp" run --bar 1,0.1,0.1,20,2,2 --E 1e6 --method "$m" --dt 0.01 --steps 300 \
        --damping 0,0.02 --backend cpu --csv "$D/fig6_$m.csv" > "$D/fig6_$m.log" 2>&1
done
python3 bench/plot_fig6.py "$D"
