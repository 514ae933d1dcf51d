#!/bin/sh
# Stills of the multiresolution liver in the viewer (Debunne et al. 2001
# figs. 1 and 8 style; demos/mr_scene.c): the sphere pressing into the top,
# the levels that simulate each point in colours (0 blue, 1 green, 2 red),
# and the same frame in the liver's own colour. Headless (EGL or Xvfb).
# usage: bench/debunne_stills.sh [BUILD_DIR] [STILLS_DIR]
set -eu
B=${1:-build}
S=${2:-demos/stills}
V="$B/interop/tetwarp-view"
mkdir -p "$S"
export OMP_WAIT_POLICY=PASSIVE
for c in levels body; do
    dir=$(mktemp -d)
    # 13 frames of 3 steps (0.01 s frames): t = 0.36 s, the sphere 8 mm down
    "$V" --scene mr-liver --headless --colors "$c" --frames 13 --progress 1000 --out "$dir" | tail -1
    name=mr-liver-$c
    [ "$c" = body ] && name=mr-liver
    cp "$dir/frame_00012.png" "$S/$name.png"
    rm -rf "$dir"
done
