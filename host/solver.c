#include "solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "math3.h"

tw_status tw_solver_work_init(tw_solver_work *w, int n)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    tw_real **vecs[] = {&w->r, &w->z, &w->p, &w->q, &w->s, &w->t, &w->rhat};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) {
        *vecs[k] = tw_calloc(3 * (size_t)n, sizeof(tw_real), "solver vectors");
        if (!*vecs[k]) { tw_solver_work_free(w); return TW_ERR_NOMEM; }
    }
    w->dinv = tw_calloc(9 * (size_t)n, sizeof(tw_real), "block-Jacobi preconditioner");
    if (!w->dinv) { tw_solver_work_free(w); return TW_ERR_NOMEM; }
    return TW_OK;
}

void tw_solver_work_free(tw_solver_work *w)
{
    free(w->r); free(w->z); free(w->p); free(w->q); free(w->s); free(w->t); free(w->rhat); free(w->dinv);
    memset(w, 0, sizeof *w);
}

void tw_bsr_spmv(const tw_bsr *A, const tw_real *x, tw_real *y)
{
#pragma omp parallel for if (TW_PAR(A->n)) schedule(static)
    for (int i = 0; i < A->n; i++) {
        tw_real y0 = 0, y1 = 0, y2 = 0;
        for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
            const tw_real *a = A->val + 9 * (size_t)k, *xj = x + 3 * (size_t)A->col[k];
            y0 += a[0] * xj[0] + a[1] * xj[1] + a[2] * xj[2];
            y1 += a[3] * xj[0] + a[4] * xj[1] + a[5] * xj[2];
            y2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];
        }
        y[3 * i] = y0; y[3 * i + 1] = y1; y[3 * i + 2] = y2;
    }
}

void tw_bsr_block_jacobi(const tw_bsr *A, tw_real *dinv)
{
#pragma omp parallel for if (TW_PAR(A->n)) schedule(static)
    for (int i = 0; i < A->n; i++) {
        tw_m3 D = tw_m3_load(A->val + 9 * (size_t)A->diag[i]), Di;
        if (!tw_m3_inverse(D, &Di)) Di = tw_m3_identity();
        tw_m3_store(dinv + 9 * (size_t)i, Di);
    }
}

static void filter(int n, const unsigned char *cons, tw_real *v)
{
    if (!cons) return;
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++)
        if (cons[i]) v[3 * i] = v[3 * i + 1] = v[3 * i + 2] = 0;
}

static double dot(int n3, const tw_real *a, const tw_real *b)
{
    double s = 0;
#pragma omp parallel for if (TW_PAR(n3)) reduction(+ : s) schedule(static)
    for (int i = 0; i < n3; i++) s += (double)a[i] * (double)b[i];
    return s;
}

/* z = Dinv r, filtered */
static void precondition(int n, const tw_real *dinv, const tw_real *r, tw_real *z, const unsigned char *cons)
{
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++) {
        const tw_real *d = dinv + 9 * (size_t)i, *ri = r + 3 * (size_t)i;
        if (cons && cons[i]) { z[3 * i] = z[3 * i + 1] = z[3 * i + 2] = 0; continue; }
        z[3 * i] = d[0] * ri[0] + d[1] * ri[1] + d[2] * ri[2];
        z[3 * i + 1] = d[3] * ri[0] + d[4] * ri[1] + d[5] * ri[2];
        z[3 * i + 2] = d[6] * ri[0] + d[7] * ri[1] + d[8] * ri[2];
    }
}

/* r = S(b - A x); returns |S b| */
static double initial_residual(const tw_bsr *A, const tw_real *b, const tw_real *x, const unsigned char *cons,
                               tw_real *r)
{
    int n3 = 3 * A->n;
    tw_bsr_spmv(A, x, r);
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
    for (int i = 0; i < n3; i++) r[i] = b[i] - r[i];
    filter(A->n, cons, r);
    double bn = 0;
#pragma omp parallel for if (TW_PAR(A->n)) reduction(+ : bn) schedule(static)
    for (int i = 0; i < A->n; i++)
        if (!cons || !cons[i])
            for (int c = 0; c < 3; c++) bn += (double)b[3 * i + c] * b[3 * i + c];
    return sqrt(bn);
}

tw_solve_result tw_pcg(const tw_bsr *A, const tw_real *b, tw_real *x, const unsigned char *cons, double tol,
                       int max_iterations, int fixed_iterations, tw_solver_work *w)
{
    tw_solve_result res = {0, 0, 0};
    int n = A->n, n3 = 3 * n;
    tw_real *r = w->r, *z = w->z, *p = w->p, *q = w->q;
    tw_bsr_block_jacobi(A, w->dinv);
    double bnorm = initial_residual(A, b, x, cons, r);
    if (bnorm < 1e-300) bnorm = 1;
    precondition(n, w->dinv, r, z, cons);
    memcpy(p, z, sizeof(tw_real) * (size_t)n3);
    double rz = dot(n3, r, z);
    double rn = sqrt(dot(n3, r, r));
    int limit = fixed_iterations > 0 ? fixed_iterations : max_iterations;
    int it = 0;
    while (it < limit) {
        if (fixed_iterations <= 0 && rn <= tol * bnorm) break;
        if (!(rz > 0)) break; /* exact solution (or breakdown) */
        tw_bsr_spmv(A, p, q);
        filter(n, cons, q);
        double pq = dot(n3, p, q);
        if (!(pq > 0)) { res.negative_curvature = 1; break; }
        double alpha = rz / pq;
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (tw_real)alpha * p[i];
            r[i] -= (tw_real)alpha * q[i];
        }
        precondition(n, w->dinv, r, z, cons);
        double rz_new = dot(n3, r, z);
        double beta = rz_new / rz;
        rz = rz_new;
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
        for (int i = 0; i < n3; i++) p[i] = z[i] + (tw_real)beta * p[i];
        rn = sqrt(dot(n3, r, r));
        it++;
    }
    res.iterations = it;
    res.residual = rn / bnorm;
    return res;
}

tw_solve_result tw_bicgstab(const tw_bsr *A, const tw_real *b, tw_real *x, const unsigned char *cons, double tol,
                            int max_iterations, tw_solver_work *w)
{
    tw_solve_result res = {0, 0, 0};
    int n = A->n, n3 = 3 * n;
    tw_real *r = w->r, *rhat = w->rhat, *p = w->p, *v = w->q, *s = w->s, *t = w->t, *y = w->z;
    tw_bsr_block_jacobi(A, w->dinv);
    double bnorm = initial_residual(A, b, x, cons, r);
    if (bnorm < 1e-300) bnorm = 1;
    memcpy(rhat, r, sizeof(tw_real) * (size_t)n3);
    memset(p, 0, sizeof(tw_real) * (size_t)n3);
    memset(v, 0, sizeof(tw_real) * (size_t)n3);
    double rho = 1, alpha = 1, omega = 1;
    double rn = sqrt(dot(n3, r, r));
    int it = 0;
    while (it < max_iterations && rn > tol * bnorm) {
        double rho_new = dot(n3, rhat, r);
        if (fabs(rho_new) < 1e-300) break;
        double beta = (rho_new / rho) * (alpha / omega);
        rho = rho_new;
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
        for (int i = 0; i < n3; i++) p[i] = r[i] + (tw_real)beta * (p[i] - (tw_real)omega * v[i]);
        precondition(n, w->dinv, p, y, cons);
        tw_bsr_spmv(A, y, v);
        filter(n, cons, v);
        double rv = dot(n3, rhat, v);
        if (fabs(rv) < 1e-300) break;
        alpha = rho / rv;
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (tw_real)alpha * y[i];
            s[i] = r[i] - (tw_real)alpha * v[i];
        }
        it++;
        double sn = sqrt(dot(n3, s, s));
        if (sn <= tol * bnorm) { memcpy(r, s, sizeof(tw_real) * (size_t)n3); rn = sn; break; }
        precondition(n, w->dinv, s, y, cons);
        tw_bsr_spmv(A, y, t);
        filter(n, cons, t);
        double tt = dot(n3, t, t);
        omega = tt > 0 ? dot(n3, t, s) / tt : 0;
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
        for (int i = 0; i < n3; i++) {
            x[i] += (tw_real)omega * y[i];
            r[i] = s[i] - (tw_real)omega * t[i];
        }
        rn = sqrt(dot(n3, r, r));
        if (omega == 0) break;
    }
    res.iterations = it;
    res.residual = rn / bnorm;
    return res;
}
