#!/bin/sh
# The tw_warp_vertex_diag runs quoted in contact_report.md ("warp-vertex on
# the armadillo"): free fall at every dt, a uniform 8 m/s with either
# warp system, the frictionless drop with one and two Newton iterations,
# warp-edge's free fall, a spin; the frictionless drop's rotations with the
# single linearisation (--newton 1) and the automatic count (warp-vertex's
# turn test: a second linearisation where they turned far; warp_vertex_turn.md).
#
# Usage: bench/warp_vertex_diag.sh DIAG_BINARY > LOG
#   e.g. bench/warp_vertex_diag.sh build/bench/tw_warp_vertex_diag > bench/results/cpu-2core-intel-xeon/warp_vertex_diag_after.log
D=${1:?usage: $0 DIAG_BINARY}
M=data/meshes/armadillo_4k.node
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
run() { echo "## tw_warp_vertex_diag $M $*"; "$D" $M "$@" 2>&1 | grep -v "^tetwarp: warning"; echo; }
run 0.0333333 0.6
run 0.0333333 1 --gravity 0 --vy -8
run 0.0333333 1 --gravity 0 --vy -8 --warp-system bicgstab
run 0.0166667 1 --quiet
run 0.01 1 --quiet
run 0.001 1.2 --quiet
run 0.0333333 0.6 --floor 0
run 0.0333333 0.6 --floor 0 --newton 2
run 0.0333333 0.34 --floor 0 --newton 1 --rotations
run 0.0333333 0.6 --floor 0 --rotations
run 0.0333333 0.6 --method warp-edge --quiet
run 0.0333333 3 --gravity 0 --spin 2 --quiet
