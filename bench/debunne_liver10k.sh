#!/bin/sh
# Debunne et al. 2001 §5 on the 10k-node liver: the adaptive simulation
# against the fixed finest level, as bench/debunne_liver.sh, on the four
# levels data/meshes/liver_mr{0,1,2,3} (181, 705, 2,207 and 10,724 nodes,
# cm scaled to m). E 5 kPa, nu 0.3, no gravity, base (z < -12 mm) pinned;
# the 8 mm sphere starts 1 mm above the top, goes 9 mm down over 0.1 s and
# back over 0.1 s; 0.3 s at 10 ms frames. The reference is the finest level
# alone (--fixed-level 3), undamped and damped by the semi-implicit filter
# (eq. 11); the adaptive runs start on the coarsest level, at gamma 0.1, 0.5
# mm, at 0.03, 0.15 mm (undamped) and (damped) at 0.01, 0.05 mm, and at 0.1,
# 0.5 mm with the region within 8 mm of the tool refined ahead of the contact
# (--tool-margin, damped and undamped), and damped at 0.14, 0.15 mm with
# 8 mm of margin (a narrow hysteresis). Writes OUT_DIR/debunne_liver10k.csv
# (every frame of every run), debunne_liver10k_summary.csv (time, tet
# evaluations, the probe's and the tool force's error against the reference
# damped alike), debunne_liver10k.log and debunne_liver10k.png.
# usage: bench/debunne_liver10k.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
# shellcheck source=bench/debunne_liver_scene.sh
. "$(dirname "$0")/debunne_liver_scene.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
T="$B/tetwarp"
bench_setup "$D"
liver_levels "$W"
LOG="$D/debunne_liver10k.log"
: > "$LOG"
LEVELS="$W/l0.node,$W/l1.node,$W/l2.node,$W/l3.node"
multires_frames_header "$D/debunne_liver10k.csv"
run() { # name, options
    liver_run "$D/debunne_liver10k.csv" 4 "$@"
}
run finest --fixed-level 3
run adaptive --gamma 1e-4,5e-4
run finest-semi --fixed-level 3 --semi-implicit
run adaptive-semi --gamma 1e-4,5e-4 --semi-implicit
run adaptive-fine-semi --gamma 1e-5,5e-5 --semi-implicit
run adaptive-mid --gamma 3e-5,1.5e-4
run adaptive-margin --gamma 1e-4,5e-4 --tool-margin 0.008
run adaptive-margin-semi --gamma 1e-4,5e-4 --tool-margin 0.008 --semi-implicit
# a narrow hysteresis: the region merges back once the tool has left
run adaptive-hyst-semi --gamma 1.4e-4,1.5e-4 --tool-margin 0.008 --semi-implicit
$PY bench/plot_debunne_liver.py "$D" debunne_liver10k \
    "Liver (4 levels: 181, 705, 2207, 10724 nodes), 8 mm sphere pressed in: adaptive vs finest level"
