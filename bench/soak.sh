#!/usr/bin/env bash
# Soak: the undamped cantilever bar (Müller's fig. 6 set-up, --damping 0,0)
# for STEPS steps under every method x implicit integrator. Undamped, the
# total mechanical energy (kinetic + elastic + gravity, 0 at the start) must
# never rise above its start, and no step may produce NaN or blow up.
#
#   bench/soak.sh [BUILD_DIR]      (default build; STEPS=100000 BAR=1,0.1,0.1,20,2,2)
# Writes bench/results/$MACHINE/soak.csv and soak.log (MACHINE default
# cpu-2core-intel-xeon); the per-step CSVs go to $TMPDIR and are summarised.
# ROWS="warp-vertex:bdf2 ..." runs only those method:integrator rows: their
# lines in soak.csv are replaced, the others kept, and soak.log is appended to.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
T=$BUILD/tetwarp
STEPS=${STEPS:-100000}
BAR=${BAR:-1,0.1,0.1,20,2,2}
MACHINE=${MACHINE:-cpu-2core-intel-xeon}
OUT=bench/results/$MACHINE
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
CSV=$OUT/soak.csv
LOG=$OUT/soak.log
ROWS=${ROWS:-}
OLD=$TMP/old.csv
if [ -n "$ROWS" ] && [ -f "$CSV" ]; then cp "$CSV" "$OLD"; else : > "$OLD"; ROWS=""; fi
{
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# command: STEPS=$STEPS BAR=$BAR${ROWS:+ ROWS=\"$ROWS\"} bench/soak.sh $BUILD"
} > "$TMP/head.log"
if [ -n "$ROWS" ]; then cat "$TMP/head.log" >> "$LOG"; else cat "$TMP/head.log" > "$LOG"; fi
echo "method,integrator,steps_done,exit,max_energy_gain_J,step_of_max,final_energy_J,min_energy_J,mean_cg,mean_ms" > "$CSV"
for integ in implicit-euler bdf2; do
  for m in linear warp-vertex warp-edge corot-element green hybrid; do
    if [ -n "$ROWS" ] && [[ " $ROWS " != *" $m:$integ "* ]]; then
      grep "^$m,$integ," "$OLD" >> "$CSV" || true
      continue
    fi
    rc=0
    "$T" run --bar "$BAR" --method "$m" --integrator "$integ" --damping 0,0 --steps "$STEPS" \
        --threads 1 --csv "$TMP/s.csv" >> "$LOG" 2>&1 || rc=$?
    python3 - "$TMP/s.csv" "$m" "$integ" "$rc" >> "$CSV" <<'PY'
import csv, math, sys
path, m, integ, rc = sys.argv[1:5]
rows = list(csv.DictReader(open(path)))
E = [float(r['kinetic_energy']) + float(r['elastic_energy']) + float(r['gravity_energy']) for r in rows]
bad = [e for e in E if not math.isfinite(e)]
mx = max(E) if E and not bad else float('nan')
i = E.index(mx) + 1 if E and not bad else 0
cg = sum(float(r['cg_iterations']) for r in rows) / max(len(rows), 1)
ms = sum(float(r['step_ms']) for r in rows) / max(len(rows), 1)
print(f"{m},{integ},{len(rows)},{rc},{mx:.6g},{i},{E[-1] if E else float('nan'):.6g},{min(E) if E else float('nan'):.6g},{cg:.1f},{ms:.3f}")
PY
    tail -n 1 "$CSV"
  done
done
