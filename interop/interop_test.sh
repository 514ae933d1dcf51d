#!/bin/sh
# interop_test.sh CASE VIEW CHECK DIR: the CUDA-GL interop cases (GPU only).
# The bars scene on the CUDA backend, 3 headless frames, into DIR:
#   same    drawn through interop (--upload interop) and through host upload
#           (--upload host): the same images (png_check --same), and the
#           interop run really updated its surfaces by interop
#   no-d2h  drawn through interop, the frames copy no vertex data from the
#           device to the host: "d2h vertex bytes per frame: 0"
# Exits 77 (skipped) where no CUDA device can be used (--require-cuda says so).
# Interop needs NVIDIA's OpenGL on the GPU (its EGL device, or GLX on an X
# server with the NVIDIA driver): with Mesa's the forced interop run fails.
set -u
if [ $# -ne 4 ]; then
    echo "usage: $0 same|no-d2h VIEW CHECK DIR" >&2
    exit 2
fi
case=$1 view=$2 check=$3 dir=$4

run() { # run NAME UPLOAD: frames into DIR/NAME, output into DIR/NAME.log and shown
    "$view" --require-cuda --scene bars --backend cuda --upload "$2" --headless --frames 3 --out "$dir/$1" \
        >"$dir/$1.log" 2>&1
    rc=$?
    cat "$dir/$1.log"
    return $rc
}

rm -rf "$dir"
mkdir -p "$dir"
run interop interop
rc=$?
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ]; then
    echo "FAIL: the --upload interop run failed (exit $rc)"
    exit 1
fi
# frame 0 is drawn before any step (the host holds the state): 2 frames x 3 bars by interop
if ! grep -q 'updated 6 times by interop, 0 from the host' "$dir/interop.log"; then
    echo "FAIL: the interop run did not update every surface by interop after the first frame"
    exit 1
fi
case $case in
same)
    if ! run host host; then
        echo "FAIL: the --upload host run failed"
        exit 1
    fi
    for f in 0 1 2; do
        "$check" "$dir/interop/frame_0000$f.png" "$dir/host/frame_0000$f.png" --same 2 0 || exit 1
    done
    ;;
no-d2h)
    if ! grep -q 'd2h vertex bytes per frame: 0 (interop' "$dir/interop.log"; then
        echo "FAIL: expected 'd2h vertex bytes per frame: 0 (interop' in the interop run's output"
        exit 1
    fi
    ;;
*)
    echo "usage: $0 same|no-d2h VIEW CHECK DIR" >&2
    exit 2
    ;;
esac
echo PASS
