/* The per-vertex arithmetic of a drawn surface, shared by the CPU
 * (embed.c, render_surface.c) and the CUDA-GL kernel (interop/cuda_gl.cu):
 * an embedded vertex's position from its tet, a vertex's area-weighted
 * normal from its triangles, and the plain struct a kernel gets a copy of
 * (its arrays on the device). render_surface.h builds and updates it. */
#ifndef TW_HD_RENDER_H
#define TW_HD_RENDER_H
#include <math.h>

#include "hd/hd.h"
#include "tetwarp.h"

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

typedef struct tw_render_surface {
    int nv;        /* render vertices */
    int ntri;      /* triangles */
    int mesh_nv;   /* vertices of the tet mesh it follows */
    int *tris;     /* 3*ntri */
    int *idx;      /* embedded: 4*nv tet vertex indices; NULL: render vertex i is mesh vertex i */
    float *w;      /* embedded: 4*nv barycentric weights; NULL for the boundary */
    int *vt_start; /* nv+1: CSR of the triangles around each vertex */
    int *vt_tri;   /* 3*ntri */
} tw_render_surface;

/* Render vertex i's position from the tet mesh positions x (3 per mesh vertex). */
TW_HD void tw_render_position(const tw_render_surface *s, int i, const tw_real *x, float *out)
{
    if (s->idx) {
        tw_embed_vertex(s->idx + 4 * i, s->w + 4 * i, x, out);
    } else {
        out[0] = (float)x[3 * i];
        out[1] = (float)x[3 * i + 1];
        out[2] = (float)x[3 * i + 2];
    }
}

/* Render vertex i's unit normal from the render positions pos (3 per render
 * vertex, from tw_render_position); zero for a vertex in no triangle (an
 * interior mesh vertex) or whose triangles all have zero area. */
TW_HD void tw_render_normal(const tw_render_surface *s, int i, const float *pos, float *out)
{
    int a = s->vt_start[i];
    tw_embed_normal(s->vt_tri + a, s->vt_start[i + 1] - a, s->tris, pos, out);
}
#endif
