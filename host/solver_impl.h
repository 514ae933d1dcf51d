/* The Krylov solvers' implementation, instantiated by solver.c once for
 * tw_real and, in the float build, once more for double (names with _d):
 * static solves refine in double what float's CG cannot reach.
 * Expects TW_S_REAL (the scalar) and TW_S(name) (the instance's name). */
tw_status TW_S(tw_solver_work_init)(TW_S(tw_solver_work) *w, int n)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    TW_S_REAL **vecs[] = {&w->r, &w->z, &w->p, &w->q, &w->s, &w->t, &w->rhat};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) {
        *vecs[k] = tw_calloc(3 * (size_t)n, sizeof(TW_S_REAL), "solver vectors");
        if (!*vecs[k]) { TW_S(tw_solver_work_free)(w); return TW_ERR_NOMEM; }
    }
    w->dinv = tw_calloc(9 * (size_t)n, sizeof(TW_S_REAL), "block-Jacobi preconditioner");
    if (!w->dinv) { TW_S(tw_solver_work_free)(w); return TW_ERR_NOMEM; }
    return TW_OK;
}

void TW_S(tw_solver_work_free)(TW_S(tw_solver_work) *w)
{
    free(w->r); free(w->z); free(w->p); free(w->q); free(w->s); free(w->t); free(w->rhat); free(w->dinv);
    if (w->half_form) { tw_bsr_half_free(w->half_form); free(w->half_form); }
    memset(w, 0, sizeof *w);
}

#include "hd/bsr_row.h"
#include "hd/bicgstab.h"

void TW_S(tw_bsr_spmv)(const TW_S(tw_bsr) *A, const TW_S_REAL *x, TW_S_REAL *y)
{
#pragma omp parallel for if (TW_PAR(A->n)) num_threads(TW_THREADS(A->threads)) schedule(static)
    for (int i = 0; i < A->n; i++) TW_S(tw_bsr_row_product)(A->row_ptr, A->col, A->val, x, y, i);
}

void TW_S(tw_bsr_half_spmv)(const tw_bsr_half_index *h, int n, const TW_S_REAL *val, const TW_S_REAL *x, TW_S_REAL *y,
                            int threads)
{
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int i = 0; i < n; i++) TW_S(tw_bsr_half_row_product)(h, val, x, y, i);
}

/* The work's symmetric half of A when it asks for one (w->half): built on
 * A's pattern at the first solve and again when the pattern changes. For
 * tw_real it is the compact form, its values copied from A at every solve
 * (about one product's traffic): on the CPU the in-place form streams no
 * less, the prefetchers bring the skipped lower blocks in with the upper
 * ones (bench/results/cpu-2core-intel-xeon/spmv_half.md). The other scalar
 * (the _d solvers of the float build) reads A in place. *val: the values
 * the index reads. NULL for the full product (not asked, or it cannot be
 * built). */
static const tw_bsr_half_index *TW_S(pcg_half)(const TW_S(tw_bsr) *A, TW_S(tw_solver_work) *w, const TW_S_REAL **val)
{
    if (w->half != 1 || w->spmv) return NULL;
    /* the same size is the same type here (float or double): the casts below are no-ops then */
    int compact = sizeof(TW_S_REAL) == sizeof(tw_real);
    const tw_real *full = (const tw_real *)(const void *)A->val;
    if (w->half_form && tw_bsr_half_matches(w->half_form, A->n, A->nnzb, A->row_ptr, A->col)) {
        if (compact) tw_bsr_half_refresh(w->half_form, full, A->threads);
    } else {
        if (!w->half_form) w->half_form = tw_calloc(1, sizeof *w->half_form, "symmetric half");
        else tw_bsr_half_free(w->half_form);
        tw_status st = !w->half_form ? TW_ERR_NOMEM
                       : compact ? tw_bsr_half_init_compact(w->half_form, A->n, A->nnzb, A->row_ptr, A->col, A->diag, full)
                                 : tw_bsr_half_init(w->half_form, A->n, A->nnzb, A->row_ptr, A->col, A->diag);
        if (st != TW_OK) {
            fprintf(stderr, "tetwarp: the PCG's symmetric-half product is off, the full matrix is used (%s)\n",
                    tw_last_error());
            w->half = -1;
            return NULL;
        }
    }
    *val = compact ? (const TW_S_REAL *)(const void *)w->half_form->val : A->val;
    return &w->half_form->index;
}

void TW_S(tw_bsr_block_jacobi)(const TW_S(tw_bsr) *A, TW_S_REAL *dinv)
{
#pragma omp parallel for if (TW_PAR(A->n)) num_threads(TW_THREADS(A->threads)) schedule(static)
    for (int i = 0; i < A->n; i++)
        TW_S(tw_block_jacobi_inverse)(A->val + 9 * (size_t)A->diag[i], dinv + 9 * (size_t)i);
}

/* v = S v: fully constrained vertices zeroed, contact vertices lose their
 * component along the contact normal. */
void TW_S(tw_filter_apply)(int n, const tw_filter *f, TW_S_REAL *v, int threads)
{
    if (!f || !f->cons) return;
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int i = 0; i < n; i++) TW_S(tw_filter_block)(f->cons[i], f->normal, i, v + 3 * (size_t)i);
}

static double TW_S(dot)(int n3, const TW_S_REAL *a, const TW_S_REAL *b, int threads)
{
    double s = 0;
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(threads)) reduction(+ : s) schedule(static)
    for (int i = 0; i < n3; i++) s += (double)a[i] * (double)b[i];
    return s;
}

/* z = S Dinv r, one vertex at a time (hd/bsr_row.h, the device's body too) */
void TW_S(tw_block_precondition)(int n, const TW_S_REAL *dinv, const TW_S_REAL *r, TW_S_REAL *z,
                                 const tw_filter *f, int threads)
{
    const unsigned char *cons = f ? f->cons : NULL;
    const tw_real *normal = cons ? f->normal : NULL;
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int i = 0; i < n; i++) TW_S(tw_block_jacobi_vertex)(dinv, r, i, cons ? cons[i] : 0, normal, z + 3 * (size_t)i);
}

/* z = S M r: the work's preconditioner M when one is set, else block-Jacobi */
static void TW_S(pcg_precondition)(const TW_S(tw_bsr) *A, TW_S(tw_solver_work) *w, const TW_S_REAL *r, TW_S_REAL *z,
                                   const tw_filter *f)
{
    if (!w->precond) { TW_S(tw_block_precondition)(A->n, w->dinv, r, z, f, A->threads); return; }
    w->precond(w->precond_ctx, r, z);
    TW_S(tw_filter_apply)(A->n, f, z, A->threads);
}

/* r = S(b - A x); returns |S b| */
static double TW_S(initial_residual)(const TW_S(tw_bsr) *A, const TW_S_REAL *b, const TW_S_REAL *x, const tw_filter *f,
                                     TW_S_REAL *r)
{
    int n3 = 3 * A->n;
    TW_S(tw_bsr_spmv)(A, x, r);
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
    for (int i = 0; i < n3; i++) r[i] = b[i] - r[i];
    TW_S(tw_filter_apply)(A->n, f, r, A->threads);
    double bn = 0;
#pragma omp parallel for if (TW_PAR(A->n)) num_threads(TW_THREADS(A->threads)) reduction(+ : bn) schedule(static)
    for (int i = 0; i < A->n; i++) {
        unsigned char c = f && f->cons ? f->cons[i] : 0;
        double bi[3] = {b[3 * i], b[3 * i + 1], b[3 * i + 2]};
        bn += tw_filter_sb2(c, c ? f->normal : NULL, i, bi);
    }
    return sqrt(bn);
}

tw_solve_result TW_S(tw_pcg)(const TW_S(tw_bsr) *A, const TW_S_REAL *b, TW_S_REAL *x, const tw_filter *cons, double tol,
                       int max_iterations, int fixed_iterations, TW_S(tw_solver_work) *w)
{
    tw_solve_result res = {0, 0, 0};
    int n = A->n, n3 = 3 * n;
    TW_S_REAL *r = w->r, *z = w->z, *p = w->p, *q = w->q;
    if (!w->precond) TW_S(tw_bsr_block_jacobi)(A, w->dinv);
    double bnorm = TW_S(initial_residual)(A, b, x, cons, r);
    if (bnorm < 1e-300) bnorm = 1;
    TW_S(pcg_precondition)(A, w, r, z, cons);
    memcpy(p, z, sizeof(TW_S_REAL) * (size_t)n3);
    double rz = TW_S(dot)(n3, r, z, A->threads);
    double rn = sqrt(TW_S(dot)(n3, r, r, A->threads));
    int limit = fixed_iterations > 0 ? fixed_iterations : max_iterations;
    const TW_S_REAL *half_val = NULL;
    const tw_bsr_half_index *half = TW_S(pcg_half)(A, w, &half_val);
    int it = 0;
    while (it < limit) {
        if (fixed_iterations <= 0 && rn <= tol * bnorm) break;
        if (!(rz > 0)) break; /* exact solution (or breakdown) */
        if (w->spmv) w->spmv(w->spmv_ctx, p, q);
        else if (half) TW_S(tw_bsr_half_spmv)(half, n, half_val, p, q, A->threads);
        else TW_S(tw_bsr_spmv)(A, p, q);
        TW_S(tw_filter_apply)(n, cons, q, A->threads);
        double pq = TW_S(dot)(n3, p, q, A->threads);
        if (!(pq > 0)) { res.negative_curvature = 1; break; }
        double alpha = rz / pq;
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (TW_S_REAL)alpha * p[i];
            r[i] -= (TW_S_REAL)alpha * q[i];
        }
        TW_S(pcg_precondition)(A, w, r, z, cons);
        double rz_new = TW_S(dot)(n3, r, z, A->threads);
        double beta = rz_new / rz;
        rz = rz_new;
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
        for (int i = 0; i < n3; i++) p[i] = z[i] + (TW_S_REAL)beta * p[i];
        rn = sqrt(TW_S(dot)(n3, r, r, A->threads));
        it++;
    }
    res.iterations = it;
    res.residual = rn / bnorm;
    return res;
}

tw_solve_result TW_S(tw_bicgstab)(const TW_S(tw_bsr) *A, const TW_S_REAL *b, TW_S_REAL *x, const tw_filter *cons, double tol,
                            int max_iterations, TW_S(tw_solver_work) *w)
{
    tw_solve_result res = {0, 0, 0};
    int n = A->n, n3 = 3 * n;
    TW_S_REAL *r = w->r, *rhat = w->rhat, *p = w->p, *v = w->q, *s = w->s, *t = w->t, *y = w->z;
    TW_S(tw_bsr_block_jacobi)(A, w->dinv);
    /* the scalars and every decision: hd/bicgstab.h, shared with the device */
    tw_bicg bs = tw_bicg_start(TW_S(initial_residual)(A, b, x, cons, r), tol);
    memcpy(rhat, r, sizeof(TW_S_REAL) * (size_t)n3);
    memset(p, 0, sizeof(TW_S_REAL) * (size_t)n3);
    memset(v, 0, sizeof(TW_S_REAL) * (size_t)n3);
    double rn = sqrt(TW_S(dot)(n3, r, r, A->threads));
    int it = 0;
    while (tw_bicg_more(&bs, it, max_iterations, rn)) {
        double beta;
        if (!tw_bicg_beta(&bs, TW_S(dot)(n3, rhat, r, A->threads), &beta)) break;
        double omega = bs.omega;
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
        for (int i = 0; i < n3; i++) p[i] = r[i] + (TW_S_REAL)beta * (p[i] - (TW_S_REAL)omega * v[i]);
        TW_S(tw_block_precondition)(n, w->dinv, p, y, cons, A->threads);
        TW_S(tw_bsr_spmv)(A, y, v);
        TW_S(tw_filter_apply)(n, cons, v, A->threads);
        if (!tw_bicg_alpha(&bs, TW_S(dot)(n3, rhat, v, A->threads))) break;
        double alpha = bs.alpha;
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (TW_S_REAL)alpha * y[i];
            s[i] = r[i] - (TW_S_REAL)alpha * v[i];
        }
        it++;
        double sn = sqrt(TW_S(dot)(n3, s, s, A->threads));
        if (tw_bicg_converged(&bs, sn)) { memcpy(r, s, sizeof(TW_S_REAL) * (size_t)n3); rn = sn; break; }
        TW_S(tw_block_precondition)(n, w->dinv, s, y, cons, A->threads);
        TW_S(tw_bsr_spmv)(A, y, t);
        TW_S(tw_filter_apply)(n, cons, t, A->threads);
        double tt = TW_S(dot)(n3, t, t, A->threads);
        omega = tw_bicg_omega(&bs, tt, tt > 0 ? TW_S(dot)(n3, t, s, A->threads) : 0);
#pragma omp parallel for if (TW_PAR(n3)) num_threads(TW_THREADS(A->threads)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (TW_S_REAL)omega * y[i];
            r[i] = s[i] - (TW_S_REAL)omega * t[i];
        }
        rn = sqrt(TW_S(dot)(n3, r, r, A->threads));
        if (omega == 0) break;
    }
    res.iterations = it;
    res.residual = tw_bicg_residual(&bs, rn);
    return res;
}
