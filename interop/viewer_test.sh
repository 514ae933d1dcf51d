#!/bin/sh
# viewer_test.sh CMD [ARGS...]: runs a viewer test command that needs an X
# display. Without one (DISPLAY unset) it exits 77, which ctest reports as
# "skipped" (.ci/run starts Xvfb and sets DISPLAY=:99).
if [ -z "${DISPLAY:-}" ]; then
    echo "skipped: no X display (DISPLAY unset); run under Xvfb, e.g. Xvfb :99 -screen 0 1280x720x24 & export DISPLAY=:99"
    exit 77
fi
exec "$@"
