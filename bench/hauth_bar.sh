#!/bin/sh
# Hauth & Strasser's hierarchical bar: a 1 x 0.2 x 0.2 m bar of 10x2x2 cells
# (240 tets) refined once (1,920 tets) and twice (15,360), pinned at x = 0,
# E 1 MPa, nu 0.3, 1000 kg/m^3, no gravity, Rayleigh beta 0.01 s; a
# transverse force on the free end (x = 1 m) rising from 0 to 200 N over 1 s,
# then held, 2 s in all. The accuracy runs at dt 10 ms; the stable-step
# search on the 1,920-tet level. See bench/hauth_common.sh for the runs.
# usage: bench/hauth_bar.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
NAME=bar
SCENE="--bar 1,0.2,0.2,10,2,2 --E 1e6 --nu 0.3 --rho 1000 --gravity 0,0,0 --damping 0,0.01
       --load x>0.999 --load-force 0,0,-200 --load-ramp 1"
EDGE=1
T=2
DT0=0.01
LEVELS=${LEVELS:-2 3}
DTS=${DTS:-0.005 0.01 0.02 0.05 0.1 0.2 0.5}
. bench/hauth_common.sh
