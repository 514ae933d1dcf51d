/* Embedding a render surface in a tet mesh: search, apply, normals.
 * The design is described at the top of embed.h. */
#include "embed.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "render_surface.h"
#include "world.h"

/* ------------------------------------------------------------ geometry */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

double tw_point_triangle_dist2(const double *p, const double *a, const double *b, const double *c)
{
    double ab[3], ac[3], ap[3], q[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
    }
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0 && d2 <= 0) return dot3(ap, ap); /* vertex a */
    double bp[3] = {p[0] - b[0], p[1] - b[1], p[2] - b[2]};
    double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0 && d4 <= d3) return dot3(bp, bp); /* vertex b */
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { /* edge ab */
        double v = d1 / (d1 - d3);
        for (int k = 0; k < 3; k++) q[k] = ap[k] - v * ab[k];
        return dot3(q, q);
    }
    double cp[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0 && d5 <= d6) return dot3(cp, cp); /* vertex c */
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { /* edge ac */
        double w = d2 / (d2 - d6);
        for (int k = 0; k < 3; k++) q[k] = ap[k] - w * ac[k];
        return dot3(q, q);
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) { /* edge bc */
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++) q[k] = bp[k] - w * (c[k] - b[k]);
        return dot3(q, q);
    }
    double den = va + vb + vc;
    if (!(den > 0)) { /* degenerate triangle: nearest of its edges' ends */
        double m = dot3(ap, ap);
        if (dot3(bp, bp) < m) m = dot3(bp, bp);
        if (dot3(cp, cp) < m) m = dot3(cp, cp);
        return m;
    }
    double v = vb / den, w = vc / den; /* inside the face */
    for (int k = 0; k < 3; k++) q[k] = ap[k] - v * ab[k] - w * ac[k];
    return dot3(q, q);
}

/* Barycentric weights of p in the tet (a,b,c,d): ratios of signed volumes. */
static void tet_barycentric(const double *p, const double *a, const double *b, const double *c,
                            const double *d, double *w)
{
    double vol = tw_tet_det(a, b, c, d);
    if (vol == 0) {
        w[0] = w[1] = w[2] = w[3] = -DBL_MAX;
        return;
    }
    w[1] = tw_tet_det(a, p, c, d) / vol;
    w[2] = tw_tet_det(a, b, p, d) / vol;
    w[3] = tw_tet_det(a, b, c, p) / vol;
    w[0] = 1.0 - w[1] - w[2] - w[3];
}

static double min4(const double *w)
{
    double m = w[0];
    for (int k = 1; k < 4; k++)
        if (w[k] < m) m = w[k];
    return m;
}

/* Distance from p (outside the tet) to the tet: to the nearest of its faces. */
static double point_tet_dist(const double *p, const double *X, const int *t)
{
    static const int face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    double best = DBL_MAX;
    for (int f = 0; f < 4; f++) {
        double d2 = tw_point_triangle_dist2(p, X + 3 * t[face[f][0]], X + 3 * t[face[f][1]], X + 3 * t[face[f][2]]);
        if (d2 < best) best = d2;
    }
    return sqrt(best);
}

/* ----------------------------------------------------------- box grid */

int tw_box_grid_coord(const tw_box_grid *g, int a, double x)
{
    double c = floor((x - g->lo[a]) / g->h);
    if (c < -1e9) return -1000000000;
    if (c > 1e9) return 1000000000;
    return (int)c;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

tw_status tw_box_grid_build(tw_box_grid *g, const double *boxes, int count, double cell)
{
    memset(g, 0, sizeof *g);
    if (count <= 0) return tw_fail(TW_ERR_INVALID, "tw_box_grid_build: no items");
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) {
            if (boxes[6 * (size_t)i + a] < lo[a]) lo[a] = boxes[6 * (size_t)i + a];
            if (boxes[6 * (size_t)i + 3 + a] > hi[a]) hi[a] = boxes[6 * (size_t)i + 3 + a];
        }
    double ext = 0;
    for (int a = 0; a < 3; a++)
        if (hi[a] - lo[a] > ext) ext = hi[a] - lo[a];
    if (!(ext > 0) || !isfinite(ext)) return tw_fail(TW_ERR_INVALID, "tw_box_grid_build: the items span no volume");
    if (!(cell > 0) || !isfinite(cell)) cell = ext / 16;
    if (cell < ext * 1e-4) cell = ext * 1e-4;
    /* at most about 8 cells per item (and 2^27 in all) */
    double limit = 8.0 * count + 64;
    if (limit > 134217728.0) limit = 134217728.0;
    for (;;) {
        double cells = 1;
        for (int a = 0; a < 3; a++) cells *= floor((hi[a] - lo[a]) / cell) + 1;
        if (cells <= limit) break;
        cell *= 1.25;
    }
    g->h = cell;
    for (int a = 0; a < 3; a++) {
        g->lo[a] = lo[a];
        g->n[a] = (int)floor((hi[a] - lo[a]) / cell) + 1;
    }
    size_t nc = (size_t)g->n[0] * g->n[1] * g->n[2];
    g->start = tw_calloc(nc + 1, sizeof *g->start, "grid cells");
    if (!g->start) return TW_ERR_NOMEM;
    /* count, prefix sum, fill: two passes over the items' cell ranges */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < count; i++) {
            const double *b = boxes + 6 * (size_t)i;
            int c0[3], c1[3];
            for (int a = 0; a < 3; a++) {
                c0[a] = clampi(tw_box_grid_coord(g, a, b[a]), 0, g->n[a] - 1);
                c1[a] = clampi(tw_box_grid_coord(g, a, b[3 + a]), 0, g->n[a] - 1);
            }
            for (int z = c0[2]; z <= c1[2]; z++)
                for (int y = c0[1]; y <= c1[1]; y++)
                    for (int x = c0[0]; x <= c1[0]; x++) {
                        size_t c = ((size_t)z * g->n[1] + y) * g->n[0] + x;
                        if (pass == 0) g->start[c + 1]++;
                        else g->items[g->start[c]++] = i;
                    }
        }
        if (pass == 0) {
            for (size_t c = 0; c < nc; c++) g->start[c + 1] += g->start[c];
            if (g->start[nc] < 0) {
                tw_box_grid_free(g);
                return tw_fail(TW_ERR_NOMEM, "tw_box_grid_build: too many cell entries");
            }
            g->items = tw_malloc(sizeof *g->items * ((size_t)g->start[nc] + 1), "grid entries");
            if (!g->items) {
                tw_box_grid_free(g);
                return TW_ERR_NOMEM;
            }
        }
    }
    /* the fill pass advanced each start to the next cell's: shift back */
    for (size_t c = nc; c > 0; c--) g->start[c] = g->start[c - 1];
    g->start[0] = 0;
    return TW_OK;
}

void tw_box_grid_free(tw_box_grid *g)
{
    if (!g) return;
    free(g->start);
    free(g->items);
    g->start = g->items = NULL;
}

/* ----------------------------------------------------------- embedding */

/* What the search found for one point. */
typedef struct hit {
    int tet;
    double dist;     /* 0 inside */
    double minw;     /* smallest barycentric weight */
    double w[4];
} hit;

/* Candidate c replaces best when nearer (beyond tol), or as near and less
 * extrapolated (larger smallest weight): a point nearest to a shared edge
 * takes the tet that extrapolates least. */
static int better(const hit *c, const hit *best, double tol)
{
    if (best->tet < 0) return 1;
    if (c->dist < best->dist - tol) return 1;
    if (c->dist <= best->dist + tol && c->minw > best->minw) return 1;
    return 0;
}

static void test_tet(const tw_mesh *m, const double *p, int e, hit *out)
{
    const int *t = m->tets + 4 * (size_t)e;
    const double *X = m->X;
    out->tet = e;
    tet_barycentric(p, X + 3 * t[0], X + 3 * t[1], X + 3 * t[2], X + 3 * t[3], out->w);
    out->minw = min4(out->w);
    out->dist = out->minw >= 0 ? 0.0 : point_tet_dist(p, X, t);
}

/* The search structures: a grid over the tets (for the containing tet) and
 * one over the boundary faces (for the nearest tet of an outside point: its
 * nearest point on the mesh lies on a boundary face). */
typedef struct search {
    const tw_mesh *m;
    tw_box_grid tets;
    tw_box_grid faces;
    int nf;
    int *face;       /* 3 per boundary face */
    int *owner;      /* 1 per boundary face: its tet */
} search;

/* Weights of p in the tet with at least this smallest value count as inside:
 * a point on a face shared by two tets may round below 0 in both. */
#define TW_EMBED_INSIDE_EPS 1e-9

/* The containing tet of p (best->tet = -1 when p is in none). */
static void locate_inside(const search *S, const double *p, hit *best)
{
    const tw_mesh *m = S->m;
    const tw_box_grid *g = &S->tets;
    best->tet = -1;
    best->dist = DBL_MAX;
    best->minw = -DBL_MAX;
    int ci[3], in_grid = 1;
    for (int a = 0; a < 3; a++) {
        ci[a] = tw_box_grid_coord(g, a, p[a]);
        if (ci[a] < 0 || ci[a] >= g->n[a]) in_grid = 0;
    }
    /* 1. inside: the tets of p's own cell */
    if (in_grid) {
        size_t c = ((size_t)ci[2] * g->n[1] + ci[1]) * g->n[0] + ci[0];
        for (int j = g->start[c]; j < g->start[c + 1]; j++) {
            hit h;
            const int *t = m->tets + 4 * (size_t)g->items[j];
            h.tet = g->items[j];
            tet_barycentric(p, m->X + 3 * t[0], m->X + 3 * t[1], m->X + 3 * t[2], m->X + 3 * t[3], h.w);
            h.minw = min4(h.w);
            if (h.minw > best->minw) *best = h;
            if (h.minw >= 0) break;
        }
        if (best->tet >= 0 && best->minw >= -TW_EMBED_INSIDE_EPS) {
            best->dist = 0;
            return;
        }
        best->tet = -1;
        best->minw = -DBL_MAX;
    }
}

/* The nearest tet of a point p outside every tet, within limit (best->tet =
 * -1 when none is). */
static void locate_outside(const search *S, const double *p, double limit, double tol, hit *best)
{
    const tw_mesh *m = S->m;
    const tw_box_grid *g = &S->faces;
    int ci[3];
    best->tet = -1;
    best->dist = DBL_MAX;
    best->minw = -DBL_MAX;
    /* 2. outside: boundary faces by rings of growing Chebyshev radius k
     * around p's cell. Before ring k every unseen face lies outside the cube
     * of the cells within k-1, so at least `bound` away. */
    int kmin = 0, kmax = 0; /* rings before kmin miss the grid; ring kmax covers all of it */
    for (int a = 0; a < 3; a++) {
        ci[a] = tw_box_grid_coord(g, a, p[a]);
        int below = -ci[a], above = ci[a] - (g->n[a] - 1);
        int d = below > 0 ? below : above > 0 ? above : 0;
        if (d > kmin) kmin = d;
        int far = abs(ci[a]) > abs(ci[a] - (g->n[a] - 1)) ? abs(ci[a]) : abs(ci[a] - (g->n[a] - 1));
        if (far > kmax) kmax = far;
    }
    int best_face = -1;
    double best_d2 = DBL_MAX;
    for (int k = kmin; k <= kmax; k++) {
        double bound = DBL_MAX;
        if (k > 0)
            for (int a = 0; a < 3; a++) {
                double lo = g->lo[a] + (ci[a] - k + 1) * g->h, hi = g->lo[a] + (ci[a] + k) * g->h;
                double d = p[a] - lo < hi - p[a] ? p[a] - lo : hi - p[a];
                if (d < bound) bound = d;
            }
        else
            bound = 0;
        if (bound < 0) bound = 0;
        if (best_face >= 0 && sqrt(best_d2) < bound - tol) break;
        if (bound > limit) break;
        int lo[3], hi[3], empty = 0;
        for (int a = 0; a < 3; a++) {
            lo[a] = clampi(ci[a] - k, 0, g->n[a] - 1);
            hi[a] = clampi(ci[a] + k, 0, g->n[a] - 1);
            if (ci[a] + k < 0 || ci[a] - k > g->n[a] - 1) empty = 1;
        }
        if (empty) continue;
        for (int z = lo[2]; z <= hi[2]; z++)
            for (int y = lo[1]; y <= hi[1]; y++)
                for (int x = lo[0]; x <= hi[0]; x++) {
                    if (abs(x - ci[0]) != k && abs(y - ci[1]) != k && abs(z - ci[2]) != k) continue;
                    size_t c = ((size_t)z * g->n[1] + y) * g->n[0] + x;
                    for (int j = g->start[c]; j < g->start[c + 1]; j++) {
                        int f = g->items[j];
                        const int *q = S->face + 3 * (size_t)f;
                        double d2 = tw_point_triangle_dist2(p, m->X + 3 * q[0], m->X + 3 * q[1], m->X + 3 * q[2]);
                        if (d2 > best_d2 + 2 * tol * sqrt(best_d2) + tol * tol) continue;
                        /* as near as the best (within tol): keep the tet that extrapolates least */
                        hit h;
                        const int *t = m->tets + 4 * (size_t)S->owner[f];
                        h.tet = S->owner[f];
                        tet_barycentric(p, m->X + 3 * t[0], m->X + 3 * t[1], m->X + 3 * t[2], m->X + 3 * t[3], h.w);
                        h.minw = min4(h.w);
                        h.dist = sqrt(d2);
                        if (better(&h, best, tol)) {
                            *best = h;
                            best_face = f;
                            if (d2 < best_d2) best_d2 = d2;
                        }
                    }
                }
    }
    if (best->tet >= 0 && best->dist > limit) best->tet = -1;
}

/* Distance to the nearest boundary face by brute force: for the error message. */
static double nearest_dist_brute(const search *S, const double *p)
{
    double best = DBL_MAX;
    for (int f = 0; f < S->nf; f++) {
        const int *q = S->face + 3 * (size_t)f;
        double d2 = tw_point_triangle_dist2(p, S->m->X + 3 * q[0], S->m->X + 3 * q[1], S->m->X + 3 * q[2]);
        if (d2 < best) best = d2;
    }
    return sqrt(best);
}

static void search_free(search *S)
{
    tw_box_grid_free(&S->tets);
    tw_box_grid_free(&S->faces);
    free(S->face);
    free(S->owner);
}

/* Boxes of n simplices of `k` vertices each (indices in idx); the mean of
 * their largest extents goes to *mean. */
static double *simplex_boxes(const double *X, const int *idx, int n, int k, double *mean)
{
    double *boxes = tw_malloc(6 * sizeof(double) * ((size_t)n + 1), "search boxes");
    if (!boxes) return NULL;
    double sum = 0;
    for (int e = 0; e < n; e++) {
        const int *t = idx + (size_t)k * e;
        double *b = boxes + 6 * (size_t)e, ext = 0;
        for (int a = 0; a < 3; a++) {
            b[a] = DBL_MAX;
            b[3 + a] = -DBL_MAX;
            for (int j = 0; j < k; j++) {
                double x = X[3 * (size_t)t[j] + a];
                if (x < b[a]) b[a] = x;
                if (x > b[3 + a]) b[3 + a] = x;
            }
            if (b[3 + a] - b[a] > ext) ext = b[3 + a] - b[a];
        }
        sum += ext;
    }
    *mean = n > 0 ? sum / n : 0;
    return boxes;
}

static tw_status search_build(search *S, const tw_mesh *m)
{
    memset(S, 0, sizeof *S);
    S->m = m;
    double mean;
    double *boxes = simplex_boxes(m->X, m->tets, m->nt, 4, &mean);
    if (!boxes) return TW_ERR_NOMEM;
    tw_status st = tw_box_grid_build(&S->tets, boxes, m->nt, mean);
    free(boxes);
    if (st != TW_OK) return st;
    return TW_OK;
}

/* The boundary faces, their tets and their grid: built only when some point
 * lies outside every tet. */
static tw_status search_build_faces(search *S)
{
    const tw_mesh *m = S->m;
    double mean;
    double *boxes;
    tw_status st;
    S->nf = tw_mesh_boundary_faces(m, &S->face);
    if (S->nf <= 0) {
        return S->nf == 0 ? tw_fail(TW_ERR_INVALID, "tw_embed_surface: the mesh has no boundary faces") : TW_ERR_NOMEM;
    }
    /* each face's tet: among the tets of its first vertex, the one holding all three */
    int *vstart = tw_calloc((size_t)m->nv + 1, sizeof(int), "vertex tets");
    int *vtet = tw_malloc(4 * sizeof(int) * (size_t)m->nt, "vertex tets");
    S->owner = tw_malloc(sizeof(int) * (size_t)S->nf, "face owners");
    if (!vstart || !vtet || !S->owner) {
        free(vstart);
        free(vtet);
        return TW_ERR_NOMEM;
    }
    for (size_t j = 0; j < 4 * (size_t)m->nt; j++) vstart[m->tets[j] + 1]++;
    for (int i = 0; i < m->nv; i++) vstart[i + 1] += vstart[i];
    for (size_t j = 0; j < 4 * (size_t)m->nt; j++) vtet[vstart[m->tets[j]]++] = (int)(j / 4);
    for (int i = m->nv; i > 0; i--) vstart[i] = vstart[i - 1];
    vstart[0] = 0;
    for (int f = 0; f < S->nf; f++) {
        const int *q = S->face + 3 * (size_t)f;
        S->owner[f] = -1;
        for (int j = vstart[q[0]]; j < vstart[q[0] + 1] && S->owner[f] < 0; j++) {
            const int *t = m->tets + 4 * (size_t)vtet[j];
            int has = 0;
            for (int k = 0; k < 4; k++) has += (t[k] == q[1]) + (t[k] == q[2]);
            if (has == 2) S->owner[f] = vtet[j];
        }
    }
    free(vstart);
    free(vtet);
    boxes = simplex_boxes(m->X, S->face, S->nf, 3, &mean);
    if (!boxes) return TW_ERR_NOMEM;
    st = tw_box_grid_build(&S->faces, boxes, S->nf, mean);
    free(boxes);
    return st;
}

void tw_points_bbox(const double *X, int n, double *lo, double *hi)
{
    for (int a = 0; a < 3; a++) {
        lo[a] = DBL_MAX;
        hi[a] = -DBL_MAX;
    }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            if (X[3 * (size_t)i + a] < lo[a]) lo[a] = X[3 * (size_t)i + a];
            if (X[3 * (size_t)i + a] > hi[a]) hi[a] = X[3 * (size_t)i + a];
        }
}

void tw_embedding_destroy(tw_embedding *e)
{
    if (!e) return;
    free(e->tet);
    free(e->idx);
    free(e->w);
    free(e->tris);
    free(e->vt_start);
    free(e->vt_tri);
    free(e);
}

tw_embedding *tw_embed_surface(const tw_mesh *m, const tw_surface *s, double max_distance, tw_embed_report *rep)
{
    double t0 = tw_now_ms();
    if (rep) memset(rep, 0, sizeof *rep);
    if (!m || !s || !s->positions || (s->triangle_count > 0 && !s->triangles) || s->vertex_count <= 0) {
        tw_fail(TW_ERR_INVALID, "tw_embed_surface: null or empty mesh or surface");
        return NULL;
    }
    for (int i = 0; i < 3 * s->triangle_count; i++)
        if (s->triangles[i] < 0 || s->triangles[i] >= s->vertex_count) {
            tw_fail(TW_ERR_INVALID, "tw_embed_surface: triangle %d references vertex %d, the surface has %d",
                    i / 3, s->triangles[i], s->vertex_count);
            return NULL;
        }
    double mlo[3], mhi[3], slo[3], shi[3];
    tw_points_bbox(m->X, m->nv, mlo, mhi);
    tw_points_bbox(s->positions, s->vertex_count, slo, shi);
    double diag = sqrt((mhi[0] - mlo[0]) * (mhi[0] - mlo[0]) + (mhi[1] - mlo[1]) * (mhi[1] - mlo[1]) +
                       (mhi[2] - mlo[2]) * (mhi[2] - mlo[2]));
    if (!isfinite(max_distance) && max_distance != INFINITY) {
        tw_fail(TW_ERR_INVALID, "tw_embed_surface: max_distance is %g: expected a distance in m, or 0 for the default", max_distance);
        return NULL;
    }
    double limit = max_distance > 0 ? max_distance : 0.05 * diag;

    search S;
    if (search_build(&S, m) != TW_OK) return NULL;
    double t_grid = tw_now_ms();
    double ms_faces = 0;

    int nv = s->vertex_count;
    tw_embedding *E = tw_calloc(1, sizeof *E, "embedding");
    double *dist = tw_malloc(sizeof(double) * (size_t)nv, "embedding distances");
    if (E) {
        E->nv = nv;
        E->ntri = s->triangle_count;
        E->mesh_nv = m->nv;
        E->tet = tw_malloc(sizeof(int) * (size_t)nv, "embedding tets");
        E->idx = tw_malloc(4 * sizeof(int) * (size_t)nv, "embedding indices");
        E->w = tw_malloc(4 * sizeof(float) * (size_t)nv, "embedding weights");
        E->tris = tw_malloc(3 * sizeof(int) * ((size_t)E->ntri + 1), "embedding triangles");
        E->vt_start = tw_calloc((size_t)nv + 1, sizeof(int), "embedding vertex triangles");
        E->vt_tri = tw_malloc(3 * sizeof(int) * ((size_t)E->ntri + 1), "embedding vertex triangles");
    }
    if (!E || !dist || !E->tet || !E->idx || !E->w || !E->tris || !E->vt_start || !E->vt_tri) {
        tw_embedding_destroy(E);
        free(dist);
        search_free(&S);
        return NULL;
    }
    double tol = 1e-12 * diag;
    double min_w = DBL_MAX;
    int n_out = 0;
    /* 1. the containing tet of every vertex */
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : n_out)
    for (int i = 0; i < nv; i++) {
        hit h;
        locate_inside(&S, s->positions + 3 * (size_t)i, &h);
        E->tet[i] = h.tet;
        dist[i] = 0;
        if (h.tet < 0) {
            n_out++;
            continue;
        }
        const int *t = m->tets + 4 * (size_t)h.tet;
        for (int k = 0; k < 4; k++) {
            E->idx[4 * (size_t)i + k] = t[k];
            E->w[4 * (size_t)i + k] = (float)h.w[k];
        }
    }
    /* 2. the nearest tet of the vertices outside every tet */
    if (n_out > 0) {
        double tf = tw_now_ms();
        tw_status fs = search_build_faces(&S);
        ms_faces = tw_now_ms() - tf;
        if (fs != TW_OK) {
            tw_embedding_destroy(E);
            free(dist);
            search_free(&S);
            return NULL;
        }
#pragma omp parallel for schedule(dynamic, 64)
        for (int i = 0; i < nv; i++) {
            if (E->tet[i] >= 0) continue;
            hit h;
            locate_outside(&S, s->positions + 3 * (size_t)i, limit, tol, &h);
            dist[i] = h.tet >= 0 ? h.dist : DBL_MAX;
            E->tet[i] = h.tet;
            if (h.tet < 0) continue;
            const int *t = m->tets + 4 * (size_t)h.tet;
            for (int k = 0; k < 4; k++) {
                E->idx[4 * (size_t)i + k] = t[k];
                E->w[4 * (size_t)i + k] = (float)h.w[k];
            }
        }
    }
    for (int i = 0; i < 4 * nv; i++)
        if (E->tet[i / 4] >= 0 && E->w[i] < min_w) min_w = E->w[i];
    int inside = 0, outside = 0, far = -1;
    double maxd = 0;
    for (int i = 0; i < nv; i++) {
        if (E->tet[i] < 0) {
            const double *p = s->positions + 3 * (size_t)i;
            double d = nearest_dist_brute(&S, p);
            tw_fail(TW_ERR_INVALID,
                    "surface vertex %d at (%g, %g, %g) is %.3g m from the nearest tet (limit %.3g m): the surface "
                    "does not fit the mesh (surface box (%g, %g, %g)-(%g, %g, %g), mesh box (%g, %g, %g)-(%g, %g, %g): "
                    "check units and frame)",
                    i, p[0], p[1], p[2], d, limit, slo[0], slo[1], slo[2], shi[0], shi[1], shi[2], mlo[0], mlo[1],
                    mlo[2], mhi[0], mhi[1], mhi[2]);
            if (rep) {
                rep->vertices = nv;
                rep->limit = limit;
                rep->farthest_vertex = i;
                rep->max_distance = d;
                rep->ms = tw_now_ms() - t0;
            }
            free(dist);
            search_free(&S);
            tw_embedding_destroy(E);
            return NULL;
        }
        if (dist[i] > 0) {
            outside++;
            if (dist[i] > maxd || far < 0) {
                maxd = dist[i] > maxd ? dist[i] : maxd;
                far = i;
            }
        } else {
            inside++;
        }
    }
    free(dist);
    search_free(&S);
    /* triangles and the vertex -> triangles CSR for normals */
    if (E->ntri > 0) memcpy(E->tris, s->triangles, 3 * sizeof(int) * (size_t)E->ntri);
    tw_vertex_triangles(nv, E->tris, E->ntri, E->vt_start, E->vt_tri);
    if (rep) {
        rep->vertices = nv;
        rep->inside = inside;
        rep->outside = outside;
        rep->max_distance = maxd;
        rep->farthest_vertex = outside ? far : -1;
        rep->min_weight = min_w;
        rep->limit = limit;
        for (int a = 0; a < 3; a++) rep->grid_cells[a] = S.tets.n[a];
        rep->ms_tet_grid = t_grid - t0;
        rep->ms_boundary = ms_faces;
        rep->ms = tw_now_ms() - t0;
    }
    return E;
}

int tw_embedding_vertex_count(const tw_embedding *e) { return e ? e->nv : 0; }
int tw_embedding_triangle_count(const tw_embedding *e) { return e ? e->ntri : 0; }
const int *tw_embedding_triangles(const tw_embedding *e) { return e ? e->tris : NULL; }
const int *tw_embedding_tets(const tw_embedding *e) { return e ? e->tet : NULL; }
const int *tw_embedding_indices(const tw_embedding *e) { return e ? e->idx : NULL; }
const float *tw_embedding_weights(const tw_embedding *e) { return e ? e->w : NULL; }

void tw_embedding_apply(const tw_embedding *e, const tw_real *tet_positions, float *out_xyz)
{
    if (!e || !tet_positions || !out_xyz) return;
    const int n = e->nv;
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++) tw_embed_vertex(e->idx + 4 * (size_t)i, e->w + 4 * (size_t)i, tet_positions, out_xyz + 3 * (size_t)i);
}

void tw_embedding_normals(const tw_embedding *e, const float *xyz, float *out_normals)
{
    if (!e || !xyz || !out_normals) return;
    const int n = e->nv;
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++)
        tw_embed_normal(e->vt_tri + e->vt_start[i], e->vt_start[i + 1] - e->vt_start[i], e->tris, xyz,
                        out_normals + 3 * (size_t)i);
}
