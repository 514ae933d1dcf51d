#!/bin/sh
# green (St. Venant-Kirchhoff) dropped 0.1 m on a floor: the contact report's
# rows (bench/contact_report.c says what each column is) for green on the
# armadillo at 1/30, 1/60 and 1/100 s, friction 0 and 0.5, implicit Euler
# (one linearisation) and BDF2 (two Newton iterations, the CPU default), and
# on the cube and the tube (1 s) and the bunny (1/30 s, 0.6 s) with implicit
# Euler; and the rest table (OUT_CSV with _rest before .csv): the armadillo
# (3 s) and the tube (10 s) at 1/30 and 1/60 s, friction 0 and 0.5, implicit
# Euler, with the references (--refs). Run it on two builds to compare them
# (green's tangent before and after its geometric part is taken at the
# stress's positive part: green_tangent.md). Two runs at a time, one thread
# each.
#
# Usage: bench/green_tangent.sh BUILD_DIR OUT_CSV
#   e.g. bench/green_tangent.sh build bench/results/cpu-2core-amd-epyc/green_tangent_after.csv
# Writes OUT_CSV, the rest table and their logs (.log: the runs' messages,
# the load; bench/contact_rows.sh).
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
for mu in 0 0.5; do
    echo "bunny green implicit-euler 0.0333333 $mu 0.6"
    for dt in 0.0333333 0.0166667 0.01; do
        for integ in implicit-euler bdf2; do echo "armadillo green $integ $dt $mu 0.6"; done
        for s in cube tube; do echo "$s green implicit-euler $dt $mu 1"; done
    done
done | "$(dirname "$0")/contact_rows.sh" "$0" "$B" "$OUT"
for mu in 0 0.5; do
    for dt in 0.0333333 0.0166667; do
        echo "armadillo green implicit-euler $dt $mu 3 --refs"
        echo "tube green implicit-euler $dt $mu 10 --refs"
    done
done | "$(dirname "$0")/contact_rows.sh" "$0" "$B" "${OUT%.csv}_rest.csv"
