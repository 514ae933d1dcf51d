# shellcheck shell=bash
# Sourced by bench/debunne_bunny.sh and bench/debunne_bunny_ref.sh, after
# bench_common.sh: the Stanford bunny's four non-nested levels for Debunne et
# al. 2001's multiresolution, the tool scene, and its per-frame run.

# bunny_levels BUILD_DIR DIR: DIR/l0..l3.node/.ele. data/meshes/
# bunny_closed_3485v.off (metres, y up, 15.6 cm across) turned z up with its
# lowest point at z = 0 ((x, y, z) -> (x, -z, y - 0.0329874)), decimated by
# OpenMesh's quadric edge collapse (tw_decimate) to 300 and 800 triangles for
# levels 0 and 1 and 2,400 for level 2 (TetGen keeps a surface's triangles:
# the 3,485-vertex surface would make every level at least 3,485 nodes;
# 900-2,000 triangles cross themselves, tetgen -d), level 3 on the surface
# itself; meshed by `tetwarp mesh` at about 600, 3,000, 12,000 and 64,000
# tets: 169, 688, 2,330 and 10,093 nodes. Each level's counts are printed.
bunny_levels() {
    awk 'NR == 1 { print; next } NR == 2 { print; nv = $1; next }
         NR <= 2 + nv && NF >= 3 { printf "%.9g %.9g %.9g\n", $1, -$3, $2 - 0.0329874; next } { print }' \
        data/meshes/bunny_closed_3485v.off > "$2/bunny_z.off"
    for spec in 0,300,600 1,800,3000 2,2400,12000; do
        l=${spec%%,*}; r=${spec#*,}; faces=${r%%,*}; tets=${r#*,}
        "$1/bench/tw_decimate" "$2/bunny_z.off" "$2/s$l.off" "$faces" 2>/dev/null
        "$1/tetwarp" mesh "$2/s$l.off" --tets "$tets" --out "$2/l$l" --no-cache | grep -E "^(surface|vertices|tets|min dihedral)" || true
    done
    "$1/tetwarp" mesh "$2/bunny_z.off" --tets 64000 --out "$2/l3" --no-cache | grep -E "^(surface|vertices|tets|min dihedral)" || true
}

# E 5 kPa, nu 0.3, no gravity (as the liver's scene), the base (z < 3 mm)
# pinned; a 15 mm sphere 1 mm above the top of the back (surface vertex 343,
# 98.7 mm high, normal 4 degrees off +z) goes 16 mm down over 0.1 s
# (15 mm in) and back; the probe is the finest level's node under it; 30
# frames of 10 ms
# shellcheck disable=SC2034
BUNNY_SCENE="--E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0 --fix z<0.003 --tool 0.0049,-0.009,0.1147,0.015
        --tool-move 0,0,-0.016,0.1 --probe-at 0.0049,-0.009,0.0987 --frame-dt 0.01 --frames 30"

# bunny_run CSV NAME OPTIONS...: the scene $BUNNY_SCENE on the four levels
# $LEVELS by $T at nice with OPTIONS, logged to $LOG (a run that fails noted
# there), through $W/run.csv; its frames appended to CSV
# (multires_frames_header's columns), each row starting with NAME
bunny_run() {
    csv=$1
    name=$2
    shift 2
    echo "== $name: $*" >> "$LOG"
    # shellcheck disable=SC2086
    nice "$T" run --multires 4 --levels "$LEVELS" $BUNNY_SCENE "$@" --csv "$W/run.csv" >> "$LOG" 2>&1 || echo "failed" >> "$LOG"
    multires_frames "$csv" "$name"
}

# the liver's tool as it is (bench/debunne_liver_scene.sh): an 8 mm sphere
# 1 mm above the same point, 9 mm down over 0.1 s (8 mm in) and back
# shellcheck disable=SC2034
BUNNY_SCENE_TOOL8="--E 5e3 --nu 0.3 --rho 1060 --gravity 0,0,0 --fix z<0.003 --tool 0.0049,-0.009,0.1067,0.008
        --tool-move 0,0,-0.009,0.1 --probe-at 0.0049,-0.009,0.0987 --frame-dt 0.01 --frames 30"
