/* Graded lattice meshes (Zhuang & Canny sec. 5).
 *
 * Lattice. Every vertex is a point of one fine lattice: origin + h (i,j,k),
 * h = fine_size, the origin half a fine cell below the surface's bounding
 * box. A leaf of level l is an aligned cube of 2^l fine cells (its fine-cell
 * origin a multiple of 2^l). The uniform mesh (levels = 1) and a graded mesh
 * of the same fine_size share this lattice, so their finest leaves coincide.
 *
 * Octree. The domain is a grid of root cubes of level levels-1 covering the
 * box. A cube of edge a (level > 0) is split while its centre is closer than
 * grading * a to the surface (tw_surface_query_near: point-triangle
 * distances on a grid of the triangles); grading >= 0.87 > sqrt(3)/2 means
 * no leaf above level 0 touches the surface, so a coarse leaf is wholly
 * inside or wholly outside.
 * The octree is kept as a level map: one byte per fine cell, the level of the
 * leaf covering it. Balance (2:1): a leaf of level l with any fine cell of its
 * one-cell shell (faces, edges and corners) covered by a level below l - 1 is
 * split, until nothing changes.
 *
 * Inside. A leaf is kept when its centre is inside the surface (or, with
 * def.cover, when it is a finest leaf whose centre is within sqrt(3)/2 h of
 * a triangle: a superset of the leaves the surface crosses), by the parity
 * of a ray's crossings (tw_surface_query_inside, host/surface_query.h; its
 * ray starts a tiny offset off the lattice so it misses edges and vertices).
 * Because coarse leaves are wholly inside or outside, a graded mesh keeps
 * exactly the fine cells the uniform mesh of the same fine_size keeps: the
 * two enclose the same volume.
 *
 * Tets. Each kept leaf is cut into the 6 Kuhn tets of host/mesh_gen.c,
 * mirrored along the axes where its index at its level is odd.
 *
 * Hanging vertices. A lattice vertex that is the midpoint of an edge or the
 * centre of a face of a kept leaf is hanging: it is constrained to the
 * average of that edge's 2 or that face's 4 corners. Across such a face the
 * mesh does not conform: the large leaf's face is two triangles (one
 * diagonal) while the small leaves cut it into 8 (or, along an edge, the
 * large leaf's edge is one tet edge and the small ones' two). Holding the
 * hanging vertex on the large leaf's edge/face (as the bilinear average) is
 * what ties the sides together; the faces still open or overlap slightly
 * when the large face bends out of its plane. A corner of a leaf may itself
 * hang on a still larger leaf (chains); constraints are substituted until
 * every constrainer is a free lattice vertex, weights multiplied. The rest
 * position of a hanging vertex is set to its weighted average exactly. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "error.h"
#include "mesh.h"
#include "surface_query.h"
#include "world.h"

tw_graded_def tw_default_graded_def(void)
{
    tw_graded_def d;
    memset(&d, 0, sizeof d);
    d.fine_size = 0;
    d.levels = 4;
    d.grading = 1.0;
    return d;
}

typedef struct gctx {
    double h, lo[3], grading;
    int L;
    int N[3];            /* fine cells per axis */
    signed char *lev;    /* N0*N1*N2: level of the covering leaf */
    tw_surface_query q;  /* inside and distance tests against the surface */
} gctx;

static size_t cell_index(const gctx *c, int i, int j, int k)
{
    return (size_t)i + (size_t)c->N[0] * ((size_t)j + (size_t)c->N[1] * k);
}

static void centre_of(const gctx *c, int l, int i, int j, int k, double *p)
{
    double half = 0.5 * (double)(1 << l);
    p[0] = c->lo[0] + c->h * (i + half);
    p[1] = c->lo[1] + c->h * (j + half);
    p[2] = c->lo[2] + c->h * (k + half);
}

/* Marks the fine cells of the cube of 2^size_level cells at (i,j,k) as level l. */
static void fill(gctx *c, int l, int size_level, int i, int j, int k)
{
    int S = 1 << size_level;
    for (int z = k; z < k + S; z++)
        for (int y = j; y < j + S; y++)
            for (int x = i; x < i + S; x++) c->lev[cell_index(c, x, y, z)] = (signed char)l;
}

static void build(gctx *c, int l, int i, int j, int k)
{
    double p[3];
    centre_of(c, l, i, j, k, p);
    int S = 1 << l;
    if (l > 0 && tw_surface_query_near(&c->q, p, c->grading * S * c->h)) {
        int H = S / 2;
        for (int d = 0; d < 8; d++) build(c, l - 1, i + (d & 1) * H, j + ((d >> 1) & 1) * H, k + ((d >> 2) & 1) * H);
    } else {
        fill(c, l, l, i, j, k);
    }
}

/* 1 when a fine cell of the leaf's one-cell shell has a level below l - 1 */
static int unbalanced(const gctx *c, int l, int i, int j, int k)
{
    int S = 1 << l;
    for (int z = k - 1; z <= k + S; z++) {
        if (z < 0 || z >= c->N[2]) continue;
        for (int y = j - 1; y <= j + S; y++) {
            if (y < 0 || y >= c->N[1]) continue;
            int interior = z >= k && z < k + S && y >= j && y < j + S;
            for (int x = i - 1; x <= i + S; x += (interior && x == i - 1) ? S + 1 : 1) {
                if (x < 0 || x >= c->N[0]) continue;
                if (c->lev[cell_index(c, x, y, z)] < l - 1) return 1;
            }
        }
    }
    return 0;
}

static void balance(gctx *c)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int l = c->L - 1; l >= 2; l--) {
            int S = 1 << l;
            for (int k = 0; k < c->N[2]; k += S)
                for (int j = 0; j < c->N[1]; j += S)
                    for (int i = 0; i < c->N[0]; i += S)
                        if (c->lev[cell_index(c, i, j, k)] == l && unbalanced(c, l, i, j, k)) {
                            fill(c, l - 1, l, i, j, k); /* split into 8 */
                            changed = 1;
                        }
        }
    }
}

static const int tw_perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

typedef struct hang_entry {
    int n;      /* 0, 2 or 4 constrainers */
    int c[4];
} hang_entry;

/* Adds weight * (the expansion of v into non-hanging vertices) to idx/wt. */
static int expand(const hang_entry *hang, int v, double weight, int *idx, double *wt, int count, int cap)
{
    if (hang[v].n == 0) {
        for (int q = 0; q < count; q++)
            if (idx[q] == v) {
                wt[q] += weight;
                return count;
            }
        if (count >= cap) return -1;
        idx[count] = v;
        wt[count] = weight;
        return count + 1;
    }
    for (int q = 0; q < hang[v].n && count >= 0; q++)
        count = expand(hang, hang[v].c[q], weight / hang[v].n, idx, wt, count, cap);
    return count;
}

void tw_graded_mesh_destroy(tw_graded_mesh *g)
{
    if (!g) return;
    tw_mesh_destroy(g->mesh);
    free(g->hanging_vertex);
    free(g->hanging_ptr);
    free(g->hanging_idx);
    free(g->hanging_weights);
    free(g);
}

tw_graded_mesh *tw_mesh_graded(const tw_surface *s, const tw_graded_def *def)
{
    double t0 = tw_now_ms();
    tw_graded_def d = def ? *def : tw_default_graded_def();
    if (!s || s->vertex_count < 3 || s->triangle_count < 4) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: the surface needs at least 4 triangles");
        return NULL;
    }
    if (!(d.fine_size > 0) || !isfinite(d.fine_size)) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: fine_size %g must be positive and finite", d.fine_size);
        return NULL;
    }
    if (d.levels < 1 || d.levels > TW_GRADED_MAX_LEVELS) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: levels %d out of range [1, %d]", d.levels, TW_GRADED_MAX_LEVELS);
        return NULL;
    }
    if (!(d.grading >= 0.87) || !isfinite(d.grading)) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: grading %g must be >= 0.87 (a coarse leaf must not cross the surface)",
                d.grading);
        return NULL;
    }
    gctx c;
    memset(&c, 0, sizeof c);
    c.h = d.fine_size;
    c.L = d.levels;
    c.grading = d.grading;
    /* checks the surface; the grid cell 2 h (the ray offset scale h) */
    if (tw_surface_query_init(&c.q, s, 2 * c.h, "tw_mesh_graded") != TW_OK) return NULL;
    double bmin[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, bmax[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int v = 0; v < s->vertex_count; v++)
        for (int a = 0; a < 3; a++) {
            double x = s->positions[3 * (size_t)v + a];
            if (x < bmin[a]) bmin[a] = x;
            if (x > bmax[a]) bmax[a] = x;
        }
    int R = 1 << (c.L - 1);
    double cells = 1;
    for (int a = 0; a < 3; a++) {
        c.lo[a] = bmin[a] - 0.5 * c.h;
        double fine = ceil((bmax[a] + 0.5 * c.h - c.lo[a]) / c.h);
        c.N[a] = (int)(ceil(fine / R) * R);
        cells *= c.N[a];
    }
    if (cells > 1e9) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: fine_size %g gives a %dx%dx%d lattice (over 1e9 cells); choose a larger one",
                c.h, c.N[0], c.N[1], c.N[2]);
        tw_surface_query_free(&c.q);
        return NULL;
    }
    c.lev = tw_malloc((size_t)cells, "graded level map");
    tw_graded_mesh *out = tw_calloc(1, sizeof *out, "graded mesh");
    int *vid = NULL, *leafs = NULL, *tets = NULL;
    double *X = NULL;
    hang_entry *hang = NULL;
    if (!c.lev || !out) goto fail;

    for (int k = 0; k < c.N[2]; k += R)
        for (int j = 0; j < c.N[1]; j += R)
            for (int i = 0; i < c.N[0]; i += R) build(&c, c.L - 1, i, j, k);
    balance(&c);
    /* kept leaves: (level, i, j, k) */
    size_t nleaf = 0, cap = 1024;
    leafs = tw_malloc(sizeof(int) * 4 * cap, "graded leaves");
    if (!leafs) goto fail;
    for (int l = 0; l < c.L; l++) {
        int S = 1 << l;
        for (int k = 0; k < c.N[2]; k += S)
            for (int j = 0; j < c.N[1]; j += S)
                for (int i = 0; i < c.N[0]; i += S) {
                    if (c.lev[cell_index(&c, i, j, k)] != l) continue;
                    double p[3];
                    centre_of(&c, l, i, j, k, p);
                    if (!tw_surface_query_inside(&c.q, p) && !(d.cover && l == 0 && tw_surface_query_near(&c.q, p, 0.8661 * c.h)))
                        continue;
                    if (nleaf == cap) {
                        cap *= 2;
                        int *nl = realloc(leafs, sizeof(int) * 4 * cap);
                        if (!nl) {
                            tw_fail(TW_ERR_NOMEM, "tw_mesh_graded: out of memory for %zu leaves", cap);
                            goto fail;
                        }
                        leafs = nl;
                    }
                    int *e = leafs + 4 * nleaf++;
                    e[0] = l;
                    e[1] = i;
                    e[2] = j;
                    e[3] = k;
                    out->leaves[l]++;
                }
    }
    if (nleaf == 0) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: no lattice cell of size %g has its centre inside the surface "
                "(is it closed, or smaller than one cell?)", c.h);
        goto fail;
    }
    if (6.0 * nleaf > 2e9) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_graded: %zu leaves are too many tets", nleaf);
        goto fail;
    }

    /* vertices: the corners of kept leaves */
    int V[3] = {c.N[0] + 1, c.N[1] + 1, c.N[2] + 1};
    size_t nlat = (size_t)V[0] * V[1] * V[2];
    vid = tw_malloc(sizeof(int) * nlat, "graded vertex map");
    if (!vid) goto fail;
    for (size_t q = 0; q < nlat; q++) vid[q] = -1;
#define LAT(i, j, k) ((size_t)(i) + (size_t)V[0] * ((size_t)(j) + (size_t)V[1] * (size_t)(k)))
    int nv = 0;
    for (size_t e = 0; e < nleaf; e++) {
        int S = 1 << leafs[4 * e];
        for (int q = 0; q < 8; q++) {
            size_t p = LAT(leafs[4 * e + 1] + (q & 1) * S, leafs[4 * e + 2] + ((q >> 1) & 1) * S,
                           leafs[4 * e + 3] + ((q >> 2) & 1) * S);
            if (vid[p] < 0) vid[p] = nv++;
        }
    }
    X = tw_malloc(sizeof(double) * 3 * (size_t)nv, "graded positions");
    tets = tw_malloc(sizeof(int) * 24 * nleaf, "graded tets");
    hang = tw_calloc((size_t)nv, sizeof *hang, "graded hanging marks");
    if (!X || !tets || !hang) goto fail;
    for (int k = 0; k < V[2]; k++)
        for (int j = 0; j < V[1]; j++)
            for (int i = 0; i < V[0]; i++) {
                int v = vid[LAT(i, j, k)];
                if (v < 0) continue;
                X[3 * (size_t)v] = c.lo[0] + c.h * i;
                X[3 * (size_t)v + 1] = c.lo[1] + c.h * j;
                X[3 * (size_t)v + 2] = c.lo[2] + c.h * k;
            }

    /* 6 Kuhn tets per leaf, mirrored by the parity of its index at its level */
    for (size_t e = 0; e < nleaf; e++) {
        int l = leafs[4 * e], S = 1 << l, i = leafs[4 * e + 1], j = leafs[4 * e + 2], k = leafs[4 * e + 3];
        int flip[3] = {(i >> l) & 1, (j >> l) & 1, (k >> l) & 1};
        for (int p = 0; p < 6; p++) {
            int cc[3] = {flip[0], flip[1], flip[2]};
            int *t = tets + 4 * (6 * e + p);
            t[0] = vid[LAT(i + cc[0] * S, j + cc[1] * S, k + cc[2] * S)];
            for (int q = 0; q < 3; q++) {
                cc[tw_perms[p][q]] ^= 1;
                t[q + 1] = vid[LAT(i + cc[0] * S, j + cc[1] * S, k + cc[2] * S)];
            }
            if (tw_tet_det(X + 3 * (size_t)t[0], X + 3 * (size_t)t[1], X + 3 * (size_t)t[2], X + 3 * (size_t)t[3]) < 0) {
                int sw = t[2];
                t[2] = t[3];
                t[3] = sw;
            }
        }
    }

    /* hanging vertices: edge midpoints and face centres of kept leaves */
    int nhang = 0;
    for (size_t e = 0; e < nleaf; e++) {
        int l = leafs[4 * e];
        if (l == 0) continue;
        int S = 1 << l, H = S / 2, o[3] = {leafs[4 * e + 1], leafs[4 * e + 2], leafs[4 * e + 3]};
        /* 12 edges: along axis a, the other two at 0 or S */
        for (int a = 0; a < 3; a++)
            for (int q = 0; q < 4; q++) {
                int b = (a + 1) % 3, cax = (a + 2) % 3;
                int p0[3], p1[3], m[3];
                p0[a] = o[a];
                p1[a] = o[a] + S;
                m[a] = o[a] + H;
                p0[b] = p1[b] = m[b] = o[b] + (q & 1) * S;
                p0[cax] = p1[cax] = m[cax] = o[cax] + ((q >> 1) & 1) * S;
                int v = vid[LAT(m[0], m[1], m[2])];
                if (v < 0 || hang[v].n) continue;
                hang[v].n = 2;
                hang[v].c[0] = vid[LAT(p0[0], p0[1], p0[2])];
                hang[v].c[1] = vid[LAT(p1[0], p1[1], p1[2])];
                nhang++;
            }
        /* 6 faces: normal axis a at 0 or S */
        for (int a = 0; a < 3; a++)
            for (int side = 0; side < 2; side++) {
                int b = (a + 1) % 3, cax = (a + 2) % 3, m[3];
                m[a] = o[a] + side * S;
                m[b] = o[b] + H;
                m[cax] = o[cax] + H;
                int v = vid[LAT(m[0], m[1], m[2])];
                if (v < 0 || hang[v].n) continue;
                hang[v].n = 4;
                for (int q = 0; q < 4; q++) {
                    int p[3];
                    p[a] = m[a];
                    p[b] = o[b] + (q & 1) * S;
                    p[cax] = o[cax] + ((q >> 1) & 1) * S;
                    hang[v].c[q] = vid[LAT(p[0], p[1], p[2])];
                }
                nhang++;
            }
    }
#undef LAT
    out->hanging_count = nhang;
    out->hanging_vertex = tw_malloc(sizeof(int) * ((size_t)nhang + 1), "hanging vertices");
    out->hanging_ptr = tw_malloc(sizeof(int) * ((size_t)nhang + 1), "hanging ptr");
    size_t icap = 4 * (size_t)nhang + 16;
    out->hanging_idx = tw_malloc(sizeof(int) * icap, "hanging constrainers");
    out->hanging_weights = tw_malloc(sizeof(double) * icap, "hanging weights");
    if (!out->hanging_vertex || !out->hanging_ptr || !out->hanging_idx || !out->hanging_weights) goto fail;
    out->hanging_ptr[0] = 0;
    int k = 0;
    size_t nidx = 0;
    for (int v = 0; v < nv; v++) {
        if (!hang[v].n) continue;
        int idx[64];
        double wt[64];
        int cnt = expand(hang, v, 1.0, idx, wt, 0, 64);
        if (cnt < 0) {
            tw_fail(TW_ERR_INVALID, "tw_mesh_graded: hanging vertex %d has a constraint chain of over 64 vertices", v);
            goto fail;
        }
        if (nidx + (size_t)cnt > icap) {
            icap = 2 * (nidx + (size_t)cnt);
            int *ni = realloc(out->hanging_idx, sizeof(int) * icap);
            if (ni) out->hanging_idx = ni;
            double *nw = realloc(out->hanging_weights, sizeof(double) * icap);
            if (nw) out->hanging_weights = nw;
            if (!ni || !nw) {
                tw_fail(TW_ERR_NOMEM, "tw_mesh_graded: out of memory for hanging constraints");
                goto fail;
            }
        }
        double p[3] = {0, 0, 0};
        for (int q = 0; q < cnt; q++) {
            out->hanging_idx[nidx + q] = idx[q];
            out->hanging_weights[nidx + q] = wt[q];
            for (int a = 0; a < 3; a++) p[a] += wt[q] * X[3 * (size_t)idx[q] + a];
        }
        for (int a = 0; a < 3; a++) X[3 * (size_t)v + a] = p[a];
        nidx += (size_t)cnt;
        out->hanging_vertex[k] = v;
        out->hanging_ptr[++k] = (int)nidx;
    }
    for (int a = 0; a < 3; a++) {
        out->fine_cells[a] = c.N[a];
        out->origin[a] = c.lo[a];
    }
    free(hang);
    hang = NULL;
    free(vid);
    vid = NULL;
    free(leafs);
    leafs = NULL;
    free(c.lev);
    c.lev = NULL;
    tw_surface_query_free(&c.q);
    char name[160];
    snprintf(name, sizeof name, "graded lattice (fine %g, %d levels)", d.fine_size, d.levels);
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    ld.strict = 1;
    out->mesh = tw_mesh_adopt(X, nv, tets, (int)(6 * nleaf), NULL, name, &ld, NULL);
    X = NULL;
    tets = NULL;
    if (!out->mesh) goto fail;
    out->seconds = (tw_now_ms() - t0) / 1000;
    return out;
fail:
    free(c.lev);
    tw_surface_query_free(&c.q);
    free(vid);
    free(leafs);
    free(X);
    free(tets);
    free(hang);
    tw_graded_mesh_destroy(out);
    return NULL;
}
