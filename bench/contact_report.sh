#!/bin/sh
# Contact at real-time time steps: a body dropped 0.1 m onto a floor, one CSV
# row per (scene, dt, method, friction), implicit Euler (and BDF2 at 1/30 s
# for corot-element), by tw_contact_report (bench/contact_report.c says what
# each column is and how each scene is set up).
#
# Usage: bench/contact_report.sh BUILD_DIR OUT_CSV
#   e.g. bench/contact_report.sh build bench/results/cpu-2core-intel-xeon/contact_report.csv
#
# Kept under about 10 minutes on 2 shared cores by trimming the matrix:
# the cube and the tube run every dt x method x friction; the armadillo runs
# every method at 1/30 and 1/60 s and corot-element at 1/100 and 0.001 s; the
# bunny (E 1e6: its block-Jacobi CG takes 200-1000 iterations a solve, about
# 1 s a step here) every method at 1/30 s and corot-element at 1/60 and
# 1/100 s, never 0.001 s. Simulated time: 1 s (cube, tube), 0.6 s (bunny,
# armadillo); at dt 0.001 the tube and the armadillo run 0.4 s (landed, not
# yet at rest: read their rest columns as "after the impact"). BDF2: every
# scene, corot-element, 1/30 s. Two runs at a time, one thread each.
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
R=$B/bench/tw_contact_report
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
jobs=$(mktemp)
rm -f "$OUT.rows"
for mu in 0 0.5; do
    for m in corot-element warp-vertex green linear; do
        for dt in 0.0333333 0.0166667 0.01; do
            echo "cube $m implicit-euler $dt $mu 1" >> "$jobs"
            echo "tube $m implicit-euler $dt $mu 1" >> "$jobs"
        done
        echo "cube $m implicit-euler 0.001 $mu 1" >> "$jobs"
        echo "tube $m implicit-euler 0.001 $mu 0.4" >> "$jobs"
        for dt in 0.0333333 0.0166667; do
            echo "armadillo $m implicit-euler $dt $mu 0.6" >> "$jobs"
        done
        echo "bunny $m implicit-euler 0.0333333 $mu 0.6" >> "$jobs"
    done
    echo "armadillo corot-element implicit-euler 0.01 $mu 0.6" >> "$jobs"
    echo "armadillo corot-element implicit-euler 0.001 $mu 0.4" >> "$jobs"
    echo "bunny corot-element implicit-euler 0.0166667 $mu 0.6" >> "$jobs"
    echo "bunny corot-element implicit-euler 0.01 $mu 0.6" >> "$jobs"
    for s in cube tube bunny armadillo; do
        echo "$s corot-element bdf2 0.0333333 $mu 0.6" >> "$jobs"
    done
done
start=$(date +%s)
$R --header > "$OUT"
# the bunny first, so the two runners finish together
{ grep '^bunny' "$jobs"; grep -v '^bunny' "$jobs"; } | xargs -P 2 -L 1 "$R" >> "$OUT.rows"
sort "$OUT.rows" >> "$OUT"
rm -f "$OUT.rows" "$jobs"
echo "$(($(date +%s) - start)) s for $(($(wc -l < "$OUT") - 1)) runs" >&2
