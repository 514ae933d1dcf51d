#!/bin/bash
# The CPU cost of the multiresolution frame before and after a change, on a
# shared machine: bench/debunne_rate.sh with a BEFORE build, REPEATS times
# back to back (each repeat runs the before and after builds one after the
# other, so both see about the same load), and the medians over the
# repeats. Writes OUT_DIR/debunne_rate_speed.csv (every repeat's summary
# rows, with a repeat column), debunne_rate_speed.log (every repeat's log,
# with the load average at its start) and debunne_rate_speed.png (CPU ms a
# frame per repeat and run).
# usage: bench/debunne_rate_speed.sh BUILD_DIR BEFORE_BUILD_DIR [OUT_DIR] [REPEATS]
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
B=$1
BEFORE=$2
D=${3:-bench/results/cpu-2core-intel-xeon}
N=${4:-5}
bench_setup "$D"
: > "$D/debunne_rate_speed.log"
for r in $(seq "$N"); do
    mkdir -p "$W/$r"
    bench/debunne_rate.sh "$B" "$W/$r" "$BEFORE" > "$W/$r/out.txt" 2>&1 || { cat "$W/$r/out.txt"; exit 1; }
    echo "#### repeat $r: bench/debunne_rate.sh $B OUT $BEFORE" >> "$D/debunne_rate_speed.log"
    cat "$W/$r/debunne_rate.log" >> "$D/debunne_rate_speed.log"
done
$PY - "$W" "$D" "$N" <<'EOF'
import csv, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
w, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
for r in range(1, n + 1):
    with open(f"{w}/{r}/debunne_rate_summary.csv") as f:
        rows += [{"repeat": r, **row} for row in csv.DictReader(f)]
with open(f"{d}/debunne_rate_speed.csv", "w", newline="") as f:
    out = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    out.writeheader()
    out.writerows(rows)
runs = list(dict.fromkeys(row["run"] for row in rows))
print("run, CPU ms a frame (median; each repeat), real time (median)")
for run in runs:
    c = [float(x["cpu_ms_per_frame"]) for x in rows if x["run"] == run]
    rt = [float(x["realtime"]) for x in rows if x["run"] == run]
    print(f"{run}, {statistics.median(c):.2f} ({' '.join(f'{v:.2f}' for v in c)}), {statistics.median(rt):.3f}x")
fig, ax = plt.subplots(figsize=(8, 4.5))
for run in runs:
    c = [float(x["cpu_ms_per_frame"]) for x in rows if x["run"] == run]
    ax.plot(range(1, len(c) + 1), c, "o-", label=run)
ax.axhline(10, color="grey", ls=":", label="10 ms frame")
ax.set_xlabel("repeat (before and after run back to back in each)")
ax.set_ylabel("CPU ms a frame (user + sys, less the set-up)")
ax.set_title("mr-liver scene: the multiresolution frame's CPU time, before and after")
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(f"{d}/debunne_rate_speed.png", dpi=110)
EOF
