#!/usr/bin/env bash
# fetch_gpu_debs.sh [--xvfb] [--verify]: run HERE (a Debian machine where
# apt works), never on the GPU machine (it has no network and no apt).
# Downloads, with `apt-get download` (amd64, no install), the .deb files that
# the GPU machine needs to BUILD and RUN tetwarp-view headless, into .gl/
# (git-ignored; carried with run(..., carry=[".gl"])):
#
#   .gl/*.deb       the GL runtime (glvnd: libEGL, libGL, libOpenGL, libGLX,
#                   libGLES, libGLdispatch): tests/gpu_session.sh unpacks them
#                   into / (dpkg -x), as the device README says, and only
#                   where the machine lacks those libraries
#   .gl/dev/*.deb   GLFW, libepoxy, libpng, zlib, the GL/EGL/X11 headers and
#                   pkg-config files, pkgconf: unpacked into /tmp/glroot (never
#                   into /), found through PKG_CONFIG_LIBDIR +
#                   PKG_CONFIG_SYSROOT_DIR, CMAKE_PREFIX_PATH and LD_LIBRARY_PATH
#   .glx/*.deb      only with --xvfb: Xvfb, xkbcomp, xkb-data, Mesa's GLX/DRI
#                   driver (llvmpipe, LLVM 15) and their libraries, for the GLX
#                   fallback (the EGL device is the first choice), unpacked into
#                   /tmp/glroot too. About 47 MB: carry it in the `view` call
#                   only, with .gl and without .bench-meshes. Libraries every
#                   Ubuntu/Debian base has (libstdc++, libgcrypt, libzstd, ...)
#                   and libicu72 (9 MB, needed only by Debian's libxml2 where the
#                   machine has no libxml2.so.2) are left out: gpu_session.sh's
#                   view phase lists any library still missing.
#
# --verify: afterwards unpacks .gl/dev into a fresh /tmp/glroot-verify and
# builds tetwarp-view against that root alone (tests/gpu_session.sh build with
# TW_GL_ISOLATE=1: PKG_CONFIG_LIBDIR only inside the root, /usr ignored by
# find_package), then checks with ldd that GLFW/epoxy/png come from the root.
#
# Prints the size of .gl/ and of what a run() call carries with it.
set -uo pipefail
cd "$(dirname "$0")/.."
XVFB=0
VERIFY=0
for a in "$@"; do
    case $a in
    --xvfb) XVFB=1 ;;
    --verify) VERIFY=1 ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch_gpu_debs.sh: unknown argument $a" >&2; exit 2 ;;
    esac
done
command -v apt-get > /dev/null || { echo "fetch_gpu_debs.sh: no apt-get here: run it on a Debian/Ubuntu machine"; exit 1; }

# the GL runtime: into / on the device (device README)
RUNTIME="libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2"
# build + run of tetwarp-view, into /tmp/glroot on the device
DEV="libglfw3 libglfw3-dev libepoxy0 libepoxy-dev libpng16-16 libpng-dev zlib1g zlib1g-dev
     libegl-dev libgl-dev libglx-dev libgles-dev libopengl-dev libglvnd-dev
     libx11-6 libx11-data libx11-dev libxcb1 libxcb1-dev libxau6 libxau-dev libxdmcp6 libxdmcp-dev
     libbsd0 libmd0 x11proto-dev xorg-sgml-doctools xtrans-dev
     libxrandr2 libxinerama1 libxcursor1 libxi6 libxext6 libxrender1 libxfixes3 libxxf86vm1
     pkgconf pkgconf-bin libpkgconf3 pkg-config"
# Xvfb (GLX fallback when the NVIDIA EGL device fails): the server, its
# libraries, the keymap compiler and data, Mesa's DRI/GLX (llvmpipe) drivers
XVFB_PKGS="xvfb xserver-common x11-common x11-xkb-utils xkb-data libxkbfile1 libxfont2 libfontenc1 libfreetype6
     libbrotli1 libpixman-1-0 libunwind8
     libxshmfence1 libxcb-glx0 libxcb-dri2-0 libxcb-dri3-0 libxcb-present0 libxcb-sync1 libxcb-xfixes0
     libxcb-randr0 libxcb-shm0 libx11-xcb1 libdrm2 libdrm-common libglapi-mesa libglx-mesa0 libgl1-mesa-dri
     libllvm15 libsensors5 libelf1 libz3-4 libedit2 libxml2
     libdrm-amdgpu1 libdrm-nouveau2 libdrm-radeon1 libdrm-intel1 libpciaccess0 xauth libxmuu1"

EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
for d in /.gl/ /.glx/; do grep -qx "$d" "$EXCLUDE" 2> /dev/null || echo "$d" >> "$EXCLUDE"; done

mkdir -p .gl/dev /tmp/amd64/partial
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64 -oAPT::Sandbox::User=root -qq)
if ! apt-get "${o[@]}" update; then
    echo "fetch_gpu_debs.sh: apt-get update failed (network?)"; exit 1
fi
fetch() { # fetch DIR PKG...: download what is not there yet (any version of the package)
    local dir=$1 p fail=0
    shift
    mkdir -p "$dir"
    for p in "$@"; do
        ls "$dir/${p}_"*.deb > /dev/null 2>&1 && continue
        (cd "$dir" && apt-get "${o[@]}" download "$p") || { echo "fetch_gpu_debs.sh: could not download $p"; fail=1; }
    done
    return $fail
}
rc=0
# shellcheck disable=SC2086
fetch .gl $RUNTIME || rc=1
# shellcheck disable=SC2086
fetch .gl/dev $DEV || rc=1
if [ $XVFB = 1 ]; then
    # shellcheck disable=SC2086
    fetch .glx $XVFB_PKGS || rc=1
fi
rm -rf .gl/xvfb

echo "== .gl/ ($(find .gl -name '*.deb' | wc -l) debs):"
du -sh .gl/*.deb 2> /dev/null | awk '{s=s" "$2"="$1} END {print "  runtime:" s}' | sed 's|\.gl/||g'
du -sh .gl/dev .glx 2> /dev/null | sed 's/^/  /'
du -sh .gl | sed 's/^/  total /'
tree_bytes=$( (git ls-files -z; git ls-files -z -o --exclude-standard) | xargs -0 stat -c %s 2> /dev/null | awk '{s+=$1} END {print s+0}')
gl_bytes=$(du -sb .gl | cut -f1)
mesh_bytes=$(du -sb .bench-meshes 2> /dev/null | cut -f1)
glx_bytes=$(du -sb .glx 2> /dev/null | cut -f1)
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b/1048576}'; }
echo "== what a run() call sends (limit 64 MiB):"
echo "  working tree (tracked + untracked, not ignored): $(mib "$tree_bytes")"
echo "  + .gl:                  $(mib $((tree_bytes + gl_bytes)))"
echo "  + .gl + .bench-meshes:  $(mib $((tree_bytes + gl_bytes + ${mesh_bytes:-0})))"
[ -n "$glx_bytes" ] && echo "  + .gl + .glx:           $(mib $((tree_bytes + gl_bytes + glx_bytes)))"
echo "  (build test sanitize: carry [\".gl\", \".bench-meshes\"]; bench: [\".bench-meshes\"]; view: [\".gl\", \".glx\"])"
[ $((tree_bytes + gl_bytes + ${glx_bytes:-0})) -lt $((62 * 1048576)) ] || echo "fetch_gpu_debs.sh: WARNING: the tree with .gl and .glx is near or over 64 MiB"

if [ $VERIFY = 1 ]; then
    echo "== --verify: tetwarp-view built against /tmp/glroot-verify alone"
    rm -rf /tmp/glroot-verify /tmp/build-glverify
    GLROOT=/tmp/glroot-verify BUILD=/tmp/build-glverify TW_GL_ISOLATE=1 TW_GL_NO_RUNTIME=1 JOBS=${JOBS:-2} \
        GPU_SESSION_OUT=/tmp/glverify-out tests/gpu_session.sh build || rc=1
    v=/tmp/build-glverify/interop/tetwarp-view
    if [ -x "$v" ]; then
        echo "-- ldd $v (GLFW, epoxy, png must come from /tmp/glroot-verify):"
        LD_LIBRARY_PATH=/tmp/glroot-verify/rtlib ldd "$v" | grep -E 'glfw|epoxy|png|libz|X11' | sed 's/^/  /'
        bad=$(LD_LIBRARY_PATH=/tmp/glroot-verify/rtlib ldd "$v" | grep -E 'libglfw|libepoxy|libpng' | grep -vc glroot-verify)
        [ "$bad" = 0 ] && echo "  verify: OK" || { echo "  verify: FAILED ($bad of them from the system)"; rc=1; }
    else
        echo "  verify: FAILED: tetwarp-view was not built (see /tmp/glverify-out/session.log)"; rc=1
    fi
fi
exit $rc
