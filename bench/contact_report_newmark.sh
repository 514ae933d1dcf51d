#!/bin/sh
# The contact report's drop (bench/contact_report.sh, tw_contact_report)
# under explicit Newmark at its own step: dt 0 = half the Courant limit of
# the mesh (tw_world_def.dt), mass damping 4/s and no stiffness damping (the
# harness's explicit settings). One CSV row per (scene, method, friction),
# and a rest table (OUT_CSV with _rest before .csv: corot-element, 10 s on
# the floor, --refs). Each rest row computes its own references, as the
# implicit rest rows do, from the pose it ends in: the static solve with the
# contacts pinned, and the placed and frictionless ones, the body set down
# on the floor and relaxed by the harness's implicit Euler steps (0.02 s,
# mass damping 20/s, the default stiffness damping, whatever the run's
# integrator). They are rest states of the body on the floor, not of the
# integrator that brought it there: the explicit rows are judged against
# the same equilibria as the implicit rows (the tube's frictionless one,
# corot-element, is 0.02035 in the implicit rest table at every dt).
#
# Usage: bench/contact_report_newmark.sh BUILD_DIR OUT_CSV
#   e.g. bench/contact_report_newmark.sh build bench/results/cpu-2core-amd-epyc/contact_report_newmark.csv
# Writes OUT_CSV, the rest table and their logs (.log: the runs' messages,
# the load; bench/contact_rows.sh). Check them with bench/contact_checks.py.
#
# Steps (half the Courant limit): the cube 1.5 ms, the tube 0.46 ms, the
# armadillo 14 us. Every method on the cube and the tube (1 s),
# corot-element on the armadillo (0.6 s, about 42,000 steps: minutes a run);
# the rest table the cube and the tube. The bunny (E 1e6, its smallest
# elements) gets 0.9 us, some 670,000 steps for 0.6 s at about 20 ms each:
# not run. Two runs at a time, one thread each.
set -e
B=${1:?usage: $0 BUILD_DIR OUT_CSV}
OUT=${2:?usage: $0 BUILD_DIR OUT_CSV}
{
    for mu in 0 0.5; do echo "armadillo corot-element explicit-newmark 0 $mu 0.6"; done
    for mu in 0 0.5; do
        for m in corot-element warp-vertex green linear; do
            for s in cube tube; do echo "$s $m explicit-newmark 0 $mu 1"; done
        done
    done
} | "$(dirname "$0")/contact_rows.sh" "$0" "$B" "$OUT"
for mu in 0 0.5; do
    for s in tube cube; do echo "$s corot-element explicit-newmark 0 $mu 10 --refs"; done
done | "$(dirname "$0")/contact_rows.sh" "$0" "$B" "${OUT%.csv}_rest.csv"
