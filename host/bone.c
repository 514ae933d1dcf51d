/* Bone cores (Müller 2002's bunny and dane): the vertices deeper than a
 * given distance below the surface form one kinematic rigid group that a
 * skeleton drives; the skin around it follows by the simulation.
 *
 * Depth test (tw_mesh_mark_core): a vertex is in the core when no boundary
 * triangle of the tet mesh lies within `depth` of it. A grid over the
 * boundary triangles' boxes (cell at least depth/2) lists the candidates of
 * the box [p - depth, p + depth]; exact point-to-triangle distances decide,
 * stopping at the first one within depth.
 *
 * From a surface (tw_mesh_mark_core_surface): a lattice covering a surface
 * (tw_graded_def.cover) sticks out of it by up to a cell, so its own
 * boundary is the wrong one to measure from: at a part thinner than a few
 * cells (a dog's face, neck) the core would reach the drawn surface, which
 * then moves rigidly. There a vertex is in the core when it is inside the
 * given closed surface (ray parity) and no triangle of it lies within
 * `depth`: the graded lattice's own tests (host/surface_query.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "error.h"
#include "mesh.h"
#include "surface_query.h"
#include "world.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* 1 when some triangle is within depth of p. */
static int near_boundary(const tw_box_grid *g, const double *X, const int *faces, const double *p, double depth)
{
    int c0[3], c1[3];
    for (int a = 0; a < 3; a++) {
        int lo = tw_box_grid_coord(g, a, p[a] - depth), hi = tw_box_grid_coord(g, a, p[a] + depth);
        if (hi < 0 || lo > g->n[a] - 1) return 0;
        c0[a] = clampi(lo, 0, g->n[a] - 1);
        c1[a] = clampi(hi, 0, g->n[a] - 1);
    }
    double d2 = depth * depth * (1 + 1e-9); /* a vertex at exactly `depth` is not deeper */
    for (int z = c0[2]; z <= c1[2]; z++)
        for (int y = c0[1]; y <= c1[1]; y++)
            for (int x = c0[0]; x <= c1[0]; x++) {
                size_t c = ((size_t)z * g->n[1] + y) * g->n[0] + x;
                for (int j = g->start[c]; j < g->start[c + 1]; j++) {
                    const int *f = faces + 3 * (size_t)g->items[j];
                    if (tw_point_triangle_dist2(p, X + 3 * f[0], X + 3 * f[1], X + 3 * f[2]) <= d2) return 1;
                }
            }
    return 0;
}

/* The count, or -1 with a message when the core is empty or every vertex
 * (of `candidates`) is in it (then the mask is cleared). */
static int core_result(const tw_mesh *m, double depth, int count, int candidates, unsigned char *inside,
                       const char *why_all)
{
    if (count == 0) {
        tw_fail(TW_ERR_INVALID,
                "bone core: no vertex of %s is deeper than %g m below the surface: choose a smaller depth", m->name,
                depth);
        return -1;
    }
    if (count == candidates) {
        memset(inside, 0, (size_t)m->nv);
        tw_fail(TW_ERR_INVALID, "bone core: every vertex of %s is deeper than %g m: %s", m->name, depth, why_all);
        return -1;
    }
    return count;
}

int tw_mesh_mark_core(const tw_mesh *m, double depth, unsigned char *inside)
{
    if (!m || !inside) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_mark_core: null mesh or mask");
        return -1;
    }
    memset(inside, 0, (size_t)m->nv);
    if (!(depth > 0) || !isfinite(depth)) {
        tw_fail(TW_ERR_INVALID, "bone core: depth %g m: expected a distance > 0 m below the surface", depth);
        return -1;
    }
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    if (nf <= 0) {
        free(faces);
        if (nf == 0) tw_fail(TW_ERR_INVALID, "bone core: the mesh has no boundary faces");
        return -1;
    }
    double *boxes = tw_malloc(6 * sizeof(double) * (size_t)nf, "boundary boxes");
    if (!boxes) {
        free(faces);
        return -1;
    }
    double mean_ext = 0;
    for (int f = 0; f < nf; f++) {
        double *b = boxes + 6 * (size_t)f, ext = 0;
        for (int a = 0; a < 3; a++) {
            b[a] = DBL_MAX;
            b[3 + a] = -DBL_MAX;
            for (int k = 0; k < 3; k++) {
                double x = m->X[3 * (size_t)faces[3 * (size_t)f + k] + a];
                if (x < b[a]) b[a] = x;
                if (x > b[3 + a]) b[3 + a] = x;
            }
            if (b[3 + a] - b[a] > ext) ext = b[3 + a] - b[a];
        }
        mean_ext += ext;
    }
    mean_ext /= nf;
    tw_box_grid g;
    tw_status st = tw_box_grid_build(&g, boxes, nf, mean_ext > depth / 2 ? mean_ext : depth / 2);
    free(boxes);
    if (st != TW_OK) {
        free(faces);
        return -1;
    }
    int count = 0, candidates = 0;
#pragma omp parallel for if (TW_PAR(m->nv)) schedule(dynamic, 256) reduction(+ : count, candidates)
    for (int i = 0; i < m->nv; i++) {
        if (m->unused && m->unused[i]) continue; /* not part of the solid */
        candidates++;
        if (!near_boundary(&g, m->X, faces, m->X + 3 * (size_t)i, depth)) {
            inside[i] = 1;
            count++;
        }
    }
    tw_box_grid_free(&g);
    free(faces);
    return core_result(m, depth, count, candidates, inside, "the surface is not the boundary");
}

int tw_mesh_mark_core_surface(const tw_mesh *m, const tw_surface *s, double depth, unsigned char *inside)
{
    if (!m || !inside) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_mark_core_surface: null mesh or mask");
        return -1;
    }
    memset(inside, 0, (size_t)m->nv);
    if (!s) {
        tw_fail(TW_ERR_INVALID, "bone core of %s: no surface given: pass the closed surface the mesh was built "
                "around, or use tw_mesh_mark_core to measure from the mesh's own boundary", m->name);
        return -1;
    }
    if (!(depth > 0) || !isfinite(depth)) {
        tw_fail(TW_ERR_INVALID, "bone core: depth %g m: expected a distance > 0 m below the surface", depth);
        return -1;
    }
    /* grid cell: the triangles' mean extent, at least depth/2 (as above) */
    double mean_ext = 0;
    if (s->positions && s->triangles && s->triangle_count > 0) {
        for (int t = 0; t < s->triangle_count; t++) {
            const int *f = s->triangles + 3 * (size_t)t;
            if (f[0] < 0 || f[0] >= s->vertex_count || f[1] < 0 || f[1] >= s->vertex_count || f[2] < 0 ||
                f[2] >= s->vertex_count)
                continue; /* tw_surface_query_init names it */
            double ext = 0;
            for (int a = 0; a < 3; a++) {
                double lo = DBL_MAX, hi = -DBL_MAX;
                for (int k = 0; k < 3; k++) {
                    double x = s->positions[3 * (size_t)f[k] + a];
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
                ext = hi - lo > ext ? hi - lo : ext;
            }
            mean_ext += ext / s->triangle_count;
        }
    }
    tw_surface_query q;
    if (tw_surface_query_init(&q, s, mean_ext > depth / 2 ? mean_ext : depth / 2, "bone core: surface") != TW_OK)
        return -1;
    double r = depth * (1 + 1e-9); /* a vertex at exactly `depth` is not deeper */
    int count = 0, candidates = 0;
#pragma omp parallel for if (TW_PAR(m->nv)) schedule(dynamic, 256) reduction(+ : count, candidates)
    for (int i = 0; i < m->nv; i++) {
        if (m->unused && m->unused[i]) continue; /* not part of the solid */
        candidates++;
        const double *p = m->X + 3 * (size_t)i;
        if (tw_surface_query_inside(&q, p) && !tw_surface_query_near(&q, p, r)) {
            inside[i] = 1;
            count++;
        }
    }
    tw_surface_query_free(&q);
    return core_result(m, depth, count, candidates, inside, "the surface does not bound the mesh");
}

tw_status tw_world_set_kinematic_group(tw_world *w, const unsigned char *mask)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (!w || !mask) return tw_fail(TW_ERR_INVALID, "tw_world_set_kinematic_group: null world or mask");
    int n = tw_world_vertex_count(w);
    for (int i = 0; i < n; i++)
        if (mask[i]) {
            tw_status s = tw_world_set_constraint(w, i, TW_KINEMATIC);
            if (s != TW_OK) return s;
        }
    return TW_OK;
}

tw_status tw_world_drive_group(tw_world *w, const unsigned char *mask, const double R[9], const double t[3],
                               const double center[3])
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (!w || !mask || !R || !t || !center)
        return tw_fail(TW_ERR_INVALID, "tw_world_drive_group: null world, mask, R, t or center");
    for (int k = 0; k < 9; k++)
        if (!isfinite(R[k])) return tw_fail(TW_ERR_INVALID, "tw_world_drive_group: R[%d] is %g", k, R[k]);
    for (int k = 0; k < 3; k++)
        if (!isfinite(t[k]) || !isfinite(center[k]))
            return tw_fail(TW_ERR_INVALID, "tw_world_drive_group: t[%d] = %g, center[%d] = %g", k, t[k], k, center[k]);
    const double *X = w->mesh->X;
    int n = tw_world_vertex_count(w);
    for (int i = 0; i < n; i++) {
        if (!mask[i]) continue;
        if (tw_world_get_constraint(w, i) != TW_KINEMATIC)
            return tw_fail(TW_ERR_INVALID,
                           "tw_world_drive_group: vertex %d is in the group but not kinematic: call "
                           "tw_world_set_kinematic_group first",
                           i);
        const double *x = X + 3 * (size_t)i;
        double d[3] = {x[0] - center[0], x[1] - center[1], x[2] - center[2]}, p[3];
        for (int r = 0; r < 3; r++) p[r] = R[3 * r] * d[0] + R[3 * r + 1] * d[1] + R[3 * r + 2] * d[2] + center[r] + t[r];
        tw_status s = tw_world_set_target(w, i, p);
        if (s != TW_OK) return s;
    }
    return TW_OK;
}
