/* Tetrahedralizing surfaces with TetGen: valid meshes, tet counts on target,
 * clear errors for bad surfaces, the cache. Cases that run TetGen skip (77)
 * where the `tetgen` tool is not installed. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh.h"
#include "mesher.h"
#include "tw_test.h"

static int have_tetgen(void)
{
    char path[1024];
    if (tw_mesher_find_tetgen(NULL, path, sizeof path)) return 1;
    fprintf(stderr, "skipped: tetgen not found on PATH (apt-get install tetgen)\n");
    return 0;
}

/* ------------------------------------------------------------- surfaces */

typedef struct soup {
    double v[3 * 700];
    int f[3 * 1400];
    int nv, nf;
} soup;

static int ico_mid(soup *s, int a, int b, int *keys, int *vals, int *nk)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    for (int i = 0; i < *nk; i++)
        if (keys[2 * i] == lo && keys[2 * i + 1] == hi) return vals[i];
    double p[3], l = 0;
    for (int k = 0; k < 3; k++) {
        p[k] = 0.5 * (s->v[3 * a + k] + s->v[3 * b + k]);
        l += p[k] * p[k];
    }
    for (int k = 0; k < 3; k++) s->v[3 * s->nv + k] = p[k] / sqrt(l);
    keys[2 * *nk] = lo, keys[2 * *nk + 1] = hi, vals[*nk] = s->nv;
    (*nk)++;
    return s->nv++;
}

/* A unit icosphere, 2 subdivisions: 162 vertices, 320 triangles, outward. */
static void icosphere(soup *s)
{
    const double t = (1 + sqrt(5.0)) / 2;
    const double v0[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                              {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    const int f0[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                           {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                           {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    s->nv = 12;
    s->nf = 20;
    for (int i = 0; i < 12; i++) {
        double l = sqrt(v0[i][0] * v0[i][0] + v0[i][1] * v0[i][1] + v0[i][2] * v0[i][2]);
        for (int k = 0; k < 3; k++) s->v[3 * i + k] = v0[i][k] / l;
    }
    memcpy(s->f, f0, sizeof f0);
    static int keys[2 * 1000], vals[1000], nf[3 * 1400];
    for (int it = 0; it < 2; it++) {
        int nk = 0, n = 0;
        for (int i = 0; i < s->nf; i++) {
            int a = s->f[3 * i], b = s->f[3 * i + 1], c = s->f[3 * i + 2];
            int ab = ico_mid(s, a, b, keys, vals, &nk), bc = ico_mid(s, b, c, keys, vals, &nk);
            int ca = ico_mid(s, c, a, keys, vals, &nk);
            int q[12] = {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca};
            memcpy(nf + 3 * n, q, sizeof q);
            n += 4;
        }
        memcpy(s->f, nf, 3 * (size_t)n * sizeof *nf);
        s->nf = n;
    }
}

/* Two unit cubes, the second moved into the first: a self-intersecting surface. */
static void two_cubes(soup *s)
{
    static const int f[12][3] = {{0, 1, 3}, {0, 3, 2}, {4, 6, 7}, {4, 7, 5}, {0, 4, 5}, {0, 5, 1},
                                 {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 5, 7}, {1, 7, 3}};
    const double off[2][3] = {{0, 0, 0}, {0.3, 0.4, 0.35}};
    s->nv = 16;
    s->nf = 24;
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < 8; i++) {
            s->v[3 * (8 * c + i)] = off[c][0] + (i >> 2 & 1);
            s->v[3 * (8 * c + i) + 1] = off[c][1] + (i >> 1 & 1);
            s->v[3 * (8 * c + i) + 2] = off[c][2] + (i & 1);
        }
        for (int t = 0; t < 12; t++)
            for (int k = 0; k < 3; k++) s->f[3 * (12 * c + t) + k] = 8 * c + f[t][k];
    }
}

static const char *write_obj(const soup *s, const char *name)
{
    const char *path = tw_test_tmp_path(name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    for (int i = 0; i < s->nv; i++) fprintf(f, "v %.17g %.17g %.17g\n", s->v[3 * i], s->v[3 * i + 1], s->v[3 * i + 2]);
    for (int i = 0; i < s->nf; i++) fprintf(f, "f %d %d %d\n", s->f[3 * i] + 1, s->f[3 * i + 1] + 1, s->f[3 * i + 2] + 1);
    fclose(f);
    return path;
}

static tw_mesher_def no_cache(int tets)
{
    tw_mesher_def d = tw_default_mesher_def();
    d.target_tets = tets;
    d.use_cache = 0;
    return d;
}

static int edge_cmp(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (*x > *y) - (*x < *y);
}

/* Every edge of the boundary faces lies in exactly two of them. */
static int boundary_is_closed_manifold(const tw_mesh *m)
{
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    long long nv = tw_mesh_vertex_count(m);
    long long *e = malloc(3 * (size_t)nf * sizeof *e);
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < 3; k++) {
            long long a = faces[3 * f + k], b = faces[3 * f + (k + 1) % 3];
            e[3 * f + k] = a < b ? a * nv + b : b * nv + a;
        }
    qsort(e, 3 * (size_t)nf, sizeof *e, edge_cmp);
    int ok = nf > 0;
    for (size_t i = 0; i < 3 * (size_t)nf;) {
        size_t j = i;
        while (j < 3 * (size_t)nf && e[j] == e[i]) j++;
        if (j - i != 2) ok = 0;
        i = j;
    }
    free(e);
    free(faces);
    return ok;
}

/* ----------------------------------------------------------------- tests */

TW_TEST(icosphere_valid_mesh)
{
    if (!have_tetgen()) return TW_SKIP;
    soup s;
    icosphere(&s);
    const char *path = write_obj(&s, "mesher_ico.obj");
    CHECK(path);
    tw_surface *surf = tw_surface_load(path);
    CHECK(surf);
    double v_surface = tw_surface_volume(surf);
    tw_surface_destroy(surf);
    tw_mesher_def d = no_cache(3000);
    tw_mesher_report r;
    tw_mesh *m = tw_mesh_from_surface(path, &d, &r);
    if (!m) fprintf(stderr, "%s\n", tw_last_error());
    CHECK(m);
    for (int e = 0; e < tw_mesh_tet_count(m); e++) CHECK(tw_mesh_det(m, e) > 0);
    CHECK(boundary_is_closed_manifold(m));
    tw_mesh_stats st = tw_mesh_compute_stats(m);
    CHECK_NEAR(st.volume, v_surface, 0.01 * v_surface);
    CHECK(r.tets == tw_mesh_tet_count(m) && r.min_dihedral > 0 && r.max_radius_edge >= 0.6);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(icosphere_count_on_target)
{
    if (!have_tetgen()) return TW_SKIP;
    soup s;
    icosphere(&s);
    const char *path = write_obj(&s, "mesher_ico_count.obj");
    tw_mesher_def d = no_cache(2000);
    tw_mesher_report r;
    tw_mesh *m = tw_mesh_from_surface(path, &d, &r);
    CHECK(m);
    fprintf(stderr, "asked 2000: %d tets after %d runs\n", r.tets, r.tries);
    CHECK(r.on_target && fabs(r.tets - 2000.0) <= 400);
    tw_mesh_destroy(m);
    return 0;
}

static int bunny_count(int tets)
{
    if (!have_tetgen()) return TW_SKIP;
    const char *path = tw_test_mesh_path("bunny_closed_3485v.off");
    tw_surface *s = tw_surface_load(path);
    CHECK(s);
    tw_status closed = tw_surface_validate(s, path, NULL);
    if (closed != TW_OK) fprintf(stderr, "%s\n", tw_last_error());
    CHECK(closed == TW_OK);
    tw_surface_destroy(s);
    tw_mesher_def d = no_cache(tets);
    tw_mesher_report r;
    tw_mesh *m = tw_mesh_from_surface(path, &d, &r);
    if (!m) fprintf(stderr, "%s\n", tw_last_error());
    CHECK(m);
    fprintf(stderr, "asked %d: %d tets after %d runs in %.2f s\n", tets, r.tets, r.tries, r.seconds);
    CHECK(fabs(r.tets - (double)tets) <= 0.2 * tets);
    CHECK_NEAR(r.mesh_volume, r.surface_volume, 0.01 * r.surface_volume);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bunny_20k_on_target) { return bunny_count(20000); }
TW_TEST(bunny_60k_on_target) { return bunny_count(60000); }

TW_TEST(hole_is_reported)
{
    soup s;
    icosphere(&s);
    s.nf -= 2; /* two neighbouring triangles gone: one hole */
    const char *path = write_obj(&s, "mesher_hole.obj");
    tw_mesher_def d = no_cache(2000);
    tw_mesh *m = tw_mesh_from_surface(path, &d, NULL);
    CHECK(m == NULL);
    fprintf(stderr, "message: %s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "boundary edges in 1 boundary loops"));
    CHECK(strstr(tw_last_error(), "the surface has holes"));
    CHECK(strstr(tw_last_error(), "mesher_hole.obj"));
    return 0;
}

TW_TEST(self_intersection_is_reported)
{
    soup s;
    two_cubes(&s);
    const char *path = write_obj(&s, "mesher_cross.obj");
    tw_mesher_def d = no_cache(2000);
    tw_mesh *m = tw_mesh_from_surface(path, &d, NULL);
    CHECK(m == NULL);
    fprintf(stderr, "message: %s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "intersects itself"));
    CHECK(strstr(tw_last_error(), "pairs of crossing triangles (the first: triangles"));
    return 0;
}

TW_TEST(flipped_triangle_is_reported)
{
    soup s;
    icosphere(&s);
    int t = s.f[0];
    s.f[0] = s.f[1];
    s.f[1] = t;
    const char *path = write_obj(&s, "mesher_flipped.obj");
    tw_surface *surf = tw_mesher_load_surface(path);
    CHECK(surf);
    tw_surface_check c;
    CHECK(tw_surface_validate(surf, path, &c) == TW_ERR_INVALID);
    tw_surface_destroy(surf);
    CHECK(c.misoriented_edges == 3);
    CHECK(strstr(tw_last_error(), "inconsistent orientation"));
    return 0;
}

TW_TEST(nonmanifold_edge_is_reported)
{
    soup s;
    icosphere(&s);
    /* a fin: a third triangle on the first edge */
    s.v[3 * s.nv] = 2, s.v[3 * s.nv + 1] = 2, s.v[3 * s.nv + 2] = 2;
    s.f[3 * s.nf] = s.f[0], s.f[3 * s.nf + 1] = s.f[1], s.f[3 * s.nf + 2] = s.nv;
    s.nv++, s.nf++;
    const char *path = write_obj(&s, "mesher_fin.obj");
    tw_mesher_def d = no_cache(2000);
    tw_mesh *m = tw_mesh_from_surface(path, &d, NULL);
    CHECK(m == NULL);
    /* the fin's two free edges are holes too; those are reported first */
    CHECK(strstr(tw_last_error(), "2 boundary edges in 1 boundary loops"));
    tw_surface *surf = tw_mesher_load_surface(path);
    tw_surface_check c;
    tw_surface_validate(surf, path, &c);
    tw_surface_destroy(surf);
    CHECK(c.nonmanifold_edges == 1);
    return 0;
}

TW_TEST(stl_binary_matches_obj)
{
    soup s;
    icosphere(&s);
    const char *path = tw_test_tmp_path("mesher_ico.stl");
    FILE *f = fopen(path, "wb");
    CHECK(f);
    char header[80] = "tetwarp test";
    fwrite(header, 1, 80, f);
    unsigned n = (unsigned)s.nf;
    unsigned char c4[4] = {n & 255, n >> 8 & 255, n >> 16 & 255, n >> 24 & 255};
    fwrite(c4, 1, 4, f);
    for (int t = 0; t < s.nf; t++) {
        float rec[12] = {0};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) rec[3 + 3 * k + j] = (float)s.v[3 * s.f[3 * t + k] + j];
        fwrite(rec, 4, 12, f); /* little-endian machines only, as the test assumes */
        fputc(0, f);
        fputc(0, f);
    }
    fclose(f);
    tw_surface *surf = tw_mesher_load_surface(path);
    if (!surf) fprintf(stderr, "%s\n", tw_last_error());
    CHECK(surf);
    CHECK(surf->vertex_count == s.nv && surf->triangle_count == s.nf);
    tw_surface_check c;
    CHECK_OK(tw_surface_validate(surf, path, &c));
    CHECK(c.volume > 3.9 && c.volume < 4.2); /* 4.05 for the 2-subdivision icosphere */
    tw_surface_destroy(surf);
    return 0;
}

TW_TEST(missing_tetgen_is_reported)
{
    soup s;
    icosphere(&s);
    const char *path = write_obj(&s, "mesher_ico_missing.obj");
    tw_mesher_def d = no_cache(2000);
    d.tetgen = "/nonexistent/tetgen";
    tw_mesh *m = tw_mesh_from_surface(path, &d, NULL);
    CHECK(m == NULL);
    CHECK(strstr(tw_last_error(), "tetgen not found"));
    CHECK(strstr(tw_last_error(), "apt-get install tetgen"));
    return 0;
}

TW_TEST(cache_second_call_is_cached)
{
    if (!have_tetgen()) return TW_SKIP;
    const char *path = tw_test_mesh_path("bunny_closed_3485v.off");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tw_test_tmp_path("mesher_cache"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    tw_mesher_def d = tw_default_mesher_def();
    d.target_tets = 40000;
    d.cache_dir = dir;
    tw_mesher_report r1, r2;
    tw_mesh *m1 = tw_mesh_from_surface(path, &d, &r1);
    CHECK(m1);
    tw_mesh *m2 = tw_mesh_from_surface(path, &d, &r2);
    CHECK(m2);
    fprintf(stderr, "first %.3f s (%d runs), second %.3f s (cached %d)\n", r1.seconds, r1.tries,
            r2.seconds, r2.cached);
    CHECK(!r1.cached && r2.cached && r2.tries == 0);
    CHECK(tw_mesh_tet_count(m1) == tw_mesh_tet_count(m2));
    CHECK(r2.seconds < r1.seconds);
    tw_mesh_destroy(m1);
    tw_mesh_destroy(m2);
    return 0;
}
