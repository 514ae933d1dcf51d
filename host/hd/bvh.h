/* A bounding-volume hierarchy over surface triangles, the per-item math:
 * closest point on a triangle, a box's distance, and the nearest-triangle
 * query. TW_HD inline (C11 and nvcc alike, see hd.h): host/bvh.c builds and
 * refits the tree and host/contact_bodies.c queries it per surface vertex.
 *
 * Layout: nodes in depth-first order (a child after its parent, so a refit
 * runs over the nodes backwards); node k has an axis-aligned box box[6k..]
 * (min xyz, max xyz) and child[2k], child[2k+1]: two node indices, or, for a
 * leaf, -1 - first and the count of its items in items[] (triangle indices
 * into tris, 3 vertex indices each). Positions are the world's tw_real x. */
#ifndef TW_BVH_HD_H
#define TW_BVH_HD_H
#include <math.h>

#include "hd/hd.h"

#define TW_BVH_LEAF 4   /* items per leaf at most */
#define TW_BVH_STACK 64 /* traversal stack: depth of a median-split tree of 2^60 leaves */

typedef struct tw_bvh_view {
    const double *box;  /* 6 per node */
    const int *child;   /* 2 per node */
    const int *items;   /* triangle indices, leaf order */
    const int *tris;    /* 3 vertex indices per triangle */
    const tw_real *x;   /* positions, 3 per vertex */
} tw_bvh_view;

/* The point of triangle (a, b, c) closest to p, in q, and its barycentric
 * weights w (summing to 1); returns |p - q|^2 (Ericson, Real-Time Collision
 * Detection, 5.1.5). */
TW_HD double tw_closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                    double w[3], double q[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k]; ac[k] = c[k] - a[k]; ap[k] = p[k] - a[k];
        bp[k] = p[k] - b[k]; cp[k] = p[k] - c[k];
    }
    double d1 = ab[0] * ap[0] + ab[1] * ap[1] + ab[2] * ap[2], d2 = ac[0] * ap[0] + ac[1] * ap[1] + ac[2] * ap[2];
    double d3 = ab[0] * bp[0] + ab[1] * bp[1] + ab[2] * bp[2], d4 = ac[0] * bp[0] + ac[1] * bp[1] + ac[2] * bp[2];
    double d5 = ab[0] * cp[0] + ab[1] * cp[1] + ab[2] * cp[2], d6 = ac[0] * cp[0] + ac[1] * cp[1] + ac[2] * cp[2];
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    if (d1 <= 0 && d2 <= 0) { w[0] = 1; w[1] = 0; w[2] = 0; }
    else if (d3 >= 0 && d4 <= d3) { w[0] = 0; w[1] = 1; w[2] = 0; }
    else if (vc <= 0 && d1 >= 0 && d3 <= 0) { double t = d1 / (d1 - d3); w[0] = 1 - t; w[1] = t; w[2] = 0; }
    else if (d6 >= 0 && d5 <= d6) { w[0] = 0; w[1] = 0; w[2] = 1; }
    else if (vb <= 0 && d2 >= 0 && d6 <= 0) { double t = d2 / (d2 - d6); w[0] = 1 - t; w[1] = 0; w[2] = t; }
    else if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        w[0] = 0; w[1] = 1 - t; w[2] = t;
    } else {
        double den = 1 / (va + vb + vc), v = vb * den, u = vc * den;
        w[0] = 1 - v - u; w[1] = v; w[2] = u;
    }
    double d2s = 0;
    for (int k = 0; k < 3; k++) {
        q[k] = w[0] * a[k] + w[1] * b[k] + w[2] * c[k];
        d2s += (p[k] - q[k]) * (p[k] - q[k]);
    }
    return d2s;
}

/* |p - box|^2 (0 inside). */
TW_HD double tw_box_dist2(const double *box, const double p[3])
{
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        double e = p[k] < box[k] ? box[k] - p[k] : p[k] > box[3 + k] ? p[k] - box[3 + k] : 0;
        d2 += e * e;
    }
    return d2;
}

/* A triangle's corners as doubles. */
TW_HD void tw_bvh_corners(const tw_bvh_view *v, int t, double a[3], double b[3], double c[3])
{
    const int *T = v->tris + 3 * (size_t)t;
    for (int k = 0; k < 3; k++) {
        a[k] = v->x[3 * (size_t)T[0] + k];
        b[k] = v->x[3 * (size_t)T[1] + k];
        c[k] = v->x[3 * (size_t)T[2] + k];
    }
}

/* The triangle nearest to p closer than sqrt(r2): its index (-1 when none),
 * barycentric weights w and closest point q; *d2 its squared distance. Ties
 * go to the triangle met first in the tree's order, the same on every run.
 * Branch and bound: a node is opened only when its box is closer than the
 * best so far, the nearer child first. */
TW_HD int tw_bvh_nearest(const tw_bvh_view *v, const double p[3], double r2, double w[3], double q[3], double *d2)
{
    int stack[TW_BVH_STACK], top = 0, best = -1;
    double bw[3] = {0, 0, 0}, bq[3] = {0, 0, 0};
    if (!(tw_box_dist2(v->box, p) < r2)) { *d2 = r2; return -1; }
    stack[top++] = 0;
    while (top > 0) {
        int k = stack[--top];
        if (!(tw_box_dist2(v->box + 6 * (size_t)k, p) < r2)) continue;
        int c0 = v->child[2 * (size_t)k], c1 = v->child[2 * (size_t)k + 1];
        if (c0 < 0) {
            for (int j = -1 - c0; j < -1 - c0 + c1; j++) {
                int t = v->items[j];
                double a[3], b[3], c[3], tw[3], tq[3];
                tw_bvh_corners(v, t, a, b, c);
                double e = tw_closest_on_triangle(p, a, b, c, tw, tq);
                if (e < r2) {
                    r2 = e;
                    best = t;
                    for (int m = 0; m < 3; m++) { bw[m] = tw[m]; bq[m] = tq[m]; }
                }
            }
            continue;
        }
        double e0 = tw_box_dist2(v->box + 6 * (size_t)c0, p), e1 = tw_box_dist2(v->box + 6 * (size_t)c1, p);
        if (top + 2 > TW_BVH_STACK) continue; /* deeper than any median-split tree */
        if (e0 <= e1) { /* the nearer one popped first */
            if (e1 < r2) stack[top++] = c1;
            if (e0 < r2) stack[top++] = c0;
        } else {
            if (e0 < r2) stack[top++] = c0;
            if (e1 < r2) stack[top++] = c1;
        }
    }
    for (int m = 0; m < 3; m++) { w[m] = bw[m]; q[m] = bq[m]; }
    *d2 = r2;
    return best;
}
#endif
