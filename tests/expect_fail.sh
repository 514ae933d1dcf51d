#!/bin/sh
# expect_fail.sh [--status N] REGEX CMD [ARGS...]
#
# A bad-input test: passes (exit 0) only when CMD exits with a non-zero status
# of its own (not a crash: no signal, no sanitizer report; exactly N with
# --status N) AND its stdout and stderr together match the extended regular
# expression REGEX (case-insensitive). Whatever CMD printed is shown, so a
# failing ctest case says why.
status=
if [ "$1" = "--status" ]; then
    status=$2
    shift 2
fi
if [ $# -lt 2 ]; then
    echo "usage: $0 [--status N] REGEX CMD [ARGS...]" >&2
    exit 2
fi
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
echo "[expect_fail] exit status $rc; expecting non-zero and output matching: $regex"
if [ "$rc" -eq 0 ]; then
    echo "FAIL: the command succeeded; it should have been rejected"
    exit 1
fi
if [ "$rc" -ge 126 ]; then
    echo "FAIL: exit status $rc is a crash or a command that could not run, not a clean error"
    exit 1
fi
if [ -n "$status" ] && [ "$rc" -ne "$status" ]; then
    echo "FAIL: exit status $rc, expected $status"
    exit 1
fi
if printf '%s\n' "$out" | grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:'; then
    echo "FAIL: a sanitizer reported an error"
    exit 1
fi
if ! printf '%s\n' "$out" | grep -Eiq -- "$regex"; then
    echo "FAIL: the message does not match"
    exit 1
fi
echo "PASS"
exit 0
