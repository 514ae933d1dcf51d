#!/bin/sh
# The symmetric-half SpMV against the full product (bench/spmv_half.c) on
# the corot-element bars of tw_bench_cpu (10k, 100k, 1M tets), 1 and 2
# threads, the three forms timed in turns within each round: the ratio to
# full at the same thread count is the figure on a shared machine. The load
# average is logged before and after each size.
# Writes spmv_half.csv, .log and .png into OUT_DIR.
#
# Usage: [SIZES=10k,100k,1m] [SECONDS=3] bench/spmv_half.sh BUILD_DIR OUT_DIR
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
HERE=$(dirname "$0")
SIZES=${SIZES:-10k,100k,1m}
SECONDS_PER=${SECONDS:-3}
export OMP_WAIT_POLICY=PASSIVE
LOG=$OUT/spmv_half.log
CSV=$OUT/spmv_half.csv
NICE="nice -n -5"
$NICE true 2> /dev/null || NICE=""
{
    echo "# bench/spmv_half.sh $*  (commit $(git -C "$HERE" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), shared with other sessions' builds and tests"
    echo "# ${NICE:-(no nice -n -5: not allowed)}"
} > "$LOG"
first=1
for s in $(echo "$SIZES" | tr ',' ' '); do
    echo "# $s: tw_bench_spmv_half --sizes $s --seconds $SECONDS_PER  (load before $(cut -d' ' -f1-3 /proc/loadavg))" >> "$LOG"
    $NICE "$B/bench/tw_bench_spmv_half" --sizes "$s" --seconds "$SECONDS_PER" > "$OUT/spmv_half.$s.tmp" 2>> "$LOG"
    echo "# $s: load after $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
    cat "$OUT/spmv_half.$s.tmp" >> "$LOG"
    if [ $first = 1 ]; then grep -v '^#' "$OUT/spmv_half.$s.tmp" > "$CSV"; first=0
    else grep -v '^#' "$OUT/spmv_half.$s.tmp" | tail -n +2 >> "$CSV"; fi
    rm -f "$OUT/spmv_half.$s.tmp"
done
${PYTHON:-/usr/bin/python3} "$HERE/plot_spmv_half.py" "$CSV" "$OUT/spmv_half.png"
