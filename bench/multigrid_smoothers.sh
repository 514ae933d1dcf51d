#!/bin/sh
# The multigrid's smoother and hierarchy options on the step systems of
# bench/boomeramg.sh's scenes (bench/multigrid_smoothers.c): PCG from zero to
# 1e-4, one thread, CPU ms (the least of REPS round-robin repeats), CG
# iterations, for each variant below (block-Jacobi PCG: bench/boomeramg.sh).
#   bench/multigrid_smoothers.sh BUILD_DIR [OUT_DIR]
# Writes multigrid_smoothers.{csv,log,png} into OUT_DIR (default
# bench/results/cpu-2core-intel-xeon).
set -e
B=${1:?usage: $0 BUILD_DIR [OUT_DIR]}
HERE=$(dirname "$0")
OUT=${2:-$HERE/results/cpu-2core-intel-xeon}
REPS=${REPS:-5}
SCENES=${SCENES:-"bar:40,8,8 $HERE/../data/meshes/bunny_closed_3485v.tet.node bar:90,14,13 bar:80,16,16 bar:160,32,32"}
# NAME=KIND[,key=value]: jF / cF[/C] block-Jacobi sweeps / Chebyshev degree
# on the finest level (below it C); see bench/multigrid_smoothers.c
VARIANTS=${VARIANTS:-"jacobi1=j1 jacobi2=j2 cheb2=c2 cheb2-ratio5=c2,ratio=5 cheb2-ratio30=c2,ratio=30 cheb3=c3 cheb2-coarse1=c2/1 cheb2-strength0.12=c2,th=0.12 cheb2-pdamp1.5=c2,pd=1.5"}
export OMP_WAIT_POLICY=PASSIVE
NICE="nice -n -5"
$NICE true 2> /dev/null || NICE=""
LOG=$OUT/multigrid_smoothers.log
CSV=$OUT/multigrid_smoothers.csv
args=""
for v in $VARIANTS; do args="$args --variant $v"; done
{
    echo "# bench/multigrid_smoothers.sh $*  (commit $(git -C "$HERE" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg); run with: ${NICE:-no nice}"
    echo "# command: tw_bench_multigrid_smoothers --no-jacobi --reps $REPS$args $SCENES"
} > "$LOG"
# shellcheck disable=SC2086 # lists
$NICE "$B/bench/tw_bench_multigrid_smoothers" --no-jacobi --reps "$REPS" $args $SCENES 2>> "$LOG" | tee "$CSV" >> "$LOG"
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)" >> "$LOG"
${PYTHON:-python3} "$HERE/plot_multigrid_smoothers.py" "$CSV" "$OUT/multigrid_smoothers.png" >> "$LOG"
