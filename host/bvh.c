/* Building and refitting the triangle BVH (bvh.h). */
#include "bvh.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* qsort has no context argument in C11: the centroids and the axis of the
 * current split, per thread */
static _Thread_local const double *g_cen;
static _Thread_local int g_axis;

static int cmp_centroid(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    double ca = g_cen[3 * (size_t)a + g_axis], cb = g_cen[3 * (size_t)b + g_axis];
    if (ca < cb) return -1;
    if (ca > cb) return 1;
    return a - b; /* a total order: the same tree on every platform */
}

static void tri_box(const tw_bvh *b, int t, const tw_real *x, double *box)
{
    const int *T = b->tris + 3 * (size_t)t;
    for (int k = 0; k < 3; k++) {
        box[k] = 1e300;
        box[3 + k] = -1e300;
    }
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) {
            double v = x[3 * (size_t)T[j] + k];
            if (v < box[k]) box[k] = v;
            if (v > box[3 + k]) box[3 + k] = v;
        }
}

static void box_union(double *out, const double *a, const double *b)
{
    for (int k = 0; k < 3; k++) {
        out[k] = a[k] < b[k] ? a[k] : b[k];
        out[3 + k] = a[3 + k] > b[3 + k] ? a[3 + k] : b[3 + k];
    }
}

static double box_area(const double *b)
{
    double e0 = b[3] - b[0], e1 = b[4] - b[1], e2 = b[5] - b[2];
    return 2 * (e0 * e1 + e1 * e2 + e2 * e0);
}

/* Node for items[first, first + n): recursion depth is log2(count / leaf). */
static int build_node(tw_bvh *b, const double *cen, int first, int n)
{
    int k = b->nnodes++;
    if (n <= TW_BVH_LEAF) {
        b->child[2 * k] = -1 - first;
        b->child[2 * k + 1] = n;
        return k;
    }
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int j = first; j < first + n; j++)
        for (int a = 0; a < 3; a++) {
            double c = cen[3 * (size_t)b->items[j] + a];
            if (c < lo[a]) lo[a] = c;
            if (c > hi[a]) hi[a] = c;
        }
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
    g_cen = cen;
    g_axis = axis;
    qsort(b->items + first, (size_t)n, sizeof(int), cmp_centroid);
    int half = n / 2;
    int l = build_node(b, cen, first, half);
    int r = build_node(b, cen, first + half, n - half);
    b->child[2 * k] = l;
    b->child[2 * k + 1] = r;
    return k;
}

tw_status tw_bvh_build(tw_bvh *b, const int *tris, int count, const tw_real *x)
{
    tw_bvh_free(b);
    if (count < 1) return tw_fail(TW_ERR_INVALID, "tw_bvh_build: no triangles");
    b->count = count;
    b->tris = tris;
    size_t maxn = 2 * (size_t)count;
    b->box = tw_malloc(sizeof(double) * 6 * maxn, "BVH boxes");
    b->child = tw_malloc(sizeof(int) * 2 * maxn, "BVH nodes");
    b->items = tw_malloc(sizeof(int) * (size_t)count, "BVH items");
    double *cen = tw_malloc(sizeof(double) * 3 * (size_t)count, "BVH centroids");
    if (!b->box || !b->child || !b->items || !cen) {
        free(cen);
        tw_bvh_free(b);
        return TW_ERR_NOMEM;
    }
    for (int t = 0; t < count; t++) {
        b->items[t] = t;
        for (int a = 0; a < 3; a++) {
            double s = 0;
            for (int j = 0; j < 3; j++) s += x[3 * (size_t)tris[3 * t + j] + a];
            cen[3 * (size_t)t + a] = s / 3;
        }
    }
    b->nnodes = 0;
    build_node(b, cen, 0, count);
    free(cen);
    tw_bvh_refit(b, x);
    b->area_built = b->area;
    return TW_OK;
}

int tw_bvh_refit(tw_bvh *b, const tw_real *x)
{
    double area = 0;
    for (int k = b->nnodes - 1; k >= 0; k--) { /* children after parents */
        double *box = b->box + 6 * (size_t)k;
        int c0 = b->child[2 * k], c1 = b->child[2 * k + 1];
        if (c0 < 0) {
            tri_box(b, b->items[-1 - c0], x, box);
            for (int j = 1; j < c1; j++) {
                double tb[6];
                tri_box(b, b->items[-1 - c0 + j], x, tb);
                box_union(box, box, tb);
            }
        } else {
            box_union(box, b->box + 6 * (size_t)c0, b->box + 6 * (size_t)c1);
        }
        area += box_area(box);
    }
    b->area = area;
    return b->area_built > 0 && area > 2 * b->area_built;
}

void tw_bvh_free(tw_bvh *b)
{
    free(b->box);
    free(b->child);
    free(b->items);
    memset(b, 0, sizeof *b);
}

tw_bvh_view tw_bvh_view_of(const tw_bvh *b, const tw_real *x)
{
    tw_bvh_view v;
    v.box = b->box;
    v.child = b->child;
    v.items = b->items;
    v.tris = b->tris;
    v.x = x;
    return v;
}
