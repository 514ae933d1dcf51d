#!/bin/sh
# warp-vertex on the armadillo (armadillo_4k, 0.3 m tall, E 1e5) dropped 0.1 m
# on a floor: the contact report's rows (bench/contact_report.c says what
# each column is) for this method at every dt of the issue, friction 0 and
# 0.5, implicit Euler (0.6 s; 0.4 s at dt 0.001, as contact_report.sh runs
# the armadillo there) and BDF2 at 1/30 s. Two runs at a time, one thread each.
#
# Usage: bench/warp_vertex_armadillo.sh BUILD_DIR OUT_CSV
#   e.g. bench/warp_vertex_armadillo.sh build bench/results/cpu-2core-intel-xeon/warp_vertex_armadillo_after.csv
# Writes OUT_CSV and its log (.log: the runs' messages, the load;
# bench/contact_rows.sh).
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
for mu in 0 0.5; do
    for dt in 0.0333333 0.0166667 0.01; do echo "armadillo warp-vertex implicit-euler $dt $mu 0.6"; done
    echo "armadillo warp-vertex implicit-euler 0.001 $mu 0.4"
    echo "armadillo warp-vertex bdf2 0.0333333 $mu 0.6"
done | "$(dirname "$0")/contact_rows.sh" "$0" "$B" "$OUT"
