/* The tetra front on the CUDA backend (tw_front_def.backend, kernels/
 * cuda_front.h) against the CPU front: the device pattern after every
 * rebuild equal to the CPU's array for array, and the same sagging box
 * stepped on both. Every case exits 77 (skipped) in a build without CUDA or
 * on a machine without a GPU.
 *
 * The tolerance of the positions: both fronts assemble the same system on
 * the host, in tw_real (float in the default build), and solve it by the
 * same block-Jacobi PCG to the same relative residual (1e-4); the device
 * differs only in the order of its sums (double partials added per block)
 * and in float contractions (FMA) of the row products, rounding of order
 * 1e-7 relative per step. A step's velocity is determined to the CG's
 * tolerance, so an iteration more or fewer on one side moves it by at most
 * about 1e-4 of the step's velocity change; over 100 steps of a sag of a few
 * millimetres this stays below a micrometre. The check allows 1e-5 of the
 * box's longest edge (3 micrometres). A switch is a threshold on the
 * strains: a difference that small flips one only on a tet within 1e-5
 * of its range's bound, so the active tets are expected to match at every
 * step (the case prints the first step where they do not). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "tetra_front.h"
#include "tetra_tree.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

#define BOX_EDGE 0.3 /* tw_test_box_tree's longest edge, m */
#define POS_TOL (1e-5 * BOX_EDGE)

static int same_int_arrays(const char *what, const int *a, const int *b, int count)
{
    for (int k = 0; k < count; k++)
        if (a[k] != b[k]) {
            fprintf(stderr, "%s[%d]: %d on the device, %d on the host\n", what, k, a[k], b[k]);
            return 0;
        }
    return 1;
}

/* The device front's pattern equals its host pattern, array for array. */
static int device_pattern_matches(const tw_front *f)
{
    int n, nnzb, dn, dnnzb, *drow = NULL, *dcol = NULL, *ddiag = NULL;
    const int *row_ptr, *col, *diag;
    tw_front_pattern(f, &n, &nnzb, &row_ptr, &col, &diag);
    if (tw_front_device_pattern(f, &dn, &dnnzb, &drow, &dcol, &ddiag) != TW_OK) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 0;
    }
    int ok = dn == n && dnnzb == nnzb;
    if (!ok) fprintf(stderr, "n %d/%d, nnzb %d/%d (device/host)\n", dn, n, dnnzb, nnzb);
    ok = ok && same_int_arrays("row_ptr", drow, row_ptr, n + 1) && same_int_arrays("col", dcol, col, nnzb) &&
         same_int_arrays("diag", ddiag, diag, n);
    free(drow);
    free(dcol);
    free(ddiag);
    return ok;
}

/* 100 steps on both backends: the same switches at the same steps, the
 * device pattern equal to the host's after each, positions within POS_TOL. */
TW_TEST(parity_sagging_box)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    unsigned char *pin = NULL;
    tw_tetra_tree *t = tw_test_box_tree(TW_TEST_BOX_T2, &pin);
    CHECK(t);
    const int nv = t->h->level[2]->nv;
    tw_front_def d = tw_default_front_def();
    tw_front *cpu = tw_front_create(t, pin, &d);
    d.backend = TW_BACKEND_CUDA;
    tw_front *gpu = tw_front_create(t, pin, &d);
    CHECK(cpu && gpu);
    CHECK(device_pattern_matches(gpu));
    double *xc = malloc(3 * sizeof *xc * (size_t)nv), *xg = malloc(3 * sizeof *xg * (size_t)nv);
    CHECK(xc && xg);
    double worst = 0;
    int switches = 0, first_switch = -1, first_apart = -1, it_diff = 0;
    for (int k = 0; k < 100; k++) {
        tw_front_stats sc, sg;
        CHECK_OK(tw_front_step(cpu, &sc));
        CHECK_OK(tw_front_step(gpu, &sg));
        CHECK(tw_front_on_device(gpu) && !tw_front_on_device(cpu));
        if (sg.rebuilt) {
            switches++;
            if (first_switch < 0) first_switch = k;
            if (!device_pattern_matches(gpu)) {
                fprintf(stderr, "step %d: the device pattern differs after the switch\n", k);
                CHECK(0);
            }
        }
        if (first_apart < 0 && (sc.active_tets != sg.active_tets || sc.rebuilt != sg.rebuilt))
            first_apart = k;
        it_diff = abs(sc.cg_iterations - sg.cg_iterations) > it_diff ? abs(sc.cg_iterations - sg.cg_iterations)
                                                                       : it_diff;
        tw_front_positions(cpu, xc);
        tw_front_positions(gpu, xg);
        for (int i = 0; i < 3 * nv; i++)
            worst = tw_test_max(worst, fabs(xc[i] - xg[i]));
    }
    printf("%d switch steps (first at step %d); active tets %s; largest CG iteration difference %d; largest "
           "position difference %.3g m (tolerance %.3g m)\n", switches, first_switch,
           first_apart < 0 ? "equal at every step" : "differ", it_diff, worst, POS_TOL);
    if (first_apart >= 0) printf("the fronts first differ at step %d\n", first_apart);
    CHECK(switches > 0);
    CHECK(first_apart < 0);
    CHECK(worst <= POS_TOL);
    free(xc);
    free(xg);
    free(pin);
    tw_front_destroy(cpu);
    tw_front_destroy(gpu);
    tw_tetra_tree_free(t);
    return 0;
}

/* Forced fronts (tw_front_set) through every level and back: the device
 * pattern, updated from the one before each time, equals the host's. */
TW_TEST(pattern_forced_levels)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    unsigned char *pin = NULL;
    tw_tetra_tree *t = tw_test_box_tree(TW_TEST_BOX_T2, &pin);
    CHECK(t);
    tw_front_def d = tw_default_front_def();
    d.backend = TW_BACKEND_CUDA;
    tw_front *f = tw_front_create(t, pin, &d);
    CHECK(f);
    const int order[] = {1, 2, 0, 2, 1};
    for (int k = 0; k < 5; k++) {
        CHECK_OK(tw_test_front_set_level(f, t, order[k]));
        CHECK(device_pattern_matches(f));
    }
    free(pin);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}

/* The device PCG is block-Jacobi: asking it for the multigrid is refused
 * with a message that says so. */
TW_TEST(refuses_multigrid)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    unsigned char *pin = NULL;
    tw_tetra_tree *t = tw_test_box_tree(TW_TEST_BOX_T2, &pin);
    CHECK(t);
    tw_front_def d = tw_default_front_def();
    d.backend = TW_BACKEND_CUDA;
    d.precond = TW_PRECOND_MG;
    tw_front *f = tw_front_create(t, pin, &d);
    CHECK(!f);
    CHECK(strstr(tw_last_error(), "block-Jacobi") != NULL);
    free(pin);
    tw_tetra_tree_free(t);
    return 0;
}
