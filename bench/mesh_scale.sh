#!/usr/bin/env bash
# Meshes at scale: the closed bunny and the dog from
# data/meshes tetrahedralized at about 10k, 100k, 1M (and 5M with
# SIZES="... 5000000") tets, and for each: meshing time and the tets and
# vertices reached (`tetwarp mesh`, cached by content hash outside the repo),
# loading time (`tetwarp info`), and the time and peak memory of loading +
# world precompute + one step (`tetwarp run --steps 1`, /usr/bin/time -v).
# precompute_s = run wall - info wall - the step's own time.
#
#   bench/mesh_scale.sh [BUILD_DIR]      (default build)
# Writes bench/results/$MACHINE/mesh_scale.csv and .log (MACHINE default
# cpu-2core-amd-epyc). Meshes go to $TW_MESH_DIR (default /tmp/tetwarp-meshes).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
T=$BUILD/tetwarp
MACHINE=${MACHINE:-cpu-2core-amd-epyc}
OUT=bench/results/$MACHINE
MESHES=${MESHES:-data/meshes}
SIZES=${SIZES:-"10000 100000 1000000"}
DIR=${TW_MESH_DIR:-/tmp/tetwarp-meshes}
mkdir -p "$OUT" "$DIR"
CSV=$OUT/mesh_scale.csv
LOG=$OUT/mesh_scale.log
echo "surface,target_tets,tets,vertices,tries,quality,mesh_s,cached,load_s,run_s,step_ms,precompute_s,peak_rss_mb" > "$CSV"
{
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# tetgen $(dpkg-query -W -f '${Version}' tetgen 2>/dev/null || echo '?'); $T --version: $($T --version)"
} > "$LOG"
for surf in bunny_closed_3485v.off dog_tosca_dog0_eyescapped.off; do
    for n in $SIZES; do
        name=${surf%.off}_$n
        echo "== $surf --tets $n" | tee -a "$LOG"
        if ! $T mesh "$MESHES/$surf" --tets "$n" --out "$DIR/$name" --verbose > "$DIR/$name.mesh.txt" 2>&1; then
            cat "$DIR/$name.mesh.txt" | tee -a "$LOG"
            echo "$surf,$n,,,,,,,,,,," >> "$CSV"
            continue
        fi
        cat "$DIR/$name.mesh.txt" >> "$LOG"
        tets=$(awk '/^tets /{print $2}' "$DIR/$name.mesh.txt")
        verts=$(awk '/^vertices /{print $2}' "$DIR/$name.mesh.txt")
        mesh_s=$(awk '/^time /{print $2}' "$DIR/$name.mesh.txt")
        tries=$(sed -n 's/.*after \([0-9]*\) TetGen run.*/\1/p' "$DIR/$name.mesh.txt")
        quality=$(sed -n 's/^quality *relaxed from [0-9.]* to \([a-z0-9.]*\).*/\1/p' "$DIR/$name.mesh.txt")
        quality=${quality:-1.414}
        cached=$(grep -q '^cached:' "$DIR/$name.mesh.txt" && echo 1 || echo 0)
        /usr/bin/time -f "%e" -o "$DIR/time.txt" $T info "$DIR/$name" > "$DIR/info.txt"
        load_s=$(tail -n 1 "$DIR/time.txt")
        /usr/bin/time -v -o "$DIR/time.txt" $T run --mesh "$DIR/$name" --steps 1 --gravity 0,0,-9.81 > "$DIR/run.txt" 2>&1
        cat "$DIR/run.txt" >> "$LOG"
        grep -E "Elapsed|Maximum resident" "$DIR/time.txt" | tee -a "$LOG"
        run_s=$(awk -F': ' '/Elapsed/{n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' "$DIR/time.txt")
        rss_mb=$(awk -F': ' '/Maximum resident/{printf "%.0f", $2/1024}' "$DIR/time.txt")
        step_ms=$(sed -n 's/.*: \([0-9.e+]*\) ms\/step.*/\1/p' "$DIR/run.txt")
        pre_s=$(awk -v r="$run_s" -v l="$load_s" -v s="${step_ms:-0}" 'BEGIN{printf "%.2f", r-l-s/1000}')
        echo "$surf,$n,$tets,$verts,$tries,$quality,$mesh_s,$cached,$load_s,$run_s,$step_ms,$pre_s,$rss_mb" | tee -a "$CSV" "$LOG"
    done
done
