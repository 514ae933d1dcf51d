# shellcheck shell=bash
# Sourced by the Debunne liver benchmarks (debunne_liver.sh,
# debunne_liver10k.sh, debunne_liver10k_frontier.sh, debunne_rate.sh), after
# bench_common.sh: the levels data/meshes/liver_mr0..3 with SOFA's cm scaled
# to m, the tool scene they share, and the per-frame runs of
# debunne_liver.sh and debunne_liver10k.sh.

# liver_levels DIR: DIR/l0..l3.node/.ele, the four levels in metres
liver_levels() {
    for l in 0 1 2 3; do
        awk 'NR == 1 || /^#/ { print; next } NF >= 4 { printf "%s %.17g %.17g %.17g\n", $1, 0.01 * $2, 0.01 * $3, 0.01 * $4; next } { print }' \
            "data/meshes/liver_mr$l.node" > "$1/l$l.node"
        cp "data/meshes/liver_mr$l.ele" "$1/l$l.ele"
    done
}

# E 5 kPa, no gravity, the base pinned, the 8 mm sphere 9 mm down over
# 0.1 s and back, the probe under it, 30 frames of 10 ms
# shellcheck disable=SC2034
LIVER_SCENE="--E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0 --fix z<-0.012 --tool -0.0144,0.0269,0.0363,0.008
        --tool-move 0,0,-0.009,0.1 --probe-at -0.0144,0.0269,0.0273 --frame-dt 0.01 --frames 30"

# The viewer's mr-liver scene (demos/mr_scene.c) on the CLI, less its levels
# and frames: gamma 0.1, 0.5 mm, at most 600,000 tet evaluations a frame, the
# 8 mm sphere 9 mm down over 0.4 s and back (bench/debunne_rate.sh,
# bench/debunne_rate_threads.sh)
# shellcheck disable=SC2034
RATE_SCENE="--E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0
        --fix z<-0.012 --gamma 1e-4,5e-4 --work-budget 600000 --frame-dt 0.01
        --tool -0.0144,0.0269,0.0363,0.008 --tool-move 0,0,-0.009,0.4 --probe-at -0.0144,0.0269,0.0273"

# liver_run CSV COUNT NAME OPTIONS...: the scene on COUNT levels ($LEVELS,
# by $T, logged to $LOG, through $W/run.csv) with OPTIONS; its frames
# appended to CSV (multires_frames_header's columns), each row starting
# with NAME
liver_run() {
    csv=$1
    count=$2
    name=$3
    shift 3
    echo "== $name: $*" >> "$LOG"
    # shellcheck disable=SC2086
    nice "$T" run --multires "$count" --levels "$LEVELS" $LIVER_SCENE "$@" --csv "$W/run.csv" >> "$LOG" 2>&1
    multires_frames "$csv" "$name"
}
