/* The rendered surface (host/render_surface.h), the CPU side of what the
 * CUDA-GL kernel computes: normals of a cube's boundary and of an embedded
 * sphere are unit and point outward, the boundary gather equals a per-face
 * scatter, the embedded gather is exactly tw_embedding_apply /
 * tw_embedding_normals, the CSR lists each vertex's triangles, bad input is
 * refused. */
#include <stdlib.h>
#include <string.h>

#include "render_surface.h"
#include "tw_test.h"

/* Rest positions of m, moved by a rotation about z (angle a) and a random
 * jitter of up to `jitter` m per coordinate. */
static tw_real *moved_positions(const tw_mesh *m, double a, double jitter, unsigned seed)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    tw_real *x = malloc(3 * sizeof(tw_real) * (size_t)n);
    for (int i = 0; i < n; i++) {
        const double *p = X + 3 * i;
        x[3 * i] = (tw_real)(cos(a) * p[0] - sin(a) * p[1] + jitter * (2 * tw_test_uniform(&seed) - 1));
        x[3 * i + 1] = (tw_real)(sin(a) * p[0] + cos(a) * p[1] + jitter * (2 * tw_test_uniform(&seed) - 1));
        x[3 * i + 2] = (tw_real)(p[2] + jitter * (2 * tw_test_uniform(&seed) - 1));
    }
    return x;
}

/* An icosphere: the icosahedron subdivided `levels` times, radius r about c,
 * triangles counter-clockwise seen from outside. */
static tw_surface icosphere(int levels, double r, const double c[3])
{
    static const double t = 1.6180339887498949;
    static const double iv[12][3] = {{-1, t, 0}, {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t},  {0, 1, t},
                                     {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
    static const int it[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9},  {5, 11, 4},
                                  {11, 10, 2}, {10, 7, 6}, {7, 1, 8},   {3, 9, 4},  {3, 4, 2},   {3, 2, 6},  {3, 6, 8},
                                  {3, 8, 9},  {4, 9, 5},  {2, 4, 11},  {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
    int nt = 20, nv = 12;
    for (int l = 0; l < levels; l++) nt *= 4;
    double *p = malloc(sizeof(double) * 3 * (size_t)(nt * 3 / 2 + 12)); /* V = T/2 + 2 */
    int *tri = malloc(sizeof(int) * 3 * (size_t)nt), *tmp = malloc(sizeof(int) * 3 * (size_t)nt);
    memcpy(p, iv, sizeof iv);
    memcpy(tri, it, sizeof it);
    nt = 20;
    for (int l = 0; l < levels; l++) {
        int *edges = malloc(sizeof(int) * 3 * 3 * (size_t)nt), ne = 0; /* (a, b, midpoint) */
        for (int f = 0; f < nt; f++) {
            int m[3];
            for (int k = 0; k < 3; k++) {
                int a = tri[3 * f + k], b = tri[3 * f + (k + 1) % 3], lo = a < b ? a : b, hi = a < b ? b : a, j;
                for (j = 0; j < ne; j++)
                    if (edges[3 * j] == lo && edges[3 * j + 1] == hi) break;
                if (j == ne) {
                    for (int d = 0; d < 3; d++) p[3 * nv + d] = 0.5 * (p[3 * a + d] + p[3 * b + d]);
                    edges[3 * ne] = lo;
                    edges[3 * ne + 1] = hi;
                    edges[3 * ne++ + 2] = nv++;
                }
                m[k] = edges[3 * j + 2];
            }
            int *o = tmp + 12 * f, *v = tri + 3 * f;
            int q[12] = {v[0], m[0], m[2], m[0], v[1], m[1], m[2], m[1], v[2], m[0], m[1], m[2]};
            memcpy(o, q, sizeof q);
        }
        free(edges);
        nt *= 4;
        memcpy(tri, tmp, sizeof(int) * 3 * (size_t)nt);
    }
    for (int i = 0; i < nv; i++) {
        double *q = p + 3 * i, len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        for (int d = 0; d < 3; d++) q[d] = c[d] + r * q[d] / len;
    }
    free(tmp);
    tw_surface s = {nv, nt, p, tri};
    return s;
}

/* The cube's boundary, rotated and jittered: each normal of a vertex on the
 * boundary is unit and points away from the centre; interior vertices get 0. */
TW_TEST(cube_boundary_normals_unit_outward)
{
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 4, 4, 4);
    CHECK(m);
    int *faces = NULL, nf = tw_mesh_boundary_faces(m, &faces), n = tw_mesh_vertex_count(m);
    tw_render_surface *s = tw_render_surface_create(n, faces, nf, NULL);
    CHECK(s && s->nv == n && s->ntri == nf);
    double a = 0.4;
    tw_real *x = moved_positions(m, a, 0.01, 3);
    float *pos = malloc(3 * sizeof(float) * (size_t)n), *nrm = malloc(3 * sizeof(float) * (size_t)n);
    tw_render_surface_update(s, x, pos, nrm);
    double c[3] = {cos(a) * 0.5 - sin(a) * 0.5, sin(a) * 0.5 + cos(a) * 0.5, 0.5};
    int on_boundary = 0;
    for (int i = 0; i < n; i++) {
        const float *q = nrm + 3 * i, *p = pos + 3 * i;
        CHECK(p[0] == (float)x[3 * i] && p[1] == (float)x[3 * i + 1] && p[2] == (float)x[3 * i + 2]);
        double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
        if (s->vt_start[i + 1] == s->vt_start[i]) {
            CHECK(len == 0); /* interior */
            continue;
        }
        on_boundary++;
        CHECK_NEAR(len, 1, 1e-6);
        double out = q[0] * (p[0] - c[0]) + q[1] * (p[1] - c[1]) + q[2] * (p[2] - c[2]);
        CHECK(out > 0.1); /* |p - c| >= 0.49: a unit normal within ~80 degrees of radial */
    }
    CHECK(on_boundary == 5 * 5 * 5 - 3 * 3 * 3);
    free(x);
    free(pos);
    free(nrm);
    free(faces);
    tw_render_surface_destroy(s);
    tw_mesh_destroy(m);
    return 0;
}

/* The same gather equals the per-face scatter the viewer used before (each
 * face's cross product added to its 3 corners, then normalized). */
TW_TEST(boundary_gather_equals_scatter)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 10, 2, 2);
    CHECK(m);
    int *faces = NULL, nf = tw_mesh_boundary_faces(m, &faces), n = tw_mesh_vertex_count(m);
    tw_render_surface *s = tw_render_surface_create(n, faces, nf, NULL);
    CHECK(s);
    tw_real *x = moved_positions(m, 1.0, 0.02, 11);
    float *pos = malloc(3 * sizeof(float) * (size_t)n), *nrm = malloc(3 * sizeof(float) * (size_t)n);
    float *ref = calloc(3 * (size_t)n, sizeof(float));
    tw_render_surface_update(s, x, pos, nrm);
    for (int f = 0; f < nf; f++) {
        const int *t = faces + 3 * f;
        const float *a = pos + 3 * t[0], *p = pos + 3 * t[1], *q = pos + 3 * t[2];
        float e1[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, e2[3] = {q[0] - a[0], q[1] - a[1], q[2] - a[2]};
        float c[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) ref[3 * t[k] + j] += c[j];
    }
    double err = 0;
    for (int i = 0; i < n; i++) {
        float *r = ref + 3 * i, l = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        for (int j = 0; j < 3; j++) {
            double d = fabs((l > 0 ? r[j] / l : 0) - nrm[3 * i + j]);
            err = d > err ? d : err;
        }
    }
    printf("largest |gather - scatter| normal component: %.3g\n", err);
    CHECK(err <= 1e-6);
    free(x);
    free(pos);
    free(nrm);
    free(ref);
    free(faces);
    tw_render_surface_destroy(s);
    tw_mesh_destroy(m);
    return 0;
}

/* An icosphere embedded in a cube's tets: at rest each normal is unit and
 * within 10 degrees of the radial direction. */
TW_TEST(embedded_sphere_normals_unit_outward)
{
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 5, 5, 5);
    CHECK(m);
    double c[3] = {0.5, 0.5, 0.5};
    tw_surface sph = icosphere(3, 0.35, c);
    tw_embedding *e = tw_embed_surface(m, &sph, 0, NULL);
    CHECK(e);
    tw_render_surface *s = tw_render_surface_create(tw_mesh_vertex_count(m), NULL, 0, e);
    CHECK(s && s->nv == sph.vertex_count && s->ntri == sph.triangle_count);
    tw_real *x = moved_positions(m, 0, 0, 1);
    int n = s->nv;
    float *pos = malloc(3 * sizeof(float) * (size_t)n), *nrm = malloc(3 * sizeof(float) * (size_t)n);
    tw_render_surface_update(s, x, pos, nrm);
    double worst = 1;
    for (int i = 0; i < n; i++) {
        const float *q = nrm + 3 * i, *p = pos + 3 * i;
        double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
        CHECK_NEAR(len, 1, 1e-6);
        double r[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]}, rl = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        double cosang = (q[0] * r[0] + q[1] * r[1] + q[2] * r[2]) / rl;
        worst = cosang < worst ? cosang : worst;
    }
    printf("%d sphere vertices: smallest cos(normal, radial) %.6f\n", n, worst);
    CHECK(worst > cos(10 * 3.14159265358979 / 180));
    free(x);
    free(pos);
    free(nrm);
    free(sph.positions);
    free(sph.triangles);
    tw_render_surface_destroy(s);
    tw_embedding_destroy(e);
    tw_mesh_destroy(m);
    return 0;
}

/* The embedded gather is tw_embedding_apply and tw_embedding_normals, bit for
 * bit, on a deformed mesh. */
TW_TEST(embedded_gather_equals_embedding_apply)
{
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 4, 4, 4);
    CHECK(m);
    double c[3] = {0.5, 0.5, 0.5};
    tw_surface sph = icosphere(2, 0.45, c);
    tw_embedding *e = tw_embed_surface(m, &sph, 0, NULL);
    CHECK(e);
    tw_render_surface *s = tw_render_surface_create(tw_mesh_vertex_count(m), NULL, 0, e);
    CHECK(s);
    tw_real *x = moved_positions(m, 0.7, 0.05, 5);
    size_t b = 3 * sizeof(float) * (size_t)s->nv;
    float *pos = malloc(b), *nrm = malloc(b), *pos_e = malloc(b), *nrm_e = malloc(b);
    tw_render_surface_update(s, x, pos, nrm);
    tw_embedding_apply(e, x, pos_e);
    tw_embedding_normals(e, pos_e, nrm_e);
    CHECK(memcmp(pos, pos_e, b) == 0);
    CHECK(memcmp(nrm, nrm_e, b) == 0);
    free(x);
    free(pos);
    free(nrm);
    free(pos_e);
    free(nrm_e);
    free(sph.positions);
    free(sph.triangles);
    tw_render_surface_destroy(s);
    tw_embedding_destroy(e);
    tw_mesh_destroy(m);
    return 0;
}

/* The CSR lists exactly the triangles holding each vertex, in increasing order. */
TW_TEST(vertex_triangles_csr)
{
    static const int tris[] = {0, 1, 2, 2, 1, 3, 3, 4, 2, 0, 2, 4};
    int start[6], list[12];
    tw_vertex_triangles(5, tris, 4, start, list);
    static const int want_start[6] = {0, 2, 4, 8, 10, 12}, want_list[12] = {0, 3, 0, 1, 0, 1, 2, 3, 1, 2, 2, 3};
    CHECK(memcmp(start, want_start, sizeof start) == 0);
    CHECK(memcmp(list, want_list, sizeof list) == 0);
    return 0;
}

/* A triangle naming a vertex past the end is refused with a message. */
TW_TEST(bad_triangle_refused)
{
    static const int tris[] = {0, 1, 5};
    CHECK(!tw_render_surface_create(4, tris, 1, NULL));
    CHECK(strstr(tw_last_error(), "triangle 0 has vertex 5, outside [0, 4)"));
    return 0;
}
