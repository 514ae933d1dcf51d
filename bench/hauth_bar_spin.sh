#!/bin/sh
# The largest stable step of Hauth & Strasser's hierarchical bar under fast
# rotation (the paper's rotating bar): the bar of bench/hauth_bar.sh (10x2x2
# cells refined once, 1,920 tets), nothing pinned, no gravity, undamped,
# released stretched 20 % along its axis and spinning at 6 rad/s about z,
# 3 s. Implicit Euler only takes energy out: a run is stable when it ends
# without a divergence and its mechanical energy never rises above the start
# (by more than 0.1 %). Writes OUT_DIR/hauth_bar_spin.csv and .log.
# usage: bench/hauth_bar_spin.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, bench/results/cpu-2core-intel-xeon)
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
T_BIN="$B/tetwarp"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$D"
PY=${PYTHON:-python3}
LOG="$D/hauth_bar_spin.log"
OUT="$D/hauth_bar_spin.csv"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
SCENE="--bar 1,0.2,0.2,10,2,2 --E 1e6 --nu 0.3 --rho 1000 --gravity 0,0,0 --damping 0,0 --fix none
       --spin 6 --stretch 0.2 --threads 1"
: > "$LOG"
echo "run,dt,ok,ms_step,cg_step,energy_start,energy_max" > "$OUT"
for dt in ${DTS:-0.01 0.02 0.05 0.1 0.2 0.5}; do
    steps=$($PY -c "print(max(1, round(3 / $dt)))")
    for m in hb fine-green fine-green-newton3 fine-corot; do
        case $m in
            hb) extra="" ;;
            fine-green) extra="--reference green --reference-only" ;;
            fine-green-newton3) extra="--reference green --reference-newton 3 --reference-only" ;;
            fine-corot) extra="--reference corot-element --reference-only" ;;
        esac
        echo "== $m dt $dt" >> "$LOG"
        if "$T_BIN" run --hier-basis 2 $SCENE --dt "$dt" --steps "$steps" $extra > "$W/out.txt" 2>&1; then rc=0; else rc=1; fi
        cat "$W/out.txt" >> "$LOG"
        s=$(grep '^summary:' "$W/out.txt" || true)
        get() { echo "$s" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
        if [ -n "$s" ]; then
            e0=$(get energy_start); e1=$(get energy_max)
            ok=$($PY -c "print(1 if $rc == 0 and $e1 <= 1.001 * $e0 else 0)")
            echo "$m,$dt,$ok,$(get ms_step),$(get cg_step),$e0,$e1" >> "$OUT"
        else
            echo "$m,$dt,0,,,," >> "$OUT"
        fi
    done
done
$PY - "$OUT" >> "$LOG" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for m in dict.fromkeys(r["run"] for r in rows):
    ok = [float(r["dt"]) for r in rows if r["run"] == m and r["ok"] == "1"]
    bad = [float(r["dt"]) for r in rows if r["run"] == m and r["ok"] != "1"]
    print(f"{m}: largest stable dt {max(ok) if ok else 'none'} s; unstable at {bad or 'none'}")
PY
tail -4 "$LOG"
