#!/bin/sh
# The rate the force on a tool can be computed at (bench/tool_rate.c): the
# 10,800-tet block (cells 15) fixed at its base, a sphere pressed in and
# moved, dt 1 ms; one CSV row per method x preconditioner x CG budget x
# contact passes x threads (CONFIG PRECOND:CG_FIXED[:PASSES], see
# bench/tool_rate.c), then the plot (bench/plot_tool_rate.py).
#
# Usage: bench/tool_rate.sh BUILD_DIR OUT_DIR
#   e.g. bench/tool_rate.sh build bench/results/cpu-2core-intel-xeon
# (the plot needs the system python3-matplotlib: /usr/bin/python3)
# writes OUT_DIR/tool_rate.csv, tool_rate.log (the rows as they came, with
# the machine's load) and tool_rate.png. Runs one at a time (the timings
# are the point); 200 timed steps after 100 of press-in each, plus one
# reference run (CG to 1e-6) per method and thread count that the rows'
# force errors are measured against.
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
R=$B/bench/tw_bench_tool_rate
export OMP_WAIT_POLICY=PASSIVE
CSV=$OUT/tool_rate.csv
LOG=$OUT/tool_rate.log
{
    echo "# bench/tool_rate.sh $B $OUT at commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
    echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
$R --header > "$CSV"
rows() { # METHOD THREADS CONFIG...: one run of the binary, its rows into the CSV and the log
    $R 15 "$@" | while read -r row; do
        echo "$row" >> "$CSV"
        echo "$row  # load $(cut -d' ' -f1 /proc/loadavg)" >> "$LOG"
    done
}
ALL="jacobi:0 jacobi:10 jacobi:5 jacobi:3 jacobi:5:2 jacobi:3:2 jacobi:3:1"
# multigrid rebuilds its hierarchy whenever the contact filter changes (every
# pass with a moving tool): 0.25-0.45 s a step for linear; corot-element runs
# it once, with one thread
rows linear 1 0.001 300 100 $ALL mg:0 mg:3 mg:2:2
rows linear 2 0.001 300 100 $ALL mg:0 mg:3 mg:2:2
rows corot-element 1 0.001 300 100 $ALL mg:0
rows corot-element 2 0.001 300 100 $ALL
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
/usr/bin/python3 "$(dirname "$0")/plot_tool_rate.py" "$CSV" "$OUT/tool_rate.png"
