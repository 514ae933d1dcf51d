#!/bin/sh
# Contact at real-time time steps: a body dropped 0.1 m onto a floor, one CSV
# row per (scene, dt, method, friction), implicit Euler (and BDF2 at 1/30 s
# for corot-element), by tw_contact_report (bench/contact_report.c says what
# each column is and how each scene is set up).
#
# Usage: [CONTACT_MU="0 0.5"] bench/contact_report.sh BUILD_DIR OUT_CSV
#   e.g. bench/contact_report.sh build bench/results/cpu-2core-intel-xeon/contact_report.csv
# CONTACT_MU: the frictions run (default both; CONTACT_MU=0.5 runs the
# friction rows alone, with the 0.001 s rest rows, which are friction's).
# Writes OUT_CSV, its rest table OUT_CSV with _rest before .csv, the log
# (.log: the runs' messages, the load) and the plot (.png, by
# bench/plot_contact.py).
#
# The rest table: corot-element, implicit Euler, 10 s simulated (the
# bunny 3 s, at 1/30 s only: its block-Jacobi CG takes about 1 s a step
# here), cube, tube and armadillo at 1/30, 1/60 and 1/100 s, friction 0
# and 0.5, with the references (--refs: the static solve with the floor
# contacts pinned, the body set down on the floor without a drop, on the
# same floor and on a frictionless one, the largest tangential / normal
# force on the floor at the end, and with friction the held reference: the
# run's own stuck contacts pinned, checked against Coulomb's cone); with
# friction 0.5 also the tube (10 s) and
# the armadillo (3 s, settled) at 0.001 s, the small-step check of the rest
# state.
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
MUS=${CONTACT_MU:-0 0.5}
jobs=$(mktemp)
for mu in $MUS; do
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
REST=${OUT%.csv}_rest.csv
LOG=${OUT%.csv}.log
rest=$(mktemp)
for mu in $MUS; do
    echo "bunny corot-element implicit-euler 0.0333333 $mu 3 --refs" >> "$rest"
    for dt in 0.0333333 0.0166667 0.01; do
        for s in armadillo tube cube; do echo "$s corot-element implicit-euler $dt $mu 10 --refs" >> "$rest"; done
    done
done
echo "armadillo corot-element implicit-euler 0.001 0.5 3 --refs" >> "$rest"
echo "tube corot-element implicit-euler 0.001 0.5 10 --refs" >> "$rest"
start=$(date +%s)
{
    echo "# bench/contact_report.sh $B $OUT at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
$R --header > "$OUT"
$R --header > "$REST"
# the bunny first, so the two runners finish together; the rows go to
# stdout, the runs' messages to the log
{ grep '^bunny' "$rest"; grep -v '^bunny' "$rest"; grep '^bunny' "$jobs"; grep -v '^bunny' "$jobs"; } |
    xargs -P 2 -L 1 sh -c '"$0" "$@" >> "$0.rows.$( [ "$7" = "--refs" ] && echo rest || echo main)"' "$R" 2>> "$LOG"
sort "$R.rows.main" >> "$OUT"
sort "$R.rows.rest" >> "$REST"
rm -f "$R.rows.main" "$R.rows.rest" "$jobs" "$rest"
echo "# $(($(date +%s) - start)) s for $(($(wc -l < "$OUT") - 1)) + $(($(wc -l < "$REST") - 1)) runs; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then exec "$py" "$(dirname "$0")/plot_contact.py" "$OUT" "$REST"; fi
done
echo "no python3 with matplotlib: the plot is not made" >&2
