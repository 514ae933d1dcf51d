#!/bin/sh
# Body contacts' impulses in a world with a floor: the stack (three cubes)
# and bunny-block scenes of tw_bodies_report, friction 0.5, run by two
# builds (e.g. before and after a change to the contact detection), one CSV
# row per run with the build's name first, the raw log, and a plot of the
# contact solves and CG iterations a step (bodies_floor_impulses.png).
#
# Usage: bench/bodies_floor_impulses.sh OLD_BUILD NEW_BUILD OUT_DIR
# Writes OUT_DIR/bodies_floor_impulses.csv, .log and .png. One thread, runs
# one after another.
set -e
OLD=${1:?usage: $0 OLD_BUILD NEW_BUILD OUT_DIR}
NEW=${2:?usage: $0 OLD_BUILD NEW_BUILD OUT_DIR}
OUT=${3:?usage: $0 OLD_BUILD NEW_BUILD OUT_DIR}
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
mkdir -p "$OUT"
LOG=$OUT/bodies_floor_impulses.log
CSV=$OUT/bodies_floor_impulses.csv
{
    echo "# bench/bodies_floor_impulses.sh $OLD $NEW $OUT at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"
echo "build,$("$NEW"/bench/tw_bodies_report --header)" > "$CSV"
for run in "stack 0.0333333 10" "stack 0.0166667 10" "stack 0.01 10" "bunny-block 0.0166667 2" \
    "stack 0.0166667 10 --friction 0,0.5"; do
    for b in old new; do
        B=$OLD
        [ "$b" = new ] && B=$NEW
        # shellcheck disable=SC2086
        "$B"/bench/tw_bodies_report $run > "$OUT/.run" 2>&1
        sed "s/^/$b: /" "$OUT/.run" >> "$LOG"
        grep -E '^(stack|bunny-block),[0-9]' "$OUT/.run" | sed "s/^/$b,/" >> "$CSV"
    done
done
rm -f "$OUT/.run"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then exec "$py" - "$CSV" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
labels = []
for r in rows:
    l = "%s dt %.3g%s" % (r["scene"], float(r["dt"]), "" if float(r["mu_body"]) > 0 else " mu_body 0")
    if l not in labels:
        labels.append(l)
fig, axs = plt.subplots(1, 2, figsize=(11, 4))
for ax, col, name in ((axs[0], "passes_mean", "contact solves a step"), (axs[1], "cg_mean", "CG iterations a step")):
    for k, b in enumerate(("old", "new")):
        vals = [float(r[col]) for r in rows if r["build"] == b]
        ax.bar([i + 0.4 * k for i in range(len(vals))], vals, 0.4, label=b)
    ax.set_xticks([i + 0.2 for i in range(len(labels))])
    ax.set_xticklabels(labels, rotation=25, ha="right", fontsize=8)
    ax.set_title(name)
    ax.legend()
fig.suptitle("body contacts with a floor: impulses zeroed each step (old) vs kept (new)")
fig.tight_layout()
out = sys.argv[1][:-4] + ".png"
fig.savefig(out, dpi=110)
print(out)
PY
    fi
done
echo "no python3 with matplotlib: the plot not made" >&2
