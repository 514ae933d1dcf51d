/* Krylov solvers on a 3x3-block CSR matrix with the Baraff-Witkin filter.
 *
 * The filter S zeroes the constrained vertices' components (or, for a contact,
 * the component along its normal), so A x = b is solved on the free
 * directions with the constrained ones held at the values the initial guess x
 * already has (pinned: 0, kinematic: prescribed, contact: the normal velocity).
 * r0 = S(b - A x0), every search direction is filtered, and the residual is
 * reported relative to |S b|. Dot products accumulate in double.
 *
 * Each solver exists for tw_real and, with the suffix _d, for double (in the
 * double build the _d names are the same functions): the static solver
 * refines in double what float's CG cannot reach on a stiff slender body. */
#ifndef TW_SOLVER_H
#define TW_SOLVER_H
#include "tetwarp.h"
#include "hd/bsr_half.h" /* tw_bsr_half_index */
struct tw_bsr_half;

/* Which vertices the Baraff-Witkin filter constrains: cons[i] == 0 free,
 * TW_FILTER_NORMAL constrained along normal[3i..3i+2] (a contact), any other
 * non-zero value fully constrained (pinned, kinematic). normal may be NULL
 * when no vertex has TW_FILTER_NORMAL. */
#define TW_FILTER_NORMAL 3
/* A contact in static friction (hd/contact.h TW_CONTACT_STICK): fully
 * constrained, but the reference |S b| keeps its tangential part, as for
 * TW_FILTER_NORMAL: the load it carries along the surface is part of the
 * problem's scale, as it is for a contact that slides, and without it a
 * body at rest (its free vertices' b nearly balanced) would be solved to a
 * far smaller absolute residual. */
#define TW_FILTER_STICK 5
/* 1 when filter value c keeps the tangential part of b in |S b|. */
#define TW_FILTER_TANGENTIAL(c) ((c) == TW_FILTER_NORMAL || (c) == TW_FILTER_STICK)

/* Vertex i's term of |S b|^2, the solvers' reference norm, from its b in
 * double (bi): all of it for a free vertex (c = 0), its part off the normal
 * for TW_FILTER_TANGENTIAL filter values (normal[3i..3i+2]; normal is read
 * only for those), 0 for a vertex held whole. One body for host/solver_impl.h
 * and the CUDA solvers' initial residuals. */
TW_HD double tw_filter_sb2(unsigned char c, const tw_real *normal, int i, const double bi[3])
{
    if (c && !TW_FILTER_TANGENTIAL(c)) return 0;
    double t[3] = {bi[0], bi[1], bi[2]};
    if (c) {
        const tw_real *nn = normal + 3 * (size_t)i;
        double d = t[0] * nn[0] + t[1] * nn[1] + t[2] * nn[2];
        for (int k = 0; k < 3; k++) t[k] -= d * nn[k];
    }
    return t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
}
typedef struct tw_filter {
    const unsigned char *cons;
    const tw_real *normal;
} tw_filter;

typedef struct tw_solve_result {
    int iterations;
    double residual;        /* relative, as the iteration computed it */
    int negative_curvature; /* PCG met p^T A p <= 0 and stopped there */
} tw_solve_result;

#define TW_SOLVER_DECLARE(REAL, S)                                                                          \
    typedef struct S(tw_bsr) {                                                                              \
        int n, nnzb;                                                                                        \
        const int *row_ptr, *col, *diag;                                                                    \
        const REAL *val; /* 9 per block, row-major */                                                       \
        int threads; /* OpenMP threads of its products and solves (a world's def.threads); 0: the default */ \
    } S(tw_bsr);                                                                                            \
    typedef struct S(tw_solver_work) {                                                                      \
        int n;                                                                                              \
        REAL *r, *z, *p, *q, *s, *t, *rhat, *dinv;                                                          \
        /* tw_pcg's preconditioner z = M r when set (M SPD; the filter is applied after it), \
         * else block-Jacobi */                                                                             \
        void (*precond)(void *ctx, const REAL *r, REAL *z);                                                 \
        void *precond_ctx;                                                                                  \
        /* tw_pcg's iteration product y = A x when set (the same A), else tw_bsr_spmv */                 \
        void (*spmv)(void *ctx, const REAL *x, REAL *y);                                                    \
        void *spmv_ctx;                                                                                     \
        /* 1: tw_pcg's iteration product (spmv unset) from A's symmetric half \
         * (host/bsr_half.h; A must be symmetric): half_form, built at the first solve \
         * and again when A's pattern changes, its values copied from A at each solve. \
         * -1: it could not be built (said on stderr), the full product */                                  \
        int half;                                                                                           \
        struct tw_bsr_half *half_form;                                                                      \
    } S(tw_solver_work);                                                                                    \
    tw_status S(tw_solver_work_init)(S(tw_solver_work) * w, int n);                                         \
    void S(tw_solver_work_free)(S(tw_solver_work) * w);                                                     \
    void S(tw_bsr_spmv)(const S(tw_bsr) * A, const REAL *x, REAL *y);                                       \
    /* y = A x from the symmetric half h of A (n block rows, val the values h indexes) */                   \
    void S(tw_bsr_half_spmv)(const tw_bsr_half_index *h, int n, const REAL *val, const REAL *x, REAL *y,    \
                             int threads);                                                                  \
    /* inverts the diagonal blocks (identity where one is singular) */                                      \
    void S(tw_bsr_block_jacobi)(const S(tw_bsr) * A, REAL *dinv);                                           \
    /* v = S v over n vertices (f NULL or without cons: nothing) */                                         \
    void S(tw_filter_apply)(int n, const tw_filter *f, REAL *v, int threads);                               \
    /* z = S Dinv r, Dinv n inverted 3x3 blocks (tw_bsr_block_jacobi's) */                                  \
    void S(tw_block_precondition)(int n, const REAL *dinv, const REAL *r, REAL *z, const tw_filter *f,      \
                                  int threads);                                                             \
    /* preconditioned CG; fixed_iterations > 0 runs exactly that many */                                    \
    tw_solve_result S(tw_pcg)(const S(tw_bsr) * A, const REAL *b, REAL *x, const tw_filter *filter,      \
                              double tol, int max_iterations, int fixed_iterations, S(tw_solver_work) * w); \
    /* block-Jacobi preconditioned BiCGStab (the non-symmetric warp-vertex system) */                       \
    tw_solve_result S(tw_bicgstab)(const S(tw_bsr) * A, const REAL *b, REAL *x, const tw_filter *filter, \
                                   double tol, int max_iterations, S(tw_solver_work) * w);

#define TW_SOLVER_NAME(name) name
TW_SOLVER_DECLARE(tw_real, TW_SOLVER_NAME)
#ifndef TW_DOUBLE
#define TW_SOLVER_NAME_D(name) name##_d
TW_SOLVER_DECLARE(double, TW_SOLVER_NAME_D)
#else
typedef tw_bsr tw_bsr_d;
typedef tw_solver_work tw_solver_work_d;
#define tw_solver_work_init_d tw_solver_work_init
#define tw_solver_work_free_d tw_solver_work_free
#define tw_bsr_spmv_d tw_bsr_spmv
#define tw_bsr_half_spmv_d tw_bsr_half_spmv
#define tw_bsr_block_jacobi_d tw_bsr_block_jacobi
#define tw_filter_apply_d tw_filter_apply
#define tw_block_precondition_d tw_block_precondition
#define tw_pcg_d tw_pcg
#define tw_bicgstab_d tw_bicgstab
#endif
#endif
