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

#include "hd/hd.h"
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

/* The embedded position of one surface vertex: the weighted sum of its tet's
 * current positions x (3 per mesh vertex). The CPU loop body; a CUDA kernel
 * calls it with one thread per surface vertex. */
TW_HD void tw_embed_vertex(const int *idx, const float *w, const tw_real *x, float *out)
{
    const tw_real *a = x + 3 * idx[0], *b = x + 3 * idx[1], *c = x + 3 * idx[2], *d = x + 3 * idx[3];
    for (int k = 0; k < 3; k++)
        out[k] = (float)(w[0] * a[k] + w[1] * b[k] + w[2] * c[k] + w[3] * d[k]);
}

/* The area-weighted normal of one vertex: the sum of the cross products
 * (2 x area x unit normal) of its triangles, normalized; zero when they all
 * have zero area. tri: the vertex's `count` triangle ids into tris. */
TW_HD void tw_embed_normal(const int *tri, int count, const int *tris, const float *xyz, float *out)
{
    float n[3] = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < count; j++) {
        const int *t = tris + 3 * tri[j];
        const float *a = xyz + 3 * t[0], *b = xyz + 3 * t[1], *c = xyz + 3 * t[2];
        float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        n[0] += u[1] * v[2] - u[2] * v[1];
        n[1] += u[2] * v[0] - u[0] * v[2];
        n[2] += u[0] * v[1] - u[1] * v[0];
    }
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    float s = len > 0.0f ? 1.0f / len : 0.0f;
    out[0] = n[0] * s;
    out[1] = n[1] * s;
    out[2] = n[2] * s;
}

/* Squared distance from p to the triangle (a,b,c) (Ericson, Real-Time
 * Collision Detection §5.1.5). */
double tw_point_triangle_dist2(const double *p, const double *a, const double *b, const double *c);

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
