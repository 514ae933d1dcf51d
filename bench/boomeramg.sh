#!/usr/bin/env bash
# The engine's block-Jacobi and multigrid PCG against hypre's BoomerAMG on
# the same step systems (bench/boomeramg.c): bars of 15k, 123k and 983k
# tets (x = 0 pinned) and the shipped sliver bunny (27k tets, free).
#   bench/boomeramg.sh [BUILD_DIR]        (default build; needs libhypre-dev)
# Writes bench/results/$MACHINE/boomeramg_$PREC.{csv,log,png} (MACHINE default
# cpu-2core-intel-xeon; PREC float or double, from the build's TW_DOUBLE).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
EXE=$BUILD/bench/tw_bench_boomeramg
MACHINE=${MACHINE:-cpu-2core-intel-xeon}
SCENES=${SCENES:-"bar:40,8,8 data/meshes/bunny_closed_3485v.tet.node bar:80,16,16 bar:160,32,32"}
OUT=bench/results/$MACHINE
mkdir -p "$OUT"
PREC=float
grep -q '^TW_DOUBLE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && PREC=double
NAME=$OUT/boomeramg_$PREC
[ -x "$EXE" ] || { echo "$EXE not built (apt-get install libhypre-dev, then re-run cmake)" >&2; exit 2; }
{
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# command: SCENES=\"$SCENES\" bench/boomeramg.sh $BUILD"
} > "$NAME.log"
# nice -n -5 where allowed (a shared machine): the log says which
NICE="nice -n -5"
$NICE true 2> /dev/null || NICE=""
echo "# run with: ${NICE:-no nice}" >> "$NAME.log"
# shellcheck disable=SC2086
OMP_WAIT_POLICY=PASSIVE $NICE "$EXE" $SCENES 2>>"$NAME.log" | tee "$NAME.csv" >> "$NAME.log"
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$NAME.log"
"${PYTHON:-python3}" bench/plot_boomeramg.py "$NAME.csv" "$NAME.png"
