/* Smoothed-aggregation algebraic multigrid (AMG) on the step's 3x3-block
 * system: a V-cycle used as the PCG's preconditioner (tw_pcg through
 * tw_solver_work.precond). The design note is at the top of amg.c. */
#ifndef TW_AMG_H
#define TW_AMG_H
#include "solver.h"

typedef struct tw_amg tw_amg;

enum { TW_AMG_JACOBI = 0, TW_AMG_CHEBYSHEV = 1 };

typedef struct tw_amg_def {
    double strength;      /* strength of connection theta on the finest level, halved per level: a
                             block ij is strong when |A_ij|_F >= theta sqrt(|A_ii|_F |A_jj|_F) */
    int smoother;         /* TW_AMG_JACOBI or TW_AMG_CHEBYSHEV */
    int smooth_steps;     /* on the finest level: pre- and post-smoothing sweeps (block-Jacobi) or
                             the polynomial's degree (Chebyshev); the cycle stays symmetric */
    int coarse_smooth_steps; /* the same on the levels below the finest; 0: smooth_steps */
    double cheb_ratio;    /* Chebyshev: the interval [lambda / ratio, lambda] of D^-1 A it damps */
    double prolong_damping; /* P = (I - w D^-1 A) P0 with w = prolong_damping / lambda */
    int max_coarse;       /* the coarsest level is factored densely at or below this many unknowns */
    int max_levels;
    int distance2_levels; /* the first this many levels aggregate a seed's two rings of strong
                             neighbours (larger aggregates, sparser coarse operators), the rest one */
    int galerkin_interval; /* recompute the smoothed prolongators and coarse operators every this many
                              updates; in between only the finest operator and its smoother follow
                              the step's matrix (the cycle stays SPD with stale coarse levels) */
} tw_amg_def;
tw_amg_def tw_default_amg_def(void);

/* The hierarchy's fixed part from the rest positions X (3 per vertex), the
 * system's block pattern and values (A: the strength of connection) and the
 * filter (fully constrained vertices are left out of the aggregates). NULL
 * with tw_last_error set on failure. */
tw_amg *tw_amg_create(const tw_bsr *A, const tw_real *X, const tw_filter *filter, const tw_amg_def *def);
void tw_amg_free(tw_amg *m);

/* 1 when the filter's fully constrained vertices are those m was built for
 * (else build a new one: the aggregates leave those vertices out). */
int tw_amg_matches(const tw_amg *m, const tw_filter *filter);

/* The step's part: the filtered fine operator, the smoothed prolongators and
 * the Galerkin coarse operators P^T A P from A's values, the smoothers'
 * damping, the coarsest level's Cholesky factor. A has m's pattern. */
tw_status tw_amg_update(tw_amg *m, const tw_bsr *A, const tw_filter *filter);

/* z = V r: one V-cycle from zero (SPD); ctx is the tw_amg. The signature of
 * tw_solver_work.precond. */
void tw_amg_apply(void *ctx, const tw_real *r, tw_real *z);

/* y = A x, the last update's step matrix (its upper half, as the finest
 * sweeps read it, where they run in SSE: the float build; else
 * tw_bsr_spmv); ctx is the tw_amg. The signature of tw_solver_work.spmv. */
void tw_amg_spmv(void *ctx, const tw_real *x, tw_real *y);

/* Inspection for tests and benchmarks. */
int tw_amg_levels(const tw_amg *m);
int tw_amg_level_size(const tw_amg *m, int level); /* unknowns on that level */
/* The tentative prolongator's reproduction error on level l (0 = finest):
 * max |P0 B_{l+1} - B_l| / max |B_l| over free rows, B_l the rigid-body modes
 * carried to level l (B_0 the six rigid modes of X). */
double tw_amg_rigid_mode_error(const tw_amg *m, int level);
/* Milliseconds of the last tw_amg_update. */
double tw_amg_update_ms(const tw_amg *m);

/* ---- The hierarchy as plain arrays (read-only views into m, valid until
 * its next update or free): what a device copy uploads and replays
 * (kernels/cuda_amg.cu, host/amg_lists.h) and its CPU emulation checks. ---- */
typedef struct tw_amg_level_view {
    int nnode, bs;                 /* nodes, unknowns per node (3 on the finest level, 6 below) */
    /* the operator below the finest level (the finest is the step's BSR):
     * block CSR, per node its diagonal block, per block its transpose's */
    int nnzb;
    const int *ptr, *col, *diag, *mirror;
    const double *val;             /* bs x bs row-major blocks (the Galerkin product's) */
    const float *fval;             /* the cycle's copy */
    double lambda;                 /* lambda_max(D^-1 A) with its margin (the last Galerkin update's) */
    double omega;                  /* the prolongator smoothing's damping, 4 / (3 lambda) */
    const double *dinv;            /* per node the diagonal block's (pseudo-)inverse */
    const float *fdinv;            /* the smoother's damped copy */
    const tw_real *eig;            /* the power iteration's vector */
    /* to the next level (p_nnzb 0 on the coarsest): P0 (one block per
     * aggregated node), P = (I - omega D^-1 S A) P0, P^T's pattern with the
     * P block of each of its blocks, and A P */
    int p0_nnzb, p_nnzb, ap_nnzb;
    const int *p0_ptr, *p0_col;
    const double *p0_val;
    const int *p_ptr, *p_col;
    const double *p_val;
    const float *p_fval;
    const int *pt_ptr, *pt_col, *pt_map;
    const float *pt_fval;
    const int *ap_ptr, *ap_col;
    const double *ap_val;
} tw_amg_level_view;

typedef struct tw_amg_view {
    int nlev, nv;                  /* levels, fine vertices */
    int smooth_steps, galerkin_interval, since_galerkin;
    double smooth_damping;         /* the smoother's w lambda */
    int chebyshev;                 /* the smoother: Chebyshev (tw_amg_cheb_coeffs), else block-Jacobi */
    int coarse_smooth_steps;       /* below the finest level; 0: smooth_steps */
    double cheb_ratio;             /* Chebyshev's interval [lambda / ratio, lambda] */
    double prolong_damping;        /* omega = prolong_damping / lambda */
    const unsigned char *fixed;    /* per fine vertex: left out of the aggregates */
    const unsigned char *contact;  /* per fine vertex: a contact at the last Galerkin update */
    const double *p0_rest;         /* the finest P0's values before the contact projection */
    int coarsest_n;                /* unknowns of the coarsest level */
    const double *coarsest_factor; /* its dense Cholesky factor (lower triangle, row-major, null pivots 0) */
} tw_amg_view;

void tw_amg_view_of(const tw_amg *m, tw_amg_view *v);
/* TW_OK, or TW_ERR_INVALID for a level out of range */
tw_status tw_amg_level_view_of(const tw_amg *m, int level, tw_amg_level_view *v);
#endif
