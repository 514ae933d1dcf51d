#!/usr/bin/env bash
# tests/gpu_session.sh [PHASE...]: the whole GPU path checked in few device
# calls, with nothing to decide on the device's clock. Phases (default:
# first build test sanitize), run in the order given:
#   first     does the GPU path run and is it right, in minutes: configure,
#             build only the GPU test executables (test_gpu_*), run
#             ctest -R '^gpu_' plainly, then again with TW_CUDA_GRAPH=0
#             TW_CUDA_SPMV=own (a failure in the first run only is the graph's
#             or cuSPARSE's; in both, a kernel's), then the gpu_backend cases
#             with TW_CUDA_PCG=fused TW_CUDA_SPMV=warp TW_CUDA_ELEMENT=fused
#             (every new path under every backend case; gpu_pcg and
#             gpu_stages have their own) and the gpu_parity energy, Newton
#             and hanging-vertex cases (the ports of the CPU-only parts:
#             energy projection, the energy check's blow-up test, hanging
#             vertices, Newton iterations: all in '^gpu_'; body contact's
#             stack and bunny-block parity, gpu_bodies.*, in the first two
#             passes only: it refuses the fused PCG); the device multigrid's parity
#             cases (gpu_amg.*, tests/test_gpu_amg.c) run in the first two
#             passes (cuSPARSE, then the hand-written SpMV), and once more
#             with TW_CUDA_MG_SWEEP=warp (the finest sweeps by lanes); the
#             tetra front's cases (gpu_front.*, tests/test_gpu_front.c: the
#             pattern, the device's element pass and gathered assembly
#             against the host's, parity through switches and under forces)
#             run in the first two passes (host-driven, no graph: the same
#             path twice)
#   build     cmake -G Ninja Release into $BUILD (build-gpu), -j$JOBS; with .gl/
#             present (bench/fetch_gpu_debs.sh, run where apt works) the GL
#             runtime debs go into / where its libraries are missing and the
#             rest into $GLROOT (/tmp/glroot) for GLFW/epoxy/png: says what was
#             found and whether tetwarp-view and the CUDA targets were built
#   test      the whole ctest (--output-on-failure), then
#             ctest -R 'gpu_|thrust|surface|interop' -V, then the gpu_backend
#             cases again with TW_CUDA_SPMV=own, TW_CUDA_GRAPH=0,
#             TW_CUDA_SPMV=warp, TW_CUDA_PCG=fused, TW_CUDA_PCG=fused
#             TW_CUDA_GRAPH=0, TW_CUDA_ELEMENT=fused and TW_CUDA_SPMV=half
#             (the symmetric half, last: the newest); a
#             GPU case (gpu_*, viewer.interop_*) SKIPPED on a machine with a
#             GPU fails the session, loudly
#   sanitize  compute-sanitizer memcheck / racecheck / synccheck / initcheck:
#             first one short case per tool (one step of the bar,
#             test_gpu_stages; racecheck with the hand-written SpMV), then
#             the device multigrid's two-step case (test_gpu_amg: the
#             host-driven set-up step and a graph step; memcheck, racecheck,
#             synccheck), then
#             the fused PCG's, the warp SpMV's and the symmetric half's
#             (TW_CUDA_SPMV=half: memcheck, initcheck) short cases (test_gpu_pcg,
#             test_gpu_stages; racecheck and synccheck host-driven), then
#             the tetra front's short case (test_gpu_front: its element pass,
#             gather and PCG; memcheck, initcheck), then
#             representative cases of test_gpu_backend and test_gpu_svd, plus
#             memcheck of one parity case with TW_CUDA_GRAPH=0 and TW_CUDA_SPMV=own
#   bench     bench/run_gpu.sh (its own budget, TOTAL_S; give it its own call)
#   fused     the switchable kernels alone, in one call (TW_CUDA_SPMV=warp,
#             TW_CUDA_PCG=fused, TW_CUDA_ELEMENT=fused): build the GPU test
#             executables and tw_bench_backends; ctest the gpu_pcg cases and
#             the gpu_stages SpMV / fused cases, then gpu_backend with all
#             three switches on, then gpu_pcg.fused_is_deterministic five
#             times (the reductions' memory ordering); the bar at FUSED_SIZES (10k,100k,1m,5m),
#             corot-element, fixed20 and tol, backends cuda, cuda-ownspmv,
#             cuda-warpspmv, cuda-fused, cuda-allfused (fused_bench.csv, its
#             plot and targets); last, compute-sanitizer on the new kernels'
#             short cases (memcheck, racecheck and synccheck host-driven)
#   view      the viewer's cases: through EGL (no DISPLAY; NVIDIA's EGL device),
#             then under Xvfb when one is installed or carried (.glx/), and one
#             interop frame kept as view_frame.png
# Device calls (see README.md, "On a GPU machine"):
#   run(command="tests/gpu_session.sh first build test sanitize", carry=[".gl", ".bench-meshes"])
#   run(command="tests/gpu_session.sh build bench", carry=[".bench-meshes"])
#   run(command="tests/gpu_session.sh build view", carry=[".gl", ".glx"])
#   run(command="tests/gpu_session.sh fused")   (the new kernels: parity, bench, sanitizers)
# Output: $OUT (else $GPU_SESSION_OUT, else ./gpu-session-out), at most 8 files:
#   session.log (machine, tools, build, phase times and the summary), ctest.log,
#   sanitizer.log, view.log (+ view_frame.png), and bench's backends.{csv,log,png}
#   and backends_targets.txt; fused's fused_bench.{csv,png} and fused_bench_targets.txt.
#   Exit status: 0 only when every phase asked passed.
# Environment: BUILD (build-gpu), JOBS (nproc), GLROOT (/tmp/glroot),
#   TOTAL_S (560: all phases of this call; each phase also has its own cap:
#   FIRST_S 240, BUILD_S 240, TEST_S 220, SAN_S 150, VIEW_S 240, FUSED_S 540), TEST_TIMEOUT
#   (one test case's limit, s, 120: configured as TW_TEST_TIMEOUT, since a
#   test's TIMEOUT property overrides `ctest --timeout`),
#   TW_GL_ISOLATE=1 (build against $GLROOT alone: bench/fetch_gpu_debs.sh --verify),
#   TW_GL_NO_RUNTIME=1 (never unpack into /).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
T0=$(date +%s)
OUTD=${OUT:-${GPU_SESSION_OUT:-$ROOT/gpu-session-out}}
mkdir -p "$OUTD"
OUTD=$(cd "$OUTD" && pwd)
if [ "$OUTD" = "$ROOT/gpu-session-out" ]; then # git-ignored, never committed
    EXCL=$(git rev-parse --git-path info/exclude 2> /dev/null) && { grep -qx '/gpu-session-out/' "$EXCL" 2> /dev/null || echo '/gpu-session-out/' >> "$EXCL"; }
fi
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
GLROOT=${GLROOT:-/tmp/glroot}
TOTAL_S=${TOTAL_S:-560}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
SLOG=$OUTD/session.log CTLOG=$OUTD/ctest.log SANLOG=$OUTD/sanitizer.log VLOG=$OUTD/view.log
PHASES=("$@")
[ ${#PHASES[@]} -eq 0 ] && PHASES=(first build test sanitize)
for p in "${PHASES[@]}"; do
    case $p in first | build | test | sanitize | bench | view | fused) ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_session.sh: unknown phase '$p' (first build test sanitize bench view fused)" >&2; exit 2 ;;
    esac
done
export OMP_WAIT_POLICY=PASSIVE
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi

say() { echo "$*" | tee -a "$SLOG"; }
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((TOTAL_S - $(elapsed))); }
# budget CAP: seconds for this phase: CAP, or what is left less 20 s for each later phase
budget() {
    local cap=$1 later=$2 b
    b=$(($(left) - 20 * later))
    [ "$b" -gt "$cap" ] && b=$cap
    echo "$b"
}
FAILS=()
fail() { FAILS+=("$*"); say "!! $*"; }

# ------------------------------------------------------------ the machine
HAVE_GPU=0
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1 && nvidia-smi -L | grep -q GPU; then HAVE_GPU=1; fi
{
    echo "# gpu_session.sh ${PHASES[*]}: $(date -u +%FT%TZ), $ROOT, commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')$(git diff --quiet 2> /dev/null || echo ' (with local changes)')"
    echo "# $(uname -srm); $(nproc) CPUs:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME")"
} >> "$SLOG"
missing=""
for t in cmake ninja nvcc nvidia-smi compute-sanitizer python3 xz pkg-config Xvfb; do
    command -v "$t" > /dev/null || missing="$missing $t"
done
say "tools missing:${missing:- none}"
if [ $HAVE_GPU = 1 ]; then
    say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n 1)"
    nvidia-smi >> "$SLOG" 2>&1
else
    say "################################################################"
    say "## NO GPU on this machine: the GPU cases will SKIP (exit 77).  ##"
    say "## This run checks the script's plumbing only.                 ##"
    say "################################################################"
fi

# ------------------------------------------------------------ GL from .gl/
GL_CMAKE=()
gl_env() { # sets the environment for building / running against $GLROOT (after gl_setup)
    [ -d "$GLROOT/usr" ] || return 0
    local a=x86_64-linux-gnu
    export PKG_CONFIG_LIBDIR="$GLROOT/usr/lib/$a/pkgconfig:$GLROOT/usr/share/pkgconfig:$GLROOT/usr/lib/pkgconfig"
    export PKG_CONFIG_SYSROOT_DIR=$GLROOT
    export CMAKE_PREFIX_PATH="$GLROOT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    case ":${LD_LIBRARY_PATH:-}:" in *":$GLROOT/rtlib:"*) ;; *) export LD_LIBRARY_PATH="$GLROOT/rtlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
    [ -d "$GLROOT/usr/lib/$a/dri" ] && export LIBGL_DRIVERS_PATH=$GLROOT/usr/lib/$a/dri
    export PATH="$PATH:$GLROOT/usr/bin"
    GL_CMAKE=()
    if [ "${TW_GL_ISOLATE:-0}" = 1 ] || ! command -v pkg-config > /dev/null; then
        [ -x "$GLROOT/usr/bin/pkgconf" ] && GL_CMAKE+=("-DPKG_CONFIG_EXECUTABLE=$GLROOT/usr/bin/pkgconf")
    fi
    [ "${TW_GL_ISOLATE:-0}" = 1 ] && GL_CMAKE+=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local;/")
    return 0
}
have_so() { ldconfig -p | grep -qE "^[[:space:]]+$1 "; } # the machine has this shared library
gl_setup() {
    [ -d .gl ] || { say "no .gl/ (bench/fetch_gpu_debs.sh makes it where apt works): the viewer builds only if GLFW, libepoxy, libpng are installed"; return 0; }
    local need="" so f n
    # 1. the GL runtime into / (device README), only where its libraries are missing
    for so in libEGL.so.1 libGL.so.1 libGLX.so.0 libOpenGL.so.0 libGLESv2.so.2 libGLdispatch.so.0; do
        have_so "$so" || need="$need $so"
    done
    if [ -n "$need" ] && [ "${TW_GL_NO_RUNTIME:-0}" != 1 ]; then
        say "GL runtime missing:$need: unpacking .gl/*.deb into /"
        for f in .gl/*.deb; do dpkg -x "$f" / || fail "dpkg -x $f /"; done
        ldconfig
    else
        say "GL runtime (libEGL, libGL, libGLX, libOpenGL, libGLESv2, libGLdispatch): ${need:+missing$need, not unpacked (TW_GL_NO_RUNTIME=1)}${need:-present}"
    fi
    # 2. everything else into $GLROOT, once
    if [ ! -f "$GLROOT/.unpacked" ]; then
        rm -rf "$GLROOT"
        mkdir -p "$GLROOT"
        n=0
        for f in .gl/dev/*.deb .glx/*.deb; do
            [ -f "$f" ] || continue
            dpkg -x "$f" "$GLROOT" || fail "dpkg -x $f $GLROOT"
            n=$((n + 1))
        done
        # absolute symlinks (libz.so -> /lib/...): point them into the root
        find "$GLROOT" -type l | while read -r l; do
            t=$(readlink "$l")
            case $t in /*) [ -e "$GLROOT$t" ] && ln -sfn "$GLROOT$t" "$l" ;; esac
        done
        # rtlib: a link for each shared library the machine itself lacks (never shadow its own)
        mkdir -p "$GLROOT/rtlib"
        for f in "$GLROOT"/usr/lib/x86_64-linux-gnu/lib*.so.* "$GLROOT"/lib/x86_64-linux-gnu/lib*.so.*; do
            [ -e "$f" ] || continue
            so=$(basename "$f")
            case $so in *.so.[0-9] | *.so.[0-9][0-9] | *.so.[0-9][0-9][0-9]) ;; *) continue ;; esac
            have_so "$so" && [ "${TW_GL_ISOLATE:-0}" != 1 ] && continue
            case $so in libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.*) continue ;; esac
            ln -sfn "$f" "$GLROOT/rtlib/$so"
        done
        touch "$GLROOT/.unpacked"
        say "unpacked $n debs into $GLROOT; libraries this machine lacks, linked in $GLROOT/rtlib: $(ls "$GLROOT/rtlib" | tr '\n' ' ')"
    fi
    # NVIDIA's EGL vendor file where glvnd does not look by itself
    if ! ls /usr/share/glvnd/egl_vendor.d/*nvidia*.json > /dev/null 2>&1 && [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] &&
        [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
        export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    fi
    gl_env
}

# ------------------------------------------------------------ phases
# configure B: cmake into $BUILD (Ninja when there is one and $BUILD is new),
# the per-test limit TW_TEST_TIMEOUT=$TEST_TIMEOUT; 1 after saying why
configure() {
    local b=$1
    gl_setup
    local flags=(-G Ninja)
    [ -f "$BUILD/CMakeCache.txt" ] && flags=() # keep its generator
    command -v ninja > /dev/null || flags=()
    local args=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS=-lineinfo -DTW_TEST_TIMEOUT="$TEST_TIMEOUT" "${GL_CMAKE[@]}")
    say "configure: cmake ${flags[*]} ${args[*]}"
    if ! timeout -k 5 "$b" cmake "${flags[@]}" "${args[@]}" >> "$SLOG" 2>&1; then
        fail "build: cmake configure failed (session.log)"
        tail -n 30 "$SLOG"
        return 1
    fi
    return 0
}

# keep_going: the build tool's flag to go on past a failed target: make's -k
# takes no count (`-k 0` would build a target named 0), ninja's does
keep_going() {
    if grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$BUILD/CMakeCache.txt" 2> /dev/null; then
        echo "-k 0"
    else
        echo "-k"
    fi
}

# build_targets B [TARGET...]: cmake --build (every target when none named),
# going on past failures; 1 after saying so
build_targets() {
    local b=$1
    shift
    local t=()
    [ $# -gt 0 ] && t=(--target "$@")
    # shellcheck disable=SC2046
    if ! timeout -k 5 "$b" cmake --build "$BUILD" -j "$JOBS" "${t[@]}" -- $(keep_going) >> "$SLOG" 2>&1; then
        fail "build${t:+ $*}: failed or out of time ($b s; errors below and in session.log)"
        grep -E 'error|FAILED' "$SLOG" | tail -n 30
        return 1
    fi
    return 0
}

phase_first() {
    local b=$1
    configure "$b" || return 1
    if ! grep -q 'tetwarp: nvcc found' "$SLOG"; then
        fail "first: nvcc not found by the configure step: no GPU test executables"
        return 1
    fi
    local exes=()
    for f in tests/test_gpu_*.c; do exes+=("$(basename "$f" .c)"); done
    build_targets $((b - ($(date +%s) - PH0))) "${exes[@]}"
    local part=/tmp/gpu_session_first.$$ v rest
    # 0. the device code that has never run, one group per ctest run, each group's one-step case alone
    # before its parity cases (a kernel that reads a map or an index wrongly fails there, first and by
    # itself, not as a tolerance after many steps); every run leaves out what an earlier one ran, and
    # the plain pass below leaves out all of it (the same cases, the same environment)
    local newest=("the tetra front's element pass and gathered assembly at one state|^gpu_front\.system_matches_host_short$"
        "the tetra front's pattern, switches and parity|^gpu_front\."
        "the symmetric-half SpMV, one step host-driven|^gpu_pcg\.half_spmv_one_step_host_driven_matches_cpu$"
        "the symmetric-half SpMV's parity cases|^gpu_pcg\.half_spmv_"
        "warp-vertex's element-pack system: the assembled matrix, then the bar|^gpu_stages\.stage_system_matrix_warp_vertex$|^gpu_backend\.bar_warp_vertex_matches_cpu$"
        "the stick constraint: the slope block, then the friction cubes|^gpu_parity\.stick_|^gpu_backend\.(cube_on_floor_matches_cpu|bdf2_cube_on_floor_restarts_like_cpu)$")
    local done_re="" label nre r
    for r in "${newest[@]}"; do
        label=${r%%|*}
        nre=${r#*|}
        rest=$((b - ($(date +%s) - PH0) - 5))
        if [ "$rest" -lt 15 ]; then say "first: $label: not run, out of the phase's time"; continue; fi
        echo "===== first (newest): $label: ctest -R '$nre'${done_re:+ -E '$done_re'}, budget $rest s" >> "$CTLOG"
        timeout -k 10 "$rest" ctest --test-dir "$BUILD" -j 4 -R "$nre" ${done_re:+-E "$done_re"} --output-on-failure > "$part" 2>&1
        [ $? = 124 ] && fail "first: $label ran out of its $rest s"
        cat "$part" >> "$CTLOG"
        ctest_summary "$part" "first (newest): $label"
        done_re=${done_re:+$done_re|}$nre
    done
    # env|regex: the third pass runs every backend case on the fused PCG with the warp SpMV, and
    # the ports' energy (projection and check), Newton and hanging-vertex cases (gpu_parity; a step
    # with hanging vertices runs the unfused iteration under TW_CUDA_PCG=fused; body contact,
    # gpu_bodies, refuses the fused PCG)
    local runs=("|^gpu_" "TW_CUDA_GRAPH=0 TW_CUDA_SPMV=own|^gpu_"
        "TW_CUDA_PCG=fused TW_CUDA_SPMV=warp TW_CUDA_ELEMENT=fused|^gpu_backend\.|^gpu_parity\.(energy|newton|hanging)"
        "TW_CUDA_MG_SWEEP=warp|^gpu_amg\.") r re
    for r in "${runs[@]}"; do
        v=${r%%|*}
        re=${r#*|}
        rest=$((b - ($(date +%s) - PH0) - 5))
        if [ "$rest" -lt 15 ]; then say "first: ctest -R '$re' ${v:+with $v }not run, out of the phase's time"; continue; fi
        local ex=""
        [ -z "$v" ] && [ "$re" = "^gpu_" ] && ex=$done_re # run plainly just above
        echo "===== first: ${v:+$v }ctest -R '$re'${ex:+ -E '$ex'}, budget $rest s" >> "$CTLOG"
        # shellcheck disable=SC2086
        env $v timeout -k 10 "$rest" ctest --test-dir "$BUILD" -j 4 -R "$re" ${ex:+-E "$ex"} --output-on-failure > "$part" 2>&1
        [ $? = 124 ] && fail "first: ctest -R '$re' ${v:+with $v }ran out of its $rest s"
        cat "$part" >> "$CTLOG"
        ctest_summary "$part" "first: $re cases${v:+ with $v}"
    done
    rm -f "$part"
}

phase_build() {
    local b=$1
    configure "$b" || return 1
    local c=$BUILD/CMakeCache.txt
    local cuda=no glfw epoxy png
    grep -q 'tetwarp: nvcc found' "$SLOG" && cuda=yes
    grep -E 'tetwarp: GLFW|GLFW/OpenGL not found' "$SLOG" | tail -n 1 | tee -a "$SLOG"
    glfw=$(grep -m1 '^pkgcfg_lib_TW_GLFW_glfw:' "$c" | sed 's/.*=//')
    epoxy=$(grep -m1 '^pkgcfg_lib_TW_EPOXY_epoxy:' "$c" | sed 's/.*=//')
    png=$(grep -m1 '^PNG_LIBRARY_RELEASE:' "$c" | sed 's/.*=//')
    [ -n "$png" ] || png=$(grep -m1 '^PNG_LIBRARY:' "$c" | sed 's/.*=//')
    say "CUDA targets: $cuda"
    say "GLFW: ${glfw:-NOT FOUND}"
    say "libepoxy: ${epoxy:-NOT FOUND}"
    say "libpng: ${png:-NOT FOUND}"
    local left_b=$((b - ($(date +%s) - PH0)))
    [ "$left_b" -lt 10 ] && left_b=10
    build_targets "$left_b"
    if [ -x "$BUILD/interop/tetwarp-view" ]; then
        say "viewer: tetwarp-view BUILT"
    else
        say "viewer: tetwarp-view NOT built (GLFW/libepoxy/libpng missing above, or its build failed)"
    fi
    [ "$cuda" = yes ] && [ ! -x "$BUILD/tests/test_gpu_backend" ] && fail "build: CUDA found but test_gpu_backend not built"
    return 0
}

# ctest_summary LOGPART LABEL: counts of passed/failed/skipped in a ctest output
# part, and the GPU cases skipped (a failure on a GPU machine)
ctest_summary() {
    local f=$1 label=$2
    local p fl s gs
    p=$(grep -cE 'Test +#[0-9]+: .* Passed' "$f")
    fl=$(grep -E 'Test +#[0-9]+: ' "$f" | grep -cE '\*\*\*(Failed|Timeout|Exception)|Not Run|\*\*\*Not')
    s=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped|Test +#[0-9]+: .* Skipped' "$f")
    gs=$(grep -E 'Test +#[0-9]+: (gpu_[a-z_]+\.|viewer\.interop_)[a-z0-9_]+ .*Skipped' "$f" | sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/\1/' | tr '\n' ' ')
    say "$label: passed $p, failed $fl, skipped $s${gs:+; GPU cases skipped ($(echo $gs | wc -w)): $gs}"
    grep -E 'Test +#[0-9]+: ' "$f" | grep -E '\*\*\*(Failed|Timeout|Exception)|Not Run' | sed 's/^/   /' | tee -a "$SLOG"
    [ "$fl" -gt 0 ] && fail "$label: $fl failed"
    if [ -n "$gs" ]; then
        if [ $HAVE_GPU = 1 ]; then
            say "################################################################"
            fail "$label: GPU CASES SKIPPED ON A GPU MACHINE: $gs"
            say "################################################################"
        else
            say "   (no GPU: GPU cases skipped as expected)"
        fi
    fi
}

phase_test() {
    local b=$1
    [ -f "$BUILD/CTestTestfile.cmake" ] || { fail "test: $BUILD not configured (run the build phase)"; return 1; }
    gl_env
    local part=/tmp/gpu_session_ctest.$$
    local tmain=$((b * 55 / 100))
    echo "===== ctest (all), -j$JOBS, each case at most TW_TEST_TIMEOUT=$TEST_TIMEOUT s, phase budget $tmain s" >> "$CTLOG"
    timeout -k 10 "$tmain" ctest --test-dir "$BUILD" -j "$JOBS" --output-on-failure > "$part" 2>&1
    local rc=$?
    cat "$part" >> "$CTLOG"
    [ $rc = 124 ] && fail "test: the whole ctest ran out of its $tmain s"
    grep -E 'tests passed|tests failed|Total Test time' "$part" | tee -a "$SLOG"
    ctest_summary "$part" "ctest all"

    local rest=$((b - ($(date +%s) - PH0) - 10))
    echo "===== ctest -R 'gpu_|thrust|surface|interop' -V, budget $rest s" >> "$CTLOG"
    timeout -k 10 "$rest" ctest --test-dir "$BUILD" -j 4 -R 'gpu_|thrust|surface|interop' -V > "$part" 2>&1
    rc=$?
    cat "$part" >> "$CTLOG"
    [ $rc = 124 ] && fail "test: the GPU ctest ran out of time"
    ctest_summary "$part" "GPU cases (gpu_|thrust|surface|interop)"

    local v
    for v in TW_CUDA_SPMV=own TW_CUDA_GRAPH=0 TW_CUDA_SPMV=warp TW_CUDA_PCG=fused "TW_CUDA_PCG=fused TW_CUDA_GRAPH=0" \
        TW_CUDA_ELEMENT=fused TW_CUDA_SPMV=half; do
        rest=$((b - ($(date +%s) - PH0) - 5))
        if [ "$rest" -lt 15 ]; then say "gpu_backend with $v: skipped, out of the phase's time"; continue; fi
        echo "===== $v ctest -R '^gpu_backend\\.', budget $rest s" >> "$CTLOG"
        # shellcheck disable=SC2086
        env $v timeout -k 10 "$rest" ctest --test-dir "$BUILD" -j 4 -R '^gpu_backend\.' --output-on-failure > "$part" 2>&1
        cat "$part" >> "$CTLOG"
        ctest_summary "$part" "gpu_backend with $v"
    done
    rm -f "$part"
}

phase_sanitize() {
    local b=$1
    if ! command -v compute-sanitizer > /dev/null; then
        [ $HAVE_GPU = 1 ] && { fail "sanitize: no compute-sanitizer on PATH"; return 1; }
        say "sanitize: not run: no compute-sanitizer and no GPU on this machine"
        return 0
    fi
    local gb=$BUILD/tests/test_gpu_backend gs=$BUILD/tests/test_gpu_svd gt=$BUILD/tests/test_gpu_stages
    local gp=$BUILD/tests/test_gpu_pcg ga=$BUILD/tests/test_gpu_amg gf=$BUILD/tests/test_gpu_front
    [ -x "$gb" ] && [ -x "$gs" ] && [ -x "$gt" ] && [ -x "$gp" ] && [ -x "$ga" ] && [ -x "$gf" ] || { fail "sanitize: $gb / $gs / $gt / $gp / $ga / $gf not built"; return 1; }
    gl_env
    echo "# compute-sanitizer $(compute-sanitizer --version 2>&1 | tail -n 1)" >> "$SANLOG"
    # tool|env|exe|case: first one short case per tool (one step of the bar on
    # both backends: a tool that finds anything says so within a minute),
    # then the representative cases
    local short=stage_system_matrix_corot_element
    local runs=(
        "memcheck||$gt|$short"
        "racecheck|TW_CUDA_SPMV=own|$gt|$short"
        "synccheck||$gt|$short"
        "initcheck||$gt|$short"
        "memcheck||$gp|fused_one_step_matches_cpu"
        "racecheck||$gp|fused_one_step_host_driven_matches_cpu"
        "synccheck||$gp|fused_one_step_host_driven_matches_cpu"
        "memcheck||$ga|mg_two_steps_matches_cpu"
        "racecheck||$ga|mg_two_steps_matches_cpu"
        "synccheck||$ga|mg_two_steps_matches_cpu"
        "memcheck||$gt|stage_spmv_warp_kernel"
        "racecheck||$gp|warp_spmv_one_step_host_driven_matches_cpu"
        "memcheck||$gp|half_spmv_one_step_host_driven_matches_cpu"
        "initcheck||$gp|half_spmv_one_step_host_driven_matches_cpu"
        "initcheck||$gp|fused_one_step_host_driven_matches_cpu"
        "memcheck||$gt|stage_forces_green_fused"
        "memcheck||$gf|system_matches_host_short"
        "initcheck||$gf|system_matches_host_short"
        "memcheck||$gb|bar_corot_element_matches_cpu"
        "memcheck||$gb|cube_on_floor_matches_cpu"
        "memcheck||$gb|pcg_tolerance_iterations_match_cpu"
        "memcheck||$gb|diverged_step_leaves_state"
        "memcheck||$gb|graph_follows_parameter_changes"
        "memcheck||$gs|polar_batched_matches_cpu"
        "memcheck||$gs|gesvdj_rank2"
        "memcheck|TW_CUDA_GRAPH=0|$gb|bar_corot_element_matches_cpu"
        "memcheck|TW_CUDA_SPMV=own|$gb|bar_corot_element_matches_cpu"
        "racecheck||$gb|bar_corot_element_matches_cpu"
        "racecheck|TW_CUDA_SPMV=own|$gb|bar_warp_vertex_matches_cpu"
        "racecheck||$gs|polar_batched_matches_cpu"
        "synccheck||$gb|bar_corot_element_matches_cpu"
        "synccheck||$gs|polar_batched_matches_cpu"
        "initcheck||$gb|bar_linear_matches_cpu"
        "memcheck||$gb|bar_on_sphere_no_penetration"
    )
    local r tool env exe name t1 rc res errs clean=0 bad=0 skipped=0 one
    for r in "${runs[@]}"; do
        IFS='|' read -r tool env exe name <<< "$r"
        local rest=$((b - ($(date +%s) - PH0)))
        if [ "$rest" -lt 15 ]; then
            say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: NOT RUN, out of the phase's time"
            continue
        fi
        one=$((rest < 120 ? rest : 120))
        local extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        echo "===== $tool ${env:+$env }$(basename "$exe") $name (limit $one s)" >> "$SANLOG"
        t1=$(date +%s)
        env $env timeout -k 5 "$one" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$exe" "$name" > /tmp/gpu_session_san.$$ 2>&1
        rc=$?
        cat /tmp/gpu_session_san.$$ >> "$SANLOG"
        errs=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' /tmp/gpu_session_san.$$ | grep -Eo '[0-9]+' | tail -n 1)
        case $rc in
        0) res="clean (${errs:-?} errors)"; clean=$((clean + 1)) ;;
        77) res="SKIPPED (no usable GPU)"; skipped=$((skipped + 1)) ;;
        99) res="${errs:-?} ERRORS"; bad=$((bad + 1)) ;;
        124 | 137) res="TIMEOUT after $one s"; bad=$((bad + 1)) ;;
        *) res="test FAILED (exit $rc; ${errs:-?} sanitizer errors)"; bad=$((bad + 1)) ;;
        esac
        say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: $res, $(($(date +%s) - t1)) s"
    done
    rm -f /tmp/gpu_session_san.$$
    say "sanitize: clean $clean, with errors/failed $bad, skipped $skipped"
    [ $bad -gt 0 ] && fail "sanitize: $bad runs with errors, failures or timeouts (sanitizer.log)"
    if [ $skipped -gt 0 ] && [ $HAVE_GPU = 1 ]; then fail "sanitize: $skipped runs SKIPPED ON A GPU MACHINE"; fi
    return 0
}

phase_bench() {
    local b=$1
    gl_env
    say "bench: bench/run_gpu.sh with BUILD=$BUILD TOTAL_S=$b (its own phases and budget)"
    BUILD=$BUILD TOTAL_S=$b OUT=$OUTD timeout -k 10 $((b + 30)) bench/run_gpu.sh 2>&1 | tail -n 40 | tee -a "$SLOG"
    local rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || fail "bench: run_gpu.sh exit $rc (backends.log)"
}

# san_one TOOL ENV EXE CASE LIMIT: one compute-sanitizer run into sanitizer.log;
# says the result; returns 0 clean, 1 errors / failure / timeout, 2 skipped
san_one() {
    local tool=$1 env=$2 exe=$3 name=$4 lim=$5 t1 rc errs extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    echo "===== $tool ${env:+$env }$(basename "$exe") $name (limit $lim s)" >> "$SANLOG"
    t1=$(date +%s)
    # shellcheck disable=SC2086
    env $env timeout -k 5 "$lim" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$exe" "$name" > /tmp/gpu_session_san.$$ 2>&1
    rc=$?
    cat /tmp/gpu_session_san.$$ >> "$SANLOG"
    errs=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' /tmp/gpu_session_san.$$ | grep -Eo '[0-9]+' | tail -n 1)
    rm -f /tmp/gpu_session_san.$$
    case $rc in
    0) say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: clean (${errs:-?} errors), $(($(date +%s) - t1)) s"; return 0 ;;
    77) say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: SKIPPED (no usable GPU)"; return 2 ;;
    99) say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: ${errs:-?} ERRORS, $(($(date +%s) - t1)) s" ;;
    124 | 137) say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: TIMEOUT after $lim s" ;;
    *) say "  sanitize $tool ${env:+$env }$(basename "$exe") $name: test FAILED (exit $rc; ${errs:-?} sanitizer errors)" ;;
    esac
    return 1
}

phase_fused() {
    local b=$1 rest part=/tmp/gpu_session_fused.$$ exes=() f
    configure "$b" || return 1
    grep -q 'tetwarp: nvcc found' "$SLOG" || { fail "fused: nvcc not found by the configure step"; return 1; }
    for f in tests/test_gpu_*.c; do exes+=("$(basename "$f" .c)"); done
    build_targets $((b - ($(date +%s) - PH0))) "${exes[@]}" tw_bench_backends # what failed is "Not Run" below
    gl_env
    # 1. parity: the new paths' own cases, then every backend case with all three switches on
    local runs=("|^gpu_pcg\.|^gpu_stages\.(stage_spmv|.*_fused$)"
        "TW_CUDA_PCG=fused TW_CUDA_SPMV=warp TW_CUDA_ELEMENT=fused|^gpu_backend\.") r v re
    for r in "${runs[@]}"; do
        v=${r%%|*}
        re=${r#*|}
        rest=$((b - ($(date +%s) - PH0) - 200)) # keep time for the bench and the sanitizers
        if [ "$rest" -lt 15 ]; then say "fused: ctest -R '$re' ${v:+with $v }not run, out of the phase's time"; continue; fi
        echo "===== fused: ${v:+$v }ctest -R '$re', budget $rest s" >> "$CTLOG"
        # shellcheck disable=SC2086
        env $v timeout -k 10 "$rest" ctest --test-dir "$BUILD" -j 4 -R "$re" --output-on-failure > "$part" 2>&1
        [ $? = 124 ] && fail "fused: ctest -R '$re' ${v:+with $v }ran out of its $rest s"
        cat "$part" >> "$CTLOG"
        ctest_summary "$part" "fused: $re${v:+ with $v}"
    done
    # 1b. a missing fence or a stale partial in the last-block reductions
    # shows now and then, not every run: the determinism case (two graph
    # worlds bit for bit, the host-driven loop alike) five times over
    rest=$((b - ($(date +%s) - PH0) - 200))
    if [ "$rest" -ge 30 ]; then
        echo "===== fused: ctest -R gpu_pcg.fused_is_deterministic, 5 runs, budget $rest s" >> "$CTLOG"
        timeout -k 10 "$rest" ctest --test-dir "$BUILD" -R '^gpu_pcg\.fused_is_deterministic$' --repeat until-fail:5 \
            --output-on-failure > "$part" 2>&1
        [ $? = 124 ] && fail "fused: the determinism case x5 ran out of its $rest s"
        cat "$part" >> "$CTLOG"
        ctest_summary "$part" "fused: fused_is_deterministic x5"
    else
        say "fused: the determinism case x5 not run, out of the phase's time"
    fi
    rm -f "$part"
    # 2. the bar, each switch against cuSPARSE and the hand-written SpMV of the same run
    local bench=$BUILD/bench/tw_bench_backends csv=$OUTD/fused_bench.csv
    rest=$((b - ($(date +%s) - PH0) - 90))
    if [ "$rest" -ge 30 ] && [ -x "$bench" ]; then
        say "fused: bench, budget $rest s: bar ${FUSED_SIZES:-10k,100k,1m,5m}, corot-element"
        rm -f "$csv"
        timeout -k 10 $((rest + 60)) "$bench" --backends cuda,cuda-ownspmv,cuda-warpspmv,cuda-fused,cuda-allfused \
            --scenes bar --sizes "${FUSED_SIZES:-10k,100k,1m,5m}" --methods corot-element --cg fixed20,tol \
            --time 0.5 --min-steps 3 --max-seconds 3 --warmup 2 --budget "$rest" --config-timeout 90 --no-extras \
            --copy-mb 256 --csv "$csv" >> "$SLOG" 2>&1 || fail "fused: tw_bench_backends failed (session.log)"
        if [ -f "$csv" ]; then
            python3 bench/plot_backends.py "$csv" >> "$SLOG" 2>&1 || say "fused: plot_backends.py failed (no matplotlib?); the CSV is in $OUTD"
            [ -f "$OUTD/fused_bench_targets.txt" ] && sed -n '/warp SpMV/,$p' "$OUTD/fused_bench_targets.txt" | tee -a "$SLOG"
        fi
    else
        say "fused: bench not run ($rest s left, or $bench not built)"
    fi
    # 3. compute-sanitizer on the new kernels (host-driven for racecheck / synccheck)
    if ! command -v compute-sanitizer > /dev/null; then
        say "fused: sanitizers not run: no compute-sanitizer"
        return 0
    fi
    local gp=$BUILD/tests/test_gpu_pcg gt=$BUILD/tests/test_gpu_stages one bad=0
    local ga=$BUILD/tests/test_gpu_amg gf=$BUILD/tests/test_gpu_front # (set -u: an unset one ends the script)
    local sruns=(
        "memcheck||$gp|fused_one_step_matches_cpu"
        "racecheck||$gp|fused_one_step_host_driven_matches_cpu"
        "synccheck||$gp|fused_one_step_host_driven_matches_cpu"
        "memcheck||$ga|mg_two_steps_matches_cpu"
        "racecheck||$ga|mg_two_steps_matches_cpu"
        "synccheck||$ga|mg_two_steps_matches_cpu"
        "memcheck||$gt|stage_spmv_warp_kernel"
        "racecheck||$gp|warp_spmv_one_step_host_driven_matches_cpu"
        "memcheck||$gp|half_spmv_one_step_host_driven_matches_cpu"
        "initcheck||$gp|half_spmv_one_step_host_driven_matches_cpu"
        "memcheck||$gt|stage_forces_green_fused"
        "memcheck||$gf|system_matches_host_short"
        "initcheck||$gf|system_matches_host_short"
        "initcheck||$gp|fused_one_step_host_driven_matches_cpu"
    )
    local tool env exe name
    for r in "${sruns[@]}"; do
        IFS='|' read -r tool env exe name <<< "$r"
        rest=$((b - ($(date +%s) - PH0)))
        if [ "$rest" -lt 15 ]; then say "  sanitize $tool $(basename "$exe") $name: NOT RUN, out of the phase's time"; continue; fi
        one=$((rest < 90 ? rest : 90))
        san_one "$tool" "$env" "$exe" "$name" "$one"
        [ $? = 1 ] && bad=$((bad + 1))
    done
    [ $bad -gt 0 ] && fail "fused: $bad sanitizer runs with errors, failures or timeouts (sanitizer.log)"
    return 0
}

XVFB_PID=
start_xvfb() { # an X server for the GLX cases: the system's Xvfb, else the one carried in .glx
    local x xkb=()
    x=$(command -v Xvfb || true)
    if [ -z "$x" ] && [ -x "$GLROOT/usr/bin/Xvfb" ]; then
        x=$GLROOT/usr/bin/Xvfb
        xkb=(-xkbdir "$GLROOT/usr/share/X11/xkb")
        # Xvfb runs xkbcomp from /usr/bin; the carried one where there is none
        [ -e /usr/bin/xkbcomp ] || ln -s "$GLROOT/usr/bin/xkbcomp" /usr/bin/xkbcomp 2> /dev/null || true
        echo "-- ldd of the carried Xvfb and swrast_dri.so (what is still missing):" >> "$VLOG"
        ldd "$x" "$GLROOT"/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so 2>&1 | grep -E 'not found|^/' >> "$VLOG"
    fi
    [ -n "$x" ] || return 1
    local d=99
    while [ -e /tmp/.X11-unix/X$d ] || [ -e /tmp/.X$d-lock ]; do d=$((d - 1)); done # a free display
    echo "-- $x :$d" >> "$VLOG"
    "$x" :$d -screen 0 1280x720x24 -nolisten tcp "${xkb[@]}" >> "$VLOG" 2>&1 &
    XVFB_PID=$!
    sleep 2
    kill -0 "$XVFB_PID" 2> /dev/null || { XVFB_PID=; say "view: $x :$d did not start (view.log)"; return 1; }
    export DISPLAY=:$d
    return 0
}

phase_view() {
    local b=$1
    local view=$BUILD/interop/tetwarp-view
    [ -x "$view" ] || { fail "view: $view not built (build phase: GLFW/libepoxy/libpng; carry .gl)"; return 1; }
    gl_setup > /dev/null
    local part=/tmp/gpu_session_view.$$
    {
        echo "# view: DISPLAY=${DISPLAY:-unset} __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-unset}"
        ls /usr/share/glvnd/egl_vendor.d/ /usr/local/nvidia/share/glvnd/egl_vendor.d/ 2>&1
    } >> "$VLOG"
    # 1. EGL, no display: the NVIDIA EGL device
    echo "===== EGL (DISPLAY unset): ctest -R '^viewer\\.|^scenes\\.' -V" >> "$VLOG"
    (unset DISPLAY WAYLAND_DISPLAY; timeout -k 10 $((b / 2)) ctest --test-dir "$BUILD" -R '^viewer\.|^scenes\.' -V) > "$part" 2>&1
    cat "$part" >> "$VLOG"
    ctest_summary "$part" "view (EGL)"
    local fr=/tmp/gpu_session_frames
    rm -rf "$fr"
    (unset DISPLAY WAYLAND_DISPLAY; timeout 60 "$view" --scene bars --backend auto --upload auto --headless --frames 3 --out "$fr") >> "$VLOG" 2>&1 &&
        [ "$(ls "$OUTD" | wc -l)" -lt 8 ] && cp "$fr/frame_00002.png" "$OUTD/view_frame.png"
    grep -E 'GL context|per frame|d2h' "$VLOG" | tail -n 4 | sed 's/^/   /' | tee -a "$SLOG"
    # 2. GLX under Xvfb, NVIDIA's GLX where the GPU is
    local rest=$((b - ($(date +%s) - PH0) - 10))
    if [ "$rest" -lt 30 ]; then say "view (GLX/Xvfb): skipped, out of the phase's time"; rm -f "$part"; return 0; fi
    if [ -n "${DISPLAY:-}" ] || start_xvfb; then
        [ $HAVE_GPU = 1 ] && export __GLX_VENDOR_LIBRARY_NAME=nvidia
        echo "===== GLX (Xvfb, DISPLAY=$DISPLAY, __GLX_VENDOR_LIBRARY_NAME=${__GLX_VENDOR_LIBRARY_NAME:-}): ctest -R '^viewer\\.' -V" >> "$VLOG"
        timeout -k 10 "$rest" ctest --test-dir "$BUILD" -R '^viewer\.' -V > "$part" 2>&1
        cat "$part" >> "$VLOG"
        ctest_summary "$part" "view (GLX under Xvfb)"
        [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null && XVFB_PID=
    else
        say "view (GLX/Xvfb): no Xvfb here or in $GLROOT (bench/fetch_gpu_debs.sh --xvfb, carry .glx): the GLX cases were not run"
    fi
    rm -f "$part"
}

# ------------------------------------------------------------ run the phases
declare -A CAP=([first]=${FIRST_S:-240} [build]=${BUILD_S:-240} [test]=${TEST_S:-220} [sanitize]=${SAN_S:-150} [bench]=${BENCH_S:-540} [view]=${VIEW_S:-240} [fused]=${FUSED_S:-540})
RESULTS=()
i=0
for p in "${PHASES[@]}"; do
    i=$((i + 1))
    later=$((${#PHASES[@]} - i))
    b=$(budget "${CAP[$p]}" "$later")
    if [ "$b" -lt 20 ]; then
        fail "phase $p: NOT RUN, $(left) s left of TOTAL_S=$TOTAL_S"
        RESULTS+=("$p: not run")
        continue
    fi
    say "===== phase $p: budget $b s (at $(elapsed) s of $TOTAL_S)"
    PH0=$(date +%s)
    nf=${#FAILS[@]}
    "phase_$p" "$b"
    st=OK
    [ ${#FAILS[@]} -gt "$nf" ] && st=FAILED
    RESULTS+=("$p: $st in $(($(date +%s) - PH0)) s (budget $b s)")
    say "===== phase $p: $st, $(($(date +%s) - PH0)) s"
done
[ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null

say ""
say "===== gpu_session.sh summary ($(elapsed) s; GPU: $([ $HAVE_GPU = 1 ] && echo yes || echo NO))"
for r in "${RESULTS[@]}"; do say "  $r"; done
if [ ${#FAILS[@]} -gt 0 ]; then
    say "  FAILURES:"
    for f in "${FAILS[@]}"; do say "   - $f"; done
fi
say "  files in $OUTD: $(ls "$OUTD" | tr '\n' ' ')"
[ ${#FAILS[@]} -eq 0 ]
