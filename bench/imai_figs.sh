#!/bin/sh
# Imai et al. 2013 figs. 10-13 on the viewer's tetra tree scenes
# (demos/tree_scenes.c): the numbers (bench/imai_figs.c, one CSV per scene)
# and the stills (tetwarp-view --headless, PNG, into demos/stills/).
#   fig. 10   tree-bunny (E 1 MPa at the feet to 3 kPa at the ears) stands;
#             tree-bunny-soft (3 kPa everywhere) does not
#   figs. 11-12  tree-armadillo: E 200 kPa at the left to 20 kPa at the
#             right, 500 N pulling each hand outward: the soft/stiff ratio
#             of the hands' displacements
#   fig. 13   tree-liver: a synthetic vessel tree (region 2) ten times
#             stiffer than the tissue, against tree-liver-plain
#   and the front's levels in colours on the box (figs. 6-8) and the bunny.
# usage: bench/imai_figs.sh [BUILD_DIR] [OUT_DIR] [STILLS_DIR]
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
S=${3:-demos/stills}
mkdir -p "$D" "$S"
X="$B/bench/tw_bench_imai_figs"
V="$B/interop/tetwarp-view"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
LOG="$D/imai_figs.log"
{
    echo "# bench/imai_figs.sh on $(uname -n), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "# machine shared with other jobs: ms/step are wall time and noisy"
} > "$LOG"
run() { # scene steps
    "$X" "$1" "$2" data "$D/imai_figs_$1.csv" >> "$LOG" 2>&1
}
run tree-bunny 200
run tree-bunny-soft 200
run tree-armadillo 150
run tree-liver 100
run tree-liver-plain 100
# the summary: the last row of each; the armadillo's soft/stiff hand ratio
{
    echo "scene,steps,time_s,active_tets_end,probe1,probe1_m,probe2,probe2_m,soft_over_stiff_hand"
    for s in tree-bunny tree-bunny-soft tree-armadillo tree-liver tree-liver-plain; do
        awk -F, -v s="$s" 'NR == 1 { a = $6; b = $7 }
            END { r = s == "tree-armadillo" ? sprintf("%.4g", $7 / $6) : ""
                  printf "%s,%d,%s,%d,%s,%.5g,%s,%.5g,%s\n", s, $1, $2, $3, a, $6, b, $7, r }' "$D/imai_figs_$s.csv"
    done
} > "$D/imai_figs_summary.csv"
cat "$D/imai_figs_summary.csv" >> "$LOG"
# the stills: headless through EGL (or Xvfb), the last frame of each run
still() { # name scene frames colours
    dir=$(mktemp -d)
    "$V" --scene "$2" --headless --colors "$4" --frames "$3" --progress 1000 --out "$dir" >> "$LOG" 2>&1
    last=$(ls "$dir"/frame_*.png | tail -1)
    cp "$last" "$S/$1.png"
    rm -rf "$dir"
}
still tree-box-levels tree-box 31 levels
still tree-bunny-levels tree-bunny 61 levels
still tree-bunny-stiffness tree-bunny 61 stiffness
still tree-bunny-soft tree-bunny-soft 61 stiffness
still tree-armadillo tree-armadillo 61 stiffness
still tree-liver tree-liver 41 stiffness
cat "$D/imai_figs_summary.csv"
