/* Krylov solvers on a 3x3-block CSR matrix with the Baraff-Witkin filter.
 *
 * The filter zeroes the constrained vertices' components (cons[i] != 0), so
 * A x = b is solved on the free vertices with the constrained ones held at the
 * values the initial guess x already has (pinned: 0, kinematic: prescribed).
 * r0 = S(b - A x0); every search direction is filtered; the residual norm is
 * relative to |S b|... measured as |S r| / max(|S b|, tiny).
 *
 * Dot products accumulate in double whatever tw_real is. */
#ifndef TW_SOLVER_H
#define TW_SOLVER_H
#include "tetwarp.h"

typedef struct tw_bsr {
    int n, nnzb;
    const int *row_ptr, *col, *diag;
    const tw_real *val; /* 9 per block, row-major */
} tw_bsr;

typedef struct tw_solver_work {
    int n;
    tw_real *r, *z, *p, *q, *s, *t, *rhat, *dinv;
} tw_solver_work;

tw_status tw_solver_work_init(tw_solver_work *w, int n);
void tw_solver_work_free(tw_solver_work *w);

void tw_bsr_spmv(const tw_bsr *A, const tw_real *x, tw_real *y);
/* Inverts the diagonal blocks into dinv (identity where a block is singular). */
void tw_bsr_block_jacobi(const tw_bsr *A, tw_real *dinv);

typedef struct tw_solve_result {
    int iterations;
    double residual; /* relative */
    int negative_curvature; /* PCG met p^T A p <= 0 and stopped there */
} tw_solve_result;

/* Preconditioned CG. fixed_iterations > 0 runs exactly that many. */
tw_solve_result tw_pcg(const tw_bsr *A, const tw_real *b, tw_real *x, const unsigned char *cons,
                       double tol, int max_iterations, int fixed_iterations, tw_solver_work *w);
/* Block-Jacobi preconditioned BiCGStab (for the non-symmetric warp-vertex system). */
tw_solve_result tw_bicgstab(const tw_bsr *A, const tw_real *b, tw_real *x, const unsigned char *cons,
                            double tol, int max_iterations, tw_solver_work *w);
#endif
