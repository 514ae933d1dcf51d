/* Several bodies in one mesh: tw_mesh_merge places copies of meshes and
 * joins them into one mesh of disconnected components, with the body of
 * each vertex. One world then simulates them all: one FEM system (the
 * components share no block, so the system is block-diagonal by body and the
 * solver, the preconditioners and the CUDA kernels run unchanged), one state,
 * one step; the bodies meet only through body contact (contact_bodies.c),
 * which reads the body of each vertex. Per-body material goes through the
 * element arrays of the world def (tw_fill_by_body) or the regions, which are
 * kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"

tw_mesh *tw_mesh_merge(const tw_mesh *const *meshes, const double *placements, int count)
{
    if (!meshes || count < 1) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_merge: no meshes (count %d)", count);
        return NULL;
    }
    size_t nv = 0, nt = 0;
    for (int b = 0; b < count; b++) {
        if (!meshes[b]) {
            tw_fail(TW_ERR_INVALID, "tw_mesh_merge: mesh %d is NULL", b);
            return NULL;
        }
        if (meshes[b]->nbodies > 1) {
            tw_fail(TW_ERR_INVALID, "tw_mesh_merge: mesh %d is already merged (%d bodies): merge the originals", b,
                    meshes[b]->nbodies);
            return NULL;
        }
        if (placements) {
            const double *P = placements + 12 * (size_t)b;
            for (int k = 0; k < 12; k++)
                if (!isfinite(P[k])) {
                    tw_fail(TW_ERR_INVALID, "tw_mesh_merge: placement %d entry %d is not finite", b, k);
                    return NULL;
                }
            double det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[1] * (P[3] * P[8] - P[5] * P[6]) +
                         P[2] * (P[3] * P[7] - P[4] * P[6]);
            if (!(fabs(det - 1) < 1e-6)) {
                tw_fail(TW_ERR_INVALID, "tw_mesh_merge: placement %d: the rotation's determinant is %g, not 1 "
                                        "(a proper rotation keeps the bodies' volumes and orientation)", b, det);
                return NULL;
            }
        }
        nv += (size_t)meshes[b]->nv;
        nt += (size_t)meshes[b]->nt;
    }
    if (nv > 0x7fffffff / 3 || nt > 0x7fffffff / 4) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_merge: %zu vertices and %zu tets in all are too many", nv, nt);
        return NULL;
    }
    double *X = tw_malloc(sizeof(double) * 3 * nv, "merged positions");
    int *T = tw_malloc(sizeof(int) * 4 * nt, "merged tets");
    int *R = tw_malloc(sizeof(int) * (nt ? nt : 1), "merged regions");
    int *body = tw_malloc(sizeof(int) * nv, "vertex bodies");
    if (!X || !T || !R || !body) {
        free(X); free(T); free(R); free(body);
        return NULL;
    }
    size_t v0 = 0, e0 = 0;
    for (int b = 0; b < count; b++) {
        const tw_mesh *m = meshes[b];
        static const double I[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
        const double *P = placements ? placements + 12 * (size_t)b : I;
        for (int i = 0; i < m->nv; i++) {
            const double *x = m->X + 3 * (size_t)i;
            for (int r = 0; r < 3; r++)
                X[3 * (v0 + i) + r] = P[3 * r] * x[0] + P[3 * r + 1] * x[1] + P[3 * r + 2] * x[2] + P[9 + r];
            body[v0 + i] = b;
        }
        for (int e = 0; e < m->nt; e++) {
            for (int q = 0; q < 4; q++) T[4 * (e0 + e) + q] = m->tets[4 * (size_t)e + q] + (int)v0;
            R[e0 + e] = m->region ? m->region[e] : 0;
        }
        v0 += (size_t)m->nv;
        e0 += (size_t)m->nt;
    }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *out = tw_mesh_adopt(X, (int)nv, T, (int)nt, R, "tw_mesh_merge", &ld, NULL);
    if (!out) {
        free(body);
        return NULL;
    }
    out->nbodies = count;
    out->body = body;
    return out;
}

int tw_mesh_body_count(const tw_mesh *m) { return m && m->nbodies > 1 ? m->nbodies : 1; }

int tw_mesh_vertex_body(const tw_mesh *m, int vertex)
{
    if (!m || vertex < 0 || vertex >= m->nv || !m->body) return 0;
    return m->body[vertex];
}

void tw_fill_by_body(const tw_mesh *m, const double *values, double *out)
{
    for (int e = 0; e < m->nt; e++) out[e] = values[tw_mesh_vertex_body(m, m->tets[4 * (size_t)e])];
}
