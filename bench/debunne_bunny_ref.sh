#!/bin/sh
# The bunny scene of bench/debunne_bunny.sh with the 15 mm tool
# (bench/debunne_bunny_scene.sh) against a reference converged in time: the
# finest level alone (--fixed-level 3) at Courant factors 0.5, 0.25, 0.125
# and 0.0625 (each node's step halves with each: the steps are frame_dt /
# 2^i), undamped and damped by eq. 11's filter (--semi-implicit), undamped
# also at 0.03125, and the adaptive runs scored against the smallest step's
# undamped run.
# PART picks what runs, so that the long parts can run side by side:
#   undamped  the undamped references      (OUT_DIR/debunne_bunny_ref_undamped.csv/.log)
#   undamped2 the undamped reference at 0.03125 (OUT_DIR/debunne_bunny_ref_undamped2.csv/.log)
#   semi      the damped references        (OUT_DIR/debunne_bunny_ref_semi.csv/.log)
#   tool8     the same with the liver's 8 mm tool (OUT_DIR/debunne_bunny_ref_tool8.csv/.log)
#   five      adaptive runs on five levels (OUT_DIR/debunne_bunny_ref_five.csv/.log)
#   five-dec  the same with another fifth level (OUT_DIR/debunne_bunny_ref_five-dec.csv/.log)
#   alt       the finest level meshed anew at other sizes (OUT_DIR/debunne_bunny_ref_alt.csv/.log)
#   alt8      the same with the 8 mm tool (OUT_DIR/debunne_bunny_ref_alt8.csv/.log)
#   adaptive  adaptive runs (below)        (OUT_DIR/debunne_bunny_ref_adaptive.csv/.log)
#   report    bench/debunne_bunny_ref.py on those and debunne_bunny.csv:
#             debunne_bunny_ref_summary.csv, debunne_bunny_ref.png
# usage: bench/debunne_bunny_ref.sh [BUILD_DIR] [OUT_DIR] PART
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_bunny_scene.sh
. "$(dirname "$0")/debunne_bunny_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
PART=${3:?PART: undamped, undamped2, semi, tool8, five, five-dec, alt, alt8, adaptive or report}
bench_python
if [ "$PART" = report ]; then
    exec $PY bench/debunne_bunny_ref.py "$D"
fi
T="$B/tetwarp"
bench_setup "$D"
test -x "$B/bench/tw_decimate" || { echo "$B/bench/tw_decimate not built (apt-get install libopenmesh-dev)" >&2; exit 1; }
N=debunne_bunny_ref_$PART
LOG="$D/$N.log"
: > "$LOG"
bunny_levels "$B" "$W" >> "$LOG"
LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
multires_frames_header "$D/$N.csv"
run() { # name, options
    bunny_run "$D/$N.csv" "$@"
}
case $PART in
undamped)
    for c in 0.5 0.25 0.125 0.0625; do run "finest-c$c" --fixed-level 3 --courant $c; done ;;
undamped2) # one more halving (about 20 minutes here)
    run "finest-c0.03125" --fixed-level 3 --courant 0.03125 ;;
semi)
    for c in 0.5 0.25 0.125 0.0625; do run "finest-c$c-semi" --fixed-level 3 --courant $c --semi-implicit; done ;;
adaptive)
    # ADAPTIVE_RUNS: "name options;name options;..." (default: the list below, undamped; the
    # damped runs and the others at Courant 0.5 are debunne_bunny.sh's). Names: g1 gamma 1, 5 mm,
    # g03 0.3, 1.5 mm, g3 3, 10 mm, g01 0.1, 0.5 mm; -mM --tool-margin M mm; -lN --start-level N;
    # -usoft the coarse levels softened to the undamped finest level's peak tool force (0.362 N
    # against level 0's 0.429, level 1's 0.680 and level 2's 0.511 N); -cC --courant C
    S=0.84,0.53,0.71,1
    G="--gamma 1e-3,5e-3"
    DEFAULT="g1-l1 $G --start-level 1;
        g1-m8-l1 $G --tool-margin 0.008 --start-level 1;
        g1-m12-l1 $G --tool-margin 0.012 --start-level 1;
        g1-m15-l1 $G --tool-margin 0.015 --start-level 1;
        g1-m20-l1 $G --tool-margin 0.02 --start-level 1;
        g1-m15-l2 $G --tool-margin 0.015 --start-level 2;
        g1-m20-l2 $G --tool-margin 0.02 --start-level 2;
        g1-usoft $G --level-stiffness $S;
        g1-m12-usoft-l1 $G --tool-margin 0.012 --level-stiffness $S --start-level 1;
        g03-m12-l1 --gamma 3e-4,1.5e-3 --tool-margin 0.012 --start-level 1;
        g3-m12-l1 --gamma 3e-3,1e-2 --tool-margin 0.012 --start-level 1;
        g1-c0.25 $G --courant 0.25;
        g1-m20-l3-c0.25 $G --tool-margin 0.02 --start-level 3 --courant 0.25;
        g1-m8-l1-c0.25 $G --tool-margin 0.008 --start-level 1 --courant 0.25;
        g1-m12-l1-c0.25 $G --tool-margin 0.012 --start-level 1 --courant 0.25;
        g1-m15-l3-c0.25 $G --tool-margin 0.015 --start-level 3 --courant 0.25;
        g01-m8-c0.25 --gamma 1e-4,5e-4 --tool-margin 0.008 --courant 0.25;
        g1-c0.125 $G --courant 0.125;
        g1-m8-l1-c0.125 $G --tool-margin 0.008 --start-level 1 --courant 0.125;
        g1-m12-l1-c0.125 $G --tool-margin 0.012 --start-level 1 --courant 0.125;
        g1-m15-l3-c0.125 $G --tool-margin 0.015 --start-level 3 --courant 0.125;
        g1-m20-l3-c0.125 $G --tool-margin 0.02 --start-level 3 --courant 0.125;
        g01-m8-c0.125 --gamma 1e-4,5e-4 --tool-margin 0.008 --courant 0.125;
        level2-usoft --fixed-level 2 --level-stiffness $S;
        level1-usoft --fixed-level 1 --level-stiffness $S;
        level2-s85 --fixed-level 2 --level-stiffness 1,1,0.85,1;
        g1-m15-l3-usoft $G --tool-margin 0.015 --start-level 3 --level-stiffness $S;
        g1-m20-l3-usoft $G --tool-margin 0.02 --start-level 3 --level-stiffness $S;
        g1-m25-l3 $G --tool-margin 0.025 --start-level 3;
        g1-m30-l3 $G --tool-margin 0.03 --start-level 3;
        g03-m20-l3 --gamma 3e-4,1.5e-3 --tool-margin 0.02 --start-level 3;
        g01-m15-l3 --gamma 1e-4,5e-4 --tool-margin 0.015 --start-level 3;
        g1-m8-l2 $G --tool-margin 0.008 --start-level 2;
        g1-m12-l2 $G --tool-margin 0.012 --start-level 2;
        g1-m12-l3 $G --tool-margin 0.012 --start-level 3;
        g03-m8-l1 --gamma 3e-4,1.5e-3 --tool-margin 0.008 --start-level 1;
        g1-m10-l1 $G --tool-margin 0.01 --start-level 1;
        g1-m4-l1 $G --tool-margin 0.004 --start-level 1;
        g1-m6-l1 $G --tool-margin 0.006 --start-level 1;
        g3-m8-l1 --gamma 3e-3,1e-2 --tool-margin 0.008 --start-level 1;
        g1-m8-usoft-l1 $G --tool-margin 0.008 --level-stiffness $S --start-level 1;
        g1-m8-l3 $G --tool-margin 0.008 --start-level 3;
        g3-m15-l1 --gamma 3e-3,1e-2 --tool-margin 0.015 --start-level 1"
    RUNS=${ADAPTIVE_RUNS:-$DEFAULT}
    echo "$RUNS" | tr ';' '\n' | while read -r name opts; do
        [ -n "$name" ] || continue
        # shellcheck disable=SC2086
        run "$name" $opts
    done ;;
tool8) # the liver's 8 mm tool (BUNNY_SCENE_TOOL8): the finest level at 0.5 and 0.125 and the runs
       # debunne_bunny_tool8.md reports, undamped and damped
    BUNNY_SCENE=$BUNNY_SCENE_TOOL8
    run finest-c0.5 --fixed-level 3 --courant 0.5
    run finest-c0.125 --fixed-level 3 --courant 0.125
    run finest-c0.5-semi --fixed-level 3 --courant 0.5 --semi-implicit
    run g1-m8-l1 --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 1
    run g1-m8 --gamma 1e-3,5e-3 --tool-margin 0.008
    run g1-m12-l1 --gamma 1e-3,5e-3 --tool-margin 0.012 --start-level 1
    run g1-m4-l1 --gamma 1e-3,5e-3 --tool-margin 0.004 --start-level 1
    run g1-m8-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.008 --start-level 1 --semi-implicit
    run g1-m12-l1-semi --gamma 1e-3,5e-3 --tool-margin 0.012 --start-level 1 --semi-implicit
    run finest-c0.125-semi --fixed-level 3 --courant 0.125 --semi-implicit ;;
five|five-dec)
    # a fifth level between levels 2 and 3 (levels 0-4 then; -lN counts the five levels; the
    # finest level is the same mesh, so the references above stand). five: the bunny's surface
    # itself meshed at --tets 20000 (5,504 nodes, 23,371 tets; the mesher gives no fewer on that
    # surface), names ending in -5lv; five-dec: the surface decimated to 5,000 triangles and
    # meshed at --tets 25000 (4,824 nodes, 22,528 tets), names ending in -5dlv
    if [ "$PART" = five ]; then
        SUF=5lv
        "$T" mesh "$W/bunny_z.off" --tets 20000 --out "$W/l2b" --no-cache | grep -E "^(vertices|tets|min dihedral)" >> "$LOG" || true
    else
        SUF=5dlv
        "$B/bench/tw_decimate" "$W/bunny_z.off" "$W/s2b.off" 5000 2>/dev/null
        "$T" mesh "$W/s2b.off" --tets 25000 --out "$W/l2b" --no-cache | grep -E "^(vertices|tets|min dihedral)" >> "$LOG" || true
    fi
    LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l2b.node,$W/l3.node"
    G="--gamma 1e-3,5e-3"
    while read -r name opts; do
        echo "== $name-$SUF: --multires 5 $opts" >> "$LOG"
        # shellcheck disable=SC2086
        nice "$T" run --multires 5 --levels "$LEVELS" $BUNNY_SCENE $opts --csv "$W/run.csv" >> "$LOG" 2>&1 || echo "failed" >> "$LOG"
        multires_frames "$D/$N.csv" "$name-$SUF"
    done <<EOF
level3 --fixed-level 3
g1 $G
g1-m8-l1 $G --tool-margin 0.008 --start-level 1
g1-m12-l1 $G --tool-margin 0.012 --start-level 1
g1-m15-l1 $G --tool-margin 0.015 --start-level 1
g1-m20-l1 $G --tool-margin 0.02 --start-level 1
g1-m8-l2 $G --tool-margin 0.008 --start-level 2
g1-m12-l2 $G --tool-margin 0.012 --start-level 2
g1-m20-l4 $G --tool-margin 0.02 --start-level 4
g1-m30-l4 $G --tool-margin 0.03 --start-level 4
EOF
    ;;
alt|alt8)
    # the finest level meshed anew at other sizes (the bunny's surface at --tets 48000 and
    # 80000), each alone at Courant 0.5: how far an independent mesh of about the finest
    # level's size lies from it (names alt48k, alt80k; the probe is each mesh's node nearest
    # the same point, its rest position in the log); alt8: with the 8 mm tool
    [ "$PART" = alt8 ] && BUNNY_SCENE=$BUNNY_SCENE_TOOL8
    for t in 48000 80000; do
        "$T" mesh "$W/bunny_z.off" --tets $t --out "$W/alt" --no-cache | grep -E "^(vertices|tets|min dihedral)" >> "$LOG" || true
        LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/alt.node"
        run "alt$((t / 1000))k" --fixed-level 3
    done ;;
*) echo "PART: undamped, undamped2, semi, tool8, five, five-dec, alt, alt8, adaptive or report" >&2; exit 2 ;;
esac
