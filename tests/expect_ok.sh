#!/bin/sh
# expect_ok.sh REGEX [--and REGEX]... CMD [ARGS...]
#
# A good-input test: passes (exit 0) only when CMD exits 0 AND its stdout and
# stderr together match each extended regular expression REGEX (each within
# one line, case-sensitive), with no sanitizer report. Whatever CMD printed is
# shown, so a failing ctest case says why. (ctest's PASS_REGULAR_EXPRESSION alone
# ignores the exit status: a tool that prints and then fails would pass.)
if [ $# -lt 2 ]; then
    echo "usage: $0 REGEX [--and REGEX]... CMD [ARGS...]" >&2
    exit 2
fi
nl='
'
regexes=$1
shift
while [ "$1" = "--and" ] && [ $# -ge 3 ]; do
    regexes="$regexes$nl$2"
    shift 2
done
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
echo "[expect_ok] exit status $rc; expecting 0 and output matching each of:"
printf '  %s\n' "$regexes"
if [ "$rc" -ne 0 ]; then
    echo "FAIL: the command exited with status $rc"
    exit 1
fi
if printf '%s\n' "$out" | grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:'; then
    echo "FAIL: a sanitizer reported an error"
    exit 1
fi
# one pattern per line, never an empty one (an empty pattern matches anything)
printf '%s\n' "$regexes" | while IFS= read -r regex; do
    if [ -z "$regex" ]; then
        echo "FAIL: an empty REGEX (a pattern with a newline?) would match anything"
        exit 1
    fi
    if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
        echo "FAIL: the output does not match: $regex"
        exit 1
    fi
done || exit 1
echo "PASS"
exit 0
