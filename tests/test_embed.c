/* Embedding a render surface in a tet mesh: exact at rest (inside and
 * slightly outside), rigid with the mesh, nearest tet by the grid equals the
 * brute-force nearest, clear errors, normals, and the Stanford scan in the
 * closed bunny's tet mesh. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "mesh.h"
#include "tw_test.h"

/* n points: the first n_in inside [0,L]x[0,W]x[0,H], the rest up to `out` m
 * outside one of its faces (never farther than out); one triangle per 3. */
static tw_surface make_points(int n, int n_in, double L, double W, double H, double out, unsigned seed)
{
    tw_surface s;
    s.vertex_count = n;
    s.triangle_count = n / 3;
    s.positions = malloc(3 * sizeof(double) * (size_t)n);
    s.triangles = malloc(3 * sizeof(int) * (size_t)(n / 3 + 1));
    double size[3] = {L, W, H};
    for (int i = 0; i < n; i++) {
        double *p = s.positions + 3 * i;
        for (int a = 0; a < 3; a++) p[a] = size[a] * (0.02 + 0.96 * tw_test_uniform(&seed));
        if (i >= n_in) {
            int a = (int)(tw_test_uniform(&seed) * 3) % 3;
            double d = out * (0.1 + 0.9 * tw_test_uniform(&seed));
            p[a] = tw_test_uniform(&seed) < 0.5 ? -d : size[a] + d;
        }
    }
    for (int t = 0; t < s.triangle_count; t++)
        for (int k = 0; k < 3; k++) s.triangles[3 * t + k] = 3 * t + k;
    return s;
}

static void free_points(tw_surface *s)
{
    free(s->positions);
    free(s->triangles);
}

static tw_real *rest_positions(const tw_mesh *m)
{
    int n = tw_mesh_vertex_count(m);
    tw_real *x = malloc(3 * sizeof(tw_real) * (size_t)n);
    for (int i = 0; i < 3 * n; i++) x[i] = (tw_real)tw_mesh_positions(m)[i];
    return x;
}

/* Largest |apply(rest) - surface| over the vertices. */
static double rest_error(const tw_embedding *e, const tw_mesh *m, const tw_surface *s)
{
    tw_real *x = rest_positions(m);
    float *out = malloc(3 * sizeof(float) * (size_t)s->vertex_count);
    tw_embedding_apply(e, x, out);
    double err = 0;
    for (int i = 0; i < 3 * s->vertex_count; i++) {
        double d = fabs(out[i] - s->positions[i]);
        err = tw_test_max(err, d);
    }
    free(x);
    free(out);
    return err;
}

TW_TEST(rest_exact_inside_and_outside)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 10, 2, 2);
    CHECK(m);
    tw_surface s = make_points(3000, 2000, 1, 0.2, 0.2, 0.01, 7);
    tw_embed_report rep;
    tw_embedding *e = tw_embed_surface(m, &s, 0.02, &rep);
    CHECK(e);
    CHECK(rep.inside == 2000);
    CHECK(rep.outside == 1000);
    CHECK(rep.max_distance <= 0.01 + 1e-12);
    CHECK(rep.min_weight < 0); /* outside vertices extrapolate */
    double err = rest_error(e, m, &s);
    printf("inside %d outside %d max distance %.4g m, rest error %.3g m (%.1f ms)\n", rep.inside, rep.outside,
           rep.max_distance, err, rep.ms);
    CHECK(err <= 1e-6 * 1.04);
    /* weights of every vertex sum to 1 */
    const float *w = tw_embedding_weights(e);
    for (int i = 0; i < s.vertex_count; i++) CHECK_NEAR(w[4 * i] + w[4 * i + 1] + w[4 * i + 2] + w[4 * i + 3], 1, 1e-5);
    tw_embedding_destroy(e);
    free_points(&s);
    tw_mesh_destroy(m);
    return 0;
}

/* The tet the grid search picked for an outside point is a nearest one: its
 * distance equals the brute-force minimum over all tets. */
TW_TEST(outside_nearest_matches_brute_force)
{
    tw_mesh *m = tw_mesh_tube(0.1, 0.2, 1.0, 2, 16, 10);
    CHECK(m);
    /* points around the tube's bounding box: many fall in the hole or outside */
    tw_surface s = make_points(600, 300, 0.4, 0.4, 1.0, 0.03, 11);
    for (int i = 0; i < s.vertex_count; i++) { /* the tube runs along x, centred on it */
        double *p = s.positions + 3 * i, q[3] = {p[2], p[0] - 0.2, p[1] - 0.2};
        memcpy(p, q, sizeof q);
    }
    tw_embed_report rep;
    tw_embedding *e = tw_embed_surface(m, &s, 1.0, &rep);
    CHECK(e);
    CHECK(rep.outside > 100);
    const double *X = tw_mesh_positions(m);
    const int *T = tw_mesh_tets(m), *tet = tw_embedding_tets(e);
    static const int face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    int checked = 0;
    for (int i = 0; i < s.vertex_count; i++) {
        const double *p = s.positions + 3 * i;
        double best = DBL_MAX, mine = DBL_MAX; /* squared distances to the tets' faces */
        for (int t = 0; t < tw_mesh_tet_count(m); t++) {
            double d = DBL_MAX;
            for (int f = 0; f < 4; f++) {
                const int *q = T + 4 * t;
                double d2 = tw_point_triangle_dist2(p, X + 3 * q[face[f][0]], X + 3 * q[face[f][1]], X + 3 * q[face[f][2]]);
                if (d2 < d) d = d2;
            }
            if (d < best) best = d;
            if (t == tet[i]) mine = d;
        }
        const float *w = tw_embedding_weights(e) + 4 * i;
        if (w[0] < 0 || w[1] < 0 || w[2] < 0 || w[3] < 0) { /* outside: the chosen tet is a nearest one */
            CHECK_NEAR(sqrt(mine), sqrt(best), 1e-9);
            checked++;
        }
    }
    CHECK(checked == rep.outside);
    CHECK(rest_error(e, m, &s) <= 1e-6 * 1.2);
    tw_embedding_destroy(e);
    free_points(&s);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(moves_rigidly_with_mesh)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 10, 2, 2);
    CHECK(m);
    tw_surface s = make_points(900, 600, 1, 0.2, 0.2, 0.01, 3);
    tw_embedding *e = tw_embed_surface(m, &s, 0, NULL);
    CHECK(e);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    /* rotation by 50 degrees about (1,2,3)/|.|, translation (0.3,-0.2,0.5) */
    double ax[3] = {1, 2, 3}, an = sqrt(14.0), th = 50 * 3.14159265358979 / 180, c = cos(th), sn = sin(th);
    for (int k = 0; k < 3; k++) ax[k] /= an;
    double R[9], t[3] = {0.3, -0.2, 0.5};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * i + j] = (i == j ? c : 0) + (1 - c) * ax[i] * ax[j];
    R[1] -= sn * ax[2]; R[2] += sn * ax[1]; R[3] += sn * ax[2];
    R[5] -= sn * ax[0]; R[6] -= sn * ax[1]; R[7] += sn * ax[0];
    int n = tw_mesh_vertex_count(m);
    tw_real *x = malloc(3 * sizeof(tw_real) * (size_t)n);
    const double *X = tw_mesh_positions(m);
    for (int v = 0; v < n; v++)
        for (int r = 0; r < 3; r++)
            x[3 * v + r] = (tw_real)(R[3 * r] * X[3 * v] + R[3 * r + 1] * X[3 * v + 1] + R[3 * r + 2] * X[3 * v + 2] + t[r]);
    CHECK_OK(tw_world_set_positions(w, x));
    float *out = malloc(3 * sizeof(float) * (size_t)s.vertex_count);
    tw_embedding_apply(e, tw_world_positions(w), out);
    double err = 0;
    for (int i = 0; i < s.vertex_count; i++) {
        const double *p = s.positions + 3 * i;
        for (int r = 0; r < 3; r++) {
            double want = R[3 * r] * p[0] + R[3 * r + 1] * p[1] + R[3 * r + 2] * p[2] + t[r];
            err = tw_test_max(err, fabs(out[3 * i + r] - want));
        }
    }
    printf("rigid motion: max error %.3g m\n", err);
    CHECK(err < 2e-6);
    /* and a wrong (identity) answer would be off by the motion itself */
    CHECK(fabs(out[0] - s.positions[0]) + fabs(out[1] - s.positions[1]) > 0.1);
    free(out);
    free(x);
    tw_world_destroy(w);
    tw_embedding_destroy(e);
    free_points(&s);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(far_surface_is_an_error)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 10, 2, 2);
    CHECK(m);
    tw_surface s = make_points(30, 30, 1, 0.2, 0.2, 0, 5);
    s.positions[3 * 17 + 2] = 0.5; /* 0.3 m above the bar */
    tw_embed_report rep;
    tw_embedding *e = tw_embed_surface(m, &s, 0, &rep);
    CHECK(e == NULL);
    const char *msg = tw_last_error();
    printf("%s\n", msg);
    CHECK(strstr(msg, "surface vertex 17 at ("));
    CHECK(strstr(msg, "0.3 m from the nearest tet"));
    CHECK(strstr(msg, "does not fit the mesh"));
    CHECK(rep.farthest_vertex == 17);
    CHECK_NEAR(rep.max_distance, 0.3, 1e-9);
    free_points(&s);
    tw_mesh_destroy(m);
    return 0;
}

/* The bar's own boundary as the surface: a vertex inside the top face has
 * the normal +z, one inside the x = 0 face -x. */
TW_TEST(normals_of_box_faces)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 10, 2, 2);
    CHECK(m);
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    CHECK(nf > 0);
    tw_surface s = {tw_mesh_vertex_count(m), nf, (double *)tw_mesh_positions(m), faces};
    tw_embedding *e = tw_embed_surface(m, &s, 0, NULL);
    CHECK(e);
    tw_real *x = rest_positions(m);
    float *xyz = malloc(3 * sizeof(float) * (size_t)s.vertex_count), *nrm = malloc(3 * sizeof(float) * (size_t)s.vertex_count);
    tw_embedding_apply(e, x, xyz);
    tw_embedding_normals(e, xyz, nrm);
    int top = 0, end = 0;
    for (int i = 0; i < s.vertex_count; i++) {
        const double *p = s.positions + 3 * i;
        int in_y = fabs(p[1] - 0.1) < 1e-9;
        if (in_y && fabs(p[2] - 0.2) < 1e-9 && p[0] > 0.01 && p[0] < 0.99) {
            CHECK_NEAR(nrm[3 * i + 2], 1, 1e-6);
            top++;
        }
        if (in_y && fabs(p[2] - 0.1) < 1e-9 && p[0] < 1e-9) {
            CHECK_NEAR(nrm[3 * i], -1, 1e-6);
            end++;
        }
        if (fabs(p[1] - 0.1) < 1e-9 && fabs(p[2] - 0.1) < 1e-9 && p[0] > 0.01 && p[0] < 0.99)
            CHECK(nrm[3 * i] == 0 && nrm[3 * i + 1] == 0 && nrm[3 * i + 2] == 0); /* interior: in no triangle */
    }
    CHECK(top == 9 && end == 1);
    free(x);
    free(xyz);
    free(nrm);
    free(faces);
    tw_embedding_destroy(e);
    tw_mesh_destroy(m);
    return 0;
}

/* The 69k Stanford scan in the closed bunny's tet mesh. The two share a
 * frame and scale (bounding boxes agree to 0.3 mm on a 0.2 m bunny), so no
 * transform is applied; the test checks that they still do. */
TW_TEST(stanford_scan_in_closed_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), &ld, NULL);
    CHECK(m);
    tw_surface *s = tw_surface_load(tw_test_mesh_path("bunny_stanford_original_69k.obj"));
    CHECK(s);
    double mlo[3], mhi[3], slo[3], shi[3];
    tw_points_bbox(tw_mesh_positions(m), tw_mesh_vertex_count(m), mlo, mhi);
    tw_points_bbox(s->positions, s->vertex_count, slo, shi);
    double diag = sqrt((mhi[0] - mlo[0]) * (mhi[0] - mlo[0]) + (mhi[1] - mlo[1]) * (mhi[1] - mlo[1]) +
                       (mhi[2] - mlo[2]) * (mhi[2] - mlo[2]));
    for (int a = 0; a < 3; a++) {
        printf("axis %d: mesh [%.6f, %.6f] scan [%.6f, %.6f]\n", a, mlo[a], mhi[a], slo[a], shi[a]);
        CHECK(fabs(mlo[a] - slo[a]) < 0.005 * diag && fabs(mhi[a] - shi[a]) < 0.005 * diag);
    }
    tw_embed_report rep;
    tw_embedding *e = tw_embed_surface(m, s, 0, &rep);
    CHECK(e);
    double err = rest_error(e, m, s);
    printf("scan: %d vertices, %d inside, %d outside, max distance %.3g m (vertex %d, limit %.3g m), "
           "min weight %.3g, grid %dx%dx%d, %.1f ms; rest error %.3g m (diagonal %.3g m)\n",
           rep.vertices, rep.inside, rep.outside, rep.max_distance, rep.farthest_vertex, rep.limit, rep.min_weight,
           rep.grid_cells[0], rep.grid_cells[1], rep.grid_cells[2], rep.ms, err, diag);
    CHECK(rep.inside + rep.outside == s->vertex_count);
    CHECK(rep.max_distance < rep.limit);
    CHECK(err <= 1e-6 * diag);
    tw_embedding_destroy(e);
    tw_surface_destroy(s);
    tw_mesh_destroy(m);
    return 0;
}
