/* Non-nested levels: independent meshes of one body, related by point
 * location (the transfer P) and by Voronoi regions (each fine vertex's
 * nearest coarse vertex, its parent, as in Debunne, Desbrun, Cani and Barr
 * 2001, "Dynamic real-time deformations using space and time adaptive
 * sampling", §2.2).
 *
 * Both searches go through one uniform grid over axis-aligned boxes (the
 * coarse tets' boxes, or the coarse vertices as zero-size boxes): an item is
 * listed in every cell its box overlaps, and a query walks the cells in
 * shells of growing Chebyshev radius r around the query's cell. After shell
 * r every item not yet seen lies at least r times the smallest cell side
 * away (the query's projection onto the grid's box lies in its cell, and
 * projection onto a convex set does not lengthen distances), so the walk
 * stops as soon as the best distance found is within that bound. A point
 * inside the coarse mesh is found in its own cell (shell 0) with distance
 * 0; only points outside walk further. */
#include "error.h"
#include "hierarchy.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A point counts as inside a tet when its smallest barycentric weight is at
 * least -TW_LOCATE_TOL: the rest positions of two meshes of one box put the
 * fine boundary vertices on the coarse boundary faces up to rounding. */
#define TW_LOCATE_TOL 1e-10

typedef struct tw_box_grid {
    int n[3];         /* cells per axis */
    double lo[3], h[3]; /* grid origin and cell sides */
    int *start;       /* n[0] n[1] n[2] + 1 */
    int *item;        /* start[cells] item indices, per cell ascending */
} tw_box_grid;

static void grid_free(tw_box_grid *g)
{
    free(g->start);
    free(g->item);
    memset(g, 0, sizeof *g);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static int grid_coord(const tw_box_grid *g, int d, double x)
{
    const double t = (x - g->lo[d]) / g->h[d];
    if (!(t > 0)) /* NaN lands in cell 0 */
        return 0;
    if (t >= g->n[d])
        return g->n[d] - 1;
    return (int)t;
}

/* Cells: about `items` in all, shaped like the boxes' bounding box. box is 6
 * per item (lo xyz, hi xyz). */
static tw_status grid_build(tw_box_grid *g, const double *box, int items)
{
    memset(g, 0, sizeof *g);
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int i = 0; i < items; i++)
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], box[6 * i + d]);
            hi[d] = fmax(hi[d], box[6 * i + 3 + d]);
        }
    double ext[3], vol = 1;
    int flat = 0;
    for (int d = 0; d < 3; d++) {
        ext[d] = hi[d] - lo[d];
        if (!(ext[d] > 0))
            flat++;
        else
            vol *= ext[d];
    }
    if (!isfinite(vol))
        return tw_fail(TW_ERR_INVALID, "hier_nonnested: non-finite vertex positions (box volume %g)", vol);
    /* edge of a cube cell so that the box holds about `items` cells */
    const double side = flat ? fmax(fmax(ext[0], ext[1]), ext[2]) : cbrt(vol / items);
    size_t cells = 1;
    for (int d = 0; d < 3; d++) {
        int n = side > 0 ? (int)ceil(ext[d] / side) : 1;
        n = clampi(n, 1, 256);
        g->n[d] = n;
        g->lo[d] = lo[d];
        g->h[d] = ext[d] > 0 ? ext[d] / n : 1;
        cells *= (size_t)n;
    }
    g->start = tw_calloc(cells + 1, sizeof *g->start, "hier_nonnested grid cells");
    if (!g->start)
        return TW_ERR_NOMEM;
    /* count, prefix, fill: two passes over the boxes */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < items; i++) {
            int a[3], b[3];
            for (int d = 0; d < 3; d++) {
                a[d] = grid_coord(g, d, box[6 * i + d]);
                b[d] = grid_coord(g, d, box[6 * i + 3 + d]);
            }
            for (int z = a[2]; z <= b[2]; z++)
                for (int y = a[1]; y <= b[1]; y++)
                    for (int x = a[0]; x <= b[0]; x++) {
                        const size_t c = (size_t)x + (size_t)g->n[0] * ((size_t)y + (size_t)g->n[1] * z);
                        if (pass == 0)
                            g->start[c + 1]++;
                        else
                            g->item[g->start[c]++] = i;
                    }
        }
        if (pass == 0) {
            for (size_t c = 0; c < cells; c++)
                g->start[c + 1] += g->start[c];
            g->item = tw_malloc(sizeof *g->item * ((size_t)g->start[cells] + 1), "hier_nonnested grid items");
            if (!g->item) {
                grid_free(g);
                return TW_ERR_NOMEM;
            }
        } else {
            /* the fill advanced each start to the next cell's: shift back */
            for (size_t c = cells; c > 0; c--)
                g->start[c] = g->start[c - 1];
            g->start[0] = 0;
        }
    }
    return TW_OK;
}

/* The distance from p to an item and, for a tet, its clamped weights. */
typedef double (*tw_item_dist)(const void *ctx, int item, const double *p, double *w);

/* The item nearest to p (the lowest index among equally near ones) and its
 * distance; w receives the nearest item's weights. -1 when the grid is empty. */
static int grid_nearest(const tw_box_grid *g, const double *p, tw_item_dist dist, const void *ctx,
                        double *best_d, double *w)
{
    int c0[3];
    for (int d = 0; d < 3; d++)
        c0[d] = grid_coord(g, d, p[d]);
    const double hmin = fmin(fmin(g->h[0], g->h[1]), g->h[2]);
    const int rmax = g->n[0] + g->n[1] + g->n[2];
    int best = -1;
    double bd = DBL_MAX, wt[TW_HIER_ROW];
    for (int r = 0; r <= rmax; r++) {
        for (int z = c0[2] - r; z <= c0[2] + r; z++) {
            if (z < 0 || z >= g->n[2])
                continue;
            for (int y = c0[1] - r; y <= c0[1] + r; y++) {
                if (y < 0 || y >= g->n[1])
                    continue;
                const int on_shell = abs(z - c0[2]) == r || abs(y - c0[1]) == r;
                /* inside the shell's y-z faces only x = c0 +- r is new */
                const int step = on_shell || r == 0 ? 1 : 2 * r;
                for (int x = c0[0] - r; x <= c0[0] + r; x += step) {
                    if (x < 0 || x >= g->n[0])
                        continue;
                    const size_t c = (size_t)x + (size_t)g->n[0] * ((size_t)y + (size_t)g->n[1] * z);
                    for (int k = g->start[c]; k < g->start[c + 1]; k++) {
                        const int it = g->item[k];
                        const double dd = dist(ctx, it, p, wt);
                        if (dd < bd || (dd == bd && it < best)) {
                            bd = dd;
                            best = it;
                            if (w)
                                memcpy(w, wt, sizeof wt);
                        }
                    }
                }
            }
        }
        if (best >= 0 && bd <= r * hmin)
            break;
    }
    *best_d = bd;
    return best;
}

/* ---- point location in the coarse tets */

/* The closest point of triangle (a, b, c) to p as barycentric (u, v, w) on
 * (a, b, c); returns the squared distance. Ericson, "Real-Time Collision
 * Detection", 5.1.5, by Voronoi regions of the vertices and edges. */
static double closest_on_triangle(const double *p, const double *a, const double *b, const double *c,
                                  double *bary)
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int d = 0; d < 3; d++) {
        ab[d] = b[d] - a[d];
        ac[d] = c[d] - a[d];
        ap[d] = p[d] - a[d];
        bp[d] = p[d] - b[d];
        cp[d] = p[d] - c[d];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    const double d1 = DOT(ab, ap), d2 = DOT(ac, ap);
    double u, v, w;
    if (d1 <= 0 && d2 <= 0) {
        u = 1, v = 0, w = 0;
    } else {
        const double d3 = DOT(ab, bp), d4 = DOT(ac, bp);
        const double d5 = DOT(ab, cp), d6 = DOT(ac, cp);
        const double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
        if (d3 >= 0 && d4 <= d3) {
            u = 0, v = 1, w = 0;
        } else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
            const double t = d1 / (d1 - d3);
            u = 1 - t, v = t, w = 0;
        } else if (d6 >= 0 && d5 <= d6) {
            u = 0, v = 0, w = 1;
        } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
            const double t = d2 / (d2 - d6);
            u = 1 - t, v = 0, w = t;
        } else if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
            const double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
            u = 0, v = 1 - t, w = t;
        } else {
            const double s = 1 / (va + vb + vc);
            v = vb * s, w = vc * s, u = 1 - v - w;
        }
    }
#undef DOT
    bary[0] = u, bary[1] = v, bary[2] = w;
    double e2 = 0;
    for (int d = 0; d < 3; d++) {
        const double q = u * a[d] + v * b[d] + w * c[d] - p[d];
        e2 += q * q;
    }
    return e2;
}

/* Distance from p to tet e of mesh ctx (0 inside, up to TW_LOCATE_TOL in
 * weights) and the weights: the barycentric ones inside, else those of the
 * tet's closest point to p (on a face, so in [0, 1]). */
static double tet_dist(const void *ctx, int e, const double *p, double *w)
{
    const tw_mesh *m = ctx;
    const int *t = m->tets + 4 * e;
    const double *v[4] = {m->X + 3 * t[0], m->X + 3 * t[1], m->X + 3 * t[2], m->X + 3 * t[3]};
    const double det = tw_tet_det(v[0], v[1], v[2], v[3]);
    /* weight k: the tet with vertex k replaced by p, over the whole */
    double wmin = DBL_MAX;
    for (int k = 0; k < 4; k++) {
        const double *q[4] = {v[0], v[1], v[2], v[3]};
        q[k] = p;
        w[k] = tw_tet_det(q[0], q[1], q[2], q[3]) / det;
        wmin = fmin(wmin, w[k]);
    }
    if (wmin >= -TW_LOCATE_TOL)
        return 0;
    /* outside: the nearest of the four faces (face k leaves out vertex k) */
    double best = DBL_MAX, bw[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        const int a = (k + 1) & 3, b = (k + 2) & 3, c = (k + 3) & 3;
        double bary[3];
        const double d2 = closest_on_triangle(p, v[a], v[b], v[c], bary);
        if (d2 < best) {
            best = d2;
            bw[k] = 0, bw[a] = bary[0], bw[b] = bary[1], bw[c] = bary[2];
        }
    }
    memcpy(w, bw, sizeof bw);
    /* never 0: a point just outside one tet is inside its neighbour, which
     * must win the comparison */
    return fmax(sqrt(best), DBL_MIN);
}

tw_status tw_transfer_locate(const tw_mesh *c, const tw_mesh *f, tw_transfer *P)
{
    if (!c || !f || !P)
        return tw_fail(TW_ERR_INVALID, "tw_transfer_locate: needs the coarse mesh, the fine mesh and P");
    memset(P, 0, sizeof *P);
    double *box = tw_malloc(6 * sizeof *box * (size_t)c->nt, "tw_transfer_locate tet boxes");
    if (!box)
        return TW_ERR_NOMEM;
    for (int e = 0; e < c->nt; e++)
        for (int d = 0; d < 3; d++) {
            double lo = DBL_MAX, hi = -DBL_MAX;
            for (int k = 0; k < 4; k++) {
                const double x = c->X[3 * c->tets[4 * e + k] + d];
                lo = fmin(lo, x);
                hi = fmax(hi, x);
            }
            box[6 * e + d] = lo;
            box[6 * e + 3 + d] = hi;
        }
    tw_box_grid g;
    tw_status s = grid_build(&g, box, c->nt);
    free(box);
    if (s != TW_OK)
        return s;
    P->n_fine = f->nv;
    P->n_coarse = c->nv;
    P->idx = tw_malloc(sizeof *P->idx * TW_HIER_ROW * (size_t)f->nv, "tw_transfer_locate indices");
    P->w = tw_malloc(sizeof *P->w * TW_HIER_ROW * (size_t)f->nv, "tw_transfer_locate weights");
    if (!P->idx || !P->w) {
        grid_free(&g);
        tw_transfer_free(P);
        return TW_ERR_NOMEM;
    }
    int bad = -1;
#pragma omp parallel for schedule(dynamic, 256)
    for (int i = 0; i < f->nv; i++) {
        double d, w[TW_HIER_ROW];
        const int e = grid_nearest(&g, f->X + 3 * i, tet_dist, c, &d, w);
        if (e < 0) {
#pragma omp critical(tw_locate_bad)
            bad = i;
            continue;
        }
        for (int k = 0; k < TW_HIER_ROW; k++) {
            P->idx[TW_HIER_ROW * i + k] = c->tets[4 * e + k];
            P->w[TW_HIER_ROW * i + k] = w[k];
        }
    }
    grid_free(&g);
    if (bad >= 0) {
        tw_transfer_free(P);
        return tw_fail(TW_ERR_INVALID, "tw_transfer_locate: fine vertex %d found no coarse tet", bad);
    }
    return TW_OK;
}

/* ---- Voronoi parents */

static double vertex_dist(const void *ctx, int j, const double *p, double *w)
{
    const tw_mesh *m = ctx;
    (void)w;
    if (m->unused && m->unused[j])
        return DBL_MAX;
    double s = 0;
    for (int d = 0; d < 3; d++) {
        const double q = m->X[3 * j + d] - p[d];
        s += q * q;
    }
    return sqrt(s);
}

/* parent[i] = the vertex of c nearest to vertex i of f (lowest index on a
 * tie); vertices no tet of c uses are never parents. */
static tw_status voronoi_parents(const tw_mesh *c, const tw_mesh *f, int *parent)
{
    double *box = tw_malloc(6 * sizeof *box * (size_t)c->nv, "hier_nonnested vertex boxes");
    if (!box)
        return TW_ERR_NOMEM;
    for (int j = 0; j < c->nv; j++)
        for (int d = 0; d < 3; d++)
            box[6 * j + d] = box[6 * j + 3 + d] = c->X[3 * j + d];
    tw_box_grid g;
    tw_status s = grid_build(&g, box, c->nv);
    free(box);
    if (s != TW_OK)
        return s;
#pragma omp parallel for schedule(dynamic, 256)
    for (int i = 0; i < f->nv; i++) {
        double d;
        parent[i] = grid_nearest(&g, f->X + 3 * i, vertex_dist, c, &d, NULL);
    }
    grid_free(&g);
    return TW_OK;
}

tw_hierarchy *tw_hier_nonnested(const tw_mesh *const *meshes, int n)
{
    if (!meshes || n < 1) {
        tw_fail(TW_ERR_INVALID, "tw_hier_nonnested: needs at least one mesh (n %d)", n);
        return NULL;
    }
    for (int l = 0; l < n; l++)
        if (!meshes[l]) {
            tw_fail(TW_ERR_INVALID, "tw_hier_nonnested: mesh %d is NULL", l);
            return NULL;
        }
    tw_hierarchy *h = tw_hier_alloc(TW_HIER_NONNESTED, n);
    if (!h)
        return NULL;
    for (int l = 0; l < n; l++)
        if (!(h->level[l] = tw_hier_copy_mesh(meshes[l])))
            goto fail;
    for (int l = 1; l < n; l++) {
        if (tw_transfer_locate(h->level[l - 1], h->level[l], &h->P[l - 1]) != TW_OK)
            goto fail;
        h->parent_vertex[l] = tw_malloc(sizeof(int) * (size_t)h->level[l]->nv, "tw_hier_nonnested parent map");
        if (!h->parent_vertex[l] || voronoi_parents(h->level[l - 1], h->level[l], h->parent_vertex[l]) != TW_OK)
            goto fail;
    }
    return h;
fail:
    tw_hier_free(h);
    return NULL;
}
