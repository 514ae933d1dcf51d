/* The tetra front's pattern update of kernels/thrust_front.h on Thrust's CPP
 * device system (this file is compiled with
 * THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP): the same remove / sort /
 * merge code the CUDA backend's front runs at a switch, fed the CPU front's
 * switch records (tw_front_switch_record) as the device front is, and
 * checked against the CPU front's own BSR pattern (row_ptr, col, diag) array
 * for array after every rebuild of a sagging box that switches. Built
 * wherever the CUDA headers are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "thrust_front.h"

extern "C" {
#include "mesh.h"
#include "tetra_front.h"
#include "tetra_tree.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
}

#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_CPP
#error "test_thrust_front_cpu.cpp must be built for Thrust's CPP device system"
#endif

static int same_ints(const char *what, const tw_ivec &a, const int *b, size_t count)
{
    if (a.size() < count) {
        fprintf(stderr, "%s: %zu entries from Thrust, %zu from the front\n", what, (size_t)a.size(), count);
        return 0;
    }
    std::vector<int> h(a.begin(), a.begin() + (long)count);
    for (size_t k = 0; k < count; k++)
        if (h[k] != b[k]) {
            fprintf(stderr, "%s[%zu]: %d from Thrust, %d from the front\n", what, k, h[k], b[k]);
            return 0;
        }
    return 1;
}

/* Applies the front's last switch record to p and compares with its pattern;
 * counts the redone rows and the handed tets. */
static int update_matches(const tw_front *f, tw_front_pattern_vectors &p, long *rows, long *tets)
{
    tw_front_switch rec;
    if (tw_front_switch_record(f, &rec) != TW_OK) return 0;
    tw_front_pattern_update(thrust::device, rec.nv, rec.n, rec.rid, rec.redo, rec.ntet, rec.slot, p);
    for (int u = 0; u < rec.nv; u++) *rows += rec.redo[u];
    *tets += rec.ntet;
    tw_front_switch_free(&rec);
    int n, nnzb;
    const int *row_ptr, *col, *diag;
    tw_front_pattern(f, &n, &nnzb, &row_ptr, &col, &diag);
    int ok = p.n == n && p.nnzb == nnzb;
    if (!ok) fprintf(stderr, "n %d/%d nnzb %d/%d (Thrust/front)\n", p.n, n, p.nnzb, nnzb);
    return ok && same_ints("row_ptr", p.row_ptr, row_ptr, (size_t)n + 1) &&
           same_ints("col", p.col, col, (size_t)nnzb) && same_ints("diag", p.diag, diag, (size_t)n);
}

/* The sagging box (tw_test_box_front: 0.3 x 0.1 x 0.1 m, 3 base cells, 3
 * levels, T2 3e-6, fixed at x = 0): it refines and coarsens within 100
 * steps. Every rebuild's update from the kept keys equals the CPU front's
 * pattern; so does the first build from none. */
TW_TEST(pattern_update_sagging_box)
{
    tw_test_box_front b;
    tw_front *f = tw_test_box_front_create(&b, NULL);
    CHECK(f);
    tw_front_pattern_vectors p;
    long rows = 0, tets = 0;
    CHECK(update_matches(f, p, &rows, &tets));
    const long rows0 = rows;
    rows = tets = 0;
    int switches = 0, refined = 0, coarsened = 0;
    long free_sum = 0;
    for (int k = 0; k < 100; k++) {
        tw_front_stats s;
        CHECK_OK(tw_front_step(f, &s));
        if (!s.rebuilt) continue;
        switches++;
        refined += s.refined > 0;
        coarsened += s.coarsened > 0;
        free_sum += s.free_vertices;
        if (!update_matches(f, p, &rows, &tets)) {
            fprintf(stderr, "step %d: the updated pattern differs from the front's\n", k);
            CHECK(0);
        }
    }
    printf("first build: %ld rows; %d switches (%d refining, %d coarsening): %ld rows redone of %ld, %ld tets "
           "handed over\n", rows0, switches, refined, coarsened, rows, free_sum, tets);
    CHECK(switches > 0 && refined > 0);
    tw_test_box_front_free(&b);
    return 0;
}

/* Forced fronts (tw_front_set): the base, the middle level, the finest and
 * back to the base, each updated from the keys of the one before. */
TW_TEST(pattern_update_forced_levels)
{
    tw_tetra_tree *t = tw_test_cube_tree(tw_default_tetra_tree_def().t1);
    CHECK(t);
    tw_front_def d = tw_default_front_def();
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    tw_front_pattern_vectors p;
    long rows = 0, tets = 0;
    CHECK(update_matches(f, p, &rows, &tets));
    const int order[] = {1, 2, 0, 2, 1};
    for (int k = 0; k < 5; k++) {
        CHECK_OK(tw_test_front_set_level(f, t, order[k]));
        CHECK(update_matches(f, p, &rows, &tets));
        printf("level %d: %d blocks\n", order[k], p.nnzb);
    }
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}
