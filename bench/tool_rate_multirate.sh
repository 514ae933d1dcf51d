#!/bin/sh
# The force on a tool at 1 kHz by the multirate scheme (bench/tool_rate.c
# --multirate): the scene of bench/tool_rate.sh simulated at a slower step
# (5, 10 or 20 ms) with tw_world_def.collider_models, and the force at every
# 1 ms tick from the last step's model (tw_collider_model_force at the tool's
# position and velocity then); its error against the 1 ms simulation with
# CG to 1e-6. One CSV row per method x threads x RATIO:PRECOND:CG_FIXED
# (the slow step is RATIO ms), then the plot (bench/plot_tool_rate.py).
#
# Usage: bench/tool_rate_multirate.sh BUILD_DIR OUT_DIR
# writes OUT_DIR/tool_rate_multirate.csv, .log (the rows with the load) and .png.
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
R=$B/bench/tw_bench_tool_rate
export OMP_WAIT_POLICY=PASSIVE
CSV=$OUT/tool_rate_multirate.csv
LOG=$OUT/tool_rate_multirate.log
{
    echo "# bench/tool_rate_multirate.sh $B $OUT at commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
    echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
$R --multirate > "$CSV"
ALL="5:jacobi:3 5:jacobi:5 10:jacobi:3 10:jacobi:5 10:jacobi:0 20:jacobi:5"
for method in linear corot-element; do
    for threads in 1 2; do
        $R --multirate 15 $method $threads 0.001 300 100 $ALL | while read -r row; do
            echo "$row" >> "$CSV"
            echo "$row  # load $(cut -d' ' -f1 /proc/loadavg)" >> "$LOG"
        done
    done
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
/usr/bin/python3 "$(dirname "$0")/plot_tool_rate.py" --multirate "$CSV" "$OUT/tool_rate_multirate.png"
