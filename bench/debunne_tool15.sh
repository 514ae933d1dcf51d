#!/bin/sh
# The bunny with the 15 mm tool (bench/debunne_bunny_scene.sh) scored on the
# whole body, not only the probe: every run writes the finest level's field
# (`--field-csv`: each of the 10,093 finest vertices each frame, where the
# run puts it, and the level simulating it), and bench/debunne_tool15.py
# scores it against the finest level alone at a small Courant factor (REF
# below, undamped): the probe's error as before, the largest vertex's, the
# RMS over the vertices, their 99th percentile, and each split into the dent
# (within R_DENT of the probe's rest point) and the rest, and by the level
# simulating each vertex. Speed-up in CPU time of the same simulated time
# (the cpu_ms column summed over the 30 frames: the process's own time,
# without what other processes take from the cores; the field is written
# after a frame's time is taken) against the finest level alone at the
# runs' Courant factor 0.5, and in tet evaluations.
# RUNS: "name options;..." (default: the list below; one named ref is the
# reference, one named finest the speed-ups' base); REF: the reference's
# Courant factor (default 0.03125: converged in time, bench/debunne_bunny_ref.sh);
# REPEAT: each run but ref this many times (default 3; the field from the
# first, the CPU time the median over them, its spread in the CSV);
# NAME: the output files' name (default debunne_tool15); FIELDS: where the
# field files go (default: a scratch folder removed at the end; 15 MB a run).
# usage: bench/debunne_tool15.sh [BUILD_DIR] [OUT_DIR]
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_bunny_scene.sh
. "$(dirname "$0")/debunne_bunny_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-amd-epyc}
T="$B/tetwarp"
REF=${REF:-0.03125}
bench_setup "$D"
test -x "$B/bench/tw_decimate" || { echo "$B/bench/tw_decimate not built (apt-get install libopenmesh-dev)" >&2; exit 1; }
FIELDS=${FIELDS:-$W/fields}
mkdir -p "$FIELDS"
N=${NAME:-debunne_tool15}
LOG="$D/$N.log"
: > "$LOG"
echo "$(date -u) $(uname -m) $(git rev-parse --short HEAD 2>/dev/null || echo '?') uptime: $(uptime)" >> "$LOG"
bunny_levels "$B" "$W" >> "$LOG"
LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
G="--gamma 1e-3,5e-3"
DEFAULT="ref --fixed-level 3 --courant $REF;
    finest --fixed-level 3;
    finest-c0.35 --fixed-level 3 --courant 0.35;
    finest-c0.25 --fixed-level 3 --courant 0.25;
    level0 --fixed-level 0;
    level1 --fixed-level 1;
    level2 --fixed-level 2;
    g1 $G;
    g1-m8-l1 $G --tool-margin 0.008 --start-level 1;
    g3-m8-l1 --gamma 3e-3,1e-2 --tool-margin 0.008 --start-level 1;
    g1-m12-l1 $G --tool-margin 0.012 --start-level 1;
    g1-m15-l1 $G --tool-margin 0.015 --start-level 1;
    g1-m20-l1 $G --tool-margin 0.02 --start-level 1;
    g1-m20-l2 $G --tool-margin 0.02 --start-level 2;
    g1-m12-l3 $G --tool-margin 0.012 --start-level 3;
    g1-m20-l3 $G --tool-margin 0.02 --start-level 3;
    g1-m25-l3 $G --tool-margin 0.025 --start-level 3;
    g1-m30-l3 $G --tool-margin 0.03 --start-level 3;
    g1-m40-l3 $G --tool-margin 0.04 --start-level 3"
RUNS=${RUNS:-$DEFAULT}
echo "$RUNS" | tr ';' '\n' | while read -r name opts; do
    [ -n "$name" ] || continue
    echo "== $name: $opts (uptime: $(uptime | sed 's/.*load/load/'))" >> "$LOG"
    # shellcheck disable=SC2086
    nice "$T" run --multires 4 --levels "$LEVELS" $BUNNY_SCENE $opts --csv "$FIELDS/$name.frames.csv" \
        --field-csv "$FIELDS/$name.field.csv" >> "$LOG" 2>&1 || echo "failed" >> "$LOG"
    rep=2
    [ "$name" = ref ] && rep=$((${REPEAT:-3} + 1)) # the reference's CPU time is not used
    while [ "$rep" -le "${REPEAT:-3}" ]; do
        # shellcheck disable=SC2086
        nice "$T" run --multires 4 --levels "$LEVELS" $BUNNY_SCENE $opts --csv "$FIELDS/$name.rep$rep.frames.csv" \
            > /dev/null 2>&1 || echo "$name: repetition $rep failed" >> "$LOG"
        rep=$((rep + 1))
    done
done
echo "$(date -u) uptime: $(uptime)" >> "$LOG"
$PY bench/debunne_tool15.py "$FIELDS" "$D" "$N" | tee -a "$LOG"
