#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, -DTW_FUZZ=ON) and runs each reader's
# for SECONDS, starting from its committed corpus and dictionary:
#   tests/fuzz/run.sh SECONDS [READER...]     (readers: tetgen gmsh medit obj off stl)
# Prints executions, coverage and crashes per reader; exits non-zero when any
# harness crashed (a sanitizer report, a leak, a timeout or an abort of the
# harness's own checks). Inputs found go to BUILD/fuzz-work/READER/corpus,
# crashing inputs to BUILD/fuzz-work/READER/crash-*; the repository is not
# written. BUILD is $TW_FUZZ_BUILD, default build-fuzz.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 SECONDS [READER...]   (readers: tetgen gmsh medit obj off stl)" >&2
    exit 2
fi
seconds="$1"
shift
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(tetgen gmsh medit obj off stl)
build="${TW_FUZZ_BUILD:-$root/build-fuzz}"
command -v clang >/dev/null || { echo "run.sh: clang not found (apt-get install clang)" >&2; exit 2; }

CC=clang cmake -S "$root" -B "$build" -DTW_FUZZ=ON -DTW_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target $(printf 'fuzz_%s ' "${readers[@]}") >/dev/null

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
status=0
summary=""
for r in "${readers[@]}"; do
    exe="$build/tests/fuzz/fuzz_$r"
    work="$build/fuzz-work/$r"
    mkdir -p "$work/corpus"
    rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
    echo "== fuzz_$r: ${seconds} s"
    rc=0
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -dict="$root/tests/fuzz/$r.dict" -artifact_prefix="$work/" -print_final_stats=1 \
        "$work/corpus" "$root/tests/fuzz/corpus/$r" >"$work/log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
    last=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
                  -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        status=1
        grep -E 'ERROR|runtime error|SUMMARY|Test unit written|message' "$work/log" | head -n 20 || true
    fi
    line=$(printf '%-7s execs %10s  cov %5s  ft %6s  corpus %5s  crashes %s  (exit %s)' \
        "$r" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$crashes" "$rc")
    echo "$line"
    summary+="$line"$'\n'
done
echo "== fuzz summary (${seconds} s per reader)"
printf '%s' "$summary"
exit $status
