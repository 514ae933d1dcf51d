# shellcheck shell=sh
# Sourced by the bench scripts (not run): the set-up, priority, CPU timing
# and per-frame CSV columns several of them share. POSIX sh.

# bench_python: $PY, a python3 that imports matplotlib ($PYTHON, else
# python3; /usr/bin/python3 where that one has no matplotlib)
bench_python() {
    PY=${PYTHON:-python3}
    $PY -c "import matplotlib" 2>/dev/null || PY=/usr/bin/python3
}

# bench_setup OUT_DIR: makes OUT_DIR; $W, a scratch folder removed when the
# script exits; $PY (bench_python)
bench_setup() {
    W=$(mktemp -d)
    trap 'rm -rf "$W"' EXIT
    mkdir -p "$1"
    bench_python
}

# bench_nice: $NICE, "nice -n -5" where this user may raise the priority,
# else empty
bench_nice() {
    NICE="nice -n -5"
    $NICE true 2>/dev/null || NICE=""
}

# bench_cpu COMMAND...: prints the user + sys seconds of COMMAND, whose
# output goes to $W/run.out; where it fails, that output is appended to $LOG
# and the (sub)shell exits 1
bench_cpu() {
    /usr/bin/time -f "%U %S" -o "$W/time" "$@" > "$W/run.out" 2>&1 || { cat "$W/run.out" >> "$LOG"; exit 1; }
    awk '{ print $1 + $2 }' "$W/time"
}

# bench_frames_cpu FRAMES COMMAND...: COMMAND --frames 1 (the set-up and one
# frame) and COMMAND --frames FRAMES, one after the other; the second's
# output (in $W/run.out) and both CPU times are appended to $LOG. $CPU_MS:
# the CPU ms a frame, the difference over the FRAMES - 1 frames more.
bench_frames_cpu() {
    bench_frames=$1
    shift
    bench_setup_s=$(bench_cpu "$@" --frames 1)
    bench_total_s=$(bench_cpu "$@" --frames "$bench_frames")
    cat "$W/run.out" >> "$LOG"
    CPU_MS=$(echo "$bench_total_s $bench_setup_s $bench_frames" | awk '{ printf "%.2f", 1000 * ($1 - $2) / ($3 - 1) }')
    echo "cpu: $bench_total_s s for set-up and $bench_frames frames, $bench_setup_s s for set-up and 1 frame: $CPU_MS ms a frame" \
        >> "$LOG"
}

# multires_frames_header CSV: starts CSV with the columns multires_frames
# appends
multires_frames_header() {
    echo "run,frame,time,active_nodes,interface_nodes,work,frame_ms,probe_x,probe_y,probe_z,tool_fx,tool_fy,tool_fz,max_gamma" \
        > "$1"
}

# multires_frames CSV NAME: appends the frames of $W/run.csv (the CSV of a
# `tetwarp run --multires`) to CSV, each row starting with NAME
multires_frames() {
    awk -F, -v n="$2" 'NR > 1 { print n "," $1 "," $2 "," $3 "," $4 "," $5 "," $7 "," $14 "," $15 "," $16 "," $17 "," $18 "," $19 "," $20 }' \
        "$W/run.csv" >> "$1"
}
