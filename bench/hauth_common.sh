# Shared by bench/hauth_bar.sh and bench/hauth_liver.sh (sourced, not run):
# Hauth & Strasser's hierarchical-basis simulation (tetwarp run --hier-basis)
# against the engine's fine-level methods on one scene. The caller sets
#   NAME SCENE T DT0 LEVELS DTS, and B (build dir), D (results dir).
# Writes $D/hauth_$NAME.csv (one row per run: accuracy and speed at DT0,
# then the stable-step search over DTS), $D/hauth_${NAME}_trace.csv (the
# probe's displacement per step of the DT0 runs), $D/hauth_$NAME.log (every
# run's output) and $D/hauth_$NAME.png (bench/hauth_plot.py).
#
# Error: the largest vertex distance to the accurate reference (the world's
# green method on the finest level, DT0/4, 3 Newton iterations), over the
# bounding box's longest edge, max over the run; the fine-level methods' own
# runs are compared at the probe only (their CSV has no other vertex).
# Stable: the run ends without a divergence and the probe stays within one
# longest edge of its rest position.
# Timings: one thread (OMP_NUM_THREADS=1, --threads 1) for both sides.

# shellcheck source=bench/bench_common.sh
. "$(dirname "$0")/bench_common.sh"
T_BIN="$B/tetwarp"
bench_setup "$D"
LOG="$D/hauth_$NAME.log"
OUT="$D/hauth_$NAME.csv"
TRACE="$D/hauth_${NAME}_trace.csv"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
: > "$LOG"
echo "run,levels,tets,dt,ok,ms_step,cg_step,ref_ms_step,ref_cg_step,err_max,err_mean,err_last,probe_umax" > "$OUT"
echo "run,step,time,probe_ux,probe_uy,probe_uz" > "$TRACE"

# run NAME LEVELS DT TRACE(0/1) ARGS...: one tetwarp run, a row of $OUT
run() {
    rn=$1; lv=$2; dt=$3; tr=$4; shift 4
    steps=$($PY -c "print(max(1, round($T / $dt)))")
    echo "== $rn: --hier-basis $lv --dt $dt --steps $steps $*" >> "$LOG"
    if "$T_BIN" run --hier-basis "$lv" $SCENE --threads 1 --dt "$dt" --steps "$steps" --csv "$W/run.csv" "$@" \
        > "$W/out.txt" 2>&1; then ok=1; else ok=0; fi
    cat "$W/out.txt" >> "$LOG"
    s=$(grep '^summary:' "$W/out.txt" || true)
    get() { echo "$s" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
    if [ -n "$s" ]; then
        um=$(get probe_umax)
        ok=$($PY -c "print(1 if $ok and $um < $EDGE else 0)")
        echo "$rn,$lv,$(get tets),$dt,$ok,$(get ms_step),$(get cg_step),$(get ref_ms_step),$(get ref_cg_step),$(get err_max),$(get err_mean),$(get err_last),$um" >> "$OUT"
    else
        echo "$rn,$lv,,$dt,0,,,,,,,," >> "$OUT"
    fi
    if [ "$tr" = 1 ] && [ -f "$W/run.csv" ]; then
        # the run's own probe; for the accurate reference, its ref_probe columns
        tail -n +2 "$W/run.csv" | awk -F, -v r="$rn" '{print r","$1","$2","$10","$11","$12}' >> "$TRACE"
        if [ "$rn" = "hb-L$lv" ]; then
            tail -n +2 "$W/run.csv" | awk -F, -v r="reference-L$lv" 'NF > 17 {print r","$1","$2","$15","$16","$17}' >> "$TRACE"
        fi
    fi
    rm -f "$W/run.csv"
}

accurate="--reference green --reference-substeps 4 --reference-newton 3"
for L in $LEVELS; do
    # accuracy and speed at DT0
    run "hb-L$L" "$L" "$DT0" 1 $accurate
    run "hb-coarse-corot-L$L" "$L" "$DT0" 1 --coarse corot $accurate
    run "hb-hierarchical-pc-L$L" "$L" "$DT0" 0 --hb-precond hierarchical
    run "hb-jacobi-pc-L$L" "$L" "$DT0" 0 --hb-precond jacobi
    run "fine-green-L$L" "$L" "$DT0" 1 --reference green --reference-only
    run "fine-green-newton3-L$L" "$L" "$DT0" 1 --reference green --reference-newton 3 --reference-only
    run "fine-corot-L$L" "$L" "$DT0" 1 --reference corot-element --reference-only
done
# the largest stable step, on the first level count
L=$(echo $LEVELS | cut -d' ' -f1)
for dt in $DTS; do
    run "stable-hb" "$L" "$dt" 0
    run "stable-fine-green" "$L" "$dt" 0 --reference green --reference-only
    run "stable-fine-green-newton3" "$L" "$dt" 0 --reference green --reference-newton 3 --reference-only
    run "stable-fine-corot" "$L" "$dt" 0 --reference corot-element --reference-only
done
$PY bench/hauth_plot.py "$OUT" "$TRACE" "$D/hauth_$NAME.png" "$NAME" >> "$LOG"
