# shellcheck shell=bash
# Sourced by the Debunne liver benchmarks (debunne_liver.sh,
# debunne_liver10k.sh, debunne_liver10k_frontier.sh, debunne_rate.sh): the
# levels data/meshes/liver_mr0..3 with SOFA's cm scaled to m, and the tool
# scene they share.

# liver_levels DIR: DIR/l0..l3.node/.ele, the four levels in metres
liver_levels() {
    for l in 0 1 2 3; do
        awk 'NR == 1 || /^#/ { print; next } NF >= 4 { printf "%s %.17g %.17g %.17g\n", $1, 0.01 * $2, 0.01 * $3, 0.01 * $4; next } { print }' \
            "data/meshes/liver_mr$l.node" > "$1/l$l.node"
        cp "data/meshes/liver_mr$l.ele" "$1/l$l.ele"
    done
}

# E 5 kPa, no gravity, the base pinned, the 8 mm sphere 9 mm down over
# 0.1 s and back, the probe under it, 30 frames of 10 ms
# shellcheck disable=SC2034
LIVER_SCENE="--E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0 --fix z<-0.012 --tool -0.0144,0.0269,0.0363,0.008
        --tool-move 0,0,-0.009,0.1 --probe-at -0.0144,0.0269,0.0273 --frame-dt 0.01 --frames 30"
