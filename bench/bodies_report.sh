#!/bin/sh
# Contact between bodies: the demo scenes bunny-block (a bunny dropped on a
# soft block), stack (three cubes) and dane-floor (the dog dropped on its
# side, floor contact only) at dt 1/30, 1/60 and 1/100 s, friction 0.5 (the
# stack also with none between the cubes, and with none at all), one CSV row
# per run by tw_bodies_report (bench/bodies_report.c says what each column
# is), a per-step trace per run, and the plot (bench/plot_bodies.py).
#
# Usage: bench/bodies_report.sh BUILD_DIR OUT_DIR
#   e.g. bench/bodies_report.sh build bench/results/cpu-2core-intel-xeon
# Writes OUT_DIR/bodies_report.csv, bodies_report.log (everything the runs
# printed), bodies_trace_SCENE_DT.csv (SCENE-muBODY-FLOOR for the other
# frictions) and bodies_report.png. Two runs at a
# time, one thread each. Simulated time: bunny-block 2 s, stack 10 s,
# dane-floor 3 s.
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
R=$B/bench/tw_bodies_report
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
mkdir -p "$OUT"
jobs=$(mktemp)
for dt in 0.0333333 0.0166667 0.01; do
    echo "bunny-block $dt 2" >> "$jobs"
    echo "dane-floor $dt 3" >> "$jobs"
    echo "stack $dt 10" >> "$jobs"
    echo "stack $dt 10 0,0.5" >> "$jobs"
    echo "stack $dt 10 0,0" >> "$jobs"
done
start=$(date +%s)
{
    echo "# bench/bodies_report.sh $B $OUT at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/bodies_report.log"
# each job: its row (the line starting with the scene's name and a comma) and its log
while read -r s dt t mu; do
    if [ -n "$mu" ]; then
        echo "$R $s $dt $t --friction $mu --trace $OUT/bodies_trace_$s-mu$(echo "$mu" | tr , -)_$dt.csv"
    else
        echo "$R $s $dt $t --trace $OUT/bodies_trace_${s}_$dt.csv"
    fi
done < "$jobs" | xargs -P 2 -I CMD sh -c 'CMD 2>&1' >> "$OUT/bodies_report.log"
$R --header > "$OUT/bodies_report.csv"
grep -E '^(bunny-block|stack|dane-floor),[0-9]' "$OUT/bodies_report.log" | sort >> "$OUT/bodies_report.csv"
echo "# $(($(date +%s) - start)) s for $(($(wc -l < "$OUT/bodies_report.csv") - 1)) runs; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/bodies_report.log"
rm -f "$jobs"
# the plot wants matplotlib (Debian python3-matplotlib): the first python3 that has it
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then exec "$py" "$(dirname "$0")/plot_bodies.py" "$OUT"; fi
done
echo "no python3 with matplotlib: $OUT/bodies_report.png not made" >&2
