#!/bin/sh
# Coulomb at rest: the armadillo (green, implicit Euler, friction 0.5)
# settled on the floor, contact_report's --refs rows (max_tan_ratio: the
# largest tangential / normal floor force on a loaded vertex at the end;
# passes_mean: the contact solves a step) at 1/30 s (3 s and 6 s) and
# 1/60 s (3 s), for two builds. TW_CONTACT_REPORT_CONTACTS lists every floor
# vertex in the log (F_n / weight, |F_t| / F_n).
#
# Usage: bench/stick_tol.sh BEFORE_BUILD AFTER_BUILD OUT_CSV
# Plot: bench/plot_stick_tol.py OUT_CSV LOG OUT_PNG
set -e
A=${1:?usage: $0 BEFORE_BUILD AFTER_BUILD OUT_CSV}
B=${2:?usage: $0 BEFORE_BUILD AFTER_BUILD OUT_CSV}
OUT=${3:?usage: $0 BEFORE_BUILD AFTER_BUILD OUT_CSV}
LOG=${OUT%.csv}.log
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 TW_CONTACT_REPORT_CONTACTS=1
{
    echo "# bench/stick_tol.sh $A $B $OUT at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
printf 'build,' > "$OUT"
"$B/bench/tw_contact_report" --header >> "$OUT"
for row in "0.0333333 3" "0.0333333 6" "0.0166667 3"; do
    for b in "$A" "$B"; do
        set -- $row
        echo "## $b armadillo green implicit-euler $1 0.5 $2 --refs" >> "$LOG"
        printf '%s,' "$(basename "$b")" >> "$OUT"
        "$b/bench/tw_contact_report" armadillo green implicit-euler "$1" 0.5 "$2" --refs >> "$OUT" 2>> "$LOG"
    done
done
