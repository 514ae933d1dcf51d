#!/bin/sh
# viewer_test.sh [--need-display] CMD [ARGS...]: runs a viewer test command.
# With an X display (DISPLAY set: .ci/run starts Xvfb) it runs as it is;
# without one, --headless renders through EGL, so the command runs under
# egl_test.sh (skipped, exit 77, only where no EGL is installed).
# --need-display: the case is about the display itself; without one it
# exits 77, which ctest reports as "skipped".
need_display=
if [ "${1:-}" = "--need-display" ]; then
    need_display=1
    shift
fi
if [ -n "${DISPLAY:-}" ]; then
    exec "$@"
fi
if [ -n "$need_display" ]; then
    echo "skipped: no X display (DISPLAY unset); run under Xvfb, e.g. Xvfb :99 -screen 0 1280x720x24 & export DISPLAY=:99"
    exit 77
fi
exec sh "$(dirname "$0")/egl_test.sh" "$@"
