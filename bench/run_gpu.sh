#!/usr/bin/env bash
# The backends benchmark on a GPU machine in one command: configure and build
# (Release) tw_bench_backends, record the machine (nvidia-smi, nvidia-smi -q
# excerpt, nvcc, CPU), run the CPU and the CUDA backend over the same scenes
# inside a total time budget, plot, and write everything to
# bench/results/<gpu-name-slug>/ (and to $OUT when it is set):
#   backends.csv          one row per scene x size x backend x CG mode x method
#   backends.log          every command's output, nvidia-smi included
#   backends.png          steps/s vs tets (log-log), GB/s vs the copy bandwidth
#   backends_targets.txt  where DESIGN.md section 5's GPU targets stand
#
#   bench/run_gpu.sh                  on the GPU machine (reads .bench-meshes/ when present)
#   bench/run_gpu.sh --pack-meshes    here, where TetGen is: meshes the bunny and the dog at
#                                     10k/100k/1M into .bench-meshes/ (xz, git-ignored), to carry
#
# Environment: BUILD (build-gpu), TOTAL_S (510: the whole run, build included,
# stays under this many seconds; the device's limit per command is 600),
# SIZES (10k,100k,1m), BIG (5m: the phase of the largest size; "" skips it),
# MG (1m: phase M's size; "" skips it),
# METHODS (all six), MESH_SIZES (10k,100k,1m: the bunny and dog phase),
# MACHINE (the results folder; default from nvidia-smi's GPU name).
#
# Phases, each given what is left of the budget minus a reserve for the
# later ones (a phase out of time lists its remaining rows as skipped):
#   A  bar 10k/100k/1m, every method, fixed20 and tol, cuda (CUDA Graph, cuSPARSE
#      SpMV), cuda-ownspmv (the same with the hand-written 3x3-BSR SpMV),
#      cuda-warpspmv (the warp-cooperative SpMV, TW_CUDA_SPMV=warp),
#      cuda-fused (the fused PCG, TW_CUDA_PCG=fused), cuda-nograph
#      (host-driven step), each when the build has it, cpu; in each
#      (scene, size) the GPU rows run before the CPU ones
#   E  bar at SIZES, corot-element, hybrid and green, fixed20: cuda-allfused
#      (cuda-fused and TW_CUDA_ELEMENT=fused: rotation + element force in one
#      kernel), beside phase A's cuda-fused rows, when the build has it
#   B  bunny and dog at MESH_SIZES (packed meshes, else TetGen if present),
#      the backends of A but cuda-warpspmv and cuda-fused
#   C  bar at BIG (5m): corot-element and warp-vertex, every GPU backend but cuda-nograph, and cpu; the CPU rows capped by
#      --max-seconds (the row's capped column says so)
#   M  bar at MG (1m; "" skips it), corot-element, tol and fixed20: cuda-mg
#      (the device's multigrid V-cycle as the PCG's preconditioner: the
#      target of 1M tets to 1e-4 at >= 150 steps/s), cuda-mg-warp (its
#      finest sweeps by lanes, TW_CUDA_MG_SWEEP=warp), cuda (block-Jacobi)
#      and cpu (multigrid) beside it; run first, with its own 75 s, so the
#      target row never falls to the budget. Its first step sets the
#      hierarchy up on the host (in the warm-up).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
T0=$(date +%s)
BUILD=${BUILD:-build-gpu}
TOTAL_S=${TOTAL_S:-510}
SIZES=${SIZES:-10k,100k,1m}
BIG=${BIG-5m}
METHODS=${METHODS:-linear,warp-vertex,warp-edge,corot-element,green,hybrid}
MESH_SIZES=${MESH_SIZES:-10k,100k,1m}
MG=${MG-1m}
PACK=.bench-meshes

# ------------------------------------------------------------- --pack-meshes
if [ "${1:-}" = "--pack-meshes" ]; then
    B=${2:-build}
    MESHES=${MESHES:-data/meshes}
    [ -x "$B/tetwarp" ] || { echo "run_gpu.sh: $B/tetwarp not built (cmake --build $B --target tetwarp)"; exit 1; }
    command -v xz > /dev/null || { echo "run_gpu.sh: xz missing"; exit 1; }
    mkdir -p "$PACK"
    EXCLUDE=$(git rev-parse --git-path info/exclude) && mkdir -p "$(dirname "$EXCLUDE")" &&
        { grep -qx "/$PACK/" "$EXCLUDE" 2> /dev/null || echo "/$PACK/" >> "$EXCLUDE"; } # git-ignored: carried, never committed
    for pair in bunny:bunny_closed_3485v.off dog:dog_tosca_dog0_eyescapped.off; do
        scene=${pair%%:*}
        surf=${pair#*:}
        for n in 10000 100000 1000000; do
            stem=$PACK/${scene}_$n
            [ -f "$stem.node.xz" ] && { echo "have $stem"; continue; }
            if "$B/tetwarp" mesh "$MESHES/$surf" --tets "$n" --out "$stem" > "$stem.txt" 2>&1; then
                xz -T0 -6 -f "$stem.node" "$stem.ele"
                echo "packed $stem: $(grep -E '^(tets|vertices) ' "$stem.txt" | tr '\n' ' ')"
            else
                echo "not packed $stem: $(tail -n 1 "$stem.txt")"
            fi
            rm -f "$stem.txt"
        done
    done
    du -sh "$PACK"
    echo "carry it: run(command=\"bench/run_gpu.sh\", carry=[\"$PACK\"])"
    exit 0
fi

left() { echo $((TOTAL_S - ($(date +%s) - T0))); }

# ------------------------------------------------------------- what is here
missing=""
for tool in cmake nvcc nvidia-smi python3 xz; do
    command -v "$tool" > /dev/null || missing="$missing $tool"
done
command -v cc > /dev/null || command -v gcc > /dev/null || missing="$missing cc"
echo "run_gpu.sh: missing:${missing:- nothing}"
case " $missing " in *" cmake "* | *" cc "*)
    echo "run_gpu.sh: cannot build without cmake and a C compiler"; exit 1 ;;
esac

if command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1; then
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
else
    GPU="no-gpu"
fi
SLUG=$(echo "$GPU" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
MACHINE=${MACHINE:-$SLUG}
RES=bench/results/$MACHINE
mkdir -p "$RES"
LOG=$RES/backends.log
CSV=$RES/backends.csv
: > "$LOG"
rm -f "$CSV"
say() { echo "$@" | tee -a "$LOG"; }

{
    echo "# run_gpu.sh $(date -u +%FT%TZ) in $ROOT, commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')$(git diff --quiet 2> /dev/null || echo ' (with local changes)')"
    echo "# $(uname -srm); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    echo "# missing tools:${missing:- none}"
    echo "## nvidia-smi"
    nvidia-smi 2>&1 || true
    echo "## nvidia-smi -q (excerpt)"
    nvidia-smi -q 2>&1 | grep -E -A1 -i 'product name|driver version|cuda version|bus id|performance state|power limit|^ *max clocks|^ *clocks$|graphics|sm  |memory  |total|compute mode|mig mode' | head -n 80 || true
    echo "## nvcc"
    nvcc --version 2>&1 | tail -n 2 || true
} >> "$LOG" 2>&1

# ------------------------------------------------------------- build
say "== build ($BUILD, Release), $(left) s left"
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >> "$LOG" 2>&1; then
    say "run_gpu.sh: cmake configure failed (see $LOG)"; tail -n 30 "$LOG"; exit 1
fi
if ! cmake --build "$BUILD" --target tw_bench_backends -j "$(nproc)" >> "$LOG" 2>&1; then
    say "run_gpu.sh: build failed (see $LOG)"; grep -E 'error' "$LOG" | head -n 30; exit 1
fi
BENCH=$BUILD/bench/tw_bench_backends
say "built $BENCH in $(( $(date +%s) - T0 )) s"

# ------------------------------------------------------------- meshes
MESHARG=()
if [ -d "$PACK" ] && ls "$PACK"/*.node.xz > /dev/null 2>&1; then
    MDIR=/tmp/tw-bench-meshes
    mkdir -p "$MDIR"
    for f in "$PACK"/*.xz; do
        out=$MDIR/$(basename "${f%.xz}")
        [ -f "$out" ] || xz -dc "$f" > "$out"
    done
    MESHARG=(--mesh-dir "$MDIR")
    say "packed meshes: $(ls "$MDIR" | grep -c '\.node$') from $PACK"
else
    say "no $PACK/ (bench/run_gpu.sh --pack-meshes makes it where TetGen is): bunny and dog are meshed here only if TetGen is installed"
fi
SURF=data/meshes

# cuda-ownspmv: the hand-written 3x3-BSR SpMV (TW_CUDA_SPMV=own) beside cuSPARSE's;
# cuda-warpspmv (TW_CUDA_SPMV=warp) and cuda-fused (TW_CUDA_PCG=fused) beside both
GPUB=cuda
for b in cuda-ownspmv cuda-warpspmv cuda-fused cuda-nograph; do
    "$BENCH" --backends $b --help > /dev/null 2>&1 && GPUB=$GPUB,$b
done
say "GPU backends: $GPUB"
BACKENDS=$GPUB,cpu
# the bunny and the dog without the warp SpMV and the fused PCG (the bar's
# phases A and C compare them; here they would cost the budget's reserve)
MESHB=$(echo "$BACKENDS" | sed 's/,cuda-warpspmv//; s/,cuda-fused//')

# phase NAME RESERVE_S ARGS...: runs the benchmark with what is left minus RESERVE_S
phase() {
    local name=$1 reserve=$2
    shift 2
    local budget=$(( $(left) - reserve ))
    if [ "$budget" -lt 15 ]; then
        say "== phase $name: skipped, $(left) s left (reserve $reserve s)"
        return
    fi
    say "== phase $name: budget $budget s: $*"
    # the budget stops new configurations; timeout is the backstop for one stuck past it
    timeout --signal=TERM $(( budget + 90 )) "$BENCH" --budget "$budget" --config-timeout 90 --csv "$CSV" --append \
        --surfaces "$SURF" "${MESHARG[@]}" "$@" 2>&1 | tee -a "$LOG"
    say "== phase $name: exit ${PIPESTATUS[0]}, $(left) s left"
}

if [ -n "$MG" ] && "$BENCH" --backends cuda-mg --help > /dev/null 2>&1; then
    phase M $(( $(left) - 75 )) --backends cuda-mg,cuda-mg-warp,cuda,cpu --scenes bar --sizes "$MG" --methods corot-element \
        --cg tol,fixed20 --time 0.5 --min-steps 3 --max-seconds 3 --warmup 2 --no-extras --copy-mb 256
fi
phase A 170 --backends "$BACKENDS" --scenes bar --sizes "$SIZES" --methods "$METHODS" --cg fixed20,tol \
    --time 0.5 --min-steps 3 --max-seconds 3 --warmup 2
if "$BENCH" --backends cuda-allfused --help > /dev/null 2>&1; then
    phase E 140 --backends cuda-allfused --scenes bar --sizes "$SIZES" --methods corot-element,hybrid,green \
        --cg fixed20 --time 0.5 --min-steps 3 --max-seconds 3 --warmup 2 --no-extras --copy-mb 256
fi
phase B 90 --backends "$MESHB" --scenes bunny,dog --sizes "$MESH_SIZES" \
    --methods linear,warp-vertex,corot-element --cg fixed20,tol --time 0.4 --min-steps 3 --max-seconds 2 --warmup 2 \
    --no-extras --copy-mb 256
if [ -n "$BIG" ]; then
    phase C 20 --backends "${GPUB/,cuda-nograph/},cpu" --scenes bar --sizes "$BIG" --methods corot-element,warp-vertex --cg fixed20,tol \
        --time 0.5 --min-steps 3 --max-seconds 3 --warmup 1 --no-extras --copy-mb 256
fi

# ------------------------------------------------------------- plot, copy
if command -v python3 > /dev/null; then
    python3 bench/plot_backends.py "$CSV" 2>&1 | tee -a "$LOG" || say "plot failed"
fi
say "== done in $(( $(date +%s) - T0 )) s: $RES"
ls -la "$RES" | tee -a "$LOG"
if [ -n "${OUT:-}" ]; then
    for f in backends.csv backends.log backends.png backends_targets.txt; do
        [ -f "$RES/$f" ] && cp "$RES/$f" "$OUT/"
    done
    echo "copied to \$OUT: $(ls "$OUT" | tr '\n' ' ')"
fi
