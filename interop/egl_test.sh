#!/bin/sh
# egl_test.sh [--mesa-only] CMD [ARGS...]: runs a viewer test command with no
# display (DISPLAY and WAYLAND_DISPLAY unset), so --headless must render
# through EGL. Exits 77 (ctest: "skipped") only when no EGL is installed at
# all: no libEGL.so.1, or no EGL driver (vendor) file for glvnd; with
# --mesa-only also when glvnd's first EGL vendor is not Mesa's (a test that
# steers the driver through MESA_* variables, which NVIDIA's EGL ignores).
# An EGL that is installed and fails is a failure, not a skip.
unset DISPLAY WAYLAND_DISPLAY
mesa_only=
if [ "${1:-}" = --mesa-only ]; then mesa_only=1; shift; fi
hint="Debian: apt-get install libegl1 libegl-mesa0"
found=
for d in $(PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | sed -n 's|.*libEGL\.so\.1 .*=> \(.*\)/libEGL\.so\.1$|\1|p') \
         /usr/lib/*-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    if [ -e "$d/libEGL.so.1" ]; then found=1; break; fi
done
if [ -z "$found" ]; then
    echo "skipped: no libEGL.so.1 ($hint)"
    exit 77
fi
vendor=${__EGL_VENDOR_LIBRARY_FILENAMES:-}${__EGL_VENDOR_LIBRARY_DIRS:-}
for f in /usr/share/glvnd/egl_vendor.d/*.json /etc/glvnd/egl_vendor.d/*.json; do
    if [ -e "$f" ]; then vendor=$f; break; fi
done
if [ -z "$vendor" ]; then
    echo "skipped: libEGL.so.1 has no driver (no glvnd egl_vendor.d/*.json; $hint)"
    exit 77
fi
if [ -n "$mesa_only" ]; then
    case $vendor in
    *mesa*) ;;
    *) echo "skipped: this test steers Mesa (MESA_GL_VERSION_OVERRIDE); the EGL driver here is $vendor"; exit 77 ;;
    esac
fi
exec "$@"
