/* Smoothed-aggregation AMG (Vanek, Mandel & Brezina 1996) as the PCG's
 * preconditioner for the step's system A = M + h C + h^2 K'.
 *
 * Why this design:
 * - Algebraic, not geometric: it needs only the matrix and the rest
 *   positions, so it works for any mesh file (TetGen, Gmsh, MEDIT, the
 *   lattices) without a mesh hierarchy.
 * - Aggregates of vertices (a vertex and its strongly connected neighbours,
 *   strength measured on the 3x3 block norms), fixed for the world's life:
 *   they depend on the connectivity and the rest state, not on the step.
 * - Near-null space: the six rigid-body modes of the rest positions. K' of
 *   every method (constant, warped, corotated, StVK tangent) has them, or
 *   rotated copies of them, as its low-energy modes; a tentative prolongator
 *   P0 that reproduces them exactly (a thin QR of the modes per aggregate)
 *   is what makes the iteration count independent of size on an elastic
 *   body, where a scalar (Laplacian-like) aggregation would not. The QR's R
 *   carries the modes to the next level, so every level reproduces them.
 * - Every matrix is block-sparse with fixed block sizes: 3 unknowns per fine
 *   vertex, 6 per coarse node (an aggregate that cannot carry all six modes
 *   keeps zero columns in P0 and zero rows and columns in its coarse
 *   operator, which the pseudo-inverses below map to zero). The products
 *   are then small dense block products, one column index per block.
 * - One damped-Jacobi smoothing of P0 (P = (I - w D^-1 A) P0, w = 4/(3
 *   lambda_max(D^-1 A))) gives the energy-minimising prolongator; the coarse
 *   operators are Galerkin products P^T A P, so the coarse levels see the
 *   warped / corotated matrix, not a rest-state approximation. Their block
 *   patterns are fixed with the aggregates and computed once; the values
 *   are redone every def.galerkin_interval steps (they cost about as much as
 *   the cycles of several steps, and the iteration count barely moves when
 *   they lag a few steps behind the rotations), only the upper blocks
 *   (the lower ones are their transposes, so the operator is exactly
 *   symmetric). The finest level reads the step's own BSR matrix, so it
 *   follows every step at no cost beyond its block inverses.
 * - The Baraff-Witkin filter S: the PCG hands the cycle filtered vectors, and
 *   on the filtered subspace the filtered operator is S A: the finest level
 *   applies S to its residuals (a per-vertex test), its block inverses are
 *   those of the filtered diagonal blocks (a fully constrained vertex's
 *   diagonal, a contact vertex's normal decoupled with trace/3), and P0's
 *   rows are filtered (fully constrained vertices belong to no aggregate, a
 *   contact vertex's rows lose their normal component), so P and every
 *   vector the cycle makes stay filtered and P^T S A P = P^T A P. When the
 *   set of fully constrained vertices changes the world builds a new
 *   hierarchy (tw_amg_matches); when the contact set changes the Galerkin
 *   operators are redone.
 * - The cycle's products read float copies of P, P^T and every level's
 *   operator, its vectors are in the CG's precision (float arithmetic is
 *   twice as wide, and the copies half the memory); the Galerkin products
 *   and the block inverses are double.
 * - Smoother: a Chebyshev polynomial of degree 2 in D^-1 A (D the node
 *   blocks), the one smallest on [lambda / 10, lambda] (lambda the power
 *   iteration's estimate of lambda_max with its margin), as in Adams,
 *   Brezina, Hu & Tuminaro 2003 (Parallel multigrid smoothing: polynomial
 *   versus Gauss-Seidel): each degree one fused pass over A (residual,
 *   filter, block inverse, the three-term update), the same polynomial
 *   before and after the coarse correction, so the V-cycle is symmetric;
 *   positive definite while lambda_max stays below lambda (1 + 1/10). It
 *   takes about 40 % fewer CG iterations than one damped block-Jacobi
 *   sweep (and fewer than two sweeps, at the same number of passes over
 *   each level's operator); bench/multigrid_smoothers.c compares them.
 *   Damped block-Jacobi (w lambda < 2, TW_AMG_SMOOTH_DAMPING) stays as
 *   tw_amg_def's other smoother.
 *   The sweeps read each level's operator as its upper half (the diagonal
 *   block and the blocks right of it, a lower block read as the transpose
 *   of its mirror): every level's operator is symmetric, and a sweep,
 *   memory-bound, then reads half the bytes; on the finest level one SSE
 *   block product serves both halves. The PCG's own product on the mg
 *   path reads the same half (tw_amg_spmv).
 * - The coarsest level (at most def.max_coarse unknowns) is factored densely
 *   by Cholesky at each Galerkin update. */
#include "amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hd/hd.h"
#include "hd/amg_galerkin.h" /* the dense factor, inverses and Chebyshev coefficients, shared with the device */

/* the finest level's sweep in SSE (x86-64's baseline) on a float build */
#if defined(__SSE2__) && !defined(TW_DOUBLE)
#define TW_AMG_SSE 1
#include <emmintrin.h>
#else
#define TW_AMG_SSE 0
#endif

double tw_now_ms(void); /* step.c */

#define TW_AMG_MAX_LEVELS 16
#define CB 6 /* unknowns per coarse node */
/* the smoother's damping w lambda (lambda: the estimate with its 10 %
 * margin): the cycle stays SPD while w lambda_max < 2, i.e. while the
 * estimate is within 20 % of lambda_max; 1.7 instead of the prolongator's
 * 4/3 takes 10-15 % fewer CG iterations on the bars */
#define TW_AMG_SMOOTH_DAMPING 1.7
#ifndef _OPENMP
#define TW_THREADS(threads) 1
#endif
/* the block loops have constant trip counts (3 or 6) where inlined: unrolled
 * they keep a block row's sums in registers */
#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define UNROLL _Pragma("GCC unroll 8")
#else
#define UNROLL
#endif

/* block CSR: nbr block rows of br x bc blocks (row-major values) */
typedef struct bmat {
    int nbr, nbc, br, bc;
    int *ptr, *col;
    double *val;
    float *fval; /* the cycle's copy */
} bmat;

typedef struct level {
    int nnode, bs, n; /* n = nnode * bs */
    int rank;         /* unknowns that carry a mode (the level's size as reported) */
    bmat A;           /* below the finest level (the finest reads the step's BSR) */
    int *diag;        /* per node: its diagonal block in A */
    double *dinv;     /* per node, bs x bs: the smoother's block inverse */
    float *fdinv;     /* the cycle's copy of the smoother's damped dinv */
    double lambda, omega;
    tw_real *cd;      /* Chebyshev: the update direction, updated in the sweep's pass */
    tw_real ca, cc;   /* its step's coefficients: cd = ca cd + cc (lambda / 1.7) w D^-1 r */
    tw_real *eig;     /* power iteration's vector, carried across updates */
    double *B;        /* n x 6: the rigid modes carried to this level */
    /* to the next level (absent on the coarsest) */
    int *agg;         /* per node: aggregate or -1 */
    bmat P0, P, Pt, AP;
    int *pt_map;      /* Pt block -> P block */
    int *mirror;      /* per block of A: the block of its transpose (below the finest) */
    tw_real *x, *t, *b, *r; /* the cycle's vectors, in the CG's precision */
    /* the smoother's operator stored once: per node row its diagonal block,
     * then the blocks right of it (float); the blocks left of the diagonal
     * are read as the transposes of those (see half_sweep) */
    int *hptr, *hcol, *hmap; /* hmap: per stored block, its block in the full operator */
    float *hval;             /* hvb floats a block */
    int hvb, hys;            /* and the stride of hy and hbuf per node (4 on the SSE finest level) */
    tw_real *hy;             /* the product A x of a sweep */
    tw_real *hbuf;           /* per thread but the last: its rows' products into later threads' rows */
    int hbuf_threads;
} level;

struct tw_amg {
    tw_amg_def def;
    int threads, nv;
    tw_bsr A;               /* the step's matrix; its arrays are the caller's, read until the next update */
    unsigned char *fixed;   /* fine vertices left out of the aggregates */
    unsigned char *cons;    /* the filter at the last update */
    tw_real *normal;        /* its contact normals, 3 per vertex (the filter's, copied) */
    unsigned char *contact; /* fine vertices with a contact filter at the last Galerkin update */
    int nlev;
    level lev[TW_AMG_MAX_LEVELS];
    double *L;              /* the coarsest level's dense Cholesky factor, row-major */
    double *lb, *lx;        /* its right-hand side and solution */
    double update_ms;
    int since_galerkin;     /* updates since the coarse operators were last recomputed */
    double *p0_rest;        /* the finest P0's values before the contact projection */
};

tw_amg_def tw_default_amg_def(void)
{
    tw_amg_def d;
    d.strength = 0.08;
    d.smoother = TW_AMG_CHEBYSHEV;
    d.smooth_steps = 2;
    d.coarse_smooth_steps = 0;
    d.cheb_ratio = 10;
    d.prolong_damping = 4.0 / 3.0;
    d.max_coarse = 300;
    d.max_levels = 10;
    d.distance2_levels = 1;
    d.galerkin_interval = 8;
    return d;
}

static void bmat_free(bmat *a)
{
    free(a->ptr); free(a->col); free(a->val); free(a->fval);
    memset(a, 0, sizeof *a);
}

static size_t bmat_nnzb(const bmat *a) { return a->ptr ? (size_t)a->ptr[a->nbr] : 0; }

/* the values and their float copy on a's pattern (ptr, col set) */
static tw_status bmat_alloc_values(bmat *a, int with_double)
{
    size_t nv = bmat_nnzb(a) * (size_t)a->br * a->bc + 1;
    if (with_double && !(a->val = tw_calloc(nv, sizeof(double), "AMG matrix values"))) return TW_ERR_NOMEM;
    if (!(a->fval = tw_calloc(nv, sizeof(float), "AMG matrix values"))) return TW_ERR_NOMEM;
    return TW_OK;
}

static void bmat_shadow(bmat *a, int threads)
{
    size_t nv = bmat_nnzb(a) * (size_t)a->br * a->bc;
#pragma omp parallel for if (TW_PAR((int)nv)) num_threads(TW_THREADS(threads)) schedule(static)
    for (size_t k = 0; k < nv; k++) a->fval[k] = (float)a->val[k];
}

/* yi = row i of M x (add: yi += it) over the float values */
static inline __attribute__((always_inline)) void bmat_row(const bmat *M, const tw_real *restrict x, tw_real *restrict yi,
                                                           int i, int add, int br, int bc)
{
    tw_real acc[CB] = {0, 0, 0, 0, 0, 0};
    for (int k = M->ptr[i]; k < M->ptr[i + 1]; k++) {
        const float *restrict a = M->fval + (size_t)br * bc * k;
        const tw_real *restrict xj = x + (size_t)bc * M->col[k];
        tw_real xv[CB];
        UNROLL for (int c = 0; c < bc; c++) xv[c] = xj[c];
        UNROLL for (int r = 0; r < br; r++) {
            tw_real s = 0;
            UNROLL for (int c = 0; c < bc; c++) s += a[r * bc + c] * xv[c];
            acc[r] += s;
        }
    }
    if (add) {
        UNROLL for (int r = 0; r < br; r++) yi[r] += acc[r];
    } else {
        UNROLL for (int r = 0; r < br; r++) yi[r] = acc[r];
    }
}

#define BMAT_SPMV_LOOP(BR, BC)                                                                             \
    do {                                                                                                   \
        _Pragma("omp parallel for if (TW_PAR(work)) num_threads(TW_THREADS(threads)) schedule(static)")  \
        for (int i = 0; i < M->nbr; i++) bmat_row(M, x, y + (size_t)(BR) * i, i, add, BR, BC);                                \
    } while (0)

static void bmat_spmv(const bmat *M, const tw_real *x, tw_real *y, int add, int threads)
{
    int work = (int)(bmat_nnzb(M) * (size_t)M->br * M->bc / 4);
    if (M->br == 3) BMAT_SPMV_LOOP(3, CB);
    else if (M->bc == 3) BMAT_SPMV_LOOP(CB, 3);
    else BMAT_SPMV_LOOP(CB, CB);
}

/* o += a b (a: R x K, b: K x C, row-major); the block sizes are constants
 * at every call */
static inline __attribute__((always_inline)) void block_mul_add(int R, int K, int C, const double *restrict a,
                                                                const double *restrict b, double *restrict o)
{
    UNROLL for (int r = 0; r < R; r++) {
        double acc[CB];
        UNROLL for (int c = 0; c < C; c++) acc[c] = o[r * C + c];
        UNROLL for (int t = 0; t < K; t++) {
            double s = a[r * K + t];
            UNROLL for (int c = 0; c < C; c++) acc[c] += s * b[t * C + c];
        }
        UNROLL for (int c = 0; c < C; c++) o[r * C + c] = acc[c];
    }
}

/* o += a^T b (a: K x R, b: K x C) */
static inline __attribute__((always_inline)) void block_tmul_add(int R, int K, int C, const double *restrict a,
                                                                 const double *restrict b, double *restrict o)
{
    UNROLL for (int r = 0; r < R; r++) {
        double acc[CB];
        UNROLL for (int c = 0; c < C; c++) acc[c] = o[r * C + c];
        UNROLL for (int t = 0; t < K; t++) {
            double s = a[t * R + r];
            UNROLL for (int c = 0; c < C; c++) acc[c] += s * b[t * C + c];
        }
        UNROLL for (int c = 0; c < C; c++) o[r * C + c] = acc[c];
    }
}

/* ---- the finest level: the step's BSR through the filter ---- */

/* the level's node graph */
static const int *level_ptr(const tw_amg *m, const level *l, int li) { return li ? l->A.ptr : m->A.row_ptr; }
static const int *level_col(const tw_amg *m, const level *l, int li) { return li ? l->A.col : m->A.col; }

/* block k (row i, column j) of the level's operator in double: a pointer to
 * the stored block, or to buf holding the finest level's filtered one */
static const double *level_block(const tw_amg *m, const level *l, int li, int i, int j, int k, double *buf)
{
    if (li) return l->A.val + (size_t)CB * CB * k;
    tw_amg_fine_block(m->A.val + 9 * (size_t)k, i, j, m->cons[i], m->cons[j], m->normal + 3 * (size_t)i,
                      m->normal + 3 * (size_t)j, buf);
    return buf;
}

/* y = row i of (A x), bs values, over the cycle's values */
static inline __attribute__((always_inline)) void level_row(const tw_amg *m, const level *l, int li, const tw_real *x,
                                                            int i, tw_real *y)
{
    if (li) { bmat_row(&l->A, x, y, i, 0, CB, CB); return; }
    const tw_bsr *A = &m->A;
    tw_real y0 = 0, y1 = 0, y2 = 0;
    for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
        const tw_real *a = A->val + 9 * (size_t)k;
        const tw_real *xj = x + 3 * (size_t)A->col[k];
        y0 += a[0] * xj[0] + a[1] * xj[1] + a[2] * xj[2];
        y1 += a[3] * xj[0] + a[4] * xj[1] + a[5] * xj[2];
        y2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];
    }
    y[0] = y0; y[1] = y1; y[2] = y2;
}

/* the rest of a sweep's row i once yi = (A x)_i: r = S(b - A x), or the
 * damped block-Jacobi update out = x + w D^-1 r */
static inline __attribute__((always_inline)) void half_finish(const tw_amg *m, const level *l, int fine, int i,
                                                              const tw_real *yi, const tw_real *b, const tw_real *x,
                                                              tw_real *r, tw_real *out, tw_real *prod)
{
    const int bs = fine ? 3 : CB;
    size_t s0 = (size_t)bs * i;
    if (prod) { /* the product alone */
        UNROLL for (int q = 0; q < bs; q++) prod[s0 + q] = yi[q];
        return;
    }
    tw_real ri[CB];
    UNROLL for (int q = 0; q < bs; q++) ri[q] = (b ? b[s0 + q] : 0) - yi[q];
    if (fine) tw_amg_filter3v(m->cons[i], m->normal + 3 * (size_t)i, ri);
    if (!out) {
        UNROLL for (int q = 0; q < bs; q++) r[s0 + q] = ri[q];
        return;
    }
    const float *d = l->fdinv + (size_t)bs * bs * i;
    if (l->cd) { /* a Chebyshev step: cd = ca cd + cc w D^-1 r, out = x + cd */
        tw_real *cd = l->cd + s0;
        UNROLL for (int q = 0; q < bs; q++) {
            tw_real s = 0;
            UNROLL for (int c = 0; c < bs; c++) s += d[q * bs + c] * ri[c];
            s = l->ca != 0 ? l->ca * cd[q] + l->cc * s : l->cc * s;
            cd[q] = s;
            out[s0 + q] = (x ? x[s0 + q] : 0) + s;
        }
        return;
    }
    UNROLL for (int q = 0; q < bs; q++) {
        tw_real s = x ? x[s0 + q] : 0;
        UNROLL for (int c = 0; c < bs; c++) s += d[q * bs + c] * ri[c];
        out[s0 + q] = s;
    }
}

/* One fused pass over the level's rows: r = S(b - A x) (x NULL: x = 0), and
 * when out is set, out = x + w D^-1 r (the damped block-Jacobi sweep; its
 * residual is then not kept). b NULL: b = 0. FINE: level 0 (bs 3, the
 * step's BSR and the filter), else a coarse level (bs 6). Each row ends as
 * the upper-half sweeps' rows do (half_finish). */
static inline __attribute__((always_inline)) void sweep_rows(const tw_amg *m, const level *l, int li, int fine,
                                                             const tw_real *b, const tw_real *x, tw_real *r, tw_real *out)
{
    int work = fine ? 9 * m->A.nnzb / 4 : (int)(bmat_nnzb(&l->A) * CB * CB / 4);
#pragma omp parallel for if (TW_PAR(work)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int i = 0; i < l->nnode; i++) {
        tw_real yi[CB] = {0, 0, 0, 0, 0, 0};
        if (x) level_row(m, l, fine ? 0 : li, x, i, yi);
        half_finish(m, l, fine, i, yi, b, x, r, out, NULL);
    }
}

/* ---- the smoother's operator stored as its upper half ---- */

#ifdef _OPENMP
#define TEAM_SIZE() omp_get_num_threads()
#define TEAM_RANK() omp_get_thread_num()
#else
#define TEAM_SIZE() 1
#define TEAM_RANK() 0
#endif

/* This thread's share of a half sweep: its rows [*i0, *i1) with their
 * part of hy zeroed, and its buffer for the transposed products of the rows
 * past *i1 (zeroed there; NULL for the last thread, which adds into hy);
 * stride is the floats a node takes in hy and hbuf. Returns the threads
 * that share the sweep (1 when there are no buffers for more: the first
 * thread does all), 0 for a thread left without rows. */
static inline int half_sweep_share(level *l, int stride, int *i0, int *i1, tw_real **buf)
{
    const int nn = l->nnode;
    int nt = TEAM_SIZE(), t = TEAM_RANK();
    if (nt > l->hbuf_threads + 1) nt = 1;
    if (t >= nt) return 0;
    *i0 = (int)((long long)nn * t / nt);
    *i1 = (int)((long long)nn * (t + 1) / nt);
    *buf = t + 1 < nt ? l->hbuf + (size_t)t * ((size_t)stride * nn + 4) : NULL;
    if (*buf) memset(*buf + (size_t)stride * *i1, 0, sizeof(tw_real) * (size_t)stride * (nn - *i1));
    memset(l->hy + (size_t)stride * *i0, 0, sizeof(tw_real) * (size_t)stride * (*i1 - *i0));
    return nt;
}

/* One sweep (as sweep_rows) reading each off-diagonal block once: row i
 * takes its blocks right of the diagonal as they are and, through their
 * transposes, adds A_ji x_i to the rows j > i (a symmetric operator: half
 * the memory a pass reads, the same arithmetic). Threads own contiguous row
 * ranges; what a thread's rows add to a later thread's rows goes into its
 * own buffer, summed in after a barrier. One thread finishes each row in
 * the same pass: rows left of it have added their part already. */
static inline __attribute__((always_inline)) void half_sweep(const tw_amg *m, level *l, int fine, const tw_real *b,
                                                             const tw_real *x, tw_real *r, tw_real *out)
{
    const int bs = fine ? 3 : CB, nn = l->nnode;
    const int *hp = l->hptr, *hc = l->hcol;
    const float *hv = l->hval;
    tw_real *y = l->hy;
    {
        int i0 = 0, i1 = 0, t = TEAM_RANK();
        tw_real *buf = NULL;
        int nt = half_sweep_share(l, bs, &i0, &i1, &buf);
        if (nt) {
            for (int i = i0; i < i1; i++) {
                tw_real acc[CB] = {0, 0, 0, 0, 0, 0}, xi[CB] = {0, 0, 0, 0, 0, 0};
                tw_real *yi = y + (size_t)bs * i;
                const tw_real *xs = x + (size_t)bs * i;
                UNROLL for (int q = 0; q < bs; q++) { acc[q] = yi[q]; xi[q] = xs[q]; }
                int k = hp[i];
                const float *a = hv + (size_t)bs * bs * k;
                UNROLL for (int q = 0; q < bs; q++) {
                    tw_real s = 0;
                    UNROLL for (int c = 0; c < bs; c++) s += a[q * bs + c] * xi[c];
                    acc[q] += s;
                }
                for (k++; k < hp[i + 1]; k++) {
                    int j = hc[k];
                    a = hv + (size_t)bs * bs * k;
                    const tw_real *xj = x + (size_t)bs * j;
                    tw_real *yj = (j < i1 ? y : buf) + (size_t)bs * j;
                    tw_real xv[CB] = {0, 0, 0, 0, 0, 0}, tv[CB] = {0, 0, 0, 0, 0, 0};
                    UNROLL for (int c = 0; c < bs; c++) { xv[c] = xj[c]; tv[c] = 0; }
                    UNROLL for (int q = 0; q < bs; q++) {
                        tw_real s = 0;
                        UNROLL for (int c = 0; c < bs; c++) {
                            s += a[q * bs + c] * xv[c];
                            tv[c] += a[q * bs + c] * xi[q];
                        }
                        acc[q] += s;
                    }
                    UNROLL for (int c = 0; c < bs; c++) yj[c] += tv[c];
                }
                if (nt == 1) half_finish(m, l, fine, i, acc, b, x, r, out, NULL);
                else UNROLL for (int q = 0; q < bs; q++) yi[q] = acc[q];
            }
            if (nt > 1) {
#pragma omp barrier
                for (int i = i0; i < i1; i++) {
                    tw_real acc[CB] = {0, 0, 0, 0, 0, 0};
                    UNROLL for (int q = 0; q < bs; q++) acc[q] = y[(size_t)bs * i + q];
                    for (int u = 0; u < t; u++) {
                        const tw_real *bu = l->hbuf + (size_t)u * ((size_t)bs * nn + 4) + (size_t)bs * i;
                        UNROLL for (int q = 0; q < bs; q++) acc[q] += bu[q];
                    }
                    half_finish(m, l, fine, i, acc, b, x, r, out, NULL);
                }
            }
        }
    }
}

#if TW_AMG_SSE
/* half_sweep on the finest level, four floats a vector: a block's rows
 * are read four floats from their start (the fourth the next row's first,
 * or one float past the values' end, which is there); x is one of the
 * level's vectors (a float past its end is there), its fourth lane masked
 * off, so the row products' fourth lanes are 0; the transposed products'
 * fourth lanes are masked before they are added into hy and hbuf (four
 * floats a node). Row i's products stay in three vectors, summed across
 * once the row is done. */
static inline __attribute__((always_inline)) __m128 load3(const float *x, int j, int nn)
{
    if (j + 1 < nn) return _mm_loadu_ps(x + 3 * (size_t)j);
    return _mm_setr_ps(x[3 * (size_t)j], x[3 * (size_t)j + 1], x[3 * (size_t)j + 2], 0); /* nothing past x's end */
}

static inline __attribute__((always_inline)) void half_sweep_fine_sse(const tw_amg *m, level *l, const float *b,
                                                                      const float *x, float *r, float *out,
                                                                      float *prod)
{
    const int nn = l->nnode;
    const int *hp = l->hptr, *hc = l->hcol;
    const float *hv = l->hval;
    float *y = l->hy;
    int i0 = 0, i1 = 0, t = TEAM_RANK();
    float *buf = NULL;
    int nt = half_sweep_share(l, 4, &i0, &i1, &buf);
    if (!nt) return;
    const __m128 mask = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)), zero = _mm_setzero_ps();
    for (int i = i0; i < i1; i++) {
        __m128 xi = _mm_and_ps(load3(x, i, nn), mask);
        __m128 b0 = _mm_shuffle_ps(xi, xi, 0x00), b1 = _mm_shuffle_ps(xi, xi, 0x55), b2 = _mm_shuffle_ps(xi, xi, 0xaa);
        int k = hp[i];
        const float *a = hv + 9 * (size_t)k;
        __m128 p0 = _mm_mul_ps(_mm_loadu_ps(a), xi), p1 = _mm_mul_ps(_mm_loadu_ps(a + 3), xi),
               p2 = _mm_mul_ps(_mm_loadu_ps(a + 6), xi);
        for (k++; k < hp[i + 1]; k++) {
            int j = hc[k];
            a = hv + 9 * (size_t)k;
            __m128 r0 = _mm_loadu_ps(a), r1 = _mm_loadu_ps(a + 3), r2 = _mm_loadu_ps(a + 6);
            __m128 xj = _mm_and_ps(load3(x, j, nn), mask);
            p0 = _mm_add_ps(p0, _mm_mul_ps(r0, xj));
            p1 = _mm_add_ps(p1, _mm_mul_ps(r1, xj));
            p2 = _mm_add_ps(p2, _mm_mul_ps(r2, xj));
            float *yj = (j < i1 ? y : buf) + 4 * (size_t)j;
            __m128 tv = _mm_add_ps(_mm_add_ps(_mm_mul_ps(r0, b0), _mm_mul_ps(r1, b1)), _mm_mul_ps(r2, b2));
            tv = _mm_and_ps(tv, mask);
            _mm_storeu_ps(yj, _mm_add_ps(_mm_loadu_ps(yj), tv));
        }
        /* (sum p0, sum p1, sum p2, 0) */
        __m128 t0 = _mm_unpacklo_ps(p0, p1), t1 = _mm_unpackhi_ps(p0, p1);
        __m128 t2 = _mm_unpacklo_ps(p2, zero), t3 = _mm_unpackhi_ps(p2, zero);
        __m128 sum = _mm_add_ps(_mm_add_ps(_mm_movelh_ps(t0, t2), _mm_movehl_ps(t2, t0)),
                                _mm_add_ps(_mm_movelh_ps(t1, t3), _mm_movehl_ps(t3, t1)));
        __m128 acc = _mm_add_ps(_mm_loadu_ps(y + 4 * (size_t)i), sum);
        if (nt == 1) {
            float yi[4];
            _mm_storeu_ps(yi, acc);
            half_finish(m, l, 1, i, yi, b, x, r, out, prod);
        } else {
            _mm_storeu_ps(y + 4 * (size_t)i, acc);
        }
    }
    if (nt == 1) return;
#pragma omp barrier
    for (int i = i0; i < i1; i++) {
        __m128 acc = _mm_loadu_ps(y + 4 * (size_t)i);
        for (int u = 0; u < t; u++) acc = _mm_add_ps(acc, _mm_loadu_ps(l->hbuf + (size_t)u * (4 * (size_t)nn + 4) + 4 * (size_t)i));
        float yi[4];
        _mm_storeu_ps(yi, acc);
        half_finish(m, l, 1, i, yi, b, x, r, out, prod);
    }
}

/* half_sweep on a coarse level (6 x 6 blocks), four floats a vector: a
 * block row's six floats as a vector of four and one of two (its upper
 * lanes zero), x_j alike, so one vector of products per block row; its
 * transposed products go into hy and hbuf six floats a node. */
static inline __attribute__((always_inline)) void half_sweep_coarse_sse(const tw_amg *m, level *l, const float *b,
                                                                        const float *x, float *r, float *out)
{
    const int nn = l->nnode;
    const int *hp = l->hptr, *hc = l->hcol;
    const float *hv = l->hval;
    float *y = l->hy;
    int i0 = 0, i1 = 0, t = TEAM_RANK();
    float *buf = NULL;
    int nt = half_sweep_share(l, CB, &i0, &i1, &buf);
    if (!nt) return;
    const __m128 zero = _mm_setzero_ps();
    for (int i = i0; i < i1; i++) {
        const float *xs = x + (size_t)CB * i;
        __m128 xlo = _mm_loadu_ps(xs), xhi = _mm_loadl_pi(zero, (const __m64 *)(xs + 4));
        __m128 bq[CB];
        bq[0] = _mm_shuffle_ps(xlo, xlo, 0x00); bq[1] = _mm_shuffle_ps(xlo, xlo, 0x55);
        bq[2] = _mm_shuffle_ps(xlo, xlo, 0xaa); bq[3] = _mm_shuffle_ps(xlo, xlo, 0xff);
        bq[4] = _mm_shuffle_ps(xhi, xhi, 0x00); bq[5] = _mm_shuffle_ps(xhi, xhi, 0x55);
        int k = hp[i];
        const float *a = hv + (size_t)CB * CB * k;
        __m128 acc[CB];
        UNROLL for (int q = 0; q < CB; q++)
            acc[q] = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(a + CB * q), xlo),
                                _mm_mul_ps(_mm_loadl_pi(zero, (const __m64 *)(a + CB * q + 4)), xhi));
        for (k++; k < hp[i + 1]; k++) {
            int j = hc[k];
            a = hv + (size_t)CB * CB * k;
            const float *xj = x + (size_t)CB * j;
            __m128 jlo = _mm_loadu_ps(xj), jhi = _mm_loadl_pi(zero, (const __m64 *)(xj + 4));
            __m128 tlo = zero, thi = zero;
            UNROLL for (int q = 0; q < CB; q++) {
                __m128 rlo = _mm_loadu_ps(a + CB * q), rhi = _mm_loadl_pi(zero, (const __m64 *)(a + CB * q + 4));
                acc[q] = _mm_add_ps(acc[q], _mm_add_ps(_mm_mul_ps(rlo, jlo), _mm_mul_ps(rhi, jhi)));
                tlo = _mm_add_ps(tlo, _mm_mul_ps(rlo, bq[q]));
                thi = _mm_add_ps(thi, _mm_mul_ps(rhi, bq[q]));
            }
            float *yj = (j < i1 ? y : buf) + (size_t)CB * j;
            _mm_storeu_ps(yj, _mm_add_ps(_mm_loadu_ps(yj), tlo));
            _mm_storel_pi((__m64 *)(yj + 4), _mm_add_ps(_mm_loadl_pi(zero, (const __m64 *)(yj + 4)), thi));
        }
        /* the six rows' sums across their lanes */
        __m128 t0 = _mm_unpacklo_ps(acc[0], acc[1]), t1 = _mm_unpackhi_ps(acc[0], acc[1]);
        __m128 t2 = _mm_unpacklo_ps(acc[2], acc[3]), t3 = _mm_unpackhi_ps(acc[2], acc[3]);
        __m128 lo = _mm_add_ps(_mm_add_ps(_mm_movelh_ps(t0, t2), _mm_movehl_ps(t2, t0)),
                               _mm_add_ps(_mm_movelh_ps(t1, t3), _mm_movehl_ps(t3, t1)));
        __m128 t4 = _mm_unpacklo_ps(acc[4], acc[5]), t5 = _mm_unpackhi_ps(acc[4], acc[5]);
        __m128 hi = _mm_add_ps(t4, t5); /* (r4 lanes 0+2, r5 lanes 0+2, r4 lanes 1+3, r5 lanes 1+3) */
        hi = _mm_add_ps(hi, _mm_movehl_ps(hi, hi));
        float *yi = y + (size_t)CB * i;
        lo = _mm_add_ps(lo, _mm_loadu_ps(yi));
        hi = _mm_add_ps(hi, _mm_loadl_pi(zero, (const __m64 *)(yi + 4)));
        float ys[8];
        _mm_storeu_ps(ys, lo);
        _mm_storeu_ps(ys + 4, hi);
        if (nt == 1) half_finish(m, l, 0, i, ys, b, x, r, out, NULL);
        else UNROLL for (int q = 0; q < CB; q++) yi[q] = ys[q];
    }
    if (nt == 1) return;
#pragma omp barrier
    for (int i = i0; i < i1; i++) {
        float acc[CB];
        UNROLL for (int q = 0; q < CB; q++) acc[q] = y[(size_t)CB * i + q];
        for (int u = 0; u < t; u++) {
            const float *bu = l->hbuf + (size_t)u * ((size_t)CB * nn + 4) + (size_t)CB * i;
            UNROLL for (int q = 0; q < CB; q++) acc[q] += bu[q];
        }
        half_finish(m, l, 0, i, acc, b, x, r, out, NULL);
    }
}
#endif

/* the parallel regions here, not in half_sweep: OpenMP outlines a region
 * before inlining, and the block size must be a constant inside it */
static void half_sweep_fine(const tw_amg *m, level *l, const tw_real *b, const tw_real *x, tw_real *r, tw_real *out)
{
#pragma omp parallel if (TW_PAR(l->hptr[l->nnode] * 9 / 2)) num_threads(TW_THREADS(m->threads))
#if TW_AMG_SSE
    half_sweep_fine_sse(m, l, b, x, r, out, NULL);
#else
    half_sweep(m, l, 1, b, x, r, out);
#endif
}

static void half_sweep_coarse(const tw_amg *m, level *l, const tw_real *b, const tw_real *x, tw_real *r,
                              tw_real *out)
{
#pragma omp parallel if (TW_PAR(l->hptr[l->nnode] * CB * CB / 2)) num_threads(TW_THREADS(m->threads))
#if TW_AMG_SSE
    half_sweep_coarse_sse(m, l, b, x, r, out);
#else
    half_sweep(m, l, 0, b, x, r, out);
#endif
}

/* The level's upper half from its operator: the pattern (first call) and
 * the float values; the finest level's from the step's BSR. */
static tw_status level_half(const tw_amg *m, level *l, int li)
{
    int nn = l->nnode, bb = l->bs * l->bs;
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    if (!l->hptr) {
        const int *diag = li ? l->diag : m->A.diag;
        l->hptr = tw_calloc((size_t)nn + 1, sizeof(int), "AMG smoother operator");
        if (!l->hptr) return TW_ERR_NOMEM;
        for (int i = 0; i < nn; i++) {
            int c = 1;
            for (int k = gptr[i]; k < gptr[i + 1]; k++) c += gcol[k] > i;
            l->hptr[i + 1] = l->hptr[i] + c;
        }
        size_t nh = (size_t)l->hptr[nn];
        int threads = TW_THREADS(m->threads);
        l->hbuf_threads = threads > 1 ? threads - 1 : 0;
        l->hvb = bb;
        l->hys = !li && TW_AMG_SSE ? 4 : l->bs;
        size_t ny = (size_t)l->hys * nn + 4;
        l->hcol = tw_malloc(sizeof(int) * (nh + 1), "AMG smoother operator");
        l->hmap = tw_malloc(sizeof(int) * (nh + 1), "AMG smoother operator");
        l->hval = tw_calloc(nh * l->hvb + 4, sizeof(float), "AMG smoother operator");
        l->hy = tw_calloc(ny, sizeof(tw_real), "AMG smoother operator");
        l->hbuf = tw_calloc(ny * l->hbuf_threads + 1, sizeof(tw_real), "AMG smoother operator");
        if (!l->hcol || !l->hmap || !l->hval || !l->hy || !l->hbuf) return TW_ERR_NOMEM;
        for (int i = 0; i < nn; i++) {
            int q = l->hptr[i];
            if (diag[i] < 0) return tw_fail(TW_ERR_INVALID, "amg.c: level %d node %d has no diagonal block", li, i);
            l->hcol[q] = i; l->hmap[q++] = diag[i];
            for (int k = gptr[i]; k < gptr[i + 1]; k++)
                if (gcol[k] > i) { l->hcol[q] = gcol[k]; l->hmap[q++] = k; }
        }
    }
    size_t nh = (size_t)l->hptr[nn];
#pragma omp parallel for if (TW_PAR((int)nh)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (size_t q = 0; q < nh; q++) {
        float *o = l->hval + (size_t)l->hvb * q;
        size_t k = (size_t)l->hmap[q];
        if (li) {
            const double *s = l->A.val + (size_t)bb * k;
            for (int e = 0; e < bb; e++) o[e] = (float)s[e];
        } else {
            const tw_real *s = m->A.val + (size_t)bb * k;
            for (int e = 0; e < bb; e++) o[e] = (float)s[e];
        }
    }
    return TW_OK;
}

static void level_sweep(const tw_amg *m, const level *l, int li, const tw_real *b, const tw_real *x, tw_real *r,
                        tw_real *out)
{
    if (x && l->hptr) {
        if (li) half_sweep_coarse(m, (level *)l, b, x, r, out);
        else half_sweep_fine(m, (level *)l, b, x, r, out);
    } else if (li) sweep_rows(m, l, li, 0, b, x, r, out);
    else sweep_rows(m, l, 0, 1, b, x, r, out);
}

/* ---- the hierarchy's fixed part ---- */

static tw_status level_alloc_vectors(level *l)
{
    size_t n = (size_t)l->n + 1, bb = (size_t)l->bs * l->bs * l->nnode + 1;
    l->x = tw_calloc(n, sizeof(tw_real), "AMG vectors");
    l->t = tw_calloc(n, sizeof(tw_real), "AMG vectors");
    l->b = tw_calloc(n, sizeof(tw_real), "AMG vectors");
    l->r = tw_calloc(n, sizeof(tw_real), "AMG vectors");
    l->eig = tw_calloc(n, sizeof(tw_real), "AMG vectors");
    l->dinv = tw_calloc(bb, sizeof(double), "AMG smoother");
    l->fdinv = tw_calloc(bb, sizeof(float), "AMG smoother");
    if (!l->x || !l->t || !l->b || !l->r || !l->eig || !l->dinv || !l->fdinv) return TW_ERR_NOMEM;
    unsigned s = 12345u;
    for (int i = 0; i < l->n; i++) {
        s = s * 1664525u + 1013904223u;
        l->eig[i] = (tw_real)((double)(s >> 8) / 16777216.0 - 0.5);
    }
    return TW_OK;
}

/* Aggregates on the strong node graph (standard aggregation: a seed and its
 * strong neighbours when none is taken; left-over nodes join a neighbouring
 * aggregate; what remains seeds new ones). Excluded nodes get -1. */
static int level_aggregate(const tw_amg *m, level *l, int li, double theta, const unsigned char *exclude,
                           int distance2)
{
    int nn = l->nnode, nagg = 0, bb = l->bs * l->bs;
    int *agg = l->agg;
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    double *norm = tw_malloc(sizeof(double) * ((size_t)gptr[nn] + 1), "AMG aggregation");
    double *diag = tw_calloc((size_t)nn + 1, sizeof(double), "AMG aggregation");
    int *mark = tw_malloc(sizeof(int) * ((size_t)nn + 1), "AMG aggregation");
    int *sptr = tw_calloc((size_t)nn + 1, sizeof(int), "AMG aggregation");
    int *sadj = tw_malloc(sizeof(int) * ((size_t)gptr[nn] + 1), "AMG aggregation");
    if (!norm || !diag || !mark || !sptr || !sadj) { nagg = -1; goto done; }
    /* block Frobenius norms */
    for (int i = 0; i < nn; i++)
        for (int k = gptr[i]; k < gptr[i + 1]; k++) {
            double buf[9], s = 0;
            const double *a = level_block(m, l, li, i, gcol[k], k, buf);
            for (int q = 0; q < bb; q++) s += a[q] * a[q];
            norm[k] = sqrt(s);
            if (gcol[k] == i) diag[i] = norm[k];
        }
    int ns = 0;
    for (int i = 0; i < nn; i++) {
        sptr[i] = ns;
        for (int k = gptr[i]; k < gptr[i + 1]; k++) {
            int j = gcol[k];
            if (j == i || (exclude && exclude[j])) continue;
            if (norm[k] >= theta * sqrt(diag[i] * diag[j])) sadj[ns++] = j;
        }
    }
    sptr[nn] = ns;
    if (distance2) { /* the strong graph squared: aggregates of a seed's two rings */
        int ns2 = 0, cap2 = 4 * sptr[nn] + 16, *sptr2 = tw_calloc((size_t)nn + 1, sizeof(int), "AMG aggregation");
        int *sadj2 = tw_malloc(sizeof(int) * (size_t)cap2, "AMG aggregation");
        if (!sptr2 || !sadj2) { free(sptr2); free(sadj2); nagg = -1; goto done; }
        for (int i = 0; i < nn; i++) mark[i] = -1;
        for (int i = 0; i < nn; i++) {
            sptr2[i] = ns2;
            mark[i] = i;
            for (int k = sptr[i]; k < sptr[i + 1]; k++) {
                int j = sadj[k];
                for (int q = -1; q < sptr[j + 1] - sptr[j]; q++) {
                    int t = q < 0 ? j : sadj[sptr[j] + q];
                    if (mark[t] == i) continue;
                    mark[t] = i;
                    if (ns2 == cap2) {
                        cap2 *= 2;
                        int *tt = realloc(sadj2, sizeof(int) * (size_t)cap2);
                        if (!tt) { free(sptr2); free(sadj2); nagg = -1; goto done; }
                        sadj2 = tt;
                    }
                    sadj2[ns2++] = t;
                }
            }
        }
        sptr2[nn] = ns2;
        free(sptr); free(sadj);
        sptr = sptr2; sadj = sadj2;
    }
    for (int i = 0; i < nn; i++) { agg[i] = -1; mark[i] = -1; }
    /* pass 1: seeds whose strong neighbours are all free */
    for (int i = 0; i < nn; i++) {
        if (agg[i] >= 0 || (exclude && exclude[i])) continue;
        int ok = 1;
        for (int k = sptr[i]; k < sptr[i + 1] && ok; k++) ok = agg[sadj[k]] < 0;
        if (!ok || sptr[i] == sptr[i + 1]) continue;
        agg[i] = nagg;
        for (int k = sptr[i]; k < sptr[i + 1]; k++) agg[sadj[k]] = nagg;
        nagg++;
    }
    /* pass 2: join a neighbouring aggregate of pass 1 */
    int n1 = nagg;
    for (int i = 0; i < nn; i++) {
        if (agg[i] >= 0 || (exclude && exclude[i])) continue;
        for (int k = sptr[i]; k < sptr[i + 1]; k++)
            if (agg[sadj[k]] >= 0 && agg[sadj[k]] < n1) { mark[i] = -2 - agg[sadj[k]]; break; }
    }
    for (int i = 0; i < nn; i++)
        if (agg[i] < 0 && mark[i] <= -2) agg[i] = -2 - mark[i];
    /* pass 3: the rest seed new aggregates with their free strong neighbours */
    for (int i = 0; i < nn; i++) {
        if (agg[i] >= 0 || (exclude && exclude[i])) continue;
        agg[i] = nagg;
        for (int k = sptr[i]; k < sptr[i + 1]; k++)
            if (agg[sadj[k]] < 0) agg[sadj[k]] = nagg;
        nagg++;
    }
done:
    free(norm); free(diag); free(mark); free(sptr); free(sadj);
    if (nagg < 0) tw_fail(TW_ERR_NOMEM, "amg.c: out of memory aggregating %d nodes", nn);
    return nagg;
}

/* The tentative prolongator: per aggregate a thin QR of its rows of B
 * (modified Gram-Schmidt, twice, dropping directions the aggregate cannot
 * carry: those coarse unknowns keep zero columns); Q's columns become the
 * coarse unknowns, R the coarse modes. P0 has one bs x 6 block per
 * aggregated node. */
static tw_status level_tentative(level *l, int nagg, level *c)
{
    int nn = l->nnode, bs = l->bs;
    int *aptr = tw_calloc((size_t)nagg + 2, sizeof(int), "AMG prolongator"); /* the aggregates' nodes */
    int *anode = tw_malloc(sizeof(int) * ((size_t)nn + 1), "AMG prolongator");
    double *Q = tw_calloc((size_t)l->n * CB + 1, sizeof(double), "AMG prolongator"); /* per fine row, 6 */
    double *v = tw_malloc(sizeof(double) * ((size_t)l->n + 1), "AMG prolongator");
    tw_status st = TW_ERR_NOMEM;
    memset(c, 0, sizeof *c);
    if (!aptr || !anode || !Q || !v) goto done;
    for (int i = 0; i < nn; i++)
        if (l->agg[i] >= 0) aptr[l->agg[i] + 2]++;
    for (int a = 0; a < nagg; a++) aptr[a + 2] += aptr[a + 1];
    for (int i = 0; i < nn; i++)
        if (l->agg[i] >= 0) anode[aptr[l->agg[i] + 1]++] = i;
    c->nnode = nagg; c->bs = CB; c->n = CB * nagg;
    c->B = tw_calloc((size_t)c->n * 6 + 1, sizeof(double), "AMG coarse modes");
    if (!c->B) goto done;
    /* Q row (node i, component r) at Q[6 (bs i + r)] */
    for (int a = 0; a < nagg; a++) {
        int k = 0, na = aptr[a + 1] - aptr[a], mrows = na * bs;
        const int *nodes = anode + aptr[a];
#define AROW(q) ((size_t)bs * nodes[(q) / bs] + (size_t)((q) % bs))
        for (int j = 0; j < 6; j++) {
            double n0 = 0, nv = 0;
            for (int q = 0; q < mrows; q++) { v[q] = l->B[6 * AROW(q) + j]; n0 += v[q] * v[q]; }
            for (int twice = 0; twice < 2; twice++)
                for (int p = 0; p < k; p++) {
                    double d = 0;
                    for (int q = 0; q < mrows; q++) d += Q[CB * AROW(q) + p] * v[q];
                    for (int q = 0; q < mrows; q++) v[q] -= d * Q[CB * AROW(q) + p];
                }
            for (int q = 0; q < mrows; q++) nv += v[q] * v[q];
            if (!(n0 > 0) || !(nv > 1e-16 * n0)) continue;
            nv = 1 / sqrt(nv);
            for (int q = 0; q < mrows; q++) Q[CB * AROW(q) + k] = v[q] * nv;
            k++;
        }
        for (int p = 0; p < k; p++)
            for (int j = 0; j < 6; j++) {
                double d = 0;
                for (int q = 0; q < mrows; q++) d += Q[CB * AROW(q) + p] * l->B[6 * AROW(q) + j];
                c->B[6 * ((size_t)CB * a + p) + j] = d;
            }
#undef AROW
        c->rank += k;
    }
    bmat *P0 = &l->P0;
    memset(P0, 0, sizeof *P0);
    P0->nbr = nn; P0->nbc = nagg; P0->br = bs; P0->bc = CB;
    P0->ptr = tw_calloc((size_t)nn + 1, sizeof(int), "AMG prolongator");
    if (!P0->ptr) goto done;
    for (int i = 0; i < nn; i++) P0->ptr[i + 1] = P0->ptr[i] + (l->agg[i] >= 0);
    P0->col = tw_malloc(sizeof(int) * ((size_t)P0->ptr[nn] + 1), "AMG prolongator");
    P0->val = tw_calloc((size_t)P0->ptr[nn] * bs * CB + 1, sizeof(double), "AMG prolongator");
    if (!P0->col || !P0->val) goto done;
    for (int i = 0; i < nn; i++) {
        if (l->agg[i] < 0) continue;
        int k = P0->ptr[i];
        P0->col[k] = l->agg[i];
        memcpy(P0->val + (size_t)bs * CB * k, Q + (size_t)CB * bs * i, sizeof(double) * (size_t)bs * CB);
    }
    st = TW_OK;
done:
    free(aptr); free(anode); free(Q); free(v);
    if (st != TW_OK) tw_fail(st, "amg.c: out of memory building the tentative prolongator (%d aggregates)", nagg);
    return st;
}

/* C's block pattern for C = A B with A's node graph (aptr, acol; nr rows) and
 * B (nc block columns); ptr and col set, no values */
static tw_status pattern_product(int nr, const int *aptr, const int *acol, const bmat *B, bmat *C, int threads)
{
    int nc = B->nbc, bad = 0;
    C->nbr = nr; C->nbc = nc;
    C->ptr = tw_calloc((size_t)nr + 1, sizeof(int), "AMG product pattern");
    if (!C->ptr) return TW_ERR_NOMEM;
    for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel num_threads(TW_THREADS(threads)) if (TW_PAR(nr))
        {
            int *mark = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
            if (!mark) {
#pragma omp atomic write
                bad = 1;
            } else {
                for (int c = 0; c < nc; c++) mark[c] = -1;
#pragma omp for schedule(static)
                for (int i = 0; i < nr; i++) {
                    int cnt = 0, p = pass ? C->ptr[i] : 0;
                    for (int ka = aptr[i]; ka < aptr[i + 1]; ka++) {
                        int j = acol[ka];
                        for (int kb = B->ptr[j]; kb < B->ptr[j + 1]; kb++) {
                            int c = B->col[kb];
                            if (mark[c] == i) continue;
                            mark[c] = i;
                            if (pass) C->col[p++] = c;
                            else cnt++;
                        }
                    }
                    if (!pass) C->ptr[i + 1] = cnt;
                }
                free(mark);
            }
        }
        if (bad) return tw_fail(TW_ERR_NOMEM, "amg.c: out of memory in a sparse product (%d x %d)", nr, nc);
        if (!pass) {
            for (int i = 0; i < nr; i++) C->ptr[i + 1] += C->ptr[i];
            C->col = tw_malloc(sizeof(int) * ((size_t)C->ptr[nr] + 1), "AMG product pattern");
            if (!C->col) return TW_ERR_NOMEM;
        }
    }
    return TW_OK;
}

/* T = P^T's pattern (blocks bc x br) and the map from T's blocks to P's */
static tw_status pattern_transpose(const bmat *P, bmat *T, int **map)
{
    memset(T, 0, sizeof *T);
    T->nbr = P->nbc; T->nbc = P->nbr; T->br = P->bc; T->bc = P->br;
    size_t nnz = bmat_nnzb(P);
    T->ptr = tw_calloc((size_t)T->nbr + 2, sizeof(int), "AMG transpose");
    T->col = tw_malloc(sizeof(int) * (nnz + 1), "AMG transpose");
    *map = tw_malloc(sizeof(int) * (nnz + 1), "AMG transpose");
    if (!T->ptr || !T->col || !*map) return TW_ERR_NOMEM;
    for (size_t k = 0; k < nnz; k++) T->ptr[P->col[k] + 2]++;
    for (int c = 0; c < T->nbr; c++) T->ptr[c + 2] += T->ptr[c + 1];
    for (int r = 0; r < P->nbr; r++)
        for (int k = P->ptr[r]; k < P->ptr[r + 1]; k++) {
            int q = T->ptr[P->col[k] + 1]++;
            T->col[q] = r;
            (*map)[q] = k;
        }
    return TW_OK;
}

/* ---- the step's part: smoother, prolongator, Galerkin operator ---- */

/* the node blocks' (pseudo-)inverses and the cycle's w D^-1 */
static void level_block_inverses(const tw_amg *m, level *l, int li)
{
    int bs = l->bs, bb = bs * bs;
#pragma omp parallel for if (TW_PAR(l->nnode)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int i = 0; i < l->nnode; i++) {
        double buf[9], *d = l->dinv + (size_t)bb * i;
        const double *a = li ? l->A.val + (size_t)bb * l->diag[i] : level_block(m, l, 0, i, i, m->A.diag[i], buf);
        if (!li && tw_amg_inverse3(a, d)) continue;
        tw_amg_pseudo_inverse(bs, a, d);
    }
}

static void level_scale_dinv(const tw_amg *m, level *l)
{
    size_t nb = (size_t)l->bs * l->bs * l->nnode;
#pragma omp parallel for if (TW_PAR((int)nb)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (size_t k = 0; k < nb; k++) l->fdinv[k] = (float)(TW_AMG_SMOOTH_DAMPING / l->lambda * l->dinv[k]);
}

/* lambda_max(D^-1 A) by power iteration from the last update's vector; a
 * 10 % margin because the estimate approaches it from below. Uses the
 * cycle's values of A (the finest level's own, the float copy below). */
static void level_lambda(const tw_amg *m, level *l, int li, int iterations)
{
    tw_real *x = l->eig, *y = l->r;
    double ratio = 1;
    if (!li)
        for (int i = 0; i < l->nnode; i++)
            tw_amg_filter3v(m->cons[i], m->normal + 3 * (size_t)i, x + 3 * (size_t)i);
    for (int it = 0; it < iterations; it++) {
        level_sweep(m, l, li, NULL, x, y, NULL); /* y = -S A x */
        double xx = 0, yy = 0;
#pragma omp parallel for if (TW_PAR(l->nnode)) num_threads(TW_THREADS(m->threads)) reduction(+ : xx, yy) schedule(static)
        for (int i = 0; i < l->nnode; i++) tw_amg_power_node(l->bs, i, l->dinv, x, y, &xx, &yy);
        if (!(xx > 0) || !(yy > 0)) break;
        ratio = sqrt(yy / xx);
        double s = 1 / sqrt(yy);
        for (int q = 0; q < l->n; q++) x[q] = (tw_real)(y[q] * s);
    }
    l->lambda = 1.1 * ratio;
    l->omega = m->def.prolong_damping / l->lambda;
}

/* P = P0 - w D^-1 S A P0, row by row (P0 has one block per aggregated node) */
static void level_prolongator(const tw_amg *m, level *l, int li)
{
    int bs = l->bs, bb = bs * bs, pb = bs * CB;
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    bmat *P = &l->P;
    const bmat *P0 = &l->P0;
#pragma omp parallel for if (TW_PAR(gptr[l->nnode])) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int i = 0; i < l->nnode; i++) {
        int p0 = P->ptr[i], np = P->ptr[i + 1] - p0;
        double *pv = P->val + (size_t)pb * p0;
        if (!np) continue;
        memset(pv, 0, sizeof(double) * (size_t)pb * np);
        for (int k = gptr[i]; k < gptr[i + 1]; k++) {
            int j = gcol[k];
            if (P0->ptr[j] == P0->ptr[j + 1]) continue;
            int a = P0->col[P0->ptr[j]], q = 0;
            while (q < np && P->col[p0 + q] != a) q++;
            double buf[9];
            const double *ab = level_block(m, l, li, i, j, k, buf), *pj = P0->val + (size_t)pb * P0->ptr[j];
            double *o = pv + (size_t)pb * q;
            if (bs == 3) block_mul_add(3, 3, CB, ab, pj, o);
            else block_mul_add(CB, CB, CB, ab, pj, o);
        }
        const double *d = l->dinv + (size_t)bb * i;
        for (int q = 0; q < np; q++) {
            double *o = pv + (size_t)pb * q, t[CB * CB];
            if (!li)
                for (int c = 0; c < CB; c++) {
                    double col[3] = {o[c], o[CB + c], o[2 * CB + c]};
                    tw_amg_filter3(m->cons[i], m->normal + 3 * (size_t)i, col);
                    o[c] = col[0]; o[CB + c] = col[1]; o[2 * CB + c] = col[2];
                }
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < CB; c++) {
                    double s = 0;
                    for (int u = 0; u < bs; u++) s += d[r * bs + u] * o[u * CB + c];
                    t[r * CB + c] = -l->omega * s;
                }
            memcpy(o, t, sizeof(double) * (size_t)pb);
        }
        if (P0->ptr[i] < P0->ptr[i + 1]) {
            int a = P0->col[P0->ptr[i]], q = 0;
            while (q < np && P->col[p0 + q] != a) q++;
            const double *pi = P0->val + (size_t)pb * P0->ptr[i];
            for (int e = 0; e < pb; e++) pv[(size_t)pb * q + e] += pi[e];
        }
    }
}

/* AP = A P (A the level's operator, unfiltered at the finest level: P's
 * columns are filtered and P^T S = P^T) */
static void level_ap(const tw_amg *m, level *l, int li)
{
    int bs = l->bs, pb = bs * CB, nc = l->P.nbc;
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    const bmat *P = &l->P;
    bmat *AP = &l->AP;
#pragma omp parallel num_threads(TW_THREADS(m->threads)) if (TW_PAR(gptr[l->nnode]))
    {
        int *pos = malloc(sizeof(int) * ((size_t)nc + 1));
#pragma omp for schedule(static)
        for (int i = 0; i < l->nnode; i++) {
            if (!pos) continue;
            for (int k = AP->ptr[i]; k < AP->ptr[i + 1]; k++) pos[AP->col[k]] = k;
            double *out = AP->val + (size_t)pb * AP->ptr[i];
            memset(out, 0, sizeof(double) * (size_t)pb * (AP->ptr[i + 1] - AP->ptr[i]));
            for (int k = gptr[i]; k < gptr[i + 1]; k++) {
                int j = gcol[k];
                double buf[9];
                const double *ab;
                if (li) ab = l->A.val + (size_t)CB * CB * k;
                else {
                    for (int q = 0; q < 9; q++) buf[q] = m->A.val[9 * (size_t)k + q];
                    ab = buf;
                }
                for (int kb = P->ptr[j]; kb < P->ptr[j + 1]; kb++) {
                    const double *pj = P->val + (size_t)pb * kb;
                    double *o = AP->val + (size_t)pb * pos[P->col[kb]];
                    if (bs == 3) block_mul_add(3, 3, CB, ab, pj, o);
                    else block_mul_add(CB, CB, CB, ab, pj, o);
                }
            }
        }
        free(pos);
    }
}

/* Ac = P^T AP: the upper blocks by rows of P^T, the lower ones their
 * transposes */
static void level_coarse_operator(const tw_amg *m, level *l, level *c)
{
    int bs = l->bs, pb = bs * CB, nc = c->nnode;
    const bmat *P = &l->P, *Pt = &l->Pt, *AP = &l->AP;
    bmat *Ac = &c->A;
#pragma omp parallel num_threads(TW_THREADS(m->threads)) if (TW_PAR((int)bmat_nnzb(AP)))
    {
        int *pos = malloc(sizeof(int) * ((size_t)nc + 1));
#pragma omp for schedule(dynamic, 16)
        for (int a = 0; a < nc; a++) {
            if (!pos) continue;
            for (int k = Ac->ptr[a]; k < Ac->ptr[a + 1]; k++) pos[Ac->col[k]] = k;
            memset(Ac->val + (size_t)CB * CB * Ac->ptr[a], 0, sizeof(double) * CB * CB * (Ac->ptr[a + 1] - Ac->ptr[a]));
            for (int kt = Pt->ptr[a]; kt < Pt->ptr[a + 1]; kt++) {
                int i = Pt->col[kt];
                const double *pia = P->val + (size_t)pb * l->pt_map[kt]; /* bs x 6 */
                for (int k = AP->ptr[i]; k < AP->ptr[i + 1]; k++) {
                    int b = AP->col[k];
                    if (b < a) continue;
                    const double *apb = AP->val + (size_t)pb * k; /* bs x 6 */
                    double *o = Ac->val + (size_t)CB * CB * pos[b];
                    if (bs == 3) block_tmul_add(CB, 3, CB, pia, apb, o);
                    else block_tmul_add(CB, CB, CB, pia, apb, o);
                }
            }
        }
        free(pos);
    }
#pragma omp parallel for if (TW_PAR((int)bmat_nnzb(Ac))) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int a = 0; a < nc; a++)
        for (int k = Ac->ptr[a]; k < Ac->ptr[a + 1]; k++) {
            if (Ac->col[k] >= a) continue;
            const double *s = Ac->val + (size_t)CB * CB * c->mirror[k];
            double *o = Ac->val + (size_t)CB * CB * k;
            for (int r = 0; r < CB; r++)
                for (int q = 0; q < CB; q++) o[r * CB + q] = s[q * CB + r];
        }
}

/* the patterns below level li (first Galerkin update) */
static tw_status level_patterns(tw_amg *m, int li)
{
    level *l = &m->lev[li], *c = &m->lev[li + 1];
    int th = m->threads;
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    tw_status st;
    /* P: A's graph times P0, a fully constrained fine vertex's row empty */
    if ((st = pattern_product(l->nnode, gptr, gcol, &l->P0, &l->P, th)) != TW_OK) return st;
    if (!li)
        for (int i = 0; i < l->nnode; i++)
            if (m->fixed[i]) { /* drop the row: compact */
                int len = l->P.ptr[i + 1] - l->P.ptr[i];
                if (!len) continue;
                memmove(l->P.col + l->P.ptr[i], l->P.col + l->P.ptr[i + 1],
                        sizeof(int) * (size_t)(l->P.ptr[l->nnode] - l->P.ptr[i + 1]));
                for (int q = i + 1; q <= l->nnode; q++) l->P.ptr[q] -= len;
            }
    l->P.br = l->bs; l->P.bc = CB;
    if ((st = bmat_alloc_values(&l->P, 1)) != TW_OK) return st;
    if ((st = pattern_transpose(&l->P, &l->Pt, &l->pt_map)) != TW_OK) return st;
    if ((st = bmat_alloc_values(&l->Pt, 0)) != TW_OK) return st;
    if ((st = pattern_product(l->nnode, gptr, gcol, &l->P, &l->AP, th)) != TW_OK) return st;
    l->AP.br = l->bs; l->AP.bc = CB;
    if ((st = bmat_alloc_values(&l->AP, 1)) != TW_OK) return st;
    if ((st = pattern_product(c->nnode, l->Pt.ptr, l->Pt.col, &l->AP, &c->A, th)) != TW_OK) return st;
    c->A.br = c->A.bc = CB;
    if ((st = bmat_alloc_values(&c->A, 1)) != TW_OK) return st;
    /* the coarse operator's diagonal and mirror blocks */
    size_t nnzb = bmat_nnzb(&c->A);
    c->diag = tw_malloc(sizeof(int) * ((size_t)c->nnode + 1), "AMG coarse operator");
    c->mirror = tw_malloc(sizeof(int) * (nnzb + 1), "AMG coarse operator");
    if (!c->diag || !c->mirror) return TW_ERR_NOMEM;
    for (int a = 0; a < c->nnode; a++) {
        c->diag[a] = -1;
        for (int k = c->A.ptr[a]; k < c->A.ptr[a + 1]; k++) {
            int b = c->A.col[k], q = c->A.ptr[b];
            if (b == a) c->diag[a] = k;
            while (q < c->A.ptr[b + 1] && c->A.col[q] != a) q++;
            if (q == c->A.ptr[b + 1]) return tw_fail(TW_ERR_INVALID, "amg.c: coarse operator pattern not symmetric");
            c->mirror[k] = q;
        }
        if (c->diag[a] < 0) return tw_fail(TW_ERR_INVALID, "amg.c: coarse node %d has no diagonal block", a);
    }
    return TW_OK;
}

/* The step's smoothed prolongator and the coarse operator below level li */
static tw_status level_galerkin(tw_amg *m, int li, int first)
{
    level *l = &m->lev[li], *c = &m->lev[li + 1];
    level_block_inverses(m, l, li);
    level_lambda(m, l, li, first ? 20 : 6);
    level_scale_dinv(m, l);
    level_prolongator(m, l, li);
    bmat_shadow(&l->P, m->threads);
    size_t nv = bmat_nnzb(&l->P) * (size_t)l->bs * CB;
    int pb = l->bs * CB;
#pragma omp parallel for if (TW_PAR((int)nv)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int kt = 0; kt < (int)bmat_nnzb(&l->Pt); kt++) { /* Pt's float blocks: P's transposed */
        const float *s = l->P.fval + (size_t)pb * l->pt_map[kt];
        float *o = l->Pt.fval + (size_t)pb * kt;
        for (int r = 0; r < CB; r++)
            for (int q = 0; q < l->bs; q++) o[r * l->bs + q] = s[q * CB + r];
    }
    level_ap(m, l, li);
    level_coarse_operator(m, l, c);
    bmat_shadow(&c->A, m->threads);
    return level_half(m, c, li + 1); /* the coarsest one too: unknown here whether c is it */
}

static tw_status coarsest_factor(tw_amg *m)
{
    int li = m->nlev - 1;
    level *l = &m->lev[li];
    int n = l->n, bs = l->bs;
    if (!m->L) {
        m->L = tw_malloc(sizeof(double) * ((size_t)n * n + 1), "AMG coarsest factor");
        m->lb = tw_malloc(sizeof(double) * (2 * (size_t)n + 1), "AMG coarsest factor");
        if (!m->L || !m->lb) return TW_ERR_NOMEM;
        m->lx = m->lb + n;
    }
    memset(m->L, 0, sizeof(double) * (size_t)n * n);
    const int *gptr = level_ptr(m, l, li), *gcol = level_col(m, l, li);
    for (int i = 0; i < l->nnode; i++)
        for (int k = gptr[i]; k < gptr[i + 1]; k++) {
            double buf[9];
            const double *a = level_block(m, l, li, i, gcol[k], k, buf);
            for (int r = 0; r < bs; r++)
                for (int q = 0; q < bs; q++) m->L[((size_t)bs * i + r) * n + (size_t)bs * gcol[k] + q] = a[r * bs + q];
        }
    tw_amg_dense_cholesky(n, m->L);
    return TW_OK;
}

/* The finest P0 on the filtered subspace: a contact vertex's rows lose
 * their normal component, so the coarse spaces do not fight the
 * constraint (a direction the filter removes would otherwise be a coarse
 * unknown the decoupled normal diagonal penalises). Records the contact set. */
static void project_tentative(tw_amg *m)
{
    level *l = &m->lev[0];
    memcpy(l->P0.val, m->p0_rest, sizeof(double) * bmat_nnzb(&l->P0) * 3 * CB);
    for (int i = 0; i < m->nv; i++) {
        m->contact[i] = m->cons[i] == TW_FILTER_NORMAL;
        if (!m->contact[i] || l->P0.ptr[i] == l->P0.ptr[i + 1]) continue;
        double *v = l->P0.val + (size_t)3 * CB * l->P0.ptr[i];
        for (int c = 0; c < CB; c++) {
            double col[3] = {v[c], v[CB + c], v[2 * CB + c]};
            tw_amg_filter3(m->cons[i], m->normal + 3 * (size_t)i, col);
            v[c] = col[0]; v[CB + c] = col[1]; v[2 * CB + c] = col[2];
        }
    }
}

/* the filter and matrix of this update */
static void take_filter(tw_amg *m, const tw_bsr *A, const tw_filter *f)
{
    m->A = *A;
    m->threads = A->threads;
    for (int i = 0; i < m->nv; i++) {
        unsigned char c = f && f->cons ? f->cons[i] : 0;
        m->cons[i] = c;
        if (c == TW_FILTER_NORMAL)
            for (int q = 0; q < 3; q++) m->normal[3 * (size_t)i + q] = f->normal[3 * (size_t)i + q];
    }
}

/* 1 when the contact set differs from the last Galerkin update's */
static int contacts_changed(const tw_amg *m)
{
    for (int i = 0; i < m->nv; i++)
        if ((m->cons[i] == TW_FILTER_NORMAL) != (m->contact[i] != 0)) return 1;
    return 0;
}

int tw_amg_matches(const tw_amg *m, const tw_filter *f)
{
    for (int i = 0; i < m->nv; i++) {
        int c = f && f->cons ? f->cons[i] : 0;
        if ((c && c != TW_FILTER_NORMAL) != (m->fixed[i] != 0)) return 0;
    }
    return 1;
}

tw_status tw_amg_update(tw_amg *m, const tw_bsr *A, const tw_filter *f)
{
    double t0 = tw_now_ms();
    take_filter(m, A, f);
    level *l0 = &m->lev[0];
    if (m->nlev > 1) {
        tw_status st = level_half(m, l0, 0);
        if (st != TW_OK) return st;
    }
    int changed = m->nlev > 1 && contacts_changed(m);
    if (m->nlev > 1 && ++m->since_galerkin < m->def.galerkin_interval && !changed) {
        /* the finest level follows the step's matrix; its damping is the
         * last Galerkin update's */
        level_block_inverses(m, l0, 0);
        level_scale_dinv(m, l0);
        m->update_ms = tw_now_ms() - t0;
        return TW_OK;
    }
    m->since_galerkin = 0;
    if (m->nlev > 1) project_tentative(m);
    tw_status st = TW_OK;
    for (int li = 0; li + 1 < m->nlev && st == TW_OK; li++) st = level_galerkin(m, li, 0);
    if (st == TW_OK) st = coarsest_factor(m);
    m->update_ms = tw_now_ms() - t0;
    return st;
}

tw_amg *tw_amg_create(const tw_bsr *A, const tw_real *X, const tw_filter *f, const tw_amg_def *def)
{
    tw_amg *m = tw_calloc(1, sizeof *m, "AMG");
    if (!m) return NULL;
    m->def = def ? *def : tw_default_amg_def();
    if (m->def.max_levels > TW_AMG_MAX_LEVELS) m->def.max_levels = TW_AMG_MAX_LEVELS;
    if (m->def.max_levels < 1) m->def.max_levels = 1;
    if (m->def.smooth_steps < 1) m->def.smooth_steps = 1;
    if (!(m->def.cheb_ratio > 1)) m->def.cheb_ratio = 10;
    int nv = A->n;
    m->nv = nv;
    m->fixed = tw_calloc((size_t)nv + 1, 1, "AMG");
    m->cons = tw_calloc((size_t)nv + 1, 1, "AMG");
    m->contact = tw_calloc((size_t)nv + 1, 1, "AMG");
    m->normal = tw_calloc(3 * (size_t)nv + 1, sizeof(tw_real), "AMG");
    if (!m->fixed || !m->cons || !m->contact || !m->normal) goto fail;
    take_filter(m, A, f);
    for (int i = 0; i < nv; i++) m->fixed[i] = m->cons[i] && m->cons[i] != TW_FILTER_NORMAL;
    /* the finest level: the step's BSR */
    level *l0 = &m->lev[0];
    l0->nnode = nv; l0->bs = 3; l0->n = 3 * nv; l0->rank = 3 * nv;
    l0->B = tw_calloc(18 * (size_t)nv + 1, sizeof(double), "AMG rigid modes");
    if (!l0->B) goto fail;
    /* the rigid modes about the centroid, rotations scaled by the size */
    double cen[3] = {0, 0, 0}, size = 0;
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < 3; c++) cen[c] += X[3 * (size_t)i + c] / nv;
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < 3; c++) size = fmax(size, fabs(X[3 * (size_t)i + c] - cen[c]));
    if (!(size > 0)) size = 1;
    for (int i = 0; i < nv; i++) {
        double p[3];
        for (int c = 0; c < 3; c++) p[c] = (X[3 * (size_t)i + c] - cen[c]) / size;
        double *b = l0->B + 18 * (size_t)i; /* rows x, y, z of vertex i, 6 modes each */
        for (int c = 0; c < 3; c++) b[6 * c + c] = 1;
        /* e_k x p: rotation about axis k */
        b[6 * 1 + 3] = -p[2]; b[6 * 2 + 3] = p[1];
        b[6 * 0 + 4] = p[2];  b[6 * 2 + 4] = -p[0];
        b[6 * 0 + 5] = -p[1]; b[6 * 1 + 5] = p[0];
    }
    if (level_alloc_vectors(l0) != TW_OK) goto fail;
    m->nlev = 1;
    for (int li = 0; li + 1 < m->def.max_levels; li++) {
        level *l = &m->lev[li];
        if (l->n <= m->def.max_coarse) break;
        l->agg = tw_malloc(sizeof(int) * ((size_t)l->nnode + 1), "AMG aggregates");
        if (!l->agg) goto fail;
        double theta = m->def.strength * pow(0.5, li);
        int nagg = level_aggregate(m, l, li, theta, li == 0 ? m->fixed : NULL, li < m->def.distance2_levels);
        if (nagg < 0) goto fail;
        if (nagg == 0 || nagg * CB >= l->n * 9 / 10) break; /* no useful coarsening: this is the coarsest */
        if (level_tentative(l, nagg, &m->lev[li + 1]) != TW_OK) goto fail;
        if (li == 0) {
            size_t nval = bmat_nnzb(&l->P0) * 3 * CB;
            m->p0_rest = tw_malloc(sizeof(double) * (nval + 1), "AMG prolongator");
            if (!m->p0_rest) goto fail;
            memcpy(m->p0_rest, l->P0.val, sizeof(double) * nval);
            project_tentative(m);
        }
        if (level_alloc_vectors(&m->lev[li + 1]) != TW_OK) goto fail;
        m->nlev = li + 2;
        if (level_patterns(m, li) != TW_OK) goto fail;
        if (li == 0 && level_half(m, l, 0) != TW_OK) goto fail;
        if (level_galerkin(m, li, 1) != TW_OK) goto fail;
    }
    if (coarsest_factor(m) != TW_OK) goto fail;
    if (m->def.smoother == TW_AMG_CHEBYSHEV)
        for (int li = 0; li + 1 < m->nlev; li++)
            if (!(m->lev[li].cd = tw_calloc((size_t)m->lev[li].n + 1, sizeof(tw_real), "AMG smoother"))) goto fail;
    if (m->nlev == 1) { /* a single level: the cycle is the dense solve */
        level_block_inverses(m, l0, 0);
        level_scale_dinv(m, l0);
    }
    return m;
fail:
    tw_amg_free(m);
    return NULL;
}

void tw_amg_free(tw_amg *m)
{
    if (!m) return;
    for (int li = 0; li < TW_AMG_MAX_LEVELS; li++) {
        level *l = &m->lev[li];
        free(l->diag); free(l->dinv); free(l->fdinv); free(l->eig); free(l->B); free(l->cd);
        free(l->agg); free(l->pt_map); free(l->mirror); free(l->x); free(l->t); free(l->b); free(l->r);
        free(l->hptr); free(l->hcol); free(l->hmap); free(l->hval); free(l->hy); free(l->hbuf);
        bmat_free(&l->A); bmat_free(&l->P0); bmat_free(&l->P); bmat_free(&l->Pt); bmat_free(&l->AP);
    }
    free(m->L); free(m->lb); free(m->fixed); free(m->cons); free(m->contact); free(m->normal); free(m->p0_rest);
    free(m);
}

/* The smoother on level li for A x = b (b in lev[li].b): from x = 0 when
 * from_zero (x's values unread), else from x; t the level's other vector.
 * Returns the result (x or t). Block-Jacobi: steps damped sweeps. Chebyshev
 * (degree steps): the polynomial in D^-1 A that is smallest on [lambda /
 * ratio, lambda], the same before and after the coarse correction, so the
 * cycle stays symmetric; one fused pass over A per degree. */
static tw_real *smooth(tw_amg *m, int li, tw_real *x, tw_real *t, int from_zero)
{
    level *l = &m->lev[li];
    int steps = li && m->def.coarse_smooth_steps > 0 ? m->def.coarse_smooth_steps : m->def.smooth_steps;
    for (int s = 0; s < steps; s++) {
        if (l->cd) tw_amg_cheb_coeffs(l->lambda, TW_AMG_SMOOTH_DAMPING, m->def.cheb_ratio, s, &l->ca, &l->cc);
        if (s == 0 && from_zero) {
            level_sweep(m, l, li, l->b, NULL, NULL, x);
        } else {
            level_sweep(m, l, li, l->b, x, NULL, t);
            tw_real *u = x; x = t; t = u;
        }
    }
    return x;
}

/* x = V b on level li (b in lev[li].b) from x = 0; returns x (one of the
 * level's two vectors) */
static const tw_real *vcycle(tw_amg *m, int li)
{
    level *l = &m->lev[li];
    int th = m->threads;
    tw_real *x = l->x, *t = l->t;
    if (li == m->nlev - 1) {
        for (int i = 0; i < l->n; i++) m->lb[i] = l->b[i];
        tw_amg_dense_cholesky_solve(l->n, m->L, m->lb, m->lx);
        for (int i = 0; i < l->n; i++) x[i] = (tw_real)m->lx[i];
        return x;
    }
    level *c = &m->lev[li + 1];
    x = smooth(m, li, x, t, 1); /* pre-smoothing from x = 0 */
    t = x == l->x ? l->t : l->x;
    level_sweep(m, l, li, l->b, x, l->r, NULL);
    bmat_spmv(&l->Pt, l->r, c->b, 0, th);
    const tw_real *xc = vcycle(m, li + 1);
    bmat_spmv(&l->P, xc, x, 1, th);
    return smooth(m, li, x, t, 0);
}

void tw_amg_apply(void *ctx, const tw_real *r, tw_real *z)
{
    tw_amg *m = ctx;
    level *l = &m->lev[0];
#pragma omp parallel for if (TW_PAR(l->n)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int i = 0; i < m->nv; i++) {
        tw_real *bi = l->b + 3 * (size_t)i;
        for (int q = 0; q < 3; q++) bi[q] = r[3 * (size_t)i + q];
        tw_amg_filter3v(m->cons[i], m->normal + 3 * (size_t)i, bi);
    }
    const tw_real *x = vcycle(m, 0);
    memcpy(z, x, sizeof(tw_real) * (size_t)l->n);
}

void tw_amg_spmv(void *ctx, const tw_real *x, tw_real *y)
{
    tw_amg *m = ctx;
    level *l = &m->lev[0];
#if TW_AMG_SSE
    if (l->hptr) {
#pragma omp parallel if (TW_PAR(l->hptr[l->nnode] * 9 / 2)) num_threads(TW_THREADS(m->threads))
        half_sweep_fine_sse(m, l, NULL, x, NULL, NULL, y);
        return;
    }
#endif
    (void)l;
    tw_bsr_spmv(&m->A, x, y);
}

int tw_amg_levels(const tw_amg *m) { return m->nlev; }
int tw_amg_level_size(const tw_amg *m, int level) { return level >= 0 && level < m->nlev ? m->lev[level].rank : 0; }
double tw_amg_update_ms(const tw_amg *m) { return m->update_ms; }

double tw_amg_rigid_mode_error(const tw_amg *m, int li)
{
    if (li < 0 || li + 1 >= m->nlev) return 0;
    const level *l = &m->lev[li], *c = &m->lev[li + 1];
    int bs = l->bs;
    double err = 0, bmax = 0;
    for (int i = 0; i < l->nnode; i++) {
        if (l->P0.ptr[i] == l->P0.ptr[i + 1]) continue; /* a left-out (constrained) node */
        int a = l->P0.col[l->P0.ptr[i]];
        const double *p = l->P0.val + (size_t)bs * CB * l->P0.ptr[i];
        for (int r = 0; r < bs; r++)
            for (int j = 0; j < 6; j++) {
                double s = 0;
                for (int q = 0; q < CB; q++) s += p[r * CB + q] * c->B[6 * ((size_t)CB * a + q) + j];
                const double bij = l->B[6 * ((size_t)bs * i + r) + j];
                err = fmax(err, fabs(s - bij));
                bmax = fmax(bmax, fabs(bij));
            }
    }
    return bmax > 0 ? err / bmax : err;
}

/* ---- The hierarchy as plain arrays (amg.h) ---- */

void tw_amg_view_of(const tw_amg *m, tw_amg_view *v)
{
    memset(v, 0, sizeof *v);
    v->nlev = m->nlev;
    v->nv = m->nv;
    v->smooth_steps = m->def.smooth_steps;
    v->galerkin_interval = m->def.galerkin_interval;
    v->since_galerkin = m->since_galerkin;
    v->smooth_damping = TW_AMG_SMOOTH_DAMPING;
    v->chebyshev = m->def.smoother == TW_AMG_CHEBYSHEV;
    v->coarse_smooth_steps = m->def.coarse_smooth_steps;
    v->cheb_ratio = m->def.cheb_ratio;
    v->prolong_damping = m->def.prolong_damping;
    v->fixed = m->fixed;
    v->contact = m->contact;
    v->p0_rest = m->p0_rest;
    v->coarsest_n = m->lev[m->nlev - 1].n;
    v->coarsest_factor = m->L;
}

tw_status tw_amg_level_view_of(const tw_amg *m, int li, tw_amg_level_view *v)
{
    memset(v, 0, sizeof *v);
    if (li < 0 || li >= m->nlev) return tw_fail(TW_ERR_INVALID, "amg.c: level %d of %d", li, m->nlev);
    const level *l = &m->lev[li];
    v->nnode = l->nnode;
    v->bs = l->bs;
    if (li) {
        v->nnzb = (int)bmat_nnzb(&l->A);
        v->ptr = l->A.ptr; v->col = l->A.col; v->diag = l->diag; v->mirror = l->mirror;
        v->val = l->A.val; v->fval = l->A.fval;
    }
    v->lambda = l->lambda;
    v->omega = l->omega;
    v->dinv = l->dinv;
    v->fdinv = l->fdinv;
    v->eig = l->eig;
    if (li + 1 < m->nlev) {
        v->p0_nnzb = (int)bmat_nnzb(&l->P0);
        v->p_nnzb = (int)bmat_nnzb(&l->P);
        v->ap_nnzb = (int)bmat_nnzb(&l->AP);
        v->p0_ptr = l->P0.ptr; v->p0_col = l->P0.col; v->p0_val = l->P0.val;
        v->p_ptr = l->P.ptr; v->p_col = l->P.col; v->p_val = l->P.val; v->p_fval = l->P.fval;
        v->pt_ptr = l->Pt.ptr; v->pt_col = l->Pt.col; v->pt_map = l->pt_map; v->pt_fval = l->Pt.fval;
        v->ap_ptr = l->AP.ptr; v->ap_col = l->AP.col; v->ap_val = l->AP.val;
    }
    return TW_OK;
}
