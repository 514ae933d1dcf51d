#!/usr/bin/env python3
"""Writes the seed corpus of the reader harnesses, tests/fuzz/corpus/<reader>/:
a one-tet (or one-tetrahedron-surface) file per format, small valid meshes
cut from data/meshes (60 tets of the dog, written in every mesh format),
heads of the shipped files, and the inputs that once showed a bug. Run from
anywhere; rewrites the seed files it owns (names starting with "seed_"),
leaves other files (past crashes, kept as regressions) alone.

A TetGen input is the .node bytes, a NUL, the .ele bytes (fuzz_reader.c)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data", "meshes")
CORPUS = os.path.join(HERE, "corpus")


def put(reader, name, data):
    d = os.path.join(CORPUS, reader)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data)


def head(file, size):
    """The first lines of a shipped file, about size bytes, cut at a line end."""
    with open(os.path.join(DATA, file), "rb") as f:
        b = f.read(size)
    return b[: b.rfind(b"\n") + 1]


# ---- a small valid mesh: the first 60 tets of the dog, nodes renumbered
def dog_subset(n=60):
    node = open(os.path.join(DATA, "dog_shrec398.tet.node")).read().split("\n")
    ele = open(os.path.join(DATA, "dog_shrec398.tet.ele")).read().split("\n")
    X = {}
    for line in node[1:]:
        f = line.split()
        if len(f) >= 4 and not f[0].startswith("#"):
            X[int(f[0])] = f[1:4]
    tets = [list(map(int, l.split()[1:5])) for l in ele[1:1 + n]]
    used = sorted({v for t in tets for v in t})
    new = {v: i for i, v in enumerate(used)}
    return [X[v] for v in used], [[new[v] for v in t] for t in tets]


X, T = dog_subset()
one_X = [["0", "0", "0"], ["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]]
one_T = [[0, 1, 2, 3]]


def tetgen(X, T, base=0, region=False):
    s = "%d 3 0 0\n" % len(X) + "".join("%d %s\n" % (i + base, " ".join(x)) for i, x in enumerate(X))
    e = "%d 4 %d\n" % (len(T), 1 if region else 0)
    e += "".join("%d %s%s\n" % (i + base, " ".join(str(v + base) for v in t), " 3" if region else "")
                 for i, t in enumerate(T))
    return s + "\0" + e


def msh_v1(X, T):
    s = "$NOD\n%d\n" % len(X) + "".join("%d %s\n" % (i + 1, " ".join(x)) for i, x in enumerate(X))
    s += "$ENDNOD\n$ELM\n%d\n" % len(T)
    s += "".join("%d 4 1 1 4 %s\n" % (i + 1, " ".join(str(v + 1) for v in t)) for i, t in enumerate(T))
    return s + "$ENDELM\n"


def msh_v2(X, T):
    s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 7 \"body\"\n$EndPhysicalNames\n"
    s += "$Nodes\n%d\n" % len(X) + "".join("%d %s\n" % (i + 1, " ".join(x)) for i, x in enumerate(X))
    s += "$EndNodes\n$Elements\n%d\n" % (len(T) + 1)
    s += "1 2 2 7 1 1 2 3\n"
    s += "".join("%d 4 2 7 1 %s\n" % (i + 2, " ".join(str(v + 1) for v in t)) for i, t in enumerate(T))
    return s + "$EndElements\n"


def msh_v4(X, T, minor):
    n, m = len(X), len(T)
    s = "$MeshFormat\n4.%d 0 8\n$EndMeshFormat\n" % minor
    s += "$Entities\n0 0 0 1\n1 0 0 0 1 1 1 0 0\n$EndEntities\n"
    if minor == 1:
        s += "$Nodes\n1 %d 1 %d\n3 1 0 %d\n" % (n, n, n)
        s += "".join("%d\n" % (i + 1) for i in range(n))
        s += "".join("%s\n" % " ".join(x) for x in X)
        s += "$EndNodes\n$Elements\n2 %d 1 %d\n2 1 2 1\n1 1 2 3\n3 1 4 %d\n" % (m + 1, m + 1, m)
    else:
        s += "$Nodes\n1 %d\n1 3 0 %d\n" % (n, n)
        s += "".join("%d %s\n" % (i + 1, " ".join(x)) for i, x in enumerate(X))
        s += "$EndNodes\n$Elements\n2 %d\n1 2 2 1\n1 1 2 3\n1 3 4 %d\n" % (m + 1, m)
    s += "".join("%d %s\n" % (i + 2, " ".join(str(v + 1) for v in t)) for i, t in enumerate(T))
    return s + "$EndElements\n"


def medit(X, T):
    s = "MeshVersionFormatted 2\n# seed\nDimension 3\nVertices\n%d\n" % len(X)
    s += "".join("%s 0\n" % " ".join(x) for x in X)
    s += "Triangles\n1\n1 2 3 0\nTetrahedra\n%d\n" % len(T)
    s += "".join("%s 1\n" % " ".join(str(v + 1) for v in t) for t in T)
    return s + "Corners\n1\n1\nEnd\n"


for name, (x, t) in {"one_tet": (one_X, one_T), "dog60": (X, T)}.items():
    put("tetgen", name, tetgen(x, t))
    put("tetgen", name + "_one_based_region", tetgen(x, t, base=1, region=True))
    put("gmsh", name + "_v1.msh", msh_v1(x, t))
    put("gmsh", name + "_v2.msh", msh_v2(x, t))
    put("gmsh", name + "_v40.msh", msh_v4(x, t, 0))
    put("gmsh", name + "_v41.msh", msh_v4(x, t, 1))
    put("medit", name + ".mesh", medit(x, t))
put("tetgen", "armadillo_head", head("armadillo_4k.node", 2048) + b"\0" + head("armadillo_4k.ele", 2048))
put("tetgen", "ten_node_comments",
    "# 1-based\n5 3 1 1\n1 0 0 0 0.5 1\n2 1 0 0 0.5 1 # c\n\n3 0 1 0 0.5 0\n4 0 0 1 0.5 0\n5 1 1 1 0.5 1\n"
    "\0" "2 10 1\n1 1 2 3 4 9 9 9 9 9 9 -2\n2 2 3 4 5 9 9 9 9 9 9 6\n")
put("gmsh", "liver_head_v1.msh", head("liver_sofa.msh", 4096))
put("gmsh", "binary_header.msh", b"$MeshFormat\n2.2 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n")
put("medit", "keyword_lines.mesh", "MeshVersionFormatted\n1\nDimension 3\nVertices 4\n0 0 0 1\n1 0 0 1\n"
    "0 1 0 1\n0 0 1 1\nEdges\n1\n1 2 0\nTetrahedra 1\n1 2 3 4 5\nEnd\n")

# ---- surfaces: a closed tetrahedron and a cube, heads of the shipped files
tV = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
tF = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
cV = [(x, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)]
cQ = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
put("obj", "tetra.obj", "".join("v %g %g %g\n" % v for v in tV) + "".join("f %d %d %d\n" % tuple(i + 1 for i in f) for f in tF))
put("obj", "cube_quads_vt_vn.obj", "# cube\nmtllib a.mtl\no cube\n" + "".join("v %g %g %g\n" % v for v in cV)
    + "vt 0 0\nvn 0 0 1\ng g\nusemtl m\ns off\n"
    + "".join("f %s\n" % " ".join("%d/1/1" % (i + 1) for i in q) for q in cQ[:3])
    + "".join("f %s\n" % " ".join("%d" % (i - 8) for i in q) for q in cQ[3:]))
put("obj", "dog_head.obj", head("dog_shrec398.obj", 4096))
put("obj", "cow_head.obj", head("cow_spot.obj", 4096))
put("off", "tetra.off", "OFF\n4 4 6\n" + "".join("%g %g %g\n" % v for v in tV) + "".join("3 %d %d %d\n" % f for f in tF))
put("off", "cube_quads.off", "OFF 8 6 0\n# cube\n" + "".join("%g %g %g\n" % v for v in cV)
    + "".join("4 %d %d %d %d 255 0 0\n" % q for q in cQ))
put("off", "bunny_head.off", head("bunny_closed_3485v.off", 4096))


def stl_ascii(V, F):
    s = "solid t\n"
    for f in F:
        s += " facet normal 0 0 1\n  outer loop\n" + "".join("   vertex %g %g %g\n" % V[i] for i in f)
        s += "  endloop\n endfacet\n"
    return s + "endsolid t\n"


def stl_binary(V, F):
    b = b"binary seed".ljust(80, b" ") + struct.pack("<I", len(F))
    for f in F:
        b += struct.pack("<3f", 0, 0, 1) + b"".join(struct.pack("<3f", *V[i]) for i in f) + b"\0\0"
    return b


cT = [t for q in cQ for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]
put("stl", "tetra_ascii.stl", stl_ascii(tV, tF))
put("stl", "tetra_binary.stl", stl_binary(tV, tF))
put("stl", "cube_ascii.stl", stl_ascii(cV, cT))
put("stl", "cube_binary.stl", stl_binary(cV, cT))

# ---- inputs that showed a bug (also tests in tests/test_mesh_io.c)
put("gmsh", "bug_version_out_of_range.msh", "$MeshFormat\n2147836480\n$EndMeshFormat\n")
put("gmsh", "bug_tags_llong_max.msh",
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n9223372036854775807 0 0 0\n1 1 0 0\n2 0 1 0\n"
    "3 0 0 1\n4 1 1 1\n$EndNodes\n$Elements\n2\n1 4 2 7 1 9223372036854775807 1 2 3\n2 4 2 7 1 1 2 3 4\n"
    "$EndElements\n")
put("medit", "bug_index_llong_min.mesh", "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n0 0 0 1\n"
    "1 0 0 1\n0 1 0 1\n0 0 1 1\nTetrahedra\n1\n-9223372036854775808 2 3 4 1\nEnd\n")
put("tetgen", "bug_index_llong_min", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n\0"
    "1 4 0\n1 1 2 -9223372036854775808 4\n")
put("off", "bug_coordinates_1e308.off", "OFF\n4 4 0\n-1e308 -1e308 -1e308\n1e308 -1e308 -1e308\n"
    "-1e308 1e308 -1e308\n-1e308 -1e308 1e308\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n")
put("stl", "bug_nan.stl", "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
    "vertex nan 1 0\nendloop\nendfacet\nendsolid t\n")
