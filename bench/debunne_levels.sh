#!/bin/sh
# The multiresolution liver's levels (Debunne et al. 2001) for the viewer's
# mr-liver scene: SOFA's smooth liver surface (data/meshes/
# liver_sofa_smooth.obj, 4,384 triangles, which crosses itself in 7 places)
# decimated by OpenMesh's quadric edge collapse (tw_decimate) to 300, 1,200,
# 1,600 and 1,600 triangles, then meshed by TetGen (tetwarp mesh) at about
# 600, 3,000, 12,000 and 62,000 tets (level 3, 10,724 nodes: the 10k-node
# liver of the tool-rate measurement, bench/debunne_rate.sh). TetGen keeps a surface's triangles, so a coarse
# level is only as coarse as its surface: the coarse levels need the
# decimation, and it also removes the crossings (1,600 is the largest count
# tried that has none). Writes data/meshes/liver_mr{0,1,2,3}.node/.ele (SOFA's
# units, cm) and prints each level's counts.
# usage: bench/debunne_levels.sh [BUILD_DIR]
set -eu
B=${1:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
S=data/meshes/liver_sofa_smooth.obj
for spec in 0,300,600 1,1200,3000 2,1600,12000 3,1600,62000; do
    l=${spec%%,*}; r=${spec#*,}; faces=${r%%,*}; tets=${r#*,}
    "$B/bench/tw_decimate" "$S" "$W/s$l.obj" "$faces" 2>/dev/null
    "$B/tetwarp" mesh "$W/s$l.obj" --tets "$tets" --out "data/meshes/liver_mr$l" --no-cache | grep -E "^(vertices|tets|wrote)" || true
done
