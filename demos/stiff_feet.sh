#!/bin/sh
# Inhomogeneous stiffness (Imai et al. 2013): the closed
# bunny stands on its feet under gravity with Young's modulus graded along
# the up axis, stiff at the feet and soft at the ears, against uniform E.
#
# The mesh: y is up (bounding box y 0.0330 .. 0.1874 m; data/meshes/
# SOURCES.md). The feet are the vertices less than 5 mm above the lowest
# point (y < 0.038: 496 vertices), pinned. The probe is the ear tip, the
# vertex with the largest y (1271, at y = 0.18736 m). Runs:
#   gradient      E from 1e6 Pa at the feet (min y) to 2e4 Pa at the ears (max y)
#   uniform_stiff E = 1e6 Pa everywhere (the feet's stiffness)
#   uniform_soft  E = 2e4 Pa everywhere (the ears' stiffness)
# 1.5 s of implicit Euler (dt 0.01 s, Rayleigh damping 2 1/s, 0.01 s),
# corot-element. The ear tip's drop is -probe_uy at the last step.
#
# usage: demos/stiff_feet.sh [TETWARP [OUTDIR]]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tool=${1:-$here/build/tetwarp}
out=${2:-$here/bench/results/cpu-2core-amd-epyc}
mesh=$here/data/meshes/bunny_closed_3485v.tet.node
mkdir -p "$out"
common="--mesh $mesh --fix y<0.038 --gravity 0,-9.81,0 --rho 1000 --nu 0.3 --method corot-element
        --dt 0.01 --steps 150 --damping 2,0.01 --probe 1271"
log=$out/stiff_feet.log
: > "$log"
run() { # name, material options
    name=$1; shift
    echo "== $name: $*" >> "$log"
    # shellcheck disable=SC2086
    "$tool" run $common "$@" --csv "$out/stiff_feet_$name.csv" >> "$log" 2>&1
}
run gradient --E-gradient y,1e6,2e4
run uniform_stiff --E 1e6
run uniform_soft --E 2e4
{
    echo "ear tip (vertex 1271) at t = 1.5 s; drop = -probe_uy, m; max drop over the run"
    for name in gradient uniform_stiff uniform_soft; do
        awk -F, -v n="$name" 'NR > 1 { d = -$11; if (d > m) m = d; last = d; t = $2; v = $3 }
            END { printf "%-14s drop %.4f m (max %.4f m), volume %.6g m^3 at t = %s s\n", n, last, m, v, t }' \
            "$out/stiff_feet_$name.csv"
    done
} > "$out/stiff_feet.txt"
cat "$out/stiff_feet.txt"
