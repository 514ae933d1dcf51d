#!/bin/sh
# Debunne et al. 2001 figs. 4-6 with the multiresolution module: a 0.1 m
# cube clamped on its x = 0 face, released horizontal under gravity, meshed
# at about 27, 57 and 135 nodes (TetGen on the cube's surface split 2x2,
# 3x3, 4x4 per face, as the paper's counts suggest); each level run alone,
# Green and Cauchy strain, undamped and damped; the corner (0.1, 0.1, 0)'s
# height over time. Writes OUT_DIR/debunne_cube.csv (all runs),
# debunne_cube_summary.csv (period and amplitude per run, and their
# differences to the finest level), debunne_cube.log and debunne_cube.png.
# usage: bench/debunne_cube.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
T="$B/tetwarp"
bench_setup "$D"
LOG="$D/debunne_cube.log"
: > "$LOG"
# the cube's surface, n x n squares per face, each split in two triangles
cube_surface() {
    $PY - "$1" "$2" <<'PYEOF'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
L = 0.1
vid, vl, tris = {}, [], []
def v(p):
    k = tuple(round(c, 12) for c in p)
    if k not in vid:
        vid[k] = len(vl)
        vl.append(k)
    return vid[k]
for ax in range(3):
    u, w = (ax + 1) % 3, (ax + 2) % 3
    for side in (0, 1):
        for i in range(n):
            for j in range(n):
                def P(a, b):
                    p = [0, 0, 0]
                    p[ax], p[u], p[w] = side * L, a * L / n, b * L / n
                    return v(p)
                a, b, c, d = P(i, j), P(i + 1, j), P(i + 1, j + 1), P(i, j + 1)
                for t in ([(a, b, c), (a, c, d)] if (i + j) % 2 == 0 else [(a, b, d), (b, c, d)]):
                    tris.append(t if side == 1 else (t[0], t[2], t[1]))
with open(out, "w") as f:
    for p in vl:
        f.write("v %r %r %r\n" % p)
    for t in tris:
        f.write("f %d %d %d\n" % (t[0] + 1, t[1] + 1, t[2] + 1))
PYEOF
}
# level: faces split n x n, TetGen edge H
for spec in 2:0.05 3:0.07 4:0.031; do
    n=${spec%%:*}
    h=${spec#*:}
    cube_surface "$n" "$W/cube$n.obj"
    "$T" mesh "$W/cube$n.obj" --edge "$h" --out "$W/cube$n" --no-cache >> "$LOG" 2>&1
done
# nu 0.3, rho 1000; E 3e4 Pa: the corner sags about 15 % of the side; E 1e4:
# about 40 %; 2 s sampled every 5 ms; damped: phi = psi = 10 Pa s (eq. 4)
# the steps from eq. 10's altitude limit, as the committed results were made
echo "run,E,nodes,strain,damping,frame,time,z,kinetic,elastic,gravity,work" > "$D/debunne_cube.csv"
for E in 3e4 1e4; do
for strain in green cauchy; do
    for damp in 0,0 10,10; do
        for n in 2 3 4; do
            echo "== E $E $strain visco $damp cube$n" >> "$LOG"
            "$T" run --multires 1 --levels "$W/cube$n.node" --E "$E" --nu 0.3 --rho 1000 --gravity 0,0,-9.81 \
                --fix "x<1e-6" --frame-dt 0.005 --frames 400 --strain "$strain" --visco "$damp" \
                --probe-at 0.1,0.1,0 --step-limit altitude --csv "$W/run.csv" >> "$LOG" 2>&1
            nodes=$(grep -o 'level: [0-9]* nodes' "$LOG" | tail -1 | grep -o '[0-9]*')
            tag="E$E-$strain-$(echo $damp | tr , _)-$nodes"
            awk -F, -v tag="$tag" -v E="$E" -v nodes="$nodes" -v s="$strain" -v d="${damp%%,*}" \
                'NR > 1 { print tag "," E "," nodes "," s "," d "," $1 "," $2 "," $16 "," $11 "," $12 "," $13 "," $5 }' \
                "$W/run.csv" >> "$D/debunne_cube.csv"
        done
    done
done
done
$PY bench/plot_debunne_cube.py "$D"
