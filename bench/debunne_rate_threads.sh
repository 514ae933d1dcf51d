#!/bin/bash
# The multiresolution frame on one and two threads (--threads: a substep's
# tet kicks shared when it has 1024 tets or more; the same results): the
# viewer's mr-liver scene of bench/debunne_rate.sh (3 levels, 80 frames)
# and its 10k-node liver (4 levels, the first 40 frames), unbudgeted,
# REPEATS times back to back. Each repeat runs, one after the other: `t1`
# (--threads 1), `t2-passive` (--threads 2, OMP_WAIT_POLICY=PASSIVE: a
# waiting thread sleeps) and `t2` (--threads 2, OpenMP's default policy:
# it spins a while first). A run's CPU time a frame is its user + sys less
# a 1-frame run's (the set-up); its time on the clock a frame is the
# CLI's (frames only). Writes OUT_DIR/debunne_rate_threads.csv (every run:
# repeat, scene, run, threads, policy, load average at its start, CPU and
# clock ms a frame, tet evaluations a frame), debunne_rate_threads.log
# (every command and its output) and debunne_rate_threads.png.
# usage: bench/debunne_rate_threads.sh [BUILD_DIR] [OUT_DIR] [REPEATS]
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_liver_scene.sh
. "$(dirname "$0")/debunne_liver_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
N=${3:-5}
bench_setup "$D"
bench_nice
liver_levels "$W"
LOG="$D/debunne_rate_threads.log"
CSV="$D/debunne_rate_threads.csv"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) processors; ${NICE:-no nice}; $B/tetwarp" > "$LOG"
echo "repeat,scene,run,threads,policy,load1,cpu_ms_per_frame,clock_ms_per_frame,work_per_frame" > "$CSV"
L3="--multires 3 --levels $W/l0.node,$W/l1.node,$W/l2.node"
L4="--multires 4 --levels $W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
COMMON=$RATE_SCENE
run() { # repeat, scene, frames, run name, threads, policy (- for the default), level options
    r=$1 scene=$2 frames=$3 name=$4 th=$5 pol=$6
    shift 6
    load=$(cut -d' ' -f1 /proc/loadavg)
    envp=()
    [ "$pol" != - ] && envp=("OMP_WAIT_POLICY=$pol")
    echo "== repeat $r $scene $name (load $load): ${envp[*]} $B/tetwarp run $* $COMMON --threads $th --frames $frames" >> "$LOG"
    # shellcheck disable=SC2086
    bench_frames_cpu "$frames" env "${envp[@]}" $NICE "$B/tetwarp" run "$@" $COMMON --threads "$th"
    clock=$(sed -n 's/.* ms: \([0-9.]*\) ms a frame.*/\1/p' "$W/run.out")
    work=$(sed -n 's/^tet evaluations: \([0-9]*\) a frame.*/\1/p' "$W/run.out")
    echo "$r,$scene,$name,$th,$pol,$load,$CPU_MS,$clock,$work" >> "$CSV"
}
for r in $(seq "$N"); do
    # shellcheck disable=SC2086
    {
        run "$r" 3-level 80 t1 1 - $L3
        run "$r" 3-level 80 t2-passive 2 PASSIVE $L3
        run "$r" 3-level 80 t2 2 - $L3
        run "$r" 10k 40 t1 1 - $L4
        run "$r" 10k 40 t2-passive 2 PASSIVE $L4
        run "$r" 10k 40 t2 2 - $L4
    }
done
$PY - "$CSV" "$D/debunne_rate_threads.png" <<'PYEOF'
import csv, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
print("scene, run: CPU ms a frame, clock ms a frame (median over repeats; each repeat's clock), t1's clock / run's clock per repeat (median)")
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
for ax, scene in zip(axes, ["3-level", "10k"]):
    runs = list(dict.fromkeys(x["run"] for x in rows if x["scene"] == scene))
    base = {x["repeat"]: float(x["clock_ms_per_frame"]) for x in rows if x["scene"] == scene and x["run"] == "t1"}
    for run in runs:
        sel = [x for x in rows if x["scene"] == scene and x["run"] == run]
        c = [float(x["cpu_ms_per_frame"]) for x in sel]
        w = [float(x["clock_ms_per_frame"]) for x in sel]
        ratio = [base[x["repeat"]] / float(x["clock_ms_per_frame"]) for x in sel]
        print(f"{scene}, {run}: {statistics.median(c):.2f}, {statistics.median(w):.2f} ({' '.join(f'{v:.1f}' for v in w)}), {statistics.median(ratio):.2f}x")
        ax.plot([int(x["repeat"]) for x in sel], w, "o-", label=f"{run} (clock)")
    ax.axhline(10, color="grey", ls=":", label="10 ms frame")
    ax.set_yscale("log")
    ax.set_xlabel("repeat (the runs back to back in each)")
    ax.set_ylabel("ms a frame on the clock")
    ax.set_title(f"mr-liver {scene}: one thread and two")
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
PYEOF
