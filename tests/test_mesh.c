/* The mesh object: generators, validation, boundary, statistics, writers and
 * material fills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "tw_test.h"

static const double tw_pi = 3.14159265358979323846;

static double mesh_volume(const tw_mesh *m)
{
    double v = 0;
    for (int e = 0; e < tw_mesh_tet_count(m); e++) v += tw_mesh_det(m, e) / 6.0;
    return v;
}

static int all_positive(const tw_mesh *m)
{
    for (int e = 0; e < tw_mesh_tet_count(m); e++)
        if (!(tw_mesh_det(m, e) > 0)) return 0;
    return 1;
}

/* Volume enclosed by the faces by the divergence theorem: sum over faces of
 * centroid . normal * area / 3 (normal*area = cross/2). */
static double surface_volume(const double *X, const int *faces, int nf)
{
    double v = 0;
    for (int f = 0; f < nf; f++) {
        const double *a = X + 3 * faces[3 * f], *b = X + 3 * faces[3 * f + 1], *c = X + 3 * faces[3 * f + 2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        double g[3] = {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3};
        v += (g[0] * n[0] + g[1] * n[1] + g[2] * n[2]) / 6.0;
    }
    return v;
}

static int edge_cmp(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* 1 when every edge of the faces is shared by exactly two faces, in
 * opposite directions (closed and consistently oriented). */
static int surface_closed(const int *faces, int nf, int nv)
{
    long long *und = malloc(3 * (size_t)nf * sizeof *und), *dir = malloc(3 * (size_t)nf * sizeof *dir);
    int ok = und && dir;
    for (int f = 0; ok && f < nf; f++)
        for (int k = 0; k < 3; k++) {
            long long a = faces[3 * f + k], b = faces[3 * f + (k + 1) % 3];
            und[3 * f + k] = a < b ? a * nv + b : b * nv + a;
            dir[3 * f + k] = a * nv + b;
        }
    if (ok) {
        qsort(und, 3 * (size_t)nf, sizeof *und, edge_cmp);
        qsort(dir, 3 * (size_t)nf, sizeof *dir, edge_cmp);
        for (size_t i = 0; i < 3 * (size_t)nf;) {
            size_t j = i;
            while (j < 3 * (size_t)nf && und[j] == und[i]) j++;
            if (j - i != 2) ok = 0;
            i = j;
        }
        for (size_t i = 1; i < 3 * (size_t)nf; i++)
            if (dir[i] == dir[i - 1]) ok = 0;
    }
    free(und);
    free(dir);
    return ok;
}

TW_TEST(bar_counts)
{
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.5, 4, 3, 2);
    CHECK(m);
    CHECK(tw_mesh_vertex_count(m) == 5 * 4 * 3);
    CHECK(tw_mesh_tet_count(m) == 6 * 4 * 3 * 2);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_vertex_numbering)
{
    int nx = 4, ny = 3, nz = 2;
    tw_mesh *m = tw_mesh_bar(2.0, 1.5, 0.5, nx, ny, nz);
    CHECK(m);
    const double *X = tw_mesh_positions(m);
    int i = 3, j = 2, k = 1, v = i + (nx + 1) * (j + (ny + 1) * k);
    CHECK_NEAR(X[3 * v], 2.0 * i / nx, 1e-15);
    CHECK_NEAR(X[3 * v + 1], 1.5 * j / ny, 1e-15);
    CHECK_NEAR(X[3 * v + 2], 0.5 * k / nz, 1e-15);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_volume)
{
    tw_mesh *m = tw_mesh_bar(2.0, 0.3, 0.7, 5, 3, 4);
    CHECK(m);
    CHECK_NEAR(mesh_volume(m), 2.0 * 0.3 * 0.7, 1e-12);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_all_positive)
{
    tw_mesh *m = tw_mesh_bar(1.0, 2.0, 3.0, 3, 4, 5);
    CHECK(m);
    CHECK(all_positive(m));
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_invalid_arguments)
{
    CHECK(tw_mesh_bar(1.0, 1.0, 1.0, 2, 0, 2) == NULL);
    CHECK(strstr(tw_last_error(), "ny 0"));
    CHECK(tw_mesh_bar(-2.5, 1.0, 1.0, 2, 2, 2) == NULL);
    CHECK(strstr(tw_last_error(), "-2.5"));
    return 0;
}

TW_TEST(bar_boundary_count)
{
    int nx = 4, ny = 3, nz = 2;
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.5, nx, ny, nz);
    CHECK(m);
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    CHECK(nf == 4 * (nx * ny + ny * nz + nx * nz));
    free(faces);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_boundary_closed)
{
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.5, 4, 3, 2);
    CHECK(m);
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    CHECK(nf > 0);
    CHECK(surface_closed(faces, nf, tw_mesh_vertex_count(m)));
    free(faces);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bar_boundary_outward)
{
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.5, 4, 3, 2);
    CHECK(m);
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    /* the bar sits in [0,L]x[0,W]x[0,H]: inward normals would give -1 */
    CHECK_NEAR(surface_volume(tw_mesh_positions(m), faces, nf), 1.0, 1e-12);
    free(faces);
    tw_mesh_destroy(m);
    return 0;
}

static double tube_exact(double ri, double ro, double len, int nt)
{
    return 0.5 * nt * sin(2 * tw_pi / nt) * (ro * ro - ri * ri) * len;
}

TW_TEST(tube_volume)
{
    tw_mesh *m = tw_mesh_tube(0.5, 1.0, 2.0, 2, 12, 3);
    CHECK(m);
    CHECK_NEAR(mesh_volume(m), tube_exact(0.5, 1.0, 2.0, 12), 1e-12);
    /* and close to the round tube */
    CHECK_NEAR(mesh_volume(m), tw_pi * (1.0 - 0.25) * 2.0, 0.05 * tw_pi * 0.75 * 2.0);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(tube_all_positive)
{
    tw_mesh *m = tw_mesh_tube(0.2, 1.0, 1.0, 3, 3, 2);
    CHECK(m);
    CHECK(all_positive(m));
    CHECK(tw_mesh_vertex_count(m) == 4 * 3 * 3);
    CHECK(tw_mesh_tet_count(m) == 6 * 3 * 3 * 2);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(tube_boundary_closed)
{
    tw_mesh *m = tw_mesh_tube(0.5, 1.0, 2.0, 2, 8, 3);
    CHECK(m);
    int *faces = NULL;
    int nf = tw_mesh_boundary_faces(m, &faces);
    /* inner + outer walls 2*8*3 quads, two end rings 2*2*8 quads, 2 tris each */
    CHECK(nf == 2 * (2 * 8 * 3 + 2 * 2 * 8));
    CHECK(surface_closed(faces, nf, tw_mesh_vertex_count(m)));
    CHECK_NEAR(surface_volume(tw_mesh_positions(m), faces, nf), tube_exact(0.5, 1.0, 2.0, 8), 1e-12);
    free(faces);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(tube_invalid_arguments)
{
    CHECK(tw_mesh_tube(0.75, 0.25, 1.0, 1, 8, 1) == NULL);
    CHECK(strstr(tw_last_error(), "0.75"));
    CHECK(tw_mesh_tube(0.5, 1.0, 1.0, 1, 2, 1) == NULL);
    CHECK(strstr(tw_last_error(), "ntheta 2"));
    return 0;
}

/* A regular tet of edge 2*sqrt(2). */
static const double regular_X[12] = {1, 1, 1, 1, -1, -1, -1, 1, -1, -1, -1, 1};

TW_TEST(stats_regular_tet)
{
    int t[4] = {0, 2, 1, 3};
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh *m = tw_mesh_create(regular_X, 4, t, 1, NULL, &def, NULL);
    CHECK(m);
    tw_mesh_stats s = tw_mesh_compute_stats(m);
    double dihedral = acos(1.0 / 3.0) * 180.0 / tw_pi; /* 70.5288 deg */
    CHECK_NEAR(s.min_dihedral, dihedral, 1e-9);
    CHECK_NEAR(s.max_dihedral, dihedral, 1e-9);
    CHECK_NEAR(s.max_aspect, 1.0, 1e-12);
    CHECK_NEAR(s.mean_aspect, 1.0, 1e-12);
    CHECK_NEAR(s.volume, 8.0 / 3.0, 1e-12);
    CHECK_NEAR(s.min_edge, 2 * sqrt(2.0), 1e-12);
    CHECK(s.boundary_faces == 4);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(stats_bar)
{
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.5, 4, 2, 1);
    CHECK(m);
    tw_mesh_stats s = tw_mesh_compute_stats(m);
    CHECK(s.vertices == 5 * 3 * 2 && s.tets == 6 * 8 && s.regions == 1);
    CHECK(s.boundary_faces == 4 * (8 + 2 + 4));
    CHECK_NEAR(s.volume, 1.0, 1e-12);
    CHECK_NEAR(s.bbox_max[0] - s.bbox_min[0], 2.0, 0);
    CHECK_NEAR(s.bbox_max[2], 0.5, 0);
    CHECK_NEAR(s.min_edge, 0.5, 1e-15);              /* cells are 0.5 cubes */
    CHECK_NEAR(s.max_edge, 0.5 * sqrt(3.0), 1e-15);  /* the main diagonal */
    CHECK_NEAR(s.min_dihedral, 45.0, 1e-9);          /* Kuhn tets: 45, 60, 90 */
    CHECK_NEAR(s.max_dihedral, 90.0, 1e-9);
    CHECK_NEAR(s.min_volume, 0.125 / 6, 1e-15);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(create_inverted_reoriented)
{
    int t[4] = {0, 1, 2, 3}; /* regular_X in this order is negative */
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh_report rep;
    /* confirm the input really is inverted */
    CHECK(tw_tet_det(regular_X, regular_X + 3, regular_X + 6, regular_X + 9) < 0);
    tw_mesh *m = tw_mesh_create(regular_X, 4, t, 1, NULL, &def, &rep);
    CHECK(m);
    CHECK(rep.reoriented == 1);
    CHECK(tw_mesh_det(m, 0) > 0);
    CHECK_NEAR(mesh_volume(m), 8.0 / 3.0, 1e-12);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(create_inverted_strict)
{
    int t[4] = {0, 1, 2, 3};
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1;
    CHECK(tw_mesh_create(regular_X, 4, t, 1, NULL, &def, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "inverted"));
    return 0;
}

TW_TEST(create_unused_vertex)
{
    double X[15];
    memcpy(X, regular_X, sizeof regular_X);
    X[12] = 5;
    X[13] = 5;
    X[14] = 5;
    int t[4] = {0, 1, 2, 3};
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_create(X, 5, t, 1, NULL, &def, &rep);
    CHECK(m);
    CHECK(rep.unused_vertices == 1);
    CHECK(m->unused[4] == 1 && m->unused[0] == 0);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(create_rejects_repeated_vertex)
{
    int t[4] = {0, 1, 1, 3};
    CHECK(tw_mesh_create(regular_X, 4, t, 1, NULL, NULL, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "element 0 uses vertex 1 twice"));
    return 0;
}

TW_TEST(create_rejects_out_of_range)
{
    int t[4] = {0, 1, 2, 4};
    CHECK(tw_mesh_create(regular_X, 4, t, 1, NULL, NULL, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "vertex 4"));
    return 0;
}

TW_TEST(create_rejects_duplicate_element)
{
    double X[15];
    memcpy(X, regular_X, sizeof regular_X);
    X[12] = 3;
    X[13] = 3;
    X[14] = 3;
    int t[12] = {0, 1, 2, 3, 1, 0, 3, 4, 3, 2, 1, 0}; /* element 2 is element 0 permuted */
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    CHECK(tw_mesh_create(X, 5, t, 3, NULL, &def, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "element 2 duplicates element 0"));
    return 0;
}

TW_TEST(create_rejects_zero_volume)
{
    double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1e-14};
    int t[4] = {0, 1, 2, 3};
    CHECK(tw_mesh_create(X, 4, t, 1, NULL, NULL, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "zero volume"));
    return 0;
}

/* Two tets on the face (0 1 2) in the plane z = 0: with the fifth vertex
 * above the plane they overlap (folded), below it they meet at the face. */
static const double fold_X[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.2, 0.2, 0.5};
static const double unfold_X[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.2, 0.2, -0.5};
static const int fold_T[8] = {0, 1, 2, 3, 0, 1, 2, 4};   /* both positive */
static const int unfold_T[8] = {0, 1, 2, 3, 0, 2, 1, 4}; /* both positive */

TW_TEST(folded_pair_counted)
{
    CHECK(tw_tet_det(fold_X, fold_X + 3, fold_X + 6, fold_X + 12) > 0); /* not inverted: only the fold is wrong */
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_create(fold_X, 5, fold_T, 2, NULL, &def, &rep);
    CHECK(m);
    CHECK(rep.folded == 1 && rep.reoriented == 0);
    CHECK(rep.folded_first[0] == 0 && rep.folded_first[1] == 1);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(folded_pair_strict_names_both)
{
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1;
    CHECK(tw_mesh_create(fold_X, 5, fold_T, 2, NULL, &def, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "element 1 overlaps element 0 across their shared face (vertices 0 1 2)"));
    CHECK(strstr(tw_last_error(), "folded"));
    return 0;
}

TW_TEST(unfolded_pair_not_counted)
{
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1; /* strict: any fold would fail the load */
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_create(unfold_X, 5, unfold_T, 2, NULL, &def, &rep);
    CHECK(m);
    CHECK(rep.folded == 0 && rep.reoriented == 0);
    CHECK(rep.folded_first[0] == -1);
    tw_mesh_destroy(m);
    return 0;
}

/* stem.node and stem.ele with the given text; 0 when written */
static int write_pair(const char *stem, const char *node, const char *ele)
{
    char path[1100];
    const char *text[2] = {node, ele}, *ext[2] = {"node", "ele"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s.%s", stem, ext[i]);
        FILE *f = fopen(path, "w");
        if (!f) return -1;
        fputs(text[i], f);
        if (fclose(f)) return -1;
    }
    return 0;
}

TW_TEST(folded_file_counted_and_strict_cites_lines)
{
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", tw_test_tmp_path("folded"));
    /* 1-based, as TetGen writes; the second tet on line 3 */
    CHECK(write_pair(stem, "5 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0.2 0.2 0.5\n",
                     "2 4 0\n1 1 2 3 4\n2 1 2 3 5\n") == 0);
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(stem, &def, &rep);
    CHECK(m);
    CHECK(rep.folded == 1 && rep.first_index == 1);
    tw_mesh_destroy(m);
    def.strict = 1;
    CHECK(tw_mesh_load(stem, &def, NULL) == NULL);
    CHECK(strstr(tw_last_error(), "folded.ele:3: element 2 overlaps element 1 on line 2 across their shared face "
                                  "(vertices 1 2 3)"));
    return 0;
}

TW_TEST(unfolded_file_loads_strict)
{
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", tw_test_tmp_path("unfolded"));
    CHECK(write_pair(stem, "5 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0.2 0.2 -0.5\n",
                     "2 4 0\n1 1 2 3 4\n2 1 3 2 5\n") == 0);
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.strict = 1;
    tw_mesh_report rep;
    tw_mesh *m = tw_mesh_load(stem, &def, &rep);
    CHECK(m);
    CHECK(rep.folded == 0);
    tw_mesh_destroy(m);
    return 0;
}

/* The shipped tet meshes and the generators' meshes: no folded pair. */
TW_TEST(shipped_meshes_not_folded)
{
    static const char *const files[] = {"armadillo_4k.node", "bunny_closed_3485v.tet.node",
                                        "dog_shrec398.tet.node", "liver_sofa.msh"};
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    for (int i = 0; i < 4; i++) {
        tw_mesh_report rep;
        tw_mesh *m = tw_mesh_load(tw_test_mesh_path(files[i]), &def, &rep);
        if (!m) fprintf(stderr, "%s: %s\n", files[i], tw_last_error());
        CHECK(m);
        if (rep.folded) fprintf(stderr, "%s: %d folded pairs\n", files[i], rep.folded);
        CHECK(rep.folded == 0);
        tw_mesh_destroy(m);
    }
    tw_mesh *gen[2] = {tw_mesh_bar(1, 0.2, 0.3, 5, 2, 3), tw_mesh_tube(0.1, 0.2, 1, 2, 16, 5)};
    for (int i = 0; i < 2; i++) {
        CHECK(gen[i]);
        tw_mesh_report rep;
        tw_mesh *m = tw_mesh_create(tw_mesh_positions(gen[i]), tw_mesh_vertex_count(gen[i]), tw_mesh_tets(gen[i]),
                                    tw_mesh_tet_count(gen[i]), NULL, &def, &rep);
        tw_mesh_destroy(gen[i]);
        CHECK(m);
        CHECK(rep.folded == 0);
        tw_mesh_destroy(m);
    }
    return 0;
}

TW_TEST(tetgen_round_trip)
{
    tw_mesh *bar = tw_mesh_bar(1.3, 0.7, 0.3, 3, 2, 2);
    CHECK(bar);
    int nt = tw_mesh_tet_count(bar), nv = tw_mesh_vertex_count(bar);
    int *region = malloc((size_t)nt * sizeof *region);
    CHECK(region);
    for (int e = 0; e < nt; e++) region[e] = e % 3 - 1;
    tw_mesh *m = tw_mesh_create(tw_mesh_positions(bar), nv, tw_mesh_tets(bar), nt, region, NULL, NULL);
    free(region);
    tw_mesh_destroy(bar);
    CHECK(m);
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", tw_test_tmp_path("round_trip"));
    CHECK_OK(tw_mesh_write_tetgen(m, stem));
    tw_mesh_report rep;
    tw_mesh *r = tw_mesh_load(stem, NULL, &rep);
    CHECK(r);
    CHECK(tw_mesh_vertex_count(r) == nv && tw_mesh_tet_count(r) == nt);
    CHECK(memcmp(tw_mesh_positions(r), tw_mesh_positions(m), 3 * (size_t)nv * sizeof(double)) == 0);
    CHECK(memcmp(tw_mesh_tets(r), tw_mesh_tets(m), 4 * (size_t)nt * sizeof(int)) == 0);
    CHECK(memcmp(tw_mesh_regions(r), tw_mesh_regions(m), (size_t)nt * sizeof(int)) == 0);
    CHECK(rep.first_index == 0 && rep.reoriented == 0);
    tw_mesh_destroy(r);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(write_obj_boundary_only)
{
    int nx = 3, ny = 2, nz = 2;
    tw_mesh *m = tw_mesh_bar(3.0, 2.0, 2.0, nx, ny, nz);
    CHECK(m);
    char path[1024];
    snprintf(path, sizeof path, "%s", tw_test_tmp_path("bar_surface.obj"));
    CHECK_OK(tw_mesh_write_obj(m, NULL, path));
    tw_surface *s = tw_surface_load(path);
    CHECK(s);
    int boundary_vertices = (nx + 1) * (ny + 1) * (nz + 1) - (nx - 1) * (ny - 1) * (nz - 1);
    CHECK(s->vertex_count == boundary_vertices);
    CHECK(s->triangle_count == 4 * (nx * ny + ny * nz + nx * nz));
    CHECK(surface_closed(s->triangles, s->triangle_count, s->vertex_count));
    CHECK_NEAR(surface_volume(s->positions, s->triangles, s->triangle_count), 12.0, 1e-9);
    tw_surface_destroy(s);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(write_obj_current_positions)
{
    tw_mesh *m = tw_mesh_bar(1.0, 1.0, 1.0, 1, 1, 1);
    CHECK(m);
    tw_real x[24];
    for (int i = 0; i < 24; i++) x[i] = (tw_real)(2 * tw_mesh_positions(m)[i]); /* scaled by 2 */
    char path[1024];
    snprintf(path, sizeof path, "%s", tw_test_tmp_path("cube_scaled.obj"));
    CHECK_OK(tw_mesh_write_obj(m, x, path));
    tw_surface *s = tw_surface_load(path);
    CHECK(s);
    CHECK_NEAR(surface_volume(s->positions, s->triangles, s->triangle_count), 8.0, 1e-6);
    tw_surface_destroy(s);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(fill_constant)
{
    tw_mesh *m = tw_mesh_bar(1.0, 1.0, 1.0, 2, 1, 1);
    CHECK(m);
    double out[12];
    tw_fill_constant(m, 3.5, out);
    for (int e = 0; e < 12; e++) CHECK(out[e] == 3.5);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(fill_gradient_centroid)
{
    tw_mesh *m = tw_mesh_bar(4.0, 1.0, 1.0, 4, 1, 1);
    CHECK(m);
    int nt = tw_mesh_tet_count(m);
    double *out = malloc((size_t)nt * sizeof *out);
    CHECK(out);
    tw_fill_linear_gradient(m, 0, 10.0, 30.0, out);
    const double *X = tw_mesh_positions(m);
    const int *t = tw_mesh_tets(m);
    double weighted = 0, volume = 0;
    for (int e = 0; e < nt; e++) {
        double cx = 0.25 * (X[3 * t[4 * e]] + X[3 * t[4 * e + 1]] + X[3 * t[4 * e + 2]] + X[3 * t[4 * e + 3]]);
        CHECK_NEAR(out[e], 10.0 + 20.0 * cx / 4.0, 1e-12);
        weighted += out[e] * tw_mesh_det(m, e);
        volume += tw_mesh_det(m, e);
    }
    /* the volume average of a linear field over the bar is its mid value */
    CHECK_NEAR(weighted / volume, 20.0, 1e-12);
    free(out);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(fill_by_region_only_matching)
{
    tw_mesh *bar = tw_mesh_bar(1.0, 1.0, 1.0, 2, 2, 1);
    CHECK(bar);
    int nt = tw_mesh_tet_count(bar);
    int region[24];
    for (int e = 0; e < nt; e++) region[e] = 1 + e % 3;
    tw_mesh *m = tw_mesh_create(tw_mesh_positions(bar), tw_mesh_vertex_count(bar), tw_mesh_tets(bar),
                                nt, region, NULL, NULL);
    tw_mesh_destroy(bar);
    CHECK(m);
    double out[24];
    tw_fill_constant(m, -1.0, out);
    int which[2] = {2, 7};
    double values[2] = {5.0, 9.0};
    tw_fill_by_region(m, 2, which, values, out);
    for (int e = 0; e < nt; e++) CHECK(out[e] == (region[e] == 2 ? 5.0 : -1.0));
    tw_mesh_destroy(m);
    return 0;
}
