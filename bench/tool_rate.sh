#!/bin/sh
# The rate the force on a tool can be computed at (bench/tool_rate.c): the
# 10,800-tet block (cells 15) fixed at its base, a sphere pressed in and
# moved, dt 1 ms; one CSV row per method x preconditioner x CG budget x
# contact passes x threads (CONFIG PRECOND:CG_FIXED[:PASSES], see
# bench/tool_rate.c), then the plot (bench/plot_tool_rate.py).
# With --multirate: the force at 1 kHz by the multirate scheme, the same
# scene simulated at a slower step (5, 10 or 20 ms) with
# tw_world_def.collider_models and the force at every 1 ms tick from the last
# step's model; one row per method x threads x RATIO:PRECOND:CG_FIXED (the
# slow step RATIO ms).
#
# Usage: bench/tool_rate.sh [--multirate] BUILD_DIR OUT_DIR
#   e.g. bench/tool_rate.sh build bench/results/cpu-2core-amd-epyc
# (the plot needs the system python3-matplotlib: /usr/bin/python3)
# writes OUT_DIR/tool_rate.csv (--multirate: tool_rate_multirate.csv),
# .log (the rows as they came, with the machine's load) and .png. Runs one
# at a time (the timings are the point); each run has one reference run (CG
# to 1e-6, dt 1 ms) per method and thread count that the rows' force errors
# are measured against; the 1 ms runs time 200 steps after 100 of press-in.
set -e
MODE=
if [ "$1" = --multirate ]; then MODE=--multirate; shift; fi
B=${1:?usage: $0 [--multirate] BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 [--multirate] BUILD_DIR OUT_DIR}
R=$B/bench/tw_bench_tool_rate
export OMP_WAIT_POLICY=PASSIVE
NAME=tool_rate${MODE:+_multirate}
CSV=$OUT/$NAME.csv
LOG=$OUT/$NAME.log
{
    echo "# bench/tool_rate.sh $MODE $B $OUT at commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
    echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
$R $MODE --header > "$CSV"
rows() { # METHOD THREADS CONFIG...: one run of the binary, its rows into the CSV and the log
    $R $MODE 15 "$@" | while read -r row; do
        echo "$row" >> "$CSV"
        echo "$row  # load $(cut -d' ' -f1 /proc/loadavg)" >> "$LOG"
    done
}
if [ -n "$MODE" ]; then
    ALL="5:jacobi:3 5:jacobi:5 10:jacobi:3 10:jacobi:5 10:jacobi:0 20:jacobi:5"
    for method in linear corot-element; do
        rows $method 1 0.001 300 100 $ALL
        rows $method 2 0.001 300 100 $ALL
    done
else
    ALL="jacobi:0 jacobi:10 jacobi:5 jacobi:3 jacobi:5:2 jacobi:3:2 jacobi:3:1"
    # multigrid rebuilds its hierarchy whenever the contact filter changes (every
    # pass with a moving tool); corot-element runs it once, with one thread
    rows linear 1 0.001 300 100 $ALL mg:0 mg:3 mg:2:2
    rows linear 2 0.001 300 100 $ALL mg:0 mg:3 mg:2:2
    rows corot-element 1 0.001 300 100 $ALL mg:0
    rows corot-element 2 0.001 300 100 $ALL
fi
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
/usr/bin/python3 "$(dirname "$0")/plot_tool_rate.py" $MODE "$CSV" "$OUT/$NAME.png"
