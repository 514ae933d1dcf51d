#!/usr/bin/env bash
# Where warp-vertex's energy gain on the undamped bar comes from: the total
# mechanical energy (kinetic + elastic + gravity, 0 at the start) of the
# undamped cantilever over its first T seconds, warp-vertex under implicit
# Euler, BDF2 and explicit Newmark (dt 0.0004 s, near the converged trajectory) at several steps, corot-element beside it,
# on the soak's bar (20x2x2) and on the coarse 8x1x1 bar of the integrator
# tests. BEFORE (a build without BDF2's energy projection for warp-vertex)
# adds its BDF2 rows: the unprojected trajectory.
#
#   BEFORE=/path/to/old/build bench/soak_energy.sh [BUILD_DIR]   (T=2)
# Writes bench/results/$MACHINE/soak_energy.csv (one line a run: the largest
# energy and when), soak_energy_trace.csv (t, E of each run, every few
# steps), soak_energy.log and soak_energy.png.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BEFORE=${BEFORE:-}
T=${T:-2}
MACHINE=${MACHINE:-cpu-2core-intel-xeon}
OUT=bench/results/$MACHINE
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
CSV=$OUT/soak_energy.csv
TRACE=$OUT/soak_energy_trace.csv
LOG=$OUT/soak_energy.log
{
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# command: T=$T BEFORE=$BEFORE bench/soak_energy.sh $BUILD"
} > "$LOG"
echo "build,bar,method,integrator,dt,steps_done,exit,max_energy_gain_J,time_of_max_s,peak_kinetic_J,final_energy_J" > "$CSV"
echo "build,bar,method,integrator,dt,t,energy_J" > "$TRACE"

# build_label binary bar method integrator dt
run() {
  local label=$1 bin=$2 bar=$3 m=$4 integ=$5 dt=$6 steps rc=0
  steps=$(python3 -c "print(int($T / $dt + 0.5))")
  "$bin" run --bar "1,0.1,0.1,$bar" --method "$m" --integrator "$integ" --dt "$dt" --damping 0,0 \
      --steps "$steps" --threads 1 --csv "$TMP/s.csv" >> "$LOG" 2>&1 || rc=$?
  python3 - "$TMP/s.csv" "$label" "${bar//,/x}" "$m" "$integ" "$dt" "$rc" "$CSV" "$TRACE" <<'PY'
import csv, math, sys
path, label, bar, m, integ, dt, rc, out, trace = sys.argv[1:10]
rows = list(csv.DictReader(open(path)))
E = [float(r['kinetic_energy']) + float(r['elastic_energy']) + float(r['gravity_energy']) for r in rows]
t = [float(r['time']) for r in rows]
ke = max((float(r['kinetic_energy']) for r in rows), default=float('nan'))
ok = E and all(math.isfinite(e) for e in E)
i = E.index(max(E)) if ok else 0
with open(out, 'a') as f:
    f.write(f"{label},{bar},{m},{integ},{dt},{len(rows)},{rc},{max(E) if ok else float('nan'):.6g},"
            f"{t[i] if ok else float('nan'):.4g},{ke:.4g},{E[-1] if E else float('nan'):.6g}\n")
every = 4 * max(1, len(rows) // 400)
with open(trace, 'a') as f:
    for k in range(0, len(rows), every):
        f.write(f"{label},{bar},{m},{integ},{dt},{t[k]:.5g},{E[k]:.6g}\n")
PY
  tail -n 1 "$CSV"
}

for bar in 20,2,2 8,1,1; do
  for dt in 0.01 0.0025 0.001; do
    run after "$BUILD/tetwarp" "$bar" warp-vertex implicit-euler "$dt"
    [ -n "$BEFORE" ] && run before "$BEFORE/tetwarp" "$bar" warp-vertex bdf2 "$dt"
    run after "$BUILD/tetwarp" "$bar" warp-vertex bdf2 "$dt"
  done
  run after "$BUILD/tetwarp" "$bar" warp-vertex explicit-newmark 0.0004
  run after "$BUILD/tetwarp" "$bar" corot-element bdf2 0.01
  run after "$BUILD/tetwarp" "$bar" corot-element implicit-euler 0.001
  run after "$BUILD/tetwarp" "$bar" corot-element explicit-newmark 0.0004
done

for py in python3 /usr/bin/python3; do
  if "$py" -c 'import matplotlib' 2>/dev/null; then exec "$py" "$(dirname "$0")/plot_soak_energy.py" "$TRACE" "$OUT/soak_energy.png"; fi
done
echo "no python3 with matplotlib: the plot is not made" >&2
