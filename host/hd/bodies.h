/* Contact between bodies, per vertex: the nearest triangle of another body
 * and its signed distance and normal (the design is at the top of
 * host/contact_bodies.c). TW_HD inline over a plain view, C11 and nvcc
 * alike (see hd.h): contact_bodies.c calls it in its loop over the surface
 * vertices, and a kernel would call it on one thread. */
#ifndef TW_BODIES_HD_H
#define TW_BODIES_HD_H
#include <math.h>

#include "hd/bvh.h"

typedef struct tw_bodies_view {
    int nbodies;
    const int *vbody;           /* per vertex: its body */
    const int *tris;            /* 3 per surface triangle, grouped by body */
    const int *tri_ptr;         /* nbodies + 1 */
    const int *tri_nbr;         /* 3 per triangle: across the edge opposite corner k, -1 none */
    const double *fn;           /* 3 per triangle: unit normals at x */
    const double *vn;           /* 3 per vertex: angle-weighted normals at x */
    const unsigned char *owns;  /* nbodies^2: A's vertices hold against B's triangles */
    const tw_bvh_view *bvh;     /* per body, over that body's triangles (indices local to it) */
    const tw_real *x;
    double size;                /* the world's size, m */
} tw_bodies_view;

/* The pseudo-normal (Baerentzen & Aanaes 2005) at the closest point of
 * triangle t with weights w: exact zeros and ones (hd/bvh.h's closest point)
 * mark the edges and corners. */
TW_HD void tw_body_pseudo_normal(const tw_bodies_view *v, int t, const double w[3], double nn[3])
{
    int zeros = (w[0] == 0) + (w[1] == 0) + (w[2] == 0);
    const double *f = v->fn + 3 * (size_t)t;
    if (zeros == 2) {
        int j = w[0] == 1 ? 0 : w[1] == 1 ? 1 : 2;
        const double *c = v->vn + 3 * (size_t)v->tris[3 * (size_t)t + j];
        for (int a = 0; a < 3; a++) nn[a] = c[a];
    } else if (zeros == 1) {
        int k = w[0] == 0 ? 0 : w[1] == 0 ? 1 : 2, s = v->tri_nbr[3 * (size_t)t + k];
        for (int a = 0; a < 3; a++) nn[a] = f[a] + (s >= 0 ? v->fn[3 * (size_t)s + a] : 0);
    } else {
        for (int a = 0; a < 3; a++) nn[a] = f[a];
    }
    double l = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
    for (int a = 0; a < 3; a++) nn[a] = l > 0 ? nn[a] / l : f[a];
}

/* Vertex i's nearest triangle of another body closer than r (m): its index
 * in v->tris (-1 none), weights w, signed distance *d (negative inside) and
 * outward unit normal nn. Against a body whose contacts vertex i's body does
 * not hold (v->owns) the distance counts `slack` m more (the vertex joins
 * only that deep), unless `all`. */
TW_HD int tw_body_nearest(const tw_bodies_view *v, int i, double r, int all, double slack, double w[3], double *d,
                          double nn[3])
{
    double p[3] = {v->x[3 * (size_t)i], v->x[3 * (size_t)i + 1], v->x[3 * (size_t)i + 2]};
    int best = -1, A = v->vbody[i];
    *d = INFINITY;
    for (int k = 0; k < v->nbodies; k++) {
        if (k == A) continue;
        double tw[3], q[3], e;
        int t = tw_bvh_nearest(&v->bvh[k], p, r * r, tw, q, &e);
        if (t < 0) continue;
        t += v->tri_ptr[k];
        double pn[3], s = 0, dist = sqrt(e);
        tw_body_pseudo_normal(v, t, tw, pn);
        for (int a = 0; a < 3; a++) s += (p[a] - q[a]) * pn[a];
        int inside = s < 0;
        double dk = inside ? -dist : dist;
        if (!all && !v->owns[A * v->nbodies + k]) dk += slack;
        if (!(dk < *d)) continue;
        best = t;
        *d = dk;
        for (int a = 0; a < 3; a++) {
            w[a] = tw[a];
            nn[a] = dist > 1e-9 * v->size ? (inside ? q[a] - p[a] : p[a] - q[a]) / dist : pn[a];
        }
    }
    return best;
}
#endif
