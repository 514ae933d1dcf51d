/* The tetra front on the CUDA backend (tw_front_def.backend, kernels/
 * cuda_front.h) against the CPU front: the device pattern after every
 * rebuild equal to the CPU's array for array, the device's element pass and
 * gathered assembly against the host's at the same state, and the same
 * sagging box stepped on both. Every case exits 77 (skipped) in a build
 * without CUDA or on a machine without a GPU.
 *
 * The tolerance of the device's system (SYS_TOL, relative to the largest
 * entry): the device runs the CPU front's element bodies in double and
 * gathers every block and force in the CPU's order (checked to the bit on
 * the CPU by tests/test_tetra_front_maps.c); what differs is nvcc's fused
 * multiply-adds in the element products (relative 1e-16 in double). A
 * product rounded to tw_real then differs by one unit in the last place
 * (6e-8 relative in float) only where the two doubles straddle a rounding
 * boundary; a block sums at most about a hundred products, so it stays
 * within 1e-5 of the largest entry, and the start vr (v rounded) is equal.
 *
 * The tolerance of the positions: both fronts assemble that system, in
 * tw_real (float in the default build), and solve it by the same
 * block-Jacobi PCG to the same relative residual (1e-4); the device
 * differs in the order of its sums (double partials added per block), in
 * float contractions (FMA) of the row products and in the system's rounding
 * above, of order 1e-7 relative per step. A step's velocity is determined to the CG's
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
#define SYS_TOL 1e-5

/* The device's step system (tw_front_device_system) against the host's
 * assembly of the same front at the same state (tw_front_assemble): values
 * and right-hand side within SYS_TOL of their largest magnitude, the start
 * equal; the largest relative differences into *ev, *er (NaN-aware). */
static int device_system_matches(tw_front *f, const char *what, double *ev, double *er)
{
    int n, nnzb;
    const int *row_ptr, *col, *diag;
    tw_front_pattern(f, &n, &nnzb, &row_ptr, &col, &diag);
    tw_real *dval = malloc(9 * ((size_t)nnzb + 1) * sizeof *dval), *drhs = malloc(3 * ((size_t)n + 1) * sizeof *drhs),
            *dvr = malloc(3 * ((size_t)n + 1) * sizeof *dvr);
    int ok = dval && drhs && dvr;
    if (ok && (tw_front_device_system(f, dval, drhs, dvr) != TW_OK || tw_front_assemble(f) != TW_OK)) {
        fprintf(stderr, "%s: %s\n", what, tw_last_error());
        ok = 0;
    }
    if (ok) {
        const tw_real *val, *rhs, *vr;
        const double *fq;
        tw_front_system(f, &val, &rhs, &vr, &fq);
        double sv = 0, sr = 0, dv = 0, dr = 0;
        long vr_apart = 0;
        for (long k = 0; k < 9L * nnzb; k++) {
            sv = tw_test_max(sv, fabs((double)val[k]));
            dv = tw_test_max(dv, fabs((double)dval[k] - (double)val[k]));
        }
        for (long k = 0; k < 3L * n; k++) {
            sr = tw_test_max(sr, fabs((double)rhs[k]));
            dr = tw_test_max(dr, fabs((double)drhs[k] - (double)rhs[k]));
            vr_apart += !(dvr[k] == vr[k]);
        }
        dv = sv > 0 ? dv / sv : dv;
        dr = sr > 0 ? dr / sr : dr;
        *ev = tw_test_max(*ev, dv);
        *er = tw_test_max(*er, dr);
        ok = dv <= SYS_TOL && dr <= SYS_TOL && vr_apart == 0;
        if (!ok)
            fprintf(stderr, "%s: values apart by %.3g, rhs by %.3g of their largest (tolerance %.3g); %ld start "
                            "values differ\n", what, dv, dr, SYS_TOL, vr_apart);
    }
    free(dval);
    free(drhs);
    free(dvr);
    return ok;
}

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

/* The sagging box's front on the CUDA backend. */
static tw_front *device_box_front(tw_test_box_front *b)
{
    tw_front_def d = tw_default_front_def();
    d.backend = TW_BACKEND_CUDA;
    return tw_test_box_front_create(b, &d);
}

/* 100 steps on both backends: the same switches at the same steps, the
 * device pattern equal to the host's after each, positions within POS_TOL. */
TW_TEST(parity_sagging_box)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_test_box_front b;
    tw_front *cpu = tw_test_box_front_create(&b, NULL);
    CHECK(cpu);
    const int nv = b.t->h->level[2]->nv;
    tw_front_def d = tw_default_front_def();
    d.backend = TW_BACKEND_CUDA;
    tw_front *gpu = tw_front_create(b.t, b.pin, &d);
    CHECK(gpu);
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
    tw_front_destroy(gpu);
    tw_test_box_front_free(&b);
    return 0;
}

/* The device's system at the start and after one step (short: the
 * sanitizers' case in tests/gpu_session.sh). */
TW_TEST(system_matches_host_short)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_test_box_front b;
    tw_front *f = device_box_front(&b);
    CHECK(f);
    double ev = 0, er = 0;
    CHECK(device_system_matches(f, "start", &ev, &er));
    tw_front_stats s;
    CHECK_OK(tw_front_step(f, &s));
    CHECK(tw_front_on_device(f));
    CHECK(device_system_matches(f, "after one step", &ev, &er));
    printf("device system vs host: values %.3g, rhs %.3g of their largest (tolerance %.3g)\n", ev, er, SYS_TOL);
    tw_test_box_front_free(&b);
    return 0;
}

/* device_system_matches as a tw_test_front_checkpoints check; ctx: the
 * largest relative differences {values, rhs}. */
static int system_check(tw_front *f, const char *what, void *ctx)
{
    double *e = ctx;
    return device_system_matches(f, what, &e[0], &e[1]);
}

/* The device's system at the start, after every switch of the sagging box
 * (100 steps; the maps rebuilt and uploaded at each) and at every tenth
 * step between. */
TW_TEST(system_matches_host_through_switches)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_test_box_front b;
    tw_front *f = device_box_front(&b);
    CHECK(f);
    double e[2] = {0, 0};
    int switches, hanging;
    const int checked = tw_test_front_checkpoints(f, system_check, e, &switches, &hanging);
    CHECK(checked > 0);
    printf("%d systems checked (%d switches): values %.3g, rhs %.3g of their largest (tolerance %.3g)\n", checked,
           switches, e[0], e[1], SYS_TOL);
    CHECK(switches > 0);
    tw_test_box_front_free(&b);
    return 0;
}

/* A front of three levels (T-junction vertices whose expansions nest) under
 * external forces (their reduced form in the device's rhs), 30 steps on
 * both backends: the device's system within SYS_TOL at the start, the
 * positions within 1e-5 of the unit cube's edge. */
TW_TEST(parity_forces_mixed_front)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_tetra_tree *t = tw_test_cube_tree(tw_default_tetra_tree_def().t1);
    CHECK(t);
    const int nv = t->h->level[2]->nv;
    unsigned char *pin = calloc((size_t)nv, 1);
    double *force = malloc(3 * (size_t)nv * sizeof *force), *xc = malloc(3 * (size_t)nv * sizeof *xc),
           *xg = malloc(3 * (size_t)nv * sizeof *xg);
    CHECK(pin && force && xc && xg);
    for (int i = 0; i < nv; i++) {
        pin[i] = t->h->level[2]->X[3 * i + 2] < 1e-12; /* the bottom face held */
        force[3 * i] = 0.5 * t->h->level[2]->X[3 * i + 2];
        force[3 * i + 1] = 0;
        force[3 * i + 2] = 0;
    }
    tw_front_def d = tw_default_front_def();
    d.adapt = 0;
    tw_front *cpu = tw_front_create(t, pin, &d);
    d.backend = TW_BACKEND_CUDA;
    tw_front *gpu = tw_front_create(t, pin, &d);
    CHECK(cpu && gpu);
    CHECK_OK(tw_test_front_set_mixed(cpu, t));
    CHECK_OK(tw_test_front_set_mixed(gpu, t));
    CHECK_OK(tw_front_set_forces(cpu, force));
    CHECK_OK(tw_front_set_forces(gpu, force));
    CHECK(device_pattern_matches(gpu));
    double ev = 0, er = 0, worst = 0, move = 0;
    CHECK(device_system_matches(gpu, "mixed front, forces", &ev, &er));
    tw_front_stats s;
    for (int k = 0; k < 30; k++) {
        CHECK_OK(tw_front_step(cpu, &s));
        CHECK_OK(tw_front_step(gpu, &s));
        CHECK(tw_front_on_device(gpu));
    }
    tw_front_positions(cpu, xc);
    tw_front_positions(gpu, xg);
    for (int i = 0; i < 3 * nv; i++) {
        worst = tw_test_max(worst, fabs(xc[i] - xg[i]));
        move = tw_test_max(move, fabs(xc[i] - t->h->level[2]->X[i]));
    }
    printf("%d active tets, %d T-junction vertices: system %.3g / %.3g of the largest; largest move %.3g m, "
           "largest position difference %.3g m (tolerance 1e-5 m)\n", s.active_tets, s.hanging_vertices, ev, er,
           move, worst);
    CHECK(s.hanging_vertices > 0 && move > 1e-4);
    CHECK(worst <= 1e-5);
    free(pin);
    free(force);
    free(xc);
    free(xg);
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
    tw_test_box_front b;
    tw_front *f = device_box_front(&b);
    CHECK(f);
    const int order[] = {1, 2, 0, 2, 1};
    for (int k = 0; k < 5; k++) {
        CHECK_OK(tw_test_front_set_level(f, b.t, order[k]));
        CHECK(device_pattern_matches(f));
    }
    tw_test_box_front_free(&b);
    return 0;
}

/* The device PCG is block-Jacobi: asking it for the multigrid is refused
 * with a message that says so. */
TW_TEST(refuses_multigrid)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_front_def d = tw_default_front_def();
    d.backend = TW_BACKEND_CUDA;
    d.precond = TW_PRECOND_MG;
    tw_test_box_front b;
    CHECK(!tw_test_box_front_create(&b, &d) && b.t);
    CHECK(strstr(tw_last_error(), "block-Jacobi") != NULL);
    tw_test_box_front_free(&b);
    return 0;
}
