/* The rendered surface of a tet mesh: setup and the CPU loop (see render_surface.h). */
#include "render_surface.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

void tw_vertex_triangles(int nv, const int *tris, int ntri, int *start, int *list)
{
    memset(start, 0, sizeof(int) * ((size_t)nv + 1));
    for (int j = 0; j < 3 * ntri; j++) start[tris[j] + 1]++;
    for (int i = 0; i < nv; i++) start[i + 1] += start[i];
    for (int j = 0; j < 3 * ntri; j++) list[start[tris[j]]++] = j / 3;
    for (int i = nv; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
}

void tw_render_surface_destroy(tw_render_surface *s)
{
    if (!s) return;
    free(s->tris);
    free(s->idx);
    free(s->w);
    free(s->vt_start);
    free(s->vt_tri);
    free(s);
}

tw_render_surface *tw_render_surface_create(int mesh_nv, const int *faces, int face_count, const tw_embedding *e)
{
    int nv = e ? e->nv : mesh_nv, ntri = e ? e->ntri : face_count;
    const int *tris = e ? e->tris : faces;
    if (mesh_nv <= 0 || nv <= 0 || ntri < 0 || (ntri > 0 && !tris)) {
        tw_fail(TW_ERR_INVALID, "render surface: %d mesh vertices, %d surface vertices, %d triangles%s", mesh_nv,
                nv, ntri, ntri > 0 && !tris ? " and no triangle list" : "");
        return NULL;
    }
    if (e && e->mesh_nv != mesh_nv) {
        tw_fail(TW_ERR_INVALID, "render surface: the embedding was built for a mesh of %d vertices, not %d",
                e->mesh_nv, mesh_nv);
        return NULL;
    }
    for (int j = 0; j < 3 * ntri; j++)
        if (tris[j] < 0 || tris[j] >= nv) {
            tw_fail(TW_ERR_INVALID, "render surface: triangle %d has vertex %d, outside [0, %d)", j / 3, tris[j], nv);
            return NULL;
        }
    tw_render_surface *s = tw_calloc(1, sizeof *s, "render surface");
    if (!s) return NULL;
    s->nv = nv;
    s->ntri = ntri;
    s->mesh_nv = mesh_nv;
    size_t t3 = 3 * (size_t)ntri + 1; /* +1: never a zero-byte allocation */
    s->tris = tw_malloc(sizeof(int) * t3, "render surface triangles");
    s->vt_start = tw_malloc(sizeof(int) * ((size_t)nv + 1), "render surface vertex triangles");
    s->vt_tri = tw_malloc(sizeof(int) * t3, "render surface vertex triangles");
    if (e) {
        s->idx = tw_malloc(sizeof(int) * 4 * (size_t)nv, "render surface tet indices");
        s->w = tw_malloc(sizeof(float) * 4 * (size_t)nv, "render surface weights");
    }
    if (!s->tris || !s->vt_start || !s->vt_tri || (e && (!s->idx || !s->w))) {
        tw_render_surface_destroy(s);
        return NULL;
    }
    if (ntri > 0) memcpy(s->tris, tris, sizeof(int) * 3 * (size_t)ntri);
    if (e) {
        memcpy(s->idx, e->idx, sizeof(int) * 4 * (size_t)nv);
        memcpy(s->w, e->w, sizeof(float) * 4 * (size_t)nv);
    }
    tw_vertex_triangles(nv, s->tris, ntri, s->vt_start, s->vt_tri);
    return s;
}

void tw_render_surface_update(const tw_render_surface *s, const tw_real *x, float *pos, float *nrm)
{
    const int n = s->nv;
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++) tw_render_position(s, i, x, pos + 3 * (size_t)i);
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++) tw_render_normal(s, i, pos, nrm + 3 * (size_t)i);
}
