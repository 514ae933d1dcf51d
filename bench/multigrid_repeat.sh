#!/bin/sh
# The spread of bench/multigrid.sh's ratio on a loaded machine: ROUNDS
# rounds of one scene, one thread, block-Jacobi and mg back to back in one
# process (tw_bench_multigrid), this build and (with BEFORE_BUILD_DIR) an
# earlier build's both preconditioners alternating; the rows go into the log
# with one summary line per round (jacobi / mg CPU ms per step, the ratio).
#
# Usage: bench/multigrid_repeat.sh BUILD_DIR LOG STEPS:SCENE ROUNDS [BEFORE_BUILD_DIR]
set -e
B=${1:?usage: $0 BUILD_DIR LOG STEPS:SCENE ROUNDS [BEFORE_BUILD_DIR]}
LOG=${2:?usage}
SPEC=${3:?usage}
ROUNDS=${4:?usage}
BEFORE=${5:-}
export OMP_WAIT_POLICY=PASSIVE
NICE="nice -n -5"
$NICE true 2> /dev/null || NICE=""
steps=${SPEC%%:*}
scene=${SPEC#*:}
echo "# bench/multigrid_repeat.sh $*  (commit $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))" >> "$LOG"
one() { # label dir
    echo "# $1 round $r: tw_bench_multigrid --steps $steps --threads-list 1 $scene  (load $(cut -d' ' -f1-3 /proc/loadavg))" >> "$LOG"
    $NICE "$2/bench/tw_bench_multigrid" --steps "$steps" --threads-list 1 "$scene" 2>> "$LOG" | tail -n +2 > "$LOG.rows"
    cat "$LOG.rows" >> "$LOG"
    # precond and cpu_ms_step counted from the end (the scene's commas shift the front)
    awk -F, -v l="$1" -v r="$r" '{c[$(NF - 12)] = $(NF - 6)} END {printf "# %s round %d: cpu ms/step jacobi %.1f mg %.1f ratio %.2fx\n", l, r, c["jacobi"], c["mg"], c["jacobi"] / c["mg"]}' "$LOG.rows" >> "$LOG"
    rm -f "$LOG.rows"
}
r=1
while [ $r -le "$ROUNDS" ]; do
    one after "$B"
    [ -n "$BEFORE" ] && one before "$BEFORE"
    r=$((r + 1))
done
