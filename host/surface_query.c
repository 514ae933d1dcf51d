/* Inside and near queries against a closed triangle surface (see
 * surface_query.h). */
#include "surface_query.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

tw_status tw_surface_query_init(tw_surface_query *q, const tw_surface *s, double cell, const char *who)
{
    memset(q, 0, sizeof *q);
    if (!s || !s->positions || !s->triangles || s->triangle_count < 1)
        return tw_fail(TW_ERR_INVALID, "%s: the surface has no triangles", who);
    for (int v = 0; v < s->vertex_count; v++)
        for (int a = 0; a < 3; a++)
            if (!isfinite(s->positions[3 * (size_t)v + a]))
                return tw_fail(TW_ERR_INVALID, "%s: surface vertex %d has a non-finite coordinate", who, v);
    for (int t = 0; t < 3 * s->triangle_count; t++)
        if (s->triangles[t] < 0 || s->triangles[t] >= s->vertex_count)
            return tw_fail(TW_ERR_INVALID, "%s: triangle %d has vertex %d out of range [0, %d)", who, t / 3,
                           s->triangles[t], s->vertex_count);
    if (!(cell > 0) || !isfinite(cell)) return tw_fail(TW_ERR_INVALID, "%s: grid cell %g m must be positive", who, cell);
    double *boxes = tw_malloc(sizeof(double) * 6 * (size_t)s->triangle_count, "triangle boxes");
    if (!boxes) return TW_ERR_NOMEM;
    for (int t = 0; t < s->triangle_count; t++) {
        double *b = boxes + 6 * (size_t)t;
        for (int a = 0; a < 3; a++) {
            b[a] = DBL_MAX;
            b[3 + a] = -DBL_MAX;
        }
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) {
                double x = s->positions[3 * (size_t)s->triangles[3 * t + k] + a];
                if (x < b[a]) b[a] = x;
                if (x > b[3 + a]) b[3 + a] = x;
            }
    }
    tw_status st = tw_box_grid_build(&q->g, boxes, s->triangle_count, cell);
    free(boxes);
    if (st != TW_OK) return st;
    q->s = s;
    q->offset = 0.5 * cell;
    return TW_OK;
}

void tw_surface_query_free(tw_surface_query *q)
{
    if (q->s) tw_box_grid_free(&q->g);
    memset(q, 0, sizeof *q);
}

int tw_surface_query_near(const tw_surface_query *q, const double *p, double r)
{
    const tw_box_grid *g = &q->g;
    int c0[3], c1[3];
    for (int a = 0; a < 3; a++) {
        c0[a] = clampi(tw_box_grid_coord(g, a, p[a] - r), 0, g->n[a] - 1);
        c1[a] = clampi(tw_box_grid_coord(g, a, p[a] + r), 0, g->n[a] - 1);
    }
    double r2 = r * r;
    const double *X = q->s->positions;
    for (int z = c0[2]; z <= c1[2]; z++)
        for (int y = c0[1]; y <= c1[1]; y++)
            for (int x = c0[0]; x <= c1[0]; x++) {
                size_t cell = ((size_t)z * g->n[1] + y) * g->n[0] + x;
                for (int j = g->start[cell]; j < g->start[cell + 1]; j++) {
                    const int *t = q->s->triangles + 3 * (size_t)g->items[j];
                    if (tw_point_triangle_dist2(p, X + 3 * (size_t)t[0], X + 3 * (size_t)t[1], X + 3 * (size_t)t[2]) < r2)
                        return 1;
                }
            }
    return 0;
}

int tw_surface_query_inside(const tw_surface_query *q, const double *p0)
{
    const tw_box_grid *g = &q->g;
    double p[3] = {p0[0], p0[1] + 1.234567e-7 * q->offset, p0[2] + 2.718281e-7 * q->offset};
    int y = tw_box_grid_coord(g, 1, p[1]), z = tw_box_grid_coord(g, 2, p[2]);
    if (y < 0 || y >= g->n[1] || z < 0 || z >= g->n[2]) return 0;
    if (tw_box_grid_coord(g, 0, p[0]) >= g->n[0]) return 0;
    int x0 = clampi(tw_box_grid_coord(g, 0, p[0]), 0, g->n[0] - 1);
    const double *X = q->s->positions;
    int crossings = 0;
    for (int x = x0; x < g->n[0]; x++) {
        size_t cell = ((size_t)z * g->n[1] + y) * g->n[0] + x;
        for (int j = g->start[cell]; j < g->start[cell + 1]; j++) {
            const int *t = q->s->triangles + 3 * (size_t)g->items[j];
            const double *a = X + 3 * (size_t)t[0], *b = X + 3 * (size_t)t[1], *d = X + 3 * (size_t)t[2];
            /* barycentric coordinates of (p1,p2) in the triangle projected on yz */
            double wa = (b[1] - p[1]) * (d[2] - p[2]) - (b[2] - p[2]) * (d[1] - p[1]);
            double wb = (d[1] - p[1]) * (a[2] - p[2]) - (d[2] - p[2]) * (a[1] - p[1]);
            double wd = (a[1] - p[1]) * (b[2] - p[2]) - (a[2] - p[2]) * (b[1] - p[1]);
            if (!((wa >= 0 && wb >= 0 && wd >= 0) || (wa <= 0 && wb <= 0 && wd <= 0))) continue;
            double sum = wa + wb + wd;
            if (sum == 0) continue; /* edge-on */
            double xc = (wa * a[0] + wb * b[0] + wd * d[0]) / sum;
            if (xc <= p[0]) continue;
            if (clampi(tw_box_grid_coord(g, 0, xc), 0, g->n[0] - 1) != x) continue; /* counted in its own cell */
            crossings++;
        }
    }
    return crossings & 1;
}
