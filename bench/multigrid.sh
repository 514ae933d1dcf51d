#!/bin/sh
# Block-Jacobi against the multigrid preconditioner, CG to tolerance 1e-4
# (bench/multigrid.c): the 10k, 100k and 1M bars (x = 0 pinned) and the
# shipped sliver bunny in free fall; corot-element, implicit Euler, dt 0.01,
# E 1e6; one thread and all threads; jacobi and mg back to back per scene and
# thread count, so their ratio is taken under the same machine load. Means
# over the steps after the first (16 steps, 8 at 1M: the coarse operators are
# redone every 8th step, so each mean holds one or two of those).
#
# With BEFORE_BUILD_DIR (a build of an earlier commit whose
# tw_bench_multigrid has --only), its mg rows are measured right after this
# build's rows of the same scene: the build column says which. BEFORE_ARGS
# (default "--only mg") are the before build's options: empty measures its
# jacobi rows too (for a change that moves both).
# SCENES (default: all four, "STEPS:SCENE" each, the token bunny for the
# shipped bunny) picks the rows to measure.
# Writes multigrid.csv, .log and .png into OUT_DIR.
#
# Usage: [SCENES=...] [BEFORE_ARGS=...] bench/multigrid.sh BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR [BEFORE_BUILD_DIR]}
BEFORE=${3:-}
HERE=$(dirname "$0")
M=$HERE/../data/meshes/bunny_closed_3485v.tet.node
export OMP_WAIT_POLICY=PASSIVE
LOG=$OUT/multigrid.log
CSV=$OUT/multigrid.csv
{
    echo "# bench/multigrid.sh $*  (commit $(git -C "$HERE" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# nice -n -5 where allowed; cpu_ms_step (process CPU time) is the steadier figure on a shared machine"
} > "$LOG"
NICE="nice -n -5"
$NICE true 2> /dev/null || NICE=""
first=1
run() { # build-label build-dir steps scene [--only mg]
    label=$1 dir=$2 steps=$3 scene=$4
    shift 4
    echo "# $label: tw_bench_multigrid --steps $steps --threads-list 1,0 $* $scene  (load $(cut -d' ' -f1-3 /proc/loadavg))" >> "$LOG"
    $NICE "$dir/bench/tw_bench_multigrid" --steps "$steps" --threads-list 1,0 "$@" "$scene" 2>> "$LOG" > "$OUT/.multigrid_rows"
    if [ $first = 1 ]; then
        head -1 "$OUT/.multigrid_rows" | sed 's/^/build,/' > "$CSV"
        first=0
    fi
    tail -n +2 "$OUT/.multigrid_rows" | sed "s/^/$label,/" >> "$CSV"
    rm -f "$OUT/.multigrid_rows"
}
BEFORE_ARGS=${BEFORE_ARGS---only mg}
for spec in ${SCENES:-17:bar:40,6,7 17:bar:90,14,13 17:bunny 9:bar:195,29,29}; do
    steps=${spec%%:*}
    scene=${spec#*:}
    [ "$scene" = bunny ] && scene=$M
    run after "$B" "$steps" "$scene"
    # shellcheck disable=SC2086 # BEFORE_ARGS is a list of options
    [ -n "$BEFORE" ] && run before "$BEFORE" "$steps" "$scene" $BEFORE_ARGS
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)" >> "$LOG"
${PYTHON:-python3} "$HERE/plot_multigrid.py" "$OUT" >> "$LOG"
