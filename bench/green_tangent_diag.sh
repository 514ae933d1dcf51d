#!/bin/sh
# The tw_warp_vertex_diag runs quoted in green_tangent.md: green dropped on a
# frictionless floor at 1/30 s with the elements' report (--elements), then
# one to three Newton iterations and BDF2 at every dt, friction 0 and 0.5
# (the summary line of each).
#
# Usage: bench/green_tangent_diag.sh DIAG_BINARY > LOG
#   e.g. bench/green_tangent_diag.sh build/bench/tw_warp_vertex_diag > bench/results/cpu-2core-amd-epyc/green_tangent_diag_after.log
D=${1:?usage: $0 DIAG_BINARY}
M=data/meshes/armadillo_4k.node
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
run() { echo "## tw_warp_vertex_diag $M $*"; "$D" $M "$@" 2>&1 | grep -v "^tetwarp: warning"; echo; }
run 0.0333333 0.6 --method green --floor 0 --elements
for mu in 0 0.5; do
    for dt in 0.0333333 0.0166667 0.01; do
        for nw in 1 2 3; do run $dt 0.6 --method green --floor $mu --newton $nw --quiet; done
        run $dt 0.6 --method green --integrator bdf2 --floor $mu --quiet
    done
done
