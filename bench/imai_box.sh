#!/bin/sh
# Imai et al. 2013 sec. 6, figs. 6-8: a box (0.3 x 0.1 x 0.1 m, base 3x1x1
# cells = 18 tets, 3 levels: 1152 tets at the finest) fixed on the wall x = 0
# sags under gravity for 1300 steps of 0.01 s (E 1e6 Pa, nu 0.3, 1000 kg/m^3,
# Rayleigh damping 1/s, 0.01 s). The adaptive tetra front against the finest
# level of the same tree, stepped side by side: active tets, the position
# error normalised by the box's longest edge, CPU ms per step (process CPU
# time, one thread). The same with heavy mass damping (a creeping sag). Then a sweep of the thresholds (the error against the
# active tets) and, with BIG=1, the same box at 92k finest tets for 40
# steps (the speed at the start and over the switches), once more with
# --mg-lag 0 (the front's multigrid set up anew after every switch), and the
# CPU split of the steps that switch.
# usage: bench/imai_box.sh [BUILD_DIR] [OUT_DIR]
set -eu
B=${1:-build}
D=${2:-bench/results/cpu-2core-intel-xeon}
mkdir -p "$D"
X="$B/bench/tw_bench_imai_box"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
LOG="$D/imai_box.log"
{
    echo "# bench/imai_box.sh on $(uname -n), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "# machine shared with other jobs: times are process CPU time of one thread"
} > "$LOG"
COMMON="--cells 3,1,1 --size 0.3,0.1,0.1 --levels 3 --E 1e6 --damping 1,0.01 --threads 1"
echo "## main: T1 1e-2, T2 3e-6, T3 1e-3, 1300 steps" >> "$LOG"
"$X" $COMMON --steps 1300 --t1 1e-2 --t2 3e-6 --t3 1e-3 > "$D/imai_box.csv" 2>> "$LOG"
echo "## creep: the same with mass damping 1000/s (an overdamped sag over about 3 s, as the paper's gradual refinement)" >> "$LOG"
"$X" --cells 3,1,1 --size 0.3,0.1,0.1 --levels 3 --E 1e6 --damping 1000,0.01 --threads 1 --steps 1300 \
    --t1 1e-2 --t2 3e-6 --t3 1e-3 > "$D/imai_box_creep.csv" 2>> "$LOG"
echo "## sweep (400 steps each): t1,t2,t3 -> summary" >> "$LOG"
echo "t1,t2,t3,active_mean,active_end,err_mean_pct,err_max_pct,ms_adapt,ms_finest" > "$D/imai_box_sweep.csv"
for cfg in 1e-2,1e-4,1e-3 1e-2,1e-5,1e-3 1e-2,3e-6,1e-3 1e-2,1e-6,1e-3 1e-2,3e-6,3e-3 1e-2,3e-6,1e-2; do
    t1=${cfg%%,*}; r=${cfg#*,}; t2=${r%%,*}; t3=${r#*,}
    "$X" $COMMON --steps 400 --t1 "$t1" --t2 "$t2" --t3 "$t3" > "$D/imai_box_tmp.csv" 2>> "$LOG"
    awk -F, -v t1="$t1" -v t2="$t2" -v t3="$t3" 'NR>1 { n++; a += $3; e += $9; if ($10 > m) m = $10; ma += $12; mf += $13; last = $3 }
        END { printf "%s,%s,%s,%.1f,%d,%.4g,%.4g,%.4f,%.4f\n", t1, t2, t3, a/n, last, 100*e/n, 100*m, ma/n, mf/n }' \
        "$D/imai_box_tmp.csv" >> "$D/imai_box_sweep.csv"
done
rm -f "$D/imai_box_tmp.csv"
echo "## fig. 3: one layered coarse tet's sampled stress (bench/imai_fig3.c)" >> "$LOG"
"$B/bench/tw_bench_imai_fig3" > "$D/imai_fig3.csv" 2>> "$LOG"
if [ "${BIG:-0}" = 1 ]; then
    BIGARGS="--cells 15,4,4 --size 0.3,0.1,0.1 --levels 3 --E 1e6 --damping 1,0.01 --threads 1 --steps 40 --t1 1e-2 --t2 3e-6 --t3 1e-3"
    echo "## big: base 15x4x4 cells = 1440 tets, 3 levels = 92160 finest tets, 40 steps" >> "$LOG"
    "$X" $BIGARGS > "$D/imai_box_big.csv" 2>> "$LOG"
    echo "## big with --mg-lag 0: the multigrid set up anew after every switch" >> "$LOG"
    "$X" $BIGARGS --mg-lag 0 > "$D/imai_box_big_nolag.csv" 2>> "$LOG"
    # the CPU split of the steps that switch, and over the run
    for f in imai_box_big imai_box_big_nolag; do
        awk -F, -v f="$f" 'NR == 1 { for (c = 1; c <= NF; c++) k[$c] = c; next }
            { sw = $k["refined"] + $k["coarsened"] > 0; n[sw]++; it[sw] += $k["cg_adapt"]; a[sw] += $k["ms_adapt"]
              for (p = 0; p < 7; p++) s[sw, p] += $k[col[p]] }
            BEGIN { split("cpu_decide cpu_energy cpu_rebuild cpu_assemble cpu_setup cpu_update cpu_pcg", c0, " ")
                    for (p = 0; p < 7; p++) col[p] = c0[p + 1] }
            END { for (sw = 1; sw >= 0; sw--) {
                      printf "%s, %s steps (%d): CPU ms/step %.1f = decide %.1f, energy %.1f, rebuild %.1f, assemble %.1f, mg set-up %.1f, mg update %.1f, PCG %.1f; PCG iterations %.1f\n",
                          f, sw ? "switch" : "other", n[sw], a[sw] / n[sw], s[sw, 0] / n[sw], s[sw, 1] / n[sw], s[sw, 2] / n[sw],
                          s[sw, 3] / n[sw], s[sw, 4] / n[sw], s[sw, 5] / n[sw], s[sw, 6] / n[sw], it[sw] / n[sw] } }' \
            "$D/$f.csv" >> "$LOG"
    done
fi
# the system python has matplotlib (python3-matplotlib); a python3 earlier on PATH may not
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" bench/plot_imai_box.py "$D"
