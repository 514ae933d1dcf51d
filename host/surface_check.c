/* Is a triangle surface fit to be tetrahedralized? Closed (every edge in two
 * triangles), manifold (no edge in more), consistently oriented (the two
 * triangles of an edge run it in opposite directions), no degenerate
 * triangles, and no two triangles crossing each other.
 *
 * Edges: the 3T directed edges are sorted by their undirected key, so each
 * undirected edge is a run of equal keys; a run of one is a boundary edge,
 * of three or more a non-manifold edge. Boundary loops are the connected
 * components of the boundary edges (union-find on their vertices).
 *
 * Self-intersections: each triangle's bounding box is binned into a uniform
 * grid whose cell is about a triangle's size; two triangles are tested only
 * where they share a cell, and only in the lowest cell their boxes share, so
 * each candidate pair is tested once. Two triangles that share no edge cross
 * when an edge of one passes strictly through the other (the ends of their
 * intersection segment lie on edges); edges ending at a shared vertex are
 * skipped, so neighbours that touch at a corner are not reported. Coplanar
 * overlaps are not detected here (TetGen reports them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesher.h"

/* The largest coordinate accepted, m: the degenerate test squares a cross
 * product, a fourth power of extents up to 2e75, which stays finite. */
#define TW_SURFACE_MAX_COORD 1e75

double tw_surface_volume(const tw_surface *s)
{
    double v = 0;
    for (int t = 0; t < s->triangle_count; t++) {
        const int *f = s->triangles + 3 * (size_t)t;
        const double *a = s->positions + 3 * (size_t)f[0];
        const double *b = s->positions + 3 * (size_t)f[1];
        const double *c = s->positions + 3 * (size_t)f[2];
        v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
             a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return v / 6.0;
}

/* ------------------------------------------------------------------ edges */

typedef struct dedge {
    long long key; /* min * nv + max */
    int from, tri;
} dedge;

static int dedge_cmp(const void *pa, const void *pb)
{
    const dedge *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->tri < b->tri ? -1 : a->tri > b->tri;
}

static int uf_find(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static tw_status check_edges(const tw_surface *s, tw_surface_check *c, int *first_boundary,
                             int *first_nonmanifold, int *first_misoriented)
{
    size_t ne = 3 * (size_t)s->triangle_count;
    long long nv = s->vertex_count;
    dedge *e = tw_malloc(ne * sizeof *e, "surface edges");
    if (!e) return TW_ERR_NOMEM;
    for (int t = 0; t < s->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            int a = s->triangles[3 * (size_t)t + k], b = s->triangles[3 * (size_t)t + (k + 1) % 3];
            dedge *d = e + 3 * (size_t)t + k;
            d->key = a < b ? a * nv + b : b * nv + a;
            d->from = a;
            d->tri = t;
        }
    qsort(e, ne, sizeof *e, dedge_cmp);
    int *parent = tw_malloc((size_t)s->vertex_count * sizeof *parent, "boundary loops");
    if (!parent) {
        free(e);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i < s->vertex_count; i++) parent[i] = -1;
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && e[j].key == e[i].key) j++;
        int a = (int)(e[i].key / nv), b = (int)(e[i].key % nv);
        if (a == b) {
            /* a degenerate triangle's collapsed edge: counted there */
        } else if (j - i == 1) {
            if (!c->boundary_edges++) first_boundary[0] = a, first_boundary[1] = b;
            if (parent[a] < 0) parent[a] = a;
            if (parent[b] < 0) parent[b] = b;
            int ra = uf_find(parent, a), rb = uf_find(parent, b);
            if (ra != rb) parent[ra] = rb;
        } else if (j - i > 2) {
            if (!c->nonmanifold_edges++) first_nonmanifold[0] = a, first_nonmanifold[1] = b;
        } else if (e[i].from == e[i + 1].from) {
            if (!c->misoriented_edges++) first_misoriented[0] = a, first_misoriented[1] = b;
        }
        i = j;
    }
    for (int i = 0; i < s->vertex_count; i++)
        if (parent[i] >= 0 && uf_find(parent, i) == i) c->boundary_loops++;
    free(parent);
    free(e);
    return TW_OK;
}

/* ------------------------------------------------------ intersections */

static double orient(const double *a, const double *b, const double *c, const double *d)
{
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

static int sgn(double x) { return (x > 0) - (x < 0); }

/* Segment pq passes strictly through the interior of triangle abc. */
static int segment_crosses(const double *p, const double *q, const double *a, const double *b,
                           const double *c)
{
    int sp = sgn(orient(a, b, c, p)), sq = sgn(orient(a, b, c, q));
    if (sp == 0 || sq == 0 || sp == sq) return 0;
    int s1 = sgn(orient(p, q, a, b)), s2 = sgn(orient(p, q, b, c)), s3 = sgn(orient(p, q, c, a));
    return s1 != 0 && s1 == s2 && s2 == s3;
}

static int shares(const int *f, int v) { return f[0] == v || f[1] == v || f[2] == v; }

/* Triangles ta and tb (sharing at most one vertex) cross. */
static int triangles_cross(const tw_surface *s, int ta, int tb)
{
    const int *fa = s->triangles + 3 * (size_t)ta, *fb = s->triangles + 3 * (size_t)tb;
    const double *X = s->positions;
    for (int pass = 0; pass < 2; pass++) {
        const int *f = pass ? fb : fa, *g = pass ? fa : fb;
        for (int k = 0; k < 3; k++) {
            int p = f[k], q = f[(k + 1) % 3];
            if (shares(g, p) || shares(g, q)) continue;
            if (segment_crosses(X + 3 * (size_t)p, X + 3 * (size_t)q, X + 3 * (size_t)g[0],
                                X + 3 * (size_t)g[1], X + 3 * (size_t)g[2]))
                return 1;
        }
    }
    return 0;
}

static tw_status check_intersections(const tw_surface *s, tw_surface_check *c)
{
    int nt = s->triangle_count;
    double *box = tw_malloc(6 * (size_t)nt * sizeof *box, "triangle boxes");
    if (!box) return TW_ERR_NOMEM;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double mean = 0;
    for (int t = 0; t < nt; t++) {
        double *b = box + 6 * (size_t)t;
        for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
        for (int j = 0; j < 3; j++) {
            const double *p = s->positions + 3 * (size_t)s->triangles[3 * (size_t)t + j];
            for (int k = 0; k < 3; k++) {
                if (p[k] < b[k]) b[k] = p[k];
                if (p[k] > b[3 + k]) b[3 + k] = p[k];
            }
        }
        double ext = 0;
        for (int k = 0; k < 3; k++) {
            if (b[k] < lo[k]) lo[k] = b[k];
            if (b[3 + k] > hi[k]) hi[k] = b[3 + k];
            if (b[3 + k] - b[k] > ext) ext = b[3 + k] - b[k];
        }
        mean += ext / nt;
    }
    /* cells about a triangle's size, at most ~4 per triangle in all; counted
     * in double and made ints only once they fit (the extents are finite,
     * tw_surface_validate checks the coordinates) */
    int dim[3];
    double cell = mean > 0 ? mean : 1;
    for (;;) {
        double cells = 1, d[3];
        for (int k = 0; k < 3; k++) {
            d[k] = floor((hi[k] - lo[k]) / cell) + 1;
            cells *= d[k];
        }
        if (cells <= 4.0 * nt + 64) {
            for (int k = 0; k < 3; k++) dim[k] = (int)d[k];
            break;
        }
        cell *= 1.26;
    }
    size_t ncell = (size_t)dim[0] * dim[1] * dim[2];
    int *range = tw_malloc(6 * (size_t)nt * sizeof *range, "triangle cell ranges");
    size_t *start = tw_calloc(ncell + 1, sizeof *start, "grid cells");
    if (!range || !start) {
        free(box);
        free(range);
        free(start);
        return TW_ERR_NOMEM;
    }
    for (int t = 0; t < nt; t++) {
        int *r = range + 6 * (size_t)t;
        for (int k = 0; k < 3; k++) {
            r[k] = (int)((box[6 * (size_t)t + k] - lo[k]) / cell);
            r[3 + k] = (int)((box[6 * (size_t)t + 3 + k] - lo[k]) / cell);
            if (r[3 + k] >= dim[k]) r[3 + k] = dim[k] - 1;
            if (r[k] > r[3 + k]) r[k] = r[3 + k];
        }
        for (int z = r[2]; z <= r[5]; z++)
            for (int y = r[1]; y <= r[4]; y++)
                for (int x = r[0]; x <= r[3]; x++)
                    start[((size_t)z * dim[1] + y) * dim[0] + x + 1]++;
    }
    for (size_t i = 0; i < ncell; i++) start[i + 1] += start[i];
    int *items = tw_malloc((start[ncell] ? start[ncell] : 1) * sizeof *items, "grid entries");
    size_t *fill = tw_malloc((ncell + 1) * sizeof *fill, "grid cells");
    if (!items || !fill) {
        free(box);
        free(range);
        free(start);
        free(items);
        free(fill);
        return TW_ERR_NOMEM;
    }
    memcpy(fill, start, (ncell + 1) * sizeof *fill);
    for (int t = 0; t < nt; t++) {
        const int *r = range + 6 * (size_t)t;
        for (int z = r[2]; z <= r[5]; z++)
            for (int y = r[1]; y <= r[4]; y++)
                for (int x = r[0]; x <= r[3]; x++) items[fill[((size_t)z * dim[1] + y) * dim[0] + x]++] = t;
    }
    for (int z = 0; z < dim[2]; z++)
        for (int y = 0; y < dim[1]; y++)
            for (int x = 0; x < dim[0]; x++) {
                size_t ci = ((size_t)z * dim[1] + y) * dim[0] + x;
                for (size_t i = start[ci]; i < start[ci + 1]; i++)
                    for (size_t j = i + 1; j < start[ci + 1]; j++) {
                        int ta = items[i], tb = items[j];
                        const double *ba = box + 6 * (size_t)ta, *bb = box + 6 * (size_t)tb;
                        int overlap = 1;
                        for (int k = 0; k < 3; k++)
                            if (ba[k] > bb[3 + k] || bb[k] > ba[3 + k]) overlap = 0;
                        if (!overlap) continue;
                        /* test in the lowest cell both boxes cover */
                        const int *ra = range + 6 * (size_t)ta, *rb = range + 6 * (size_t)tb;
                        int own[3] = {x, y, z};
                        int mine = 1;
                        for (int k = 0; k < 3; k++) {
                            int m = ra[k] > rb[k] ? ra[k] : rb[k];
                            if (m != own[k]) mine = 0;
                        }
                        if (!mine) continue;
                        const int *fa = s->triangles + 3 * (size_t)ta;
                        const int *fb = s->triangles + 3 * (size_t)tb;
                        int common = shares(fb, fa[0]) + shares(fb, fa[1]) + shares(fb, fa[2]);
                        if (common >= 2) continue;
                        if (triangles_cross(s, ta, tb)) {
                            if (!c->intersecting_pairs++) {
                                c->first_pair[0] = ta < tb ? ta : tb;
                                c->first_pair[1] = ta < tb ? tb : ta;
                            }
                        }
                    }
            }
    free(box);
    free(range);
    free(start);
    free(items);
    free(fill);
    return TW_OK;
}

/* ---------------------------------------------------------------- checks */

tw_status tw_surface_validate(const tw_surface *s, const char *name, tw_surface_check *out)
{
    tw_surface_check c;
    memset(&c, 0, sizeof c);
    c.first_edge[0] = c.first_edge[1] = c.first_triangle = c.first_pair[0] = c.first_pair[1] = -1;
    if (out) *out = c;
    if (!name) name = "surface";
    if (!s || s->triangle_count < 4 || s->vertex_count < 4)
        return tw_fail(TW_ERR_INVALID, "%s: %d triangles on %d vertices cannot enclose a volume", name,
                       s ? s->triangle_count : 0, s ? s->vertex_count : 0);

    /* values before arithmetic: vertex numbers in range, coordinates finite
     * and small enough that the products of the checks stay finite */
    for (int t = 0; t < 3 * s->triangle_count; t++)
        if (s->triangles[t] < 0 || s->triangles[t] >= s->vertex_count)
            return tw_fail(TW_ERR_INVALID, "%s: triangle %d refers to vertex %d, outside 0..%d", name,
                           t / 3, s->triangles[t], s->vertex_count - 1);
    for (int v = 0; v < s->vertex_count; v++)
        for (int k = 0; k < 3; k++) {
            double x = s->positions[3 * (size_t)v + k];
            if (!(fabs(x) <= TW_SURFACE_MAX_COORD))
                return tw_fail(TW_ERR_INVALID,
                               "%s: vertex %d (0-based) has %c = %g: expected a finite coordinate "
                               "within +-%g",
                               name, v, "xyz"[k], x, TW_SURFACE_MAX_COORD);
        }

    /* degenerate: a repeated corner or an area below rounding of the model's size */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int v = 0; v < s->vertex_count; v++)
        for (int k = 0; k < 3; k++) {
            double x = s->positions[3 * (size_t)v + k];
            if (x < lo[k]) lo[k] = x;
            if (x > hi[k]) hi[k] = x;
        }
    double diag2 = 0;
    for (int k = 0; k < 3; k++) diag2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    for (int t = 0; t < s->triangle_count; t++) {
        const int *f = s->triangles + 3 * (size_t)t;
        const double *a = s->positions + 3 * (size_t)f[0];
        const double *b = s->positions + 3 * (size_t)f[1];
        const double *p = s->positions + 3 * (size_t)f[2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double v[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        double area2 = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2] || area2 <= 1e-14 * diag2)
            if (!c.degenerate_triangles++) c.first_triangle = t;
    }

    int boundary[2] = {-1, -1}, nonmanifold[2] = {-1, -1}, misoriented[2] = {-1, -1};
    tw_status st = check_edges(s, &c, boundary, nonmanifold, misoriented);
    if (st != TW_OK) return st;
    c.volume = tw_surface_volume(s);
    if (c.boundary_edges) {
        c.first_edge[0] = boundary[0], c.first_edge[1] = boundary[1];
        st = tw_fail(TW_ERR_INVALID,
                     "%s: %d boundary edges in %d boundary loops (the first between vertices %d and %d, "
                     "0-based): the surface has holes; close them, e.g. with meshfix or MeshLab's "
                     "'close holes'",
                     name, c.boundary_edges, c.boundary_loops, boundary[0], boundary[1]);
    } else if (c.nonmanifold_edges) {
        c.first_edge[0] = nonmanifold[0], c.first_edge[1] = nonmanifold[1];
        st = tw_fail(TW_ERR_INVALID,
                     "%s: %d non-manifold edges (in more than two triangles; the first between "
                     "vertices %d and %d, 0-based): separate the touching parts, e.g. with MeshLab's "
                     "'repair non manifold edges'",
                     name, c.nonmanifold_edges, nonmanifold[0], nonmanifold[1]);
    } else if (c.misoriented_edges) {
        c.first_edge[0] = misoriented[0], c.first_edge[1] = misoriented[1];
        st = tw_fail(TW_ERR_INVALID,
                     "%s: inconsistent orientation: %d edges are run the same way by both their "
                     "triangles (the first between vertices %d and %d, 0-based); reorient the faces "
                     "coherently, e.g. with MeshLab's 're-orient all faces coherently'",
                     name, c.misoriented_edges, misoriented[0], misoriented[1]);
    } else if (c.degenerate_triangles) {
        const int *f = s->triangles + 3 * (size_t)c.first_triangle;
        st = tw_fail(TW_ERR_INVALID,
                     "%s: %d degenerate triangles (zero area or a repeated corner; the first is "
                     "triangle %d, vertices %d %d %d, 0-based): remove them, e.g. with MeshLab's "
                     "'remove zero area faces'",
                     name, c.degenerate_triangles, c.first_triangle, f[0], f[1], f[2]);
    } else {
        st = check_intersections(s, &c);
        if (st == TW_OK && c.intersecting_pairs)
            st = tw_fail(TW_ERR_INVALID,
                         "%s: the surface intersects itself: %d pairs of crossing triangles (the "
                         "first: triangles %d and %d, 0-based); fix it, e.g. with meshfix or "
                         "MeshLab's 'select self intersecting faces'",
                         name, c.intersecting_pairs, c.first_pair[0], c.first_pair[1]);
    }
    if (out) *out = c;
    return st;
}
