/* Bone cores: the vertices deeper than a distance below the surface, made
 * kinematic and driven rigidly while the skin follows. */
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

/* Distance of p to the boundary of the box [0,L]x[0,W]x[0,H]. */
static double box_depth(const double *p, double L, double W, double H)
{
    double d = p[0], s[3] = {L, W, H};
    for (int a = 0; a < 3; a++) {
        if (p[a] < d) d = p[a];
        if (s[a] - p[a] < d) d = s[a] - p[a];
    }
    return d;
}

TW_TEST(core_of_bar_is_the_deep_vertices)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 20, 4, 4);
    CHECK(m);
    int n = tw_mesh_vertex_count(m);
    unsigned char *in = malloc((size_t)n);
    int count = tw_mesh_mark_core(m, 0.05, in);
    printf("core: %d of %d vertices\n", count, n);
    int want = 0;
    for (int i = 0; i < n; i++) {
        double d = box_depth(tw_mesh_positions(m) + 3 * i, 1, 0.2, 0.2);
        int deep = d > 0.05 + 1e-9;
        want += deep;
        if (in[i] != deep) {
            fprintf(stderr, "vertex %d at depth %.9g: marked %d\n", i, d, in[i]);
            return 1;
        }
        if (d < 1e-12) CHECK(!in[i]); /* never a boundary vertex */
    }
    CHECK(count == want);
    CHECK(count == 17); /* y = z = 0.1, x = 0.1 .. 0.9 */
    free(in);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(core_errors_are_clear)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 20, 4, 4);
    CHECK(m);
    unsigned char *in = malloc((size_t)tw_mesh_vertex_count(m));
    CHECK(tw_mesh_mark_core(m, 0.1, in) == -1); /* the centre line is exactly 0.1 deep: nothing deeper */
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "choose a smaller depth"));
    CHECK(tw_mesh_mark_core(m, -1, in) == -1);
    CHECK(strstr(tw_last_error(), "depth -1"));
    free(in);
    tw_mesh_destroy(m);
    return 0;
}

/* The 12 triangles of the cube [lo,hi]^3 (positions 24, triangles 36). */
static tw_surface cube_surface(double lo, double hi, double *pos, int *tri)
{
    static const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (int v = 0; v < 8; v++)
        for (int a = 0; a < 3; a++) pos[3 * v + a] = (v >> a) & 1 ? hi : lo;
    for (int f = 0; f < 6; f++) {
        const int *q = quads[f];
        int t[6] = {q[0], q[1], q[2], q[0], q[2], q[3]};
        memcpy(tri + 6 * f, t, sizeof t);
    }
    tw_surface s = {8, 12, pos, tri};
    return s;
}

/* A lattice sticking out of the surface it covers (the unit cube of 0.1 m
 * cells around the cube [0.1, 0.9]^3): the core measured from the surface is
 * the vertices inside it and deeper than depth below it, not those deep
 * below the lattice's own boundary. */
TW_TEST(core_from_surface_is_deep_inside_it)
{
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 10, 10, 10);
    CHECK(m);
    int n = tw_mesh_vertex_count(m);
    double pos[24];
    int tri[36];
    tw_surface s = cube_surface(0.1, 0.9, pos, tri);
    unsigned char *in = malloc((size_t)n);
    int count = tw_mesh_mark_core_surface(m, &s, 0.15, in);
    printf("core from the surface: %d of %d vertices; from the lattice: %d\n", count, n,
           tw_mesh_mark_core(m, 0.15, in));
    CHECK(tw_mesh_mark_core(m, 0.15, in) == 7 * 7 * 7); /* 0.2 .. 0.8: deep in the lattice */
    count = tw_mesh_mark_core_surface(m, &s, 0.15, in);
    int want = 0;
    for (int i = 0; i < n; i++) {
        const double *p = tw_mesh_positions(m) + 3 * i;
        double q[3] = {p[0] - 0.1, p[1] - 0.1, p[2] - 0.1};
        double d = box_depth(q, 0.8, 0.8, 0.8); /* < 0 outside */
        int deep = d > 0.15 + 1e-9;
        want += deep;
        if (in[i] != deep) {
            fprintf(stderr, "vertex %d at (%g %g %g), %.9g inside the surface: marked %d\n", i, p[0], p[1], p[2], d,
                    in[i]);
            return 1;
        }
    }
    CHECK(count == want);
    CHECK(count == 5 * 5 * 5); /* 0.3 .. 0.7 */
    free(in);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(core_from_surface_errors_are_clear)
{
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 10, 10, 10);
    CHECK(m);
    unsigned char *in = malloc((size_t)tw_mesh_vertex_count(m));
    double pos[24];
    int tri[36];
    tw_surface s = cube_surface(0.1, 0.9, pos, tri);
    CHECK(tw_mesh_mark_core_surface(m, NULL, 0.1, in) == -1);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "no surface given"));
    CHECK(tw_mesh_mark_core_surface(m, &s, 0.4, in) == -1); /* the centre is 0.4 deep: nothing deeper */
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "choose a smaller depth"));
    for (int i = 0; i < tw_mesh_vertex_count(m); i++) CHECK(!in[i]);
    CHECK(tw_mesh_mark_core_surface(m, &s, 0, in) == -1);
    CHECK(strstr(tw_last_error(), "depth 0 m"));
    tw_surface far = cube_surface(5, 6, pos, tri); /* around no vertex */
    CHECK(tw_mesh_mark_core_surface(m, &far, 0.1, in) == -1);
    CHECK(strstr(tw_last_error(), "choose a smaller depth"));
    tri[5] = 99;
    CHECK(tw_mesh_mark_core_surface(m, &far, 0.1, in) == -1);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "triangle 1 has vertex 99 out of range"));
    free(in);
    tw_mesh_destroy(m);
    return 0;
}

/* The closed bunny: a core exists at 1 cm and no boundary vertex is in it. */
TW_TEST(core_of_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), &ld, NULL);
    CHECK(m);
    int n = tw_mesh_vertex_count(m);
    unsigned char *in = malloc((size_t)n);
    int count = tw_mesh_mark_core(m, 0.01, in);
    printf("bunny core at 1 cm: %d of %d vertices\n", count, n);
    CHECK(count > 0 && count < n);
    /* vertices 0..3484 are the surface (SOURCES.md): none in the core */
    for (int i = 0; i < 3485; i++) CHECK(!in[i]);
    free(in);
    tw_mesh_destroy(m);
    return 0;
}

static void rot_z(double th, double *R)
{
    double c = cos(th), s = sin(th);
    double r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    memcpy(R, r, sizeof r);
}

/* Rotating the core of a bar by up to 30 degrees about z while lifting it:
 * the core follows R (X - c) + c + t exactly, the skin follows but lags. */
TW_TEST(driven_core_moves_rigidly)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 20, 4, 4);
    CHECK(m);
    int n = tw_mesh_vertex_count(m);
    unsigned char *in = malloc((size_t)n);
    int count = tw_mesh_mark_core(m, 0.04, in); /* y, z in {0.05, 0.1, 0.15}, x in 0.05 .. 0.95 */
    CHECK(count == 3 * 3 * 19);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU;
    d.gravity[2] = 0;
    d.damping_mass = 2;
    d.youngs_modulus = 2e4; /* soft skin: it visibly lags the bone */
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    CHECK_OK(tw_world_set_kinematic_group(w, in));
    const double *X = tw_mesh_positions(m);
    double c[3] = {0.5, 0.1, 0.1}, R[9], t[3];
    double core_err = 0, skin_lag = 0, skin_after = 0, rigid_max = 0;
    for (int s = 1; s <= 80; s++) {
        double f = s < 20 ? s / 20.0 : 1.0; /* drive for 20 steps, then hold */
        rot_z(f * 30 * 3.14159265358979 / 180, R);
        t[0] = 0; t[1] = 0; t[2] = 0.05 * f;
        CHECK_OK(tw_world_drive_group(w, in, R, t, c));
        CHECK_OK(tw_world_step(w, NULL));
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < n; i++) {
            double want[3], dv[3] = {X[3 * i] - c[0], X[3 * i + 1] - c[1], X[3 * i + 2] - c[2]}, err = 0, mv = 0;
            for (int r = 0; r < 3; r++) {
                want[r] = R[3 * r] * dv[0] + R[3 * r + 1] * dv[1] + R[3 * r + 2] * dv[2] + c[r] + t[r];
                err += (x[3 * i + r] - want[r]) * (x[3 * i + r] - want[r]);
                mv += (want[r] - X[3 * i + r]) * (want[r] - X[3 * i + r]);
            }
            err = sqrt(err);
            if (in[i]) {
                core_err = tw_test_max(core_err, err);
            } else {
                if (s == 19 && err > skin_lag) skin_lag = err;
                if (s == 80 && err > skin_after) skin_after = err;
                if (s == 80 && sqrt(mv) > rigid_max) rigid_max = sqrt(mv);
            }
        }
    }
    printf("core error %.3g m; skin off the rigid motion by %.3g m while driven, %.3g m after holding; "
           "largest rigid displacement %.3g m\n", core_err, skin_lag, skin_after, rigid_max);
    CHECK(core_err <= 1e-5);
    CHECK(skin_lag > 1e-3);                 /* the skin is simulated, not carried along */
    CHECK(skin_after < 0.1 * rigid_max);    /* ... and follows the bone */
    free(in);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}
