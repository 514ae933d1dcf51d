/* A bounding-volume hierarchy over a set of surface triangles (the layout
 * and the query are in hd/bvh.h): built by median splits along the longest
 * axis of the triangles' centroids, refitted to moved positions each step,
 * and rebuilt when the refitted boxes have grown: the tree's shape stays
 * that of the positions it was built at, so after a large motion (a body
 * turned over) the refitted boxes overlap and a query opens many nodes. */
#ifndef TW_BVH_H
#define TW_BVH_H
#include "hd/bvh.h"
#include "tetwarp.h"

typedef struct tw_bvh {
    int count;        /* triangles */
    int nnodes;
    const int *tris;  /* 3 vertex indices per triangle (not owned) */
    double *box;      /* 6 per node */
    int *child;       /* 2 per node (hd/bvh.h) */
    int *items;       /* count: triangle indices in leaf order */
    double area_built; /* the summed surface area of the node boxes right after the last build, m^2 */
    double area;       /* the same after the last refit */
} tw_bvh;

/* Builds the tree over `count` triangles (tris: 3 vertex indices each, kept
 * by pointer) at positions x. count >= 1. */
tw_status tw_bvh_build(tw_bvh *b, const int *tris, int count, const tw_real *x);
/* The boxes refitted to positions x (the tree unchanged); returns 1 when
 * the boxes' summed area has more than doubled since the build (the caller
 * rebuilds). */
int tw_bvh_refit(tw_bvh *b, const tw_real *x);
void tw_bvh_free(tw_bvh *b);
/* The view the query reads (hd/bvh.h), at positions x. */
tw_bvh_view tw_bvh_view_of(const tw_bvh *b, const tw_real *x);
#endif
