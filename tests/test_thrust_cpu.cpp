/* The Thrust algorithms of kernels/thrust_fem.h on Thrust's CPP device system
 * (this file is compiled with THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP):
 * the same sort / unique / scan code the GPU runs, checked without a GPU
 * against host/fem.c's pattern and gather lists, array for array, and the
 * reductions against plain loops. Built wherever the CUDA headers are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "thrust_fem.h"

extern "C" {
#include "fem.h"
#include "mesh.h"
#include "tw_test.h"
}

#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_CPP
#error "test_thrust_cpu.cpp must be built for Thrust's CPP device system"
#endif

/* a[0..count) == b[0..count), else print the first mismatch */
static int same_ints(const char *what, const tw_ivec &a, const int *b, size_t count)
{
    if (a.size() != count) {
        fprintf(stderr, "%s: %zu entries from Thrust, %zu from fem.c\n", what, (size_t)a.size(), count);
        return 0;
    }
    std::vector<int> h(a.begin(), a.end());
    for (size_t k = 0; k < count; k++)
        if (h[k] != b[k]) {
            fprintf(stderr, "%s[%zu]: %d from Thrust, %d from fem.c\n", what, k, h[k], b[k]);
            return 0;
        }
    return 1;
}

/* The whole pattern against tw_fem_build's; prints what it compared. */
static int pattern_matches_fem(const tw_mesh *m)
{
    tw_fem f;
    if (tw_fem_build(&f, m, 1e5, 0.3, 1000, NULL, NULL, NULL) != TW_OK) {
        fprintf(stderr, "tw_fem_build: %s\n", tw_last_error());
        return 0;
    }
    tw_pattern_vectors p;
    if (tw_thrust_bad_indices(f.tets, f.n, f.nt) != 0) {
        fprintf(stderr, "%s: indices out of range\n", m->name);
        tw_fem_free(&f);
        return 0;
    }
    tw_build_pattern_vectors(f.tets, f.n, f.nt, p);
    size_t n = (size_t)f.n, nt = (size_t)f.nt, nnzb = (size_t)f.nnzb;
    int ok = p.n == f.n && p.nt == f.nt && p.nnzb == f.nnzb;
    if (!ok) fprintf(stderr, "n %d/%d nt %d/%d nnzb %d/%d (Thrust/fem.c)\n", p.n, f.n, p.nt, f.nt, p.nnzb, f.nnzb);
    ok = ok && same_ints("row_ptr", p.row_ptr, f.row_ptr, n + 1) && same_ints("col", p.col, f.col, nnzb) &&
         same_ints("diag", p.diag, f.diag, n) && same_ints("contrib_ptr", p.contrib_ptr, f.contrib_ptr, nnzb + 1) &&
         same_ints("contrib", p.contrib, f.contrib, 16 * nt) && same_ints("vt_ptr", p.vt_ptr, f.vt_ptr, n + 1) &&
         same_ints("vt", p.vt, f.vt, 4 * nt);
    /* block_row: the row each block lies in by row_ptr */
    std::vector<int> row(nnzb);
    for (size_t i = 0; i < n; i++)
        for (int b = f.row_ptr[i]; b < f.row_ptr[i + 1]; b++) row[(size_t)b] = (int)i;
    ok = ok && same_ints("block_row", p.block_row, row.data(), nnzb);
    printf("%s: %d vertices, %d elements, %d blocks: Thrust (CPP) %s fem.c\n", m->name, f.n, f.nt, f.nnzb,
           ok ? "equals" : "DIFFERS FROM");
    tw_fem_free(&f);
    return ok;
}

TW_TEST(pattern_bar)
{
    tw_mesh *m = tw_mesh_bar(1.0, 0.2, 0.2, 10, 3, 4);
    CHECK(m);
    int ok = pattern_matches_fem(m);
    tw_mesh_destroy(m);
    CHECK(ok);
    return 0;
}

TW_TEST(pattern_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), &ld, NULL);
    CHECK(m);
    int ok = pattern_matches_fem(m);
    tw_mesh_destroy(m);
    CHECK(ok);
    return 0;
}

/* More than 46341 vertices: row * n + col no longer fits an int (the keys
 * are 64-bit). */
TW_TEST(pattern_bar_large)
{
    tw_mesh *m = tw_mesh_bar(2.0, 0.5, 0.5, 50, 31, 30);
    CHECK(m);
    CHECK((long long)tw_mesh_vertex_count(m) * tw_mesh_vertex_count(m) > 2147483647LL);
    int ok = pattern_matches_fem(m);
    tw_mesh_destroy(m);
    CHECK(ok);
    return 0;
}

/* Elements listed in a scrambled order, so a block's contributions are not
 * in the order of first appearance: the lists must still be in element order. */
TW_TEST(pattern_bar_shuffled_elements)
{
    tw_mesh *bar = tw_mesh_bar(1.0, 0.2, 0.2, 6, 3, 3);
    CHECK(bar);
    int nt = tw_mesh_tet_count(bar), nv = tw_mesh_vertex_count(bar);
    std::vector<int> tets(tw_mesh_tets(bar), tw_mesh_tets(bar) + 4 * (size_t)nt), shuffled(tets.size());
    for (int e = 0; e < nt; e++) {
        int from = (int)((7919L * e) % nt); /* 7919 is prime and does not divide nt: a permutation */
        memcpy(&shuffled[4 * (size_t)e], &tets[4 * (size_t)from], 4 * sizeof(int));
    }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    tw_mesh *m = tw_mesh_create(tw_mesh_positions(bar), nv, shuffled.data(), nt, NULL, &ld, NULL);
    tw_mesh_destroy(bar);
    CHECK(m);
    int ok = pattern_matches_fem(m);
    tw_mesh_destroy(m);
    CHECK(ok);
    return 0;
}

/* A vertex no element uses still gets its diagonal block (fem.c keeps one),
 * with no contributions. */
TW_TEST(pattern_unused_vertex)
{
    const double X[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 5, 5, 5, 1, 1, 1};
    const int tets[] = {0, 1, 2, 3, 1, 5, 2, 3}; /* vertex 4 unused */
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_create(X, 6, tets, 2, NULL, &ld, NULL);
    CHECK(m);
    int ok = pattern_matches_fem(m);
    tw_mesh_destroy(m);
    CHECK(ok);
    return 0;
}

TW_TEST(bad_indices_counted)
{
    const int tets[] = {0, 1, 2, 3, 1, 4, -1, 3};
    CHECK(tw_thrust_bad_indices(tets, 4, 2) == 2);
    CHECK(tw_thrust_bad_indices(tets, 5, 2) == 1);
    return 0;
}

/* sum, dot and max-abs against plain loops on 10^5 values (floats or doubles) */
TW_TEST(reductions_match_loops)
{
    long count = 100003;
    std::vector<tw_real> a((size_t)count), b((size_t)count);
    srand(3);
    for (long i = 0; i < count; i++) {
        a[(size_t)i] = (tw_real)(rand() / (double)RAND_MAX * 2 - 1);
        b[(size_t)i] = (tw_real)(rand() / (double)RAND_MAX * 2 - 1);
    }
    double sum = 0, dot = 0, big = 0;
    long at = -1;
    for (long i = 0; i < count; i++) {
        sum += a[(size_t)i];
        dot += (double)a[(size_t)i] * b[(size_t)i];
        if (fabs((double)a[(size_t)i]) > big) { big = fabs((double)a[(size_t)i]); at = i; }
    }
    CHECK_NEAR(tw_thrust_sum_of(a.data(), count), sum, 1e-9 * count);
    CHECK_NEAR(tw_thrust_dot_of(a.data(), b.data(), count), dot, 1e-9 * count);
    tw_abs_at m = tw_thrust_max_abs_of(a.data(), count);
    CHECK(m.index == at && m.value == big);
    /* a tie goes to the lower index; a NaN wins over any number */
    a[10] = (tw_real)-2; a[20] = (tw_real)2;
    m = tw_thrust_max_abs_of(a.data(), count);
    CHECK(m.index == 10 && m.value == 2);
    a[count - 1] = (tw_real)NAN;
    m = tw_thrust_max_abs_of(a.data(), count);
    CHECK(m.index == count - 1 && m.value != m.value);
    CHECK(tw_thrust_max_abs_of(a.data(), 0).index == -1);
    CHECK(tw_thrust_sum_of(a.data(), 0) == 0);
    return 0;
}

/* Kinetic energy and volume on the bunny against loops over fem.c's data. */
TW_TEST(energy_and_volume_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *mesh = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), &ld, NULL);
    CHECK(mesh);
    tw_fem f;
    CHECK_OK(tw_fem_build(&f, mesh, 1e5, 0.3, 1000, NULL, NULL, NULL));
    tw_mesh_destroy(mesh);
    std::vector<tw_real> v(3 * (size_t)f.n);
    for (size_t i = 0; i < v.size(); i++) v[i] = (tw_real)sin(0.37 * (double)i);
    double ke = 0, vol = 0, vmin = HUGE_VAL;
    int emin = -1;
    for (int i = 0; i < f.n; i++)
        ke += 0.5 * f.mass[i] * ((double)v[3 * i] * v[3 * i] + (double)v[3 * i + 1] * v[3 * i + 1] +
                                 (double)v[3 * i + 2] * v[3 * i + 2]);
    for (int e = 0; e < f.nt; e++) {
        vol += f.vol[e];
        if (f.vol[e] < vmin) { vmin = f.vol[e]; emin = e; }
    }
    double ke_t = tw_thrust_kinetic_of(v.data(), f.mass, f.n);
    tw_volume_stats s = tw_thrust_volume_of(f.X, f.tets, f.nt);
    printf("bunny: kinetic %.9g J (loop %.9g), volume %.9g m^3 (loop %.9g), smallest element %d (loop %d)\n", ke_t,
           ke, s.total, vol, (int)s.min_element, emin);
    CHECK(ke > 0 && vol > 0);
    CHECK_NEAR(ke_t, ke, 1e-12 * ke);
    double tol = sizeof(tw_real) == 8 ? 1e-12 : 1e-5; /* X is tw_real; fem.c's volumes come from the double mesh */
    CHECK_NEAR(s.total, vol, tol * vol);
    CHECK(s.min_element == emin || fabs(s.min - vmin) <= tol * vmin);

    /* swap two vertices' positions: their elements invert; the smallest
     * signed volume and its element against a loop in double */
    int a = f.tets[4 * (f.nt / 2) + 1], b = f.tets[4 * (f.nt / 2) + 2];
    for (int k = 0; k < 3; k++) {
        tw_real t = f.X[3 * a + k]; f.X[3 * a + k] = f.X[3 * b + k]; f.X[3 * b + k] = t;
    }
    std::vector<double> Xd(f.X, f.X + 3 * (size_t)f.n);
    vmin = HUGE_VAL;
    emin = -1;
    for (int e = 0; e < f.nt; e++) {
        double g[4][3], V = tw_tet_gradients(Xd.data(), f.tets + 4 * e, g) / 6;
        if (V < vmin) { vmin = V; emin = e; }
    }
    s = tw_thrust_volume_of(f.X, f.tets, f.nt);
    printf("after swapping vertices %d and %d: smallest volume %.6g m^3 at element %d (loop %.6g at %d)\n", a, b,
           s.min, (int)s.min_element, vmin, emin);
    CHECK(vmin < 0);
    CHECK(s.min_element == emin);
    CHECK_NEAR(s.min, vmin, 1e-12 * fabs(vmin));
    tw_fem_free(&f);
    return 0;
}
