#!/bin/sh
# tw_contact_report's rows for a list of runs (one "SCENE METHOD INTEGRATOR
# DT FRICTION SECONDS" a line on stdin), two at a time, one thread each,
# sorted into OUT_CSV under its header; the runs' messages and the load go to
# the log (OUT_CSV with .log for .csv), headed by NAME (the calling script).
#
# Usage: bench/contact_rows.sh NAME BUILD_DIR OUT_CSV < JOBS
#   (bench/green_tangent.sh and bench/warp_vertex_armadillo.sh call it)
set -e
NAME=${1:?usage: $0 NAME BUILD_DIR OUT_CSV < JOBS}
B=${2:?usage: $0 NAME BUILD_DIR OUT_CSV < JOBS}
OUT=${3:?usage: $0 NAME BUILD_DIR OUT_CSV < JOBS}
R=$B/bench/tw_contact_report
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
LOG=${OUT%.csv}.log
{
    echo "# $NAME $B $OUT at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
"$R" --header > "$OUT"
rows=$(mktemp)
xargs -P 2 -L 1 "$R" >> "$rows" 2>> "$LOG"
sort "$rows" >> "$OUT"
rm -f "$rows"
echo "# done $(date -u); load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
