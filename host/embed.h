/* Embedding a render surface in a tet mesh (Müller 2002 §4.3), and the
 * geometry it shares with bone cores (bone.c).
 *
 * Each surface vertex keeps the 4 vertex indices of its tet and 4 barycentric
 * weights; its position is then the same weighted sum of the tet's current
 * positions. A vertex inside a tet has weights in [0,1]; one slightly outside
 * every tet keeps the weights of its original position with respect to the
 * nearest tet (some negative: a linear extrapolation), so the surface is
 * reproduced exactly at rest and moves rigidly with a rigidly moved mesh.
 *
 * Search: a uniform grid over the elements' bounding boxes (tw_box_grid),
 * each cell listing the elements whose box overlaps it. A point is tested
 * against the elements of its cell; a point in none of them is outside the
 * mesh and the nearest element is found by rings of cells of growing
 * Chebyshev radius k, stopping when the best distance is below k*h (every
 * element not yet seen lies at least that far) or k*h passes the limit. */
#ifndef TW_EMBED_H
#define TW_EMBED_H
#include <math.h>

#include "hd/render.h" /* tw_embed_vertex, tw_embed_normal */
#include "tetwarp.h"

struct tw_embedding {
    int nv;          /* surface vertices */
    int ntri;        /* surface triangles */
    int mesh_nv;     /* vertices of the tet mesh it was built for */
    int *tet;        /* nv: containing (or nearest) tet */
    int *idx;        /* 4*nv: that tet's vertex indices */
    float *w;        /* 4*nv: barycentric weights (sum 1) */
    int *tris;       /* 3*ntri */
    int *vt_start;   /* nv+1: CSR of the triangles around each vertex (normals) */
    int *vt_tri;
};


/* Squared distance from p to the triangle (a,b,c) (Ericson, Real-Time
 * Collision Detection §5.1.5). */
double tw_point_triangle_dist2(const double *p, const double *a, const double *b, const double *c);

/* The axis-aligned bounding box of n points (3 coordinates each): lo and hi,
 * 3 each (DBL_MAX and -DBL_MAX where n is 0). */
void tw_points_bbox(const double *X, int n, double *lo, double *hi);

/* A uniform grid over axis-aligned boxes: cell (i,j,k) lists the items whose
 * box overlaps it, as CSR (start has n[0]*n[1]*n[2]+1 entries). */
typedef struct tw_box_grid {
    double lo[3], h;  /* origin and cell size, m */
    int n[3];
    int *start, *items;
} tw_box_grid;

/* boxes: 6 per item (min xyz, max xyz). cell: the wanted cell size (m); it is
 * enlarged when the grid would exceed about 8 cells per item. */
tw_status tw_box_grid_build(tw_box_grid *g, const double *boxes, int count, double cell);
void tw_box_grid_free(tw_box_grid *g);
/* Cell coordinate of x along axis a, not clamped (may be outside [0,n)). */
int tw_box_grid_coord(const tw_box_grid *g, int a, double x);
#endif
