/* The fused PCG's arithmetic (host/hd/pcg_fused.h) on the CPU, in the
 * order kernels/cuda_pcg_fused.cu runs it: blocks of TW_RED_THREADS threads
 * over grid-stride passes, TW_ROW_LANES lanes per block row with their
 * butterfly, a tree per block and the last block's finish over the
 * partials. Small integers make every sum exact, so a vertex or a block
 * counted twice or missed (at any size: one block, several passes of
 * TW_RED_BLOCKS blocks) shows as an inequality; on a real system (the
 * pinned bar after one step, contacts added) the fused iteration's iterates
 * match host/solver_impl.h's tw_pcg to rounding. What this cannot check:
 * the kernels' memory ordering (the fences and the ticket), which only a
 * GPU run exercises (tests/test_gpu_backend.c's fused cases). */
#include <stdlib.h>
#include <string.h>

#include "hd/pcg_fused.h"
#include "solver.h"
#include "tw_test.h"
#include "world.h"

/* ------------------------------------------------------------ the emulation */

/* The row kernel on the CPU: q = S A (z + beta p), pn = z + beta p; returns
 * p'.q as the last block sums it (partial: TW_RED_BLOCKS). */
static double row_kernel(int n, const int *row_ptr, const int *col, const tw_real *val, const tw_real *z,
                         const tw_real *p, tw_real beta, tw_real *pn, tw_real *q, const unsigned char *cons,
                         const tw_real *nrm, double *partial)
{
    int nb = tw_red_blocks(n, TW_ROW_GROUPS);
    double sh[TW_RED_THREADS];
    for (int b = 0; b < nb; b++) {
        for (int t = 0; t < TW_RED_THREADS; t++) sh[t] = 0;
        for (long r0 = (long)b * TW_ROW_GROUPS; r0 < n; r0 += (long)nb * TW_ROW_GROUPS)
            for (int g = 0; g < TW_ROW_GROUPS; g++) {
                long i = r0 + g;
                if (i >= n) continue;
                tw_real v[TW_ROW_LANES][3];
                for (int l = 0; l < TW_ROW_LANES; l++) tw_row_lane_sum(row_ptr, col, val, z, p, beta, (int)i, l, v[l]);
                tw_row_butterfly(v);
                sh[g * TW_ROW_LANES] += tw_row_finish((int)i, v[0], beta, z, p, pn, q, cons, nrm);
            }
        partial[b] = tw_tree_sum(sh, TW_RED_THREADS);
    }
    for (int t = 0; t < TW_RED_THREADS; t++) sh[t] = tw_red_finish_part(partial, nb, t);
    return tw_tree_sum(sh, TW_RED_THREADS);
}

/* The update kernel on the CPU; rz_rr: the last block's r.z and r.r
 * (partial: 2 TW_RED_BLOCKS). */
static void update_kernel(int n, tw_real alpha, const tw_real *pn, const tw_real *q, const tw_real *dinv,
                          const unsigned char *cons, const tw_real *nrm, tw_real *x, tw_real *r, tw_real *z,
                          double *partial, double *rz_rr)
{
    int nb = tw_red_blocks(n, TW_RED_THREADS);
    static double sh[2][TW_RED_THREADS];
    for (int b = 0; b < nb; b++) {
        for (int t = 0; t < TW_RED_THREADS; t++) {
            double s[2];
            tw_update_thread(b, t, nb, n, alpha, pn, q, dinv, cons, nrm, x, r, z, s);
            sh[0][t] = s[0];
            sh[1][t] = s[1];
        }
        for (int k = 0; k < 2; k++) partial[k * nb + b] = tw_tree_sum(sh[k], TW_RED_THREADS);
    }
    for (int k = 0; k < 2; k++) {
        for (int t = 0; t < TW_RED_THREADS; t++) sh[k][t] = tw_red_finish_part(partial + k * nb, nb, t);
        rz_rr[k] = tw_tree_sum(sh[k], TW_RED_THREADS);
    }
}

/* The fused PCG on A x = b from x, as tw_cuda_pcg_begin + iterations run
 * it (the begin's sums serially: they are the unfused kernels'). */
static tw_solve_result fused_pcg(const tw_bsr *A, const tw_real *b, tw_real *x, const tw_filter *f, double tol,
                                 int max_iterations, int fixed_iterations)
{
    tw_solve_result res = {0, 0, 0};
    int n = A->n;
    size_t n3 = 3 * (size_t)n;
    tw_real *r = calloc(n3, sizeof *r), *z = calloc(n3, sizeof *z), *q = calloc(n3, sizeof *q);
    tw_real *pb[2] = {calloc(n3, sizeof(tw_real)), calloc(n3, sizeof(tw_real))};
    tw_real *dinv = calloc(9 * (size_t)n, sizeof *dinv);
    double *partial = calloc(2 * TW_RED_BLOCKS, sizeof *partial);
    if (!r || !z || !q || !pb[0] || !pb[1] || !dinv || !partial) {
        res.residual = NAN;
        goto done;
    }
    tw_bsr_block_jacobi(A, dinv);
    tw_bsr_spmv(A, x, r);
    double rz = 0, rr = 0, bb = 0;
    for (int i = 0; i < n; i++) {
        tw_real *ri = r + 3 * (size_t)i, *zi = z + 3 * (size_t)i;
        for (int c = 0; c < 3; c++) ri[c] = b[3 * (size_t)i + c] - ri[c];
        tw_filter_block(f->cons[i], f->normal, i, ri);
        tw_block_jacobi_vertex(dinv, r, i, f->cons[i], f->normal, zi);
        double bi[3] = {b[3 * (size_t)i], b[3 * (size_t)i + 1], b[3 * (size_t)i + 2]};
        bb += tw_filter_sb2(f->cons[i], f->normal, i, bi);
        for (int c = 0; c < 3; c++) {
            pb[0][3 * (size_t)i + c] = zi[c];
            rz += (double)ri[c] * (double)zi[c];
            rr += (double)ri[c] * (double)ri[c];
        }
    }
    double bnorm = sqrt(bb), rn = sqrt(rr), beta = 0;
    if (bnorm < 1e-300) bnorm = 1;
    int fixed = fixed_iterations > 0, limit = fixed ? fixed_iterations : max_iterations, it = 0;
    int active = tw_pcg_go_on(0, limit, fixed, tol, rn, bnorm, rz);
    while (active) {
        const tw_real *p = pb[it & 1];
        tw_real *pn = pb[(it + 1) & 1];
        double pq = row_kernel(n, A->row_ptr, A->col, A->val, z, p, (tw_real)beta, pn, q, f->cons, f->normal, partial);
        if (!(pq > 0)) {
            res.negative_curvature = 1;
            break;
        }
        double sums[2];
        update_kernel(n, (tw_real)tw_pcg_alpha(rz, pq), pn, q, dinv, f->cons, f->normal, x, r, z, partial, sums);
        beta = tw_pcg_beta(sums[0], rz);
        rz = sums[0];
        active = tw_pcg_decide(&it, &rn, sums[1], rz, bnorm, limit, fixed, tol);
    }
    res.iterations = it;
    res.residual = rn / bnorm;
done:
    free(partial);
    free(dinv);
    free(pb[1]);
    free(pb[0]);
    free(q);
    free(z);
    free(r);
    return res;
}

/* ------------------------------------------------------------ exact sums */

/* sizes around the block, the grid cap and several passes over it */
static const long SIZES[] = {1, 7, 255, 256, 257, 1000, 256L * TW_RED_BLOCKS, 256L * TW_RED_BLOCKS + 77, 600000};

/* With alpha = 0 the update leaves x and r and gives z = S r (dinv = I):
 * r.z and r.r of small integers are exact, so the emulated reduction equals
 * the serial sum bit for bit unless a vertex is missed or counted twice. */
TW_TEST(update_reduction_counts_every_vertex_once)
{
    for (size_t c = 0; c < sizeof SIZES / sizeof SIZES[0]; c++) {
        int n = (int)SIZES[c];
        size_t n3 = 3 * (size_t)n;
        tw_real *v = calloc(5 * n3 + 9 * (size_t)n, sizeof *v);
        unsigned char *cons = calloc((size_t)n, 1);
        double *partial = calloc(2 * TW_RED_BLOCKS, sizeof *partial);
        CHECK(v && cons && partial);
        tw_real *x = v, *r = v + n3, *z = v + 2 * n3, *p = v + 3 * n3, *q = v + 4 * n3, *dinv = v + 5 * n3;
        unsigned seed = 99u + (unsigned)c;
        double rz = 0, rr = 0;
        for (int i = 0; i < n; i++) {
            cons[i] = tw_test_lcg24(&seed) % 7 == 0; /* some pinned: z = 0 there */
            for (int k = 0; k < 9; k++) dinv[9 * (size_t)i + k] = k % 4 == 0;
            for (int k = 0; k < 3; k++) {
                tw_real ri = (tw_real)((int)(tw_test_lcg24(&seed) % 7) - 3);
                r[3 * (size_t)i + k] = ri;
                rr += (double)ri * ri;
                if (!cons[i]) rz += (double)ri * ri;
            }
        }
        double got[2];
        update_kernel(n, 0, p, q, dinv, cons, NULL, x, r, z, partial, got);
        printf("n %d (%d blocks): r.z %.17g (serial %.17g), r.r %.17g (serial %.17g)\n", n,
               tw_red_blocks(n, TW_RED_THREADS), got[0], rz, got[1], rr);
        CHECK(got[0] == rz);
        CHECK(got[1] == rr);
        CHECK(rr > 0);
        free(partial);
        free(cons);
        free(v);
    }
    return 0;
}

/* A random pattern with rows of 1 to 40 blocks (more than TW_ROW_LANES and
 * than a warp), small integer blocks and vectors, beta = 2: the emulated
 * row kernel's q, p' and p'.q equal a plain serial product's exactly. */
TW_TEST(row_kernel_counts_every_block_once)
{
    static const int rows[] = {1, 5, 16, 17, 1000, TW_ROW_GROUPS * TW_RED_BLOCKS + 3, 40000};
    for (size_t c = 0; c < sizeof rows / sizeof rows[0]; c++) {
        int n = rows[c];
        unsigned seed = 5u + (unsigned)c;
        int *row_ptr = malloc(sizeof(int) * ((size_t)n + 1));
        CHECK(row_ptr);
        row_ptr[0] = 0;
        for (int i = 0; i < n; i++) row_ptr[i + 1] = row_ptr[i] + 1 + (int)(tw_test_lcg24(&seed) % 40);
        size_t nnzb = (size_t)row_ptr[n], n3 = 3 * (size_t)n;
        int *col = malloc(sizeof(int) * nnzb);
        tw_real *val = malloc(sizeof(tw_real) * 9 * nnzb), *v = calloc(6 * n3, sizeof(tw_real));
        unsigned char *cons = calloc((size_t)n, 1);
        double *partial = calloc(TW_RED_BLOCKS, sizeof *partial);
        CHECK(col && val && v && cons && partial);
        tw_real *z = v, *p = v + n3, *pn = v + 2 * n3, *q = v + 3 * n3, *pref = v + 4 * n3, *qref = v + 5 * n3;
        for (size_t k = 0; k < nnzb; k++) col[k] = (int)(tw_test_lcg24(&seed) % (unsigned)n);
        for (size_t k = 0; k < 9 * nnzb; k++) val[k] = (tw_real)((int)(tw_test_lcg24(&seed) % 5) - 2);
        for (size_t k = 0; k < n3; k++) {
            z[k] = (tw_real)((int)(tw_test_lcg24(&seed) % 5) - 2);
            p[k] = (tw_real)((int)(tw_test_lcg24(&seed) % 3) - 1);
            pref[k] = z[k] + 2 * p[k];
        }
        for (int i = 0; i < n; i++) cons[i] = tw_test_lcg24(&seed) % 9 == 0 ? 1 : 0; /* some pinned: q = 0 there */
        double pq = 0;
        for (int i = 0; i < n; i++) {
            double y[3] = {0, 0, 0};
            for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)
                for (int a = 0; a < 3; a++)
                    for (int bcol = 0; bcol < 3; bcol++)
                        y[a] += (double)val[9 * (size_t)k + 3 * a + bcol] * pref[3 * (size_t)col[k] + bcol];
            for (int a = 0; a < 3; a++) {
                qref[3 * (size_t)i + a] = cons[i] ? 0 : (tw_real)y[a];
                pq += (double)pref[3 * (size_t)i + a] * qref[3 * (size_t)i + a];
            }
        }
        double got = row_kernel(n, row_ptr, col, val, z, p, 2, pn, q, cons, NULL, partial);
        size_t bad = 0;
        for (size_t k = 0; k < n3; k++) bad += q[k] != qref[k] || pn[k] != pref[k];
        printf("%d rows, %zu blocks (%d blocks of %d rows a pass): p'.q %.17g (serial %.17g), %zu entries differ\n", n,
               nnzb, tw_red_blocks(n, TW_ROW_GROUPS), TW_ROW_GROUPS, got, pq, bad);
        CHECK(bad == 0);
        CHECK(got == pq);
        free(partial);
        free(cons);
        free(v);
        free(val);
        free(col);
        free(row_ptr);
    }
    return 0;
}

/* ------------------------------------------------------------ against tw_pcg */

/* The bar pinned at x = 0 after one implicit step (its system in w->A and
 * w->rhs), and the filter the test solves with: the pinned vertices, plus
 * every 5th free vertex a contact along a tilted unit normal. */
typedef struct bar_system {
    tw_mesh *m;
    tw_world *w;
    tw_bsr A;
    unsigned char *cons;
    tw_real *nrm;
    tw_filter f;
} bar_system;

static int system_create(bar_system *s)
{
    memset(s, 0, sizeof *s);
    s->m = tw_mesh_bar(1, 0.15, 0.15, 20, 3, 3);
    if (!s->m) return 1;
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU; /* w->A and w->rhs: the CPU step's */
    d.method = TW_COROT_ELEMENT;
    s->w = tw_world_create(s->m, &d);
    if (!s->w) return 1;
    tw_world_pin_where(s->w, 0, 1, 1e-6);
    tw_step_stats st;
    if (tw_world_step(s->w, &st) != TW_OK) return 1;
    s->A = tw_world_bsr(s->w);
    int n = s->A.n;
    s->cons = calloc((size_t)n, 1);
    s->nrm = calloc(3 * (size_t)n, sizeof(tw_real));
    if (!s->cons || !s->nrm) return 1;
    for (int i = 0; i < n; i++) {
        s->cons[i] = s->w->fcons[i];
        if (!s->cons[i] && i % 5 == 0) {
            s->cons[i] = TW_FILTER_NORMAL;
            double a[3] = {0.3, 0.2 + 0.01 * (i % 7), 0.9}, l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            for (int c = 0; c < 3; c++) s->nrm[3 * (size_t)i + c] = (tw_real)(a[c] / l);
        }
    }
    s->f.cons = s->cons;
    s->f.normal = s->nrm;
    return 0;
}

static void system_destroy(bar_system *s)
{
    free(s->nrm);
    free(s->cons);
    tw_world_destroy(s->w);
    tw_mesh_destroy(s->m);
}

/* max |a - b| / max |b| over n3 (NaN wins) */
static double rel_diff(const tw_real *a, const tw_real *b, size_t n3)
{
    double worst = 0, scale = 0;
    for (size_t k = 0; k < n3; k++) {
        worst = tw_test_max(worst, fabs((double)a[k] - (double)b[k]));
        scale = tw_test_max(scale, fabs((double)b[k]));
    }
    return worst / scale;
}

#ifdef TW_DOUBLE
#define ITERATE_TOL 1e-10
#else
#define ITERATE_TOL 1e-4
#endif

/* 1, 2, 5 and 20 fixed iterations from 0: the fused iteration's x against
 * tw_pcg's (the same algorithm, the sums in another order) */
TW_TEST(fused_iterates_match_cpu_pcg)
{
    bar_system s;
    CHECK(system_create(&s) == 0);
    int n = s.A.n;
    size_t n3 = 3 * (size_t)n;
    tw_real *xc = malloc(sizeof(tw_real) * n3), *xf = malloc(sizeof(tw_real) * n3);
    tw_solver_work work;
    CHECK(xc && xf);
    CHECK_OK(tw_solver_work_init(&work, n));
    static const int counts[] = {1, 2, 5, 20};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        memset(xc, 0, sizeof(tw_real) * n3);
        memset(xf, 0, sizeof(tw_real) * n3);
        tw_solve_result rc = tw_pcg(&s.A, s.w->rhs, xc, &s.f, 1e-30, 1000, counts[c], &work);
        tw_solve_result rf = fused_pcg(&s.A, s.w->rhs, xf, &s.f, 1e-30, 1000, counts[c]);
        double e = rel_diff(xf, xc, n3);
        printf("%d vertices, %d fixed iterations: cpu %d (residual %.6g), fused %d (residual %.6g); "
               "max |x_fused - x_cpu| / max |x_cpu| = %.3g\n",
               n, counts[c], rc.iterations, rc.residual, rf.iterations, rf.residual, e);
        CHECK(rc.iterations == counts[c] && rf.iterations == counts[c]);
        CHECK(!(e > ITERATE_TOL) && e == e);
        CHECK_NEAR(rf.residual, rc.residual, 1e-3 * rc.residual + ITERATE_TOL);
    }
    /* the contacts' normal component stays as x0 had it (0) */
    for (int i = 0; i < n; i++)
        if (s.cons[i] == TW_FILTER_NORMAL) {
            const tw_real *xi = xf + 3 * (size_t)i, *nn = s.nrm + 3 * (size_t)i;
            double xn = sqrt((double)xi[0] * xi[0] + (double)xi[1] * xi[1] + (double)xi[2] * xi[2]);
            CHECK(fabs((double)(xi[0] * nn[0] + xi[1] * nn[1] + xi[2] * nn[2])) <= 1e-5 * xn + 1e-20);
        }
    tw_solver_work_free(&work);
    free(xf);
    free(xc);
    system_destroy(&s);
    return 0;
}

/* to a tolerance: the same number of iterations (within one: the test on
 * |r| compares sums of another order) and both below it */
TW_TEST(fused_tolerance_stop_matches_cpu_pcg)
{
    bar_system s;
    CHECK(system_create(&s) == 0);
    int n = s.A.n;
    size_t n3 = 3 * (size_t)n;
    tw_real *xc = calloc(n3, sizeof(tw_real)), *xf = calloc(n3, sizeof(tw_real));
    tw_solver_work work;
    CHECK(xc && xf);
    CHECK_OK(tw_solver_work_init(&work, n));
    tw_solve_result rc = tw_pcg(&s.A, s.w->rhs, xc, &s.f, 1e-4, 500, 0, &work);
    tw_solve_result rf = fused_pcg(&s.A, s.w->rhs, xf, &s.f, 1e-4, 500, 0);
    printf("tolerance 1e-4: cpu %d iterations (residual %.6g), fused %d (residual %.6g)\n", rc.iterations, rc.residual,
           rf.iterations, rf.residual);
    CHECK(rc.iterations > 2 && rc.iterations < 500);
    CHECK(abs(rf.iterations - rc.iterations) <= 1);
    CHECK(rf.residual <= 1e-4 && rc.residual <= 1e-4);
    CHECK(!rf.negative_curvature);
    tw_solver_work_free(&work);
    free(xf);
    free(xc);
    system_destroy(&s);
    return 0;
}

/* An indefinite system, [I 2I; 2I I], with b = (e, -e): p.Ap < 0 at once;
 * both stop there with 0 iterations and say so. */
TW_TEST(fused_negative_curvature_stops)
{
    int row_ptr[3] = {0, 2, 4}, col[4] = {0, 1, 0, 1}, diag[2] = {0, 3};
    tw_real val[36] = {0};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) val[9 * k + 4 * c] = (tw_real)(k == 0 || k == 3 ? 1 : 2);
    tw_bsr A = {2, 4, row_ptr, col, diag, val, 1};
    tw_real b[6] = {1, 0.5, 0, -1, -0.5, 0}, xc[6] = {0}, xf[6] = {0};
    unsigned char cons[2] = {0, 0};
    tw_filter f = {cons, NULL};
    tw_solver_work work;
    CHECK_OK(tw_solver_work_init(&work, 2));
    tw_solve_result rc = tw_pcg(&A, b, xc, &f, 1e-8, 50, 0, &work);
    tw_solve_result rf = fused_pcg(&A, b, xf, &f, 1e-8, 50, 0);
    printf("cpu: %d iterations, negative curvature %d; fused: %d, %d\n", rc.iterations, rc.negative_curvature,
           rf.iterations, rf.negative_curvature);
    CHECK(rc.negative_curvature && rf.negative_curvature);
    CHECK(rc.iterations == 0 && rf.iterations == 0);
    tw_solver_work_free(&work);
    return 0;
}

/* A zero right-hand side from x = 0 (r = z = 0, rz = 0): the loop never
 * starts, with a tolerance and with a fixed count alike (tw_pcg_go_on's
 * rz > 0), so no row kernel runs on a p of zeros (pq = 0 would read as
 * negative curvature); x stays 0, as tw_pcg's. */
TW_TEST(fused_zero_rhs_does_not_iterate)
{
    bar_system s;
    CHECK(system_create(&s) == 0);
    int n = s.A.n;
    size_t n3 = 3 * (size_t)n;
    tw_real *b = calloc(n3, sizeof(tw_real)), *xc = calloc(n3, sizeof(tw_real)), *xf = calloc(n3, sizeof(tw_real));
    tw_solver_work work;
    CHECK(b && xc && xf);
    CHECK_OK(tw_solver_work_init(&work, n));
    for (int fixed = 0; fixed <= 20; fixed += 20) {
        tw_solve_result rc = tw_pcg(&s.A, b, xc, &s.f, 1e-4, 500, fixed, &work);
        tw_solve_result rf = fused_pcg(&s.A, b, xf, &s.f, 1e-4, 500, fixed);
        printf("b = 0, %s: cpu %d iterations (residual %g, negative curvature %d), fused %d (%g, %d)\n",
               fixed ? "20 fixed iterations" : "tolerance 1e-4", rc.iterations, rc.residual, rc.negative_curvature,
               rf.iterations, rf.residual, rf.negative_curvature);
        CHECK(rc.iterations == 0 && rf.iterations == 0);
        CHECK(!rc.negative_curvature && !rf.negative_curvature);
        CHECK(rf.residual == 0);
        size_t moved = 0;
        for (size_t k = 0; k < n3; k++) moved += xf[k] != 0;
        CHECK(moved == 0);
    }
    tw_solver_work_free(&work);
    free(xf);
    free(xc);
    free(b);
    system_destroy(&s);
    return 0;
}
