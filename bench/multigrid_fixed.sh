#!/bin/sh
# The real-time mode (exactly 20 CG iterations a step) with block-Jacobi and
# with multigrid: the relative residual |r| / |b| those iterations leave, per
# scene (bench/multigrid.c --fixed 20: the 10k and 100k bars, the shipped
# sliver bunny in free fall; corot-element, implicit Euler, dt 0.01, E 1e6,
# all threads, means over steps 2-17). Writes multigrid_fixed20.csv, .log and
# .png into OUT_DIR.
#
# Usage: bench/multigrid_fixed.sh BUILD_DIR OUT_DIR
set -e
B=${1:?usage: $0 BUILD_DIR OUT_DIR}
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
M=$(dirname "$0")/../data/meshes/bunny_closed_3485v.tet.node
export OMP_WAIT_POLICY=PASSIVE
{
    echo "# bench/multigrid_fixed.sh $*  (commit $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ))"
    echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/multigrid_fixed20.log"
"$B/bench/tw_bench_multigrid" --steps 17 --threads-list 0 --fixed 20 bar:40,6,7 "$M" bar:90,14,13 \
    > "$OUT/multigrid_fixed20.csv" 2>> "$OUT/multigrid_fixed20.log"
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/multigrid_fixed20.log"
PY=python3
$PY -c "import matplotlib" 2>/dev/null || PY=/usr/bin/python3
$PY "$(dirname "$0")/plot_multigrid_fixed.py" "$OUT"
