#!/bin/sh
# The frictionless armadillo's angular momentum about the vertical
# (contact_report.md, "The frictionless armadillo's spin"): the rest table's
# three frictionless runs (corot-element, implicit Euler, 1/30, 1/60 and
# 1/100 s, 10 s) with tw_contact_report's momentum diagnostic
# (TW_CONTACT_REPORT_MOMENTUM=1: every step's L_up, horizontal momentum,
# kinetic energy split and the terms that changed L_up), one log per dt,
# then the CSV of the per-step lines and the plot
# (bench/plot_armadillo_spin.py).
#
# Usage: bench/armadillo_spin.sh BUILD_DIR OUT_PREFIX
#   e.g. bench/armadillo_spin.sh build bench/results/cpu-2core-amd-epyc/armadillo_spin
#   writes OUT_PREFIX_<dt>.log (1_30, 1_60, 1_100), OUT_PREFIX.csv, OUT_PREFIX.png
B=${1:?usage: $0 BUILD_DIR OUT_PREFIX}
P=${2:?usage: $0 BUILD_DIR OUT_PREFIX}
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
run() {
    {
        echo "# TW_CONTACT_REPORT_MOMENTUM=1 $B/bench/tw_contact_report armadillo corot-element implicit-euler $1 0 10" \
            "at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u), load $(cut -d' ' -f1-3 /proc/loadavg)"
        TW_CONTACT_REPORT_MOMENTUM=1 "$B/bench/tw_contact_report" armadillo corot-element implicit-euler "$1" 0 10 2>&1
    } > "${P}_$2.log"
}
# two at a time
run 0.0333333 1_30 &
run 0.0166667 1_60
wait
run 0.01 1_100
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then
        exec "$py" "$(dirname "$0")/plot_armadillo_spin.py" "$P" "${P}_1_30.log" "${P}_1_60.log" "${P}_1_100.log"
    fi
done
echo "no python3 with matplotlib: the CSV and the plot are not made" >&2
