"""The liver's levels for bench/debunne_liver.sh: data/meshes/liver_sofa.msh
(Gmsh v1, SOFA's coarse liver, in cm) scaled to metres as the coarsest level
(TetGen .node/.ele), and its boundary as an OBJ for TetGen to mesh the finer
levels from. usage: liver_levels.py MSH OUT_STEM"""
import sys

msh, stem = sys.argv[1], sys.argv[2]
lines = open(msh).read().split("\n")
k = lines.index("$NOD")
n = int(lines[k + 1])
ids, X = {}, []
for j in range(n):
    t = lines[k + 2 + j].split()
    ids[int(t[0])] = j
    X.append([0.01 * float(c) for c in t[1:4]])
k = lines.index("$ELM")
m = int(lines[k + 1])
tets = []
for j in range(m):
    t = [int(c) for c in lines[k + 2 + j].split()]
    if t[1] == 4:
        tets.append([ids[c] for c in t[5:9]])


def det(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])


for t in tets:  # positively oriented
    if det(*[X[i] for i in t]) < 0:
        t[2], t[3] = t[3], t[2]
with open(stem + ".node", "w") as f:
    f.write("%d 3 0 0\n" % n)
    for j, x in enumerate(X):
        f.write("%d %.9g %.9g %.9g\n" % (j, x[0], x[1], x[2]))
with open(stem + ".ele", "w") as f:
    f.write("%d 4 0\n" % len(tets))
    for j, t in enumerate(tets):
        f.write("%d %d %d %d %d\n" % (j, t[0], t[1], t[2], t[3]))
# boundary: faces of one tet, outward (for a positive tet (a, b, c, d) the
# faces (b, c, d), (a, d, c), (a, b, d), (a, c, b))
OUT = [(1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)]
faces = {}
for t in tets:
    for o in OUT:
        f = [t[o[0]], t[o[1]], t[o[2]]]
        key = tuple(sorted(f))
        faces[key] = None if key in faces else f
bnd = [f for f in faces.values() if f is not None]
used = sorted({i for f in bnd for i in f})
remap = {i: j for j, i in enumerate(used)}
with open(stem + "_surface.obj", "w") as f:
    for i in used:
        f.write("v %.9g %.9g %.9g\n" % tuple(X[i]))
    for t in bnd:
        f.write("f %d %d %d\n" % tuple(remap[i] + 1 for i in t))
print("%d nodes, %d tets, %d boundary faces" % (n, len(tets), len(bnd)))
