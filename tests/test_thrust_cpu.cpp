/* The Thrust algorithms of kernels/thrust_fem.h on Thrust's CPP device system
 * (this file is compiled with THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP):
 * the same sort / unique / scan code the GPU runs, checked without a GPU
 * against host/fem.c's pattern and gather lists, array for array. Built
 * wherever the CUDA headers are. */
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
    if (tw_thrust_bad_indices(thrust::device, f.tets, f.n, f.nt) != 0) {
        fprintf(stderr, "%s: indices out of range\n", m->name);
        tw_fem_free(&f);
        return 0;
    }
    tw_build_pattern_vectors(thrust::device, f.tets, f.n, f.nt, p);
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
    CHECK(tw_thrust_bad_indices(thrust::device, tets, 4, 2) == 2);
    CHECK(tw_thrust_bad_indices(thrust::device, tets, 5, 2) == 1);
    return 0;
}
