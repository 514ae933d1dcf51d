#!/bin/sh
# Hauth & Strasser's liver: SOFA's coarse liver (data/meshes/liver_sofa.msh,
# 181 vertices, 596 tets, cm scaled to m by bench/liver_levels.py, 6.5 cm
# long) refined once (4,768 tets); its base (z < -12 mm) pinned, E 20 kPa,
# nu 0.3, 1060 kg/m^3, no gravity, Rayleigh beta 0.02 s; the top (z > 20 mm,
# 150 vertices of the fine level) pushed down by 0.1 N in all, rising over
# 0.25 s, then held, 0.5 s in all. The accuracy runs at dt 10 ms. See
# bench/hauth_common.sh for the runs.
# usage: bench/hauth_liver.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
NAME=liver
LIVER=$(mktemp -d)
PY0=${PYTHON:-python3}
$PY0 bench/liver_levels.py data/meshes/liver_sofa.msh "$LIVER/liver0" > /dev/null
SCENE="--mesh $LIVER/liver0.node --E 2e4 --nu 0.3 --rho 1060 --gravity 0,0,0 --fix z<-0.012 --damping 0,0.02
       --load z>0.02 --load-force 0,0,-0.1 --load-ramp 0.25"
EDGE=0.06483
T=0.5
DT0=0.01
LEVELS=${LEVELS:-2}
DTS=${DTS:-0.005 0.01 0.02 0.05 0.1 0.2}
. bench/hauth_common.sh
rm -rf "$LIVER"
