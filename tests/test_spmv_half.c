/* The symmetric half of the step's 3x3-BSR matrix (host/hd/bsr_half.h,
 * host/bsr_half.h): its product against the full one on the engine's real
 * systems (Müller's bar under each symmetric method, the bunny, a graded
 * sphere's hanging-vertex system P^T A P), the checks that make that
 * comparison able to fail (the off-diagonal blocks are not symmetric
 * themselves, so a gather that forgets the transpose is caught; warp_system
 * bicgstab's matrix is not symmetric, so the half is refused there), and the
 * PCG switch (TW_SPMV=half, def.spmv). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "bsr_half.h"
#include "hierarchy.h"
#include "scenes.h"
#include "solver.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#include "world.h"

#ifdef TW_DOUBLE
#define EPS DBL_EPSILON
#else
#define EPS FLT_EPSILON
#endif

/* A deterministic x in [-1, 1). */
static void random_vector(tw_real *x, size_t n3, unsigned seed)
{
    for (size_t k = 0; k < n3; k++) {
        x[k] = (tw_real)(2 * tw_test_uniform(&seed) - 1);
    }
}

/* max over the off-diagonal blocks of |A_ji^T - A_ij| / max |A| */
static double asymmetry(const tw_bsr *A)
{
    double worst = 0, scale = 0;
    for (int i = 0; i < A->n; i++)
        for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
            int j = A->col[k], t = A->row_ptr[j];
            while (t < A->row_ptr[j + 1] && A->col[t] != i) t++;
            if (t == A->row_ptr[j + 1]) return NAN; /* no transpose in the pattern */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    worst = tw_test_max(worst, fabs((double)A->val[9 * (size_t)k + 3 * r + c] -
                                                    (double)A->val[9 * (size_t)t + 3 * c + r]));
                    scale = tw_test_max(scale, fabs((double)A->val[9 * (size_t)k + 3 * r + c]));
                }
        }
    return worst / scale;
}

/* The half product against the full one on a random x. Per component i the
 * two differ by (a) the lower blocks they read, exactly sum_{j<i}
 * (A_ji^T - A_ij) x_j (zero where the full matrix is stored exactly
 * symmetric), and (b) rounding: both sum the same 3 m products (m blocks in
 * the row) in the same order, but a compiler may contract or reassociate
 * the two functions differently, and each such sum is within (3m) eps
 * sum |a x| of the exact one, so their difference is within 2 (3m) eps
 * sum |a x| (Higham, Accuracy and Stability of Numerical Algorithms, 3.1).
 * Returns max |y_half - y_full| / that bound (NaN wins): <= 1 passes.
 * *exact: 1 when every component has the same bits. */
static double half_vs_full(const tw_bsr *A, const tw_bsr_half_index *h, const tw_real *hval, int *exact)
{
    size_t n3 = 3 * (size_t)A->n;
    tw_real *x = malloc(sizeof(tw_real) * n3), *yf = malloc(sizeof(tw_real) * n3),
            *yh = malloc(sizeof(tw_real) * n3);
    if (!x || !yf || !yh) { free(x); free(yf); free(yh); return NAN; }
    random_vector(x, n3, 7u);
    tw_bsr_spmv(A, x, yf);
    tw_bsr_half_spmv(h, A->n, hval, x, yh, A->threads);
    *exact = memcmp(yf, yh, sizeof(tw_real) * n3) == 0;
    double worst = 0;
    for (int i = 0; i < A->n; i++) {
        int m = A->row_ptr[i + 1] - A->row_ptr[i];
        for (int r = 0; r < 3; r++) {
            double s = 0, asym = 0;
            for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
                int j = A->col[k], t = A->row_ptr[j];
                while (A->col[t] != i) t++;
                for (int c = 0; c < 3; c++) {
                    double a = A->val[9 * (size_t)k + 3 * r + c], xj = x[3 * (size_t)j + c];
                    s += fabs(a * xj);
                    if (j < i) asym += fabs((double)A->val[9 * (size_t)t + 3 * c + r] - a) * fabs(xj);
                }
            }
            double bound = 2 * 3 * m * EPS * s + asym + 1e-300;
            worst = tw_test_max(worst, fabs((double)yh[3 * (size_t)i + r] - (double)yf[3 * (size_t)i + r]) / bound);
        }
    }
    free(x); free(yf); free(yh);
    return worst;
}

/* The in-place half of A (A's own values) against A. */
static int check_half(const tw_bsr *A, const char *what, int want_exact)
{
    tw_bsr_half h;
    CHECK_OK(tw_bsr_half_init(&h, A->n, A->nnzb, A->row_ptr, A->col, A->diag));
    int exact = 0;
    double e = half_vs_full(A, &h.index, A->val, &exact), asym = asymmetry(A);
    printf("%s: %d block rows, %d blocks; max |A_ji^T - A_ij| / max |A| %.3g; half vs full: %.3g of the bound, "
           "%s bits\n", what, A->n, A->nnzb, asym, e, exact ? "the same" : "other");
    tw_bsr_half_free(&h);
    CHECK(e <= 1);
    /* the systems are symmetric: what asymmetry there is, is rounding */
    CHECK(asym <= 1e3 * EPS);
    if (want_exact) CHECK(exact);
    return 0;
}

/* the smallest coordinate `axis` of m's vertices, m */
static double min_coord(const tw_mesh *m, int axis)
{
    double lo = 1e300;
    for (int i = 0; i < tw_mesh_vertex_count(m); i++) lo = fmin(lo, tw_mesh_positions(m)[3 * i + axis]);
    return lo;
}

/* Müller's bar (into *m, NULL on failure; the caller destroys it after the
 * world) pinned at x = 0 after `steps` implicit steps under gravity (bent:
 * the rotations are far from identity), its system in w->A. */
static tw_world *bent_bar(tw_mesh **m, tw_method method, tw_warp_system ws, int steps)
{
    *m = demo_bar_mesh();
    if (!*m) return NULL;
    tw_world_def d = demo_bar_def(method);
    d.backend = TW_BACKEND_CPU;
    d.warp_system = ws;
    d.precond = TW_PRECOND_JACOBI;
    tw_world *w = demo_wall_world(*m, &d);
    if (!w) { fprintf(stderr, "world: %s\n", tw_last_error()); return NULL; }
    for (int s = 0; s < steps; s++)
        if (tw_world_step(w, NULL) != TW_OK) {
            fprintf(stderr, "step %d: %s\n", s, tw_last_error());
            tw_world_destroy(w);
            return NULL;
        }
    return w;
}

/* One method's bar system: the element methods store each lower block as
 * the transpose of the upper one they compute (host/forces.c), so the half
 * gives the full product's bits there. */
static int bar_case(tw_method method, int want_exact)
{
    tw_mesh *m;
    tw_world *w = bent_bar(&m, method, TW_WARP_SYSTEM_SYMMETRIC, 10);
    CHECK(w);
    tw_bsr A = tw_world_bsr(w);
    int r = check_half(&A, tw_method_name(method), want_exact);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return r;
}

TW_TEST(corot_bar_half_equals_full) { return bar_case(TW_COROT_ELEMENT, 1); }
TW_TEST(green_bar_half_equals_full) { return bar_case(TW_GREEN, 1); }
TW_TEST(linear_bar_half_equals_full) { return bar_case(TW_LINEAR, 0); }
/* R_i K_ij R_j^T: symmetric, each block computed on its own (rounding apart) */
TW_TEST(warp_vertex_symmetric_bar_half_equals_full) { return bar_case(TW_WARP_VERTEX, 0); }

TW_TEST(bunny_half_equals_full)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet"), &ld, NULL);
    CHECK(m);
    tw_world_def d = tw_default_world_def(); /* multigrid: the step is quick, w->A the same */
    d.backend = TW_BACKEND_CPU;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 2, 1, min_coord(m, 2) + 0.01) > 0); /* its feet */
    CHECK_OK(tw_world_step(w, NULL));
    tw_bsr A = tw_world_bsr(w);
    int r = check_half(&A, "bunny corot-element", 1);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return r;
}

/* The hanging bunny's settings: on the CPU, block-Jacobi, E 20 kPa. */
static tw_world_def hanging_def(void)
{
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU;
    d.precond = TW_PRECOND_JACOBI;
    d.youngs_modulus = 2e4;
    return d;
}

/* The world of d on g's mesh with its feet pinned and g's hanging vertices,
 * after `steps` steps; NULL (the reason on stderr) on failure. */
static tw_world *hanging_world(const tw_graded_mesh *g, const tw_world_def *d, int steps)
{
    tw_world *w = tw_world_create(g->mesh, d);
    if (!w) { fprintf(stderr, "world: %s\n", tw_last_error()); return NULL; }
    if (tw_world_pin_where(w, 2, 1, min_coord(g->mesh, 2) + 0.01) == 0) {
        fprintf(stderr, "no vertex pinned\n");
        tw_world_destroy(w);
        return NULL;
    }
    tw_status st = tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                        g->hanging_weights);
    for (int k = 0; st == TW_OK && k < steps; k++) st = tw_world_step(w, NULL);
    if (st != TW_OK) {
        fprintf(stderr, "hanging world: %s\n", tw_last_error());
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

/* The graded bunny with hanging vertices: the reduced P^T A P (hanging.c's
 * Galerkin product), whose exact symmetry nothing guarantees, so the
 * comparison is to the bound. */
TW_TEST(hanging_reduced_system_half_equals_full)
{
    tw_graded_mesh *g = tw_test_graded_bunny(0.008, 3);
    CHECK(g);
    CHECK(g->hanging_count > 0);
    tw_world_def d = hanging_def();
    tw_world *w = hanging_world(g, &d, 3);
    CHECK(w);
    CHECK(w->hsys);
    tw_bsr Ar = tw_hier_matrix_bsr(&w->hsys->Ar);
    int r = check_half(&Ar, "graded bunny, hanging P^T A P", 0);
    tw_world_destroy(w);
    tw_graded_mesh_destroy(g);
    return r;
}

/* The compact form (only the half stored) gives the in-place form's bits. */
TW_TEST(compact_half_equals_in_place)
{
    tw_mesh *m;
    tw_world *w = bent_bar(&m, TW_COROT_ELEMENT, TW_WARP_SYSTEM_SYMMETRIC, 5);
    CHECK(w);
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_half in_place, compact;
    CHECK_OK(tw_bsr_half_init(&in_place, A.n, A.nnzb, A.row_ptr, A.col, A.diag));
    CHECK_OK(tw_bsr_half_init_compact(&compact, A.n, A.nnzb, A.row_ptr, A.col, A.diag, A.val));
    CHECK(compact.nh == A.n + (A.nnzb - A.n) / 2);
    size_t n3 = 3 * (size_t)A.n;
    tw_real *x = malloc(sizeof(tw_real) * n3), *y1 = malloc(sizeof(tw_real) * n3), *y2 = malloc(sizeof(tw_real) * n3);
    CHECK(x && y1 && y2);
    random_vector(x, n3, 3u);
    tw_bsr_half_spmv(&in_place.index, A.n, A.val, x, y1, 1);
    tw_bsr_half_spmv(&compact.index, A.n, compact.val, x, y2, 1);
    CHECK(memcmp(y1, y2, sizeof(tw_real) * n3) == 0);
    free(x); free(y1); free(y2);
    tw_bsr_half_free(&in_place);
    tw_bsr_half_free(&compact);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The comparison above can fail: the off-diagonal blocks of a real system
 * are not symmetric themselves (A_ij != A_ij^T, so A_ji^T != A_ji), and a
 * gather that reads A_ji untransposed differs from the full product far
 * beyond the bound. */
TW_TEST(forgotten_transpose_is_caught)
{
    tw_mesh *m;
    tw_world *w = bent_bar(&m, TW_COROT_ELEMENT, TW_WARP_SYSTEM_SYMMETRIC, 10);
    CHECK(w);
    tw_bsr A = tw_world_bsr(w);
    int off = 0, unsymmetric = 0;
    double scale = 0;
    for (size_t k = 0; k < 9 * (size_t)A.nnzb; k++) scale = tw_test_max(scale, fabs((double)A.val[k]));
    for (int i = 0; i < A.n; i++)
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; k++) {
            if (A.col[k] == i) continue;
            const tw_real *a = A.val + 9 * (size_t)k;
            double d = fmax(fabs((double)a[1] - a[3]), fmax(fabs((double)a[2] - a[6]), fabs((double)a[5] - a[7])));
            off++;
            unsymmetric += d > 1e-3 * scale;
        }
    printf("%d of %d off-diagonal blocks differ from their own transpose by > 1e-3 max |A|\n", unsymmetric, off);
    CHECK(unsymmetric > off / 2);
    /* the half's index with each lower block pointing at a block whose
     * transpose is not its partner: a half built wrong */
    tw_bsr_half h;
    CHECK_OK(tw_bsr_half_init(&h, A.n, A.nnzb, A.row_ptr, A.col, A.diag));
    /* reading A_ij (the stored lower block) transposed = A_ij^T, the
     * forgotten transpose of the gather */
    int *self = malloc(sizeof(int) * (size_t)A.nnzb);
    CHECK(self);
    for (int k = 0; k < A.nnzb; k++) self[k] = k;
    tw_bsr_half_index wrong = h.index;
    wrong.lo_blk = self;
    int exact = 1;
    double right = half_vs_full(&A, &h.index, A.val, &exact), bad = half_vs_full(&A, &wrong, A.val, &exact);
    printf("half vs full: %.3g of the bound; with the transpose forgotten: %.3g\n", right, bad);
    CHECK(right <= 1);
    CHECK(bad > 100);
    free(self);
    tw_bsr_half_free(&h);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* A pattern without a block's transpose, or without a diagonal block, is
 * refused with a message naming the row. */
TW_TEST(unsymmetric_pattern_is_refused)
{
    /* 2 x 2 blocks: row 0 has (0,0), (0,1); row 1 only (1,1) */
    int row_ptr[3] = {0, 2, 3}, col[3] = {0, 1, 1}, diag[2] = {0, 2};
    tw_bsr_half h;
    CHECK(tw_bsr_half_init(&h, 2, 3, row_ptr, col, diag) == TW_ERR_INVALID);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "row 0") != NULL);
    int row_ptr2[3] = {0, 1, 2}, col2[2] = {1, 0}, diag2[2] = {0, 1};
    CHECK(tw_bsr_half_init(&h, 2, 2, row_ptr2, col2, diag2) == TW_ERR_INVALID);
    printf("%s\n", tw_last_error());
    return 0;
}

/* A def whose spmv is neither form is refused, naming the value. */
TW_TEST(unknown_spmv_form_is_refused)
{
    tw_mesh *m = demo_bar_mesh();
    CHECK(m);
    tw_world_def d = demo_bar_def(TW_COROT_ELEMENT);
    d.spmv = (tw_spmv_form)7;
    CHECK(tw_world_create(m, &d) == NULL);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "SpMV form 7") != NULL);
    tw_mesh_destroy(m);
    return 0;
}

/* warp_system bicgstab's exact blocks R_i K_ij R_i^T are not symmetric: a
 * half product there would be another operator, and the world refuses the
 * half (its BiCGStab reads the full matrix). */
TW_TEST(exact_warp_system_is_not_symmetric_and_refused)
{
    tw_mesh *m;
    tw_world *w = bent_bar(&m, TW_WARP_VERTEX, TW_WARP_SYSTEM_BICGSTAB, 10);
    CHECK(w);
    tw_bsr A = tw_world_bsr(w);
    double asym = asymmetry(&A);
    printf("warp-vertex, warp_system bicgstab: max |A_ji^T - A_ij| / max |A| = %.3g\n", asym);
    CHECK(asym > 1e-3);
    tw_world_def d = *tw_world_get_def(w);
    tw_world_destroy(w);
    d.spmv = TW_SPMV_HALF;
    w = demo_wall_world(m, &d);
    CHECK(w);
    CHECK(w->work.half == 0);
    tw_world_destroy(w);
    d.warp_system = TW_WARP_SYSTEM_SYMMETRIC; /* PCG on R_i K_ij R_j^T: taken */
    w = demo_wall_world(m, &d);
    CHECK(w);
    CHECK(w->work.half == 1);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The PCG with the half (TW_SPMV=half, and def.spmv) on corot-element's
 * bar, whose full matrix is stored exactly symmetric: the same bits as the
 * full product's steps, and the switch took (the index was built). */
TW_TEST(pcg_half_steps_match_full)
{
    tw_mesh *m;
    tw_world *ref = bent_bar(&m, TW_COROT_ELEMENT, TW_WARP_SYSTEM_SYMMETRIC, 20);
    CHECK(ref);
    CHECK(ref->work.half == 0 && ref->work.half_form == NULL);
    for (int how = 0; how < 2; how++) {
        if (how == 0) setenv("TW_SPMV", "half", 1);
        tw_world_def d = demo_bar_def(TW_COROT_ELEMENT);
        d.backend = TW_BACKEND_CPU;
        d.precond = TW_PRECOND_JACOBI;
        if (how == 1) d.spmv = TW_SPMV_HALF;
        tw_world *w = demo_wall_world(m, &d);
        unsetenv("TW_SPMV");
        CHECK(w);
        CHECK(w->work.half == 1);
        for (int s = 0; s < 20; s++) CHECK_OK(tw_world_step(w, NULL));
        CHECK(w->work.half == 1 && w->work.half_form != NULL);
        size_t n3 = 3 * (size_t)tw_world_vertex_count(w);
        double e = tw_test_position_error(ref, w, DEMO_BAR_LENGTH, 0, how ? "def.spmv half" : "TW_SPMV=half");
        CHECK(e == 0);
        CHECK(memcmp(tw_world_velocities(ref), tw_world_velocities(w), sizeof(tw_real) * n3) == 0);
        tw_world_destroy(w);
    }
    tw_world_destroy(ref);
    tw_mesh_destroy(m);
    return 0;
}

/* The hanging bunny's reduced solve with the half (the hanging system's own
 * work, hanging.c): close to the full product's steps (1e-4 of the size
 * after 10 steps solved to 1e-6; where P^T A P comes out exactly symmetric
 * the bits are the same), and the switch took. */
TW_TEST(pcg_half_hanging_steps_close_to_full)
{
    tw_graded_mesh *g = tw_test_graded_bunny(0.008, 3);
    CHECK(g);
    tw_world *w[2];
    for (int k = 0; k < 2; k++) {
        tw_world_def d = hanging_def();
        d.cg_tolerance = 1e-6;
        d.spmv = k ? TW_SPMV_HALF : TW_SPMV_FULL;
        w[k] = hanging_world(g, &d, 10);
        CHECK(w[k]);
    }
    CHECK(w[1]->hsys && w[1]->hsys->work.half == 1 && w[1]->hsys->work.half_form != NULL);
    double e = tw_test_position_error(w[0], w[1], 0.15, 1e-4, "hanging, half");
    CHECK(e <= 1e-4);
    for (int k = 0; k < 2; k++) tw_world_destroy(w[k]);
    tw_graded_mesh_destroy(g);
    return 0;
}
