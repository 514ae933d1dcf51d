#!/bin/sh
# Exact commands that produced this folder (run from the repository root).
set -x
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release && cmake --build build-bench -j2
D=bench/results/cpu-2core-amd-epyc
build-bench/bench/tw_bench_cpu --sizes 10k,100k --threads 1,all --cg fixed,tol \
    --csv $D/bench_cpu.csv > $D/bench_cpu.log 2> $D/bench_cpu.err.log
build-bench/bench/tw_bench_cpu --sizes 1m --methods corot-element,warp-vertex --threads 1,all --cg fixed \
    --steps 3 --csv $D/bench_cpu_1m.csv > $D/bench_cpu_1m.log 2> $D/bench_cpu_1m.err.log
build-bench/bench/tw_bench_warp_system --csv $D/warp_system.csv > $D/warp_system.log 2> $D/warp_system.err.log
# corot-element after Newton polar + packed one-triangle assembly (best of 3 runs
# on a machine shared with a CI job; built in /tmp/build_corot, same flags):
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 build-bench/bench/tw_bench_cpu --sizes 10k,100k --methods corot-element \
    --threads 1 --cg fixed --csv $D/bench_cpu_corot_fast.csv > $D/bench_cpu_corot_fast.log
# green after the packed StVK tangent and one-triangle assembly (best of 3 runs
# on a machine shared with another build job; built in /tmp/build_green, same flags):
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 build-bench/bench/tw_bench_cpu --sizes 10k,100k --methods green \
    --threads 1 --cg fixed --csv $D/bench_cpu_green_fast.csv > $D/bench_cpu_green_fast.log
python3 bench/plot.py $D
# Contact at real-time steps (contact_report.md; Release, -DTW_CUDA=OFF, build/):
OMP_WAIT_POLICY=PASSIVE nice -n 5 bench/contact_report.sh build $D/contact_report.csv
OMP_WAIT_POLICY=PASSIVE nice -n 5 bench/contact_report_newmark.sh build $D/contact_report_newmark.csv
X=bench/results/cpu-2core-intel-xeon
python3 bench/contact_checks.py $D/contact_report.csv $D/contact_report_rest.csv $X/contact_report.csv \
    $X/contact_report_rest.csv $X/contact_report_stick.csv $X/contact_report_stick_rest.csv
python3 bench/contact_checks.py $D/contact_report_newmark.csv $D/contact_report_newmark_rest.csv
# the same sweep on a build of b34dbcb (git archive b34dbcb | tar -x -C /tmp/b34; built there):
#   (cd /tmp/b34 && bench/contact_report.sh build OUT.csv), copied to $D/contact_report_b34dbcb{,_rest}.csv, .log
python3 bench/contact_checks.py $D/contact_report_b34dbcb.csv $D/contact_report_b34dbcb_rest.csv \
    $D/contact_report.csv $D/contact_report_rest.csv
# The bunny with the 15 mm tool scored on the whole body (debunne_tool15.md; Release,
# -DTW_CUDA=OFF, build/):
OMP_WAIT_POLICY=PASSIVE FIELDS=/tmp/tool15_ffinal bench/debunne_tool15.sh build $D
V="--visco 3,3"; G="--gamma 1e-3,5e-3"
OMP_WAIT_POLICY=PASSIVE REPEAT=1 REF=0.125 NAME=debunne_tool15_visco RUNS="ref --fixed-level 3 --courant 0.125 $V;
    finest --fixed-level 3 $V; level2 --fixed-level 2 $V; g1 $G $V;
    g3-m8-l1 --gamma 3e-3,1e-2 --tool-margin 0.008 --start-level 1 $V; g1-m12-l1 $G --tool-margin 0.012 --start-level 1 $V;
    g1-m20-l3 $G --tool-margin 0.02 --start-level 3 $V; g1-m30-l3 $G --tool-margin 0.03 --start-level 3 $V" \
    bench/debunne_tool15.sh build $D
# the rest of the body kept on level 1 or 2 (debunne_tool15_keep.*: explore.csv/.log of this run, renamed)
OMP_WAIT_POLICY=PASSIVE FIELDS=/tmp/tool15_ffinal REPEAT=1 NAME=explore RUNS="k2-m30-l2 --gamma 0,1e-2 --tool-margin 0.03 --start-level 2;
    k2-m15-l2 --gamma 0,1e-2 --tool-margin 0.015 --start-level 2; k2-m8-l2 --gamma 0,1e-2 --tool-margin 0.008 --start-level 2;
    k1-m15-l1 --gamma 0,1e-2 --tool-margin 0.015 --start-level 1; k1-m30-l1 --gamma 0,1e-2 --tool-margin 0.03 --start-level 1" \
    bench/debunne_tool15.sh build /tmp/tool15_o5
