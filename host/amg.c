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
 *   P0 that reproduces them exactly (a thin QR of the modes per aggregate, at
 *   most six coarse unknowns per aggregate, fewer where an aggregate cannot
 *   carry all six) is what makes the iteration count independent of size on
 *   an elastic body, where a scalar (Laplacian-like) aggregation would not.
 *   The QR's R carries the modes to the next level, so every level
 *   reproduces them.
 * - One damped-Jacobi smoothing of P0 (P = (I - w D^-1 A) P0, w = 4/(3
 *   lambda_max(D^-1 A))) gives the energy-minimising prolongator; the coarse
 *   operators are Galerkin products P^T A P, so the coarse levels see the
 *   warped / corotated matrix, not a rest-state approximation. The
 *   products' patterns are fixed with the aggregates and computed once;
 *   their values are redone every def.galerkin_interval steps (they cost
 *   about as much as the cycles of several steps, and the iteration count
 *   barely moves when they lag a few steps behind the rotations), while the
 *   finest operator and its smoother follow every step's matrix.
 * - The cycle's products read float copies of the matrices (it is
 *   memory-bound); the vectors, the Galerkin products and the smoother's
 *   block inverses stay in double.
 * - Everything below the fine matrix is scalar CSR in double: coarse
 *   unknowns per node vary (up to six), and double keeps the Galerkin
 *   products and the coarsest Cholesky away from float's rounding.
 * - Smoother: damped block-Jacobi (3x3 blocks on the finest level, the
 *   coarse nodes' blocks below), the same before and after the coarse
 *   correction, so the V-cycle is symmetric; with w lambda_max < 2 it is
 *   positive definite.
 * - The Baraff-Witkin filter: the fine operator is the filtered one, S A S
 *   on the free directions plus a decoupled diagonal on the constrained ones
 *   (a fully constrained vertex keeps its diagonal, a contact vertex gets
 *   trace/3 along its normal), so the V-cycle is SPD and the PCG's S V S is
 *   SPD on the filtered subspace. Fully constrained vertices belong to no
 *   aggregate (the coarse spaces vanish there, the usual Dirichlet
 *   treatment); when the set of such vertices changes the world builds a new
 *   hierarchy (tw_amg_matches).
 * - The coarsest level (at most def.max_coarse unknowns) is factored densely
 *   by Cholesky each step. */
#include "amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hd/hd.h"

double tw_now_ms(void); /* step.c */

#define TW_AMG_MAX_LEVELS 16
#ifndef _OPENMP
#define TW_THREADS(threads) 1
#endif

typedef struct csr {
    int nr, nc;
    int *ptr, *col;
    double *val;
    /* when set: the rows of each node (node_ptr, nnode of them) list the
     * same columns in the same order, so a product reads them once */
    const int *node_ptr;
    int nnode;
    float *fval; /* the values the V-cycle's products read (csr_shadow), or NULL: val */
} csr;

typedef struct level {
    int n, nnode;
    int *node_ptr;      /* nnode + 1: the node's unknowns */
    int *dof_node;      /* n */
    csr A;
    double *dinv;       /* per node, its block's inverse (bs^2 at dinv_off) */
    int *dinv_off;
    double lambda, omega;
    double *eig;        /* power iteration's vector, carried across steps */
    double *B;          /* n x 6: the rigid modes carried to this level */
    /* to the next level (absent on the coarsest) */
    int *agg;           /* per node: aggregate or -1 */
    csr P0, T, P, Pt, AP;
    int *pt_map;        /* Pt entry -> P entry */
    double *x, *b, *r;
} level;

struct tw_amg {
    tw_amg_def def;
    int threads, nv;
    unsigned char *fixed; /* fine vertices left out of the aggregates */
    int nlev;
    level lev[TW_AMG_MAX_LEVELS];
    double *L;            /* the coarsest level's dense Cholesky factor, row-major */
    double update_ms;
    int since_galerkin;   /* updates since the coarse operators were last recomputed */
    unsigned char *contact; /* fine vertices with a contact filter at the last Galerkin update */
    double *p0_rest;      /* the finest P0's values before the contact projection */
};

tw_amg_def tw_default_amg_def(void)
{
    tw_amg_def d;
    d.strength = 0.08;
    d.smooth_steps = 1;
    d.max_coarse = 300;
    d.max_levels = 10;
    d.distance2_levels = 1;
    d.galerkin_interval = 8;
    return d;
}

static void csr_free(csr *a)
{
    free(a->ptr); free(a->col); free(a->val); free(a->fval);
    memset(a, 0, sizeof *a);
}

/* the V-cycle's copy of the values in float: half the bytes its
 * memory-bound products read; the rounded matrices are still symmetric and
 * used alike before and after the coarse correction, so the cycle stays
 * symmetric */
static tw_status csr_shadow(csr *a, int threads)
{
    size_t nnz = (size_t)a->ptr[a->nr];
    if (!a->fval && !(a->fval = tw_malloc(sizeof(float) * (nnz ? nnz : 1), "AMG float values"))) return TW_ERR_NOMEM;
#pragma omp parallel for if (TW_PAR((int)nnz)) num_threads(TW_THREADS(threads)) schedule(static)
    for (size_t k = 0; k < nnz; k++) a->fval[k] = (float)a->val[k];
    return TW_OK;
}

/* y = A x over the values V (A->val in double, or the cycle's float copy
 * A->fval), one body for both: a node's rows share their columns, so the
 * three rows of a vertex are read in one pass. */
#define CSR_SPMV_BODY(V)                                                                                  \
    do {                                                                                                 \
        if (A->node_ptr) {                                                                               \
            _Pragma("omp parallel for if (TW_PAR(A->nr)) num_threads(TW_THREADS(threads)) schedule(static)") \
            for (int i = 0; i < A->nnode; i++) {                                                         \
                int s0 = A->node_ptr[i], bs = A->node_ptr[i + 1] - s0;                                   \
                if (bs == 0) continue;                                                                   \
                int p0 = A->ptr[s0], len = A->ptr[s0 + 1] - p0;                                          \
                const int *col = A->col + p0;                                                            \
                if (bs == 3) {                                                                           \
                    double y0 = 0, y1 = 0, y2 = 0;                                                       \
                    for (int k = 0; k < len; k++) {                                                     \
                        double xv = x[col[k]];                                                           \
                        y0 += (V)[p0 + k] * xv;                                                          \
                        y1 += (V)[A->ptr[s0 + 1] + k] * xv;                                              \
                        y2 += (V)[A->ptr[s0 + 2] + k] * xv;                                              \
                    }                                                                                    \
                    y[s0] = y0; y[s0 + 1] = y1; y[s0 + 2] = y2;                                          \
                } else {                                                                                 \
                    double acc[6] = {0, 0, 0, 0, 0, 0};                                                  \
                    for (int k = 0; k < len; k++) {                                                      \
                        double xv = x[col[k]];                                                           \
                        for (int r = 0; r < bs; r++) acc[r] += (V)[A->ptr[s0 + r] + k] * xv;             \
                    }                                                                                    \
                    for (int r = 0; r < bs; r++) y[s0 + r] = acc[r];                                     \
                }                                                                                        \
            }                                                                                            \
        } else {                                                                                         \
            _Pragma("omp parallel for if (TW_PAR(A->nr)) num_threads(TW_THREADS(threads)) schedule(static)") \
            for (int i = 0; i < A->nr; i++) {                                                            \
                double s = 0;                                                                            \
                for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++) s += (V)[k] * x[A->col[k]];              \
                y[i] = s;                                                                                \
            }                                                                                            \
        }                                                                                                \
    } while (0)

static void csr_spmv(const csr *A, const double *x, double *y, int threads)
{
    if (A->fval) CSR_SPMV_BODY(A->fval);
    else CSR_SPMV_BODY(A->val);
}
#undef CSR_SPMV_BODY

/* C = A B: the pattern (once) */
static tw_status csr_matmul_symbolic(const csr *A, const csr *B, csr *C, int threads)
{
    int nr = A->nr, nc = B->nc, bad = 0;
    memset(C, 0, sizeof *C);
    C->nr = nr; C->nc = nc;
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
                    for (int ka = A->ptr[i]; ka < A->ptr[i + 1]; ka++) {
                        int j = A->col[ka];
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
            C->col = tw_malloc(sizeof(int) * (size_t)(C->ptr[nr] > 0 ? C->ptr[nr] : 1), "AMG product pattern");
            C->val = tw_calloc((size_t)(C->ptr[nr] > 0 ? C->ptr[nr] : 1), sizeof(double), "AMG product values");
            if (!C->col || !C->val) return TW_ERR_NOMEM;
        }
    }
    return TW_OK;
}

/* C = A B: the values, on C's pattern */
static tw_status csr_matmul_numeric(const csr *A, const csr *B, csr *C, int threads)
{
    int nr = A->nr, nc = B->nc, bad = 0;
#pragma omp parallel num_threads(TW_THREADS(threads)) if (TW_PAR(nr))
    {
        int *pos = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
        if (!pos) {
#pragma omp atomic write
            bad = 1;
        } else {
#pragma omp for schedule(static)
            for (int i = 0; i < nr; i++) {
                for (int k = C->ptr[i]; k < C->ptr[i + 1]; k++) { pos[C->col[k]] = k; C->val[k] = 0; }
                for (int ka = A->ptr[i]; ka < A->ptr[i + 1]; ka++) {
                    double a = A->val[ka];
                    int j = A->col[ka];
                    for (int kb = B->ptr[j]; kb < B->ptr[j + 1]; kb++) C->val[pos[B->col[kb]]] += a * B->val[kb];
                }
            }
            free(pos);
        }
    }
    return bad ? tw_fail(TW_ERR_NOMEM, "amg.c: out of memory in a sparse product (%d x %d)", nr, nc) : TW_OK;
}

/* sets M's node blocking when its rows per node share their columns */
static void csr_try_nodes(csr *M, const int *node_ptr, int nnode)
{
    M->node_ptr = NULL;
    for (int i = 0; i < nnode; i++) {
        int s0 = node_ptr[i], bs = node_ptr[i + 1] - s0;
        if (bs > 6) return;
        int len = bs ? M->ptr[s0 + 1] - M->ptr[s0] : 0;
        for (int r = 1; r < bs; r++) {
            if (M->ptr[s0 + r + 1] - M->ptr[s0 + r] != len) return;
            if (memcmp(M->col + M->ptr[s0], M->col + M->ptr[s0 + r], sizeof(int) * (size_t)len)) return;
        }
    }
    M->node_ptr = node_ptr;
    M->nnode = nnode;
}

static tw_status csr_transpose_symbolic(const csr *P, csr *T, int **map)
{
    memset(T, 0, sizeof *T);
    T->nr = P->nc; T->nc = P->nr;
    size_t nnz = (size_t)P->ptr[P->nr];
    T->ptr = tw_calloc((size_t)T->nr + 2, sizeof(int), "AMG transpose");
    T->col = tw_malloc(sizeof(int) * (nnz ? nnz : 1), "AMG transpose");
    T->val = tw_calloc(nnz ? nnz : 1, sizeof(double), "AMG transpose");
    *map = tw_malloc(sizeof(int) * (nnz ? nnz : 1), "AMG transpose");
    if (!T->ptr || !T->col || !T->val || !*map) return TW_ERR_NOMEM;
    for (size_t k = 0; k < nnz; k++) T->ptr[P->col[k] + 2]++;
    for (int c = 0; c < T->nr; c++) T->ptr[c + 2] += T->ptr[c + 1];
    for (int r = 0; r < P->nr; r++)
        for (int k = P->ptr[r]; k < P->ptr[r + 1]; k++) {
            int q = T->ptr[P->col[k] + 1]++;
            T->col[q] = r;
            (*map)[q] = k;
        }
    return TW_OK;
}

/* a (k x k, SPD or semi-definite) -> its (pseudo-)inverse: Cholesky, a pivot
 * below 1e-12 of the largest diagonal makes its direction a null direction */
static void dense_cholesky(int k, double *a)
{
    double dmax = 0;
    for (int i = 0; i < k; i++) dmax = fmax(dmax, fabs(a[(size_t)i * k + i]));
    for (int j = 0; j < k; j++) {
        double *rj = a + (size_t)j * k;
        double s = rj[j];
        for (int q = 0; q < j; q++) s -= rj[q] * rj[q];
        if (!(s > 1e-12 * dmax)) {
            for (int i = j; i < k; i++) a[(size_t)i * k + j] = 0;
            continue;
        }
        double d = sqrt(s);
        rj[j] = d;
        for (int i = j + 1; i < k; i++) {
            double *ri = a + (size_t)i * k, t = ri[j];
            for (int q = 0; q < j; q++) t -= ri[q] * rj[q];
            ri[j] = t / d;
        }
    }
}

/* x = (L L^T)^+ b with the factor's null pivots giving 0 */
static void dense_cholesky_solve(int k, const double *L, const double *b, double *x)
{
    for (int i = 0; i < k; i++) {
        const double *ri = L + (size_t)i * k;
        double s = b[i];
        for (int q = 0; q < i; q++) s -= ri[q] * x[q];
        x[i] = ri[i] > 0 ? s / ri[i] : 0;
    }
    for (int i = k - 1; i >= 0; i--) {
        double s = x[i];
        for (int q = i + 1; q < k; q++) s -= L[(size_t)q * k + i] * x[q];
        x[i] = L[(size_t)i * k + i] > 0 ? s / L[(size_t)i * k + i] : 0;
    }
}

static int level_bs(const level *l, int node) { return l->node_ptr[node + 1] - l->node_ptr[node]; }

/* the node blocks' inverses */
static void level_block_inverses(level *l, int threads)
{
#pragma omp parallel for if (TW_PAR(l->nnode)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int i = 0; i < l->nnode; i++) {
        int s0 = l->node_ptr[i], bs = level_bs(l, i);
        double a[36], e[6], x[6];
        memset(a, 0, sizeof a);
        for (int r = 0; r < bs; r++)
            for (int k = l->A.ptr[s0 + r]; k < l->A.ptr[s0 + r + 1]; k++) {
                int c = l->A.col[k] - s0;
                if (c >= 0 && c < bs) a[r * bs + c] = l->A.val[k];
            }
        dense_cholesky(bs, a);
        double *d = l->dinv + l->dinv_off[i];
        for (int c = 0; c < bs; c++) {
            for (int r = 0; r < bs; r++) e[r] = r == c;
            dense_cholesky_solve(bs, a, e, x);
            for (int r = 0; r < bs; r++) d[r * bs + c] = x[r];
        }
    }
}

/* y = D^-1 x (y may be x) */
static void level_dinv(const level *l, const double *x, double *y, int threads)
{
#pragma omp parallel for if (TW_PAR(l->nnode)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int i = 0; i < l->nnode; i++) {
        int s0 = l->node_ptr[i], bs = level_bs(l, i);
        const double *d = l->dinv + l->dinv_off[i];
        double xi[6], yi[6];
        for (int c = 0; c < bs; c++) xi[c] = x[s0 + c];
        for (int r = 0; r < bs; r++) {
            double s = 0;
            for (int c = 0; c < bs; c++) s += d[r * bs + c] * xi[c];
            yi[r] = s;
        }
        for (int r = 0; r < bs; r++) y[s0 + r] = yi[r];
    }
}

/* lambda_max(D^-1 A) by power iteration from the last step's vector; a 10 %
 * margin because the estimate approaches it from below */
static void level_lambda(level *l, int threads, int iterations)
{
    double *x = l->eig, *y = l->r, *t = l->x, ratio = 1;
    float *shadow = l->A.fval; /* the double values: the float copy is the last update's */
    l->A.fval = NULL;
    for (int it = 0; it < iterations; it++) {
        csr_spmv(&l->A, x, t, threads);
        level_dinv(l, t, y, threads);
        double xx = 0, yy = 0;
        for (int i = 0; i < l->n; i++) { xx += x[i] * x[i]; yy += y[i] * y[i]; }
        if (!(xx > 0) || !(yy > 0)) break;
        ratio = sqrt(yy / xx);
        double s = 1 / sqrt(yy);
        for (int i = 0; i < l->n; i++) x[i] = y[i] * s;
    }
    l->A.fval = shadow;
    l->lambda = 1.1 * ratio;
    l->omega = 4.0 / (3.0 * l->lambda);
}

/* T = I - omega D^-1 A on A's pattern (rows of a node share A's pattern) */
static void level_smoothing_operator(level *l, int threads)
{
    int n = l->n;
#pragma omp parallel num_threads(TW_THREADS(threads)) if (TW_PAR(n))
    {
        int *pos = malloc(sizeof(int) * (size_t)n);
#pragma omp for schedule(static)
        for (int i = 0; i < l->nnode; i++) {
            if (!pos) continue;
            int s0 = l->node_ptr[i], bs = level_bs(l, i);
            const double *d = l->dinv + l->dinv_off[i];
            for (int r = 0; r < bs; r++) {
                int row = s0 + r;
                for (int k = l->T.ptr[row]; k < l->T.ptr[row + 1]; k++) { pos[l->T.col[k]] = k; l->T.val[k] = 0; }
                for (int q = 0; q < bs; q++) {
                    double dq = -l->omega * d[r * bs + q];
                    int srow = s0 + q;
                    for (int k = l->A.ptr[srow]; k < l->A.ptr[srow + 1]; k++) l->T.val[pos[l->A.col[k]]] += dq * l->A.val[k];
                }
                l->T.val[pos[row]] += 1;
            }
        }
        free(pos);
    }
}

static tw_status level_alloc_vectors(level *l)
{
    l->x = tw_calloc((size_t)l->n, sizeof(double), "AMG vectors");
    l->b = tw_calloc((size_t)l->n, sizeof(double), "AMG vectors");
    l->r = tw_calloc((size_t)l->n, sizeof(double), "AMG vectors");
    l->eig = tw_calloc((size_t)l->n, sizeof(double), "AMG vectors");
    l->dof_node = tw_malloc(sizeof(int) * (size_t)(l->n ? l->n : 1), "AMG vectors");
    l->dinv_off = tw_malloc(sizeof(int) * ((size_t)l->nnode + 1), "AMG smoother");
    if (!l->x || !l->b || !l->r || !l->eig || !l->dof_node || !l->dinv_off) return TW_ERR_NOMEM;
    size_t off = 0;
    for (int i = 0; i < l->nnode; i++) {
        l->dinv_off[i] = (int)off;
        int bs = level_bs(l, i);
        off += (size_t)bs * bs;
        for (int r = 0; r < bs; r++) l->dof_node[l->node_ptr[i] + r] = i;
    }
    l->dinv_off[l->nnode] = (int)off;
    l->dinv = tw_calloc(off ? off : 1, sizeof(double), "AMG smoother");
    if (!l->dinv) return TW_ERR_NOMEM;
    unsigned s = 12345u;
    for (int i = 0; i < l->n; i++) {
        s = s * 1664525u + 1013904223u;
        l->eig[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    }
    return TW_OK;
}

/* Aggregates on the strong node graph (standard aggregation: a seed and its
 * strong neighbours when none is taken; left-over nodes join a neighbouring
 * aggregate; what remains seeds new ones). Excluded nodes get -1. */
static int level_aggregate(level *l, double theta, const unsigned char *exclude, int distance2)
{
    int nn = l->nnode, nagg = 0;
    int *agg = l->agg;
    /* the node graph with block Frobenius norms */
    double *diag = tw_calloc((size_t)nn, sizeof(double), "AMG aggregation");
    double *acc = tw_calloc((size_t)nn, sizeof(double), "AMG aggregation");
    int *mark = tw_malloc(sizeof(int) * (size_t)nn, "AMG aggregation");
    int *sptr = tw_calloc((size_t)nn + 1, sizeof(int), "AMG aggregation");
    int *list = tw_malloc(sizeof(int) * (size_t)nn, "AMG aggregation");
    int cap = 16 * nn + 16, *sadj = tw_malloc(sizeof(int) * (size_t)cap, "AMG aggregation");
    if (!diag || !acc || !mark || !sptr || !list || !sadj) { nagg = -1; goto done; }
    for (int i = 0; i < nn; i++) mark[i] = -1;
    for (int pass = 0; pass < 2; pass++) {
        int ns = 0;
        for (int i = 0; i < nn; i++) {
            int nl = 0;
            for (int row = l->node_ptr[i]; row < l->node_ptr[i + 1]; row++)
                for (int k = l->A.ptr[row]; k < l->A.ptr[row + 1]; k++) {
                    int j = l->dof_node[l->A.col[k]];
                    if (mark[j] != i + pass * nn) { mark[j] = i + pass * nn; acc[j] = 0; list[nl++] = j; }
                    acc[j] += l->A.val[k] * l->A.val[k];
                }
            if (!pass) {
                diag[i] = sqrt(acc[i] > 0 ? acc[i] : 0);
                continue;
            }
            sptr[i] = ns;
            for (int q = 0; q < nl; q++) {
                int j = list[q];
                if (j == i || (exclude && exclude[j])) continue;
                if (sqrt(acc[j]) >= theta * sqrt(diag[i] * diag[j])) {
                    if (ns == cap) {
                        cap *= 2;
                        int *t = realloc(sadj, sizeof(int) * (size_t)cap);
                        if (!t) { nagg = -1; goto done; }
                        sadj = t;
                    }
                    sadj[ns++] = j;
                }
            }
        }
        sptr[nn] = ns;
    }
    if (distance2) { /* the strong graph squared: aggregates of a seed's two rings */
        int ns = 0, cap2 = 4 * sptr[nn] + 16, *sptr2 = tw_calloc((size_t)nn + 1, sizeof(int), "AMG aggregation");
        int *sadj2 = tw_malloc(sizeof(int) * (size_t)cap2, "AMG aggregation");
        if (!sptr2 || !sadj2) { free(sptr2); free(sadj2); nagg = -1; goto done; }
        for (int i = 0; i < nn; i++) mark[i] = -1;
        for (int i = 0; i < nn; i++) {
            sptr2[i] = ns;
            mark[i] = i;
            for (int k = sptr[i]; k < sptr[i + 1]; k++) {
                int j = sadj[k];
                for (int q = -1; q < sptr[j + 1] - sptr[j]; q++) {
                    int t = q < 0 ? j : sadj[sptr[j] + q];
                    if (mark[t] == i) continue;
                    mark[t] = i;
                    if (ns == cap2) {
                        cap2 *= 2;
                        int *tt = realloc(sadj2, sizeof(int) * (size_t)cap2);
                        if (!tt) { free(sptr2); free(sadj2); nagg = -1; goto done; }
                        sadj2 = tt;
                    }
                    sadj2[ns++] = t;
                }
            }
        }
        sptr2[nn] = ns;
        free(sptr); free(sadj);
        sptr = sptr2; sadj = sadj2;
    }
    for (int i = 0; i < nn; i++) agg[i] = -1;
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
    free(diag); free(acc); free(mark); free(sptr); free(list); free(sadj);
    if (nagg < 0) tw_fail(TW_ERR_NOMEM, "amg.c: out of memory aggregating %d nodes", nn);
    return nagg;
}

/* The tentative prolongator: per aggregate a thin QR of its rows of B
 * (modified Gram-Schmidt, twice, dropping directions the aggregate cannot
 * carry); Q's columns become the coarse unknowns, R the coarse modes. */
static tw_status level_tentative(level *l, int nagg, level *c)
{
    int nn = l->nnode;
    int *aptr = tw_calloc((size_t)nagg + 1, sizeof(int), "AMG prolongator"); /* the aggregates' rows */
    int *arows = tw_malloc(sizeof(int) * (size_t)(l->n ? l->n : 1), "AMG prolongator");
    int *rank = tw_calloc((size_t)nagg + 1, sizeof(int), "AMG prolongator");
    double *R = tw_calloc((size_t)nagg * 36 + 1, sizeof(double), "AMG prolongator");
    double *Q = tw_calloc((size_t)l->n * 6 + 1, sizeof(double), "AMG prolongator");
    tw_status st = TW_ERR_NOMEM;
    if (!aptr || !arows || !rank || !R || !Q) goto done;
    for (int i = 0; i < nn; i++)
        if (l->agg[i] >= 0) aptr[l->agg[i] + 1] += level_bs(l, i);
    for (int a = 0; a < nagg; a++) aptr[a + 1] += aptr[a];
    {
        int *fill = tw_malloc(sizeof(int) * ((size_t)nagg + 1), "AMG prolongator");
        if (!fill) goto done;
        memcpy(fill, aptr, sizeof(int) * (size_t)nagg);
        for (int i = 0; i < nn; i++)
            if (l->agg[i] >= 0)
                for (int r = l->node_ptr[i]; r < l->node_ptr[i + 1]; r++) arows[fill[l->agg[i]]++] = r;
        free(fill);
    }
    /* Q (row-major, 6 per row, in aggregate row order), R (6 x 6 per aggregate) */
    for (int a = 0; a < nagg; a++) {
        int m = aptr[a + 1] - aptr[a], k = 0;
        double *q = Q + 6 * (size_t)aptr[a], *ra = R + 36 * (size_t)a, v[6 * 64], *vv;
        double *big = m > 64 ? malloc(sizeof(double) * (size_t)m) : NULL;
        vv = big ? big : v;
        if (m > 64 && !big) goto done;
        for (int j = 0; j < 6; j++) {
            double n0 = 0, nv = 0;
            for (int r = 0; r < m; r++) { vv[r] = l->B[6 * (size_t)arows[aptr[a] + r] + j]; n0 += vv[r] * vv[r]; }
            for (int twice = 0; twice < 2; twice++)
                for (int p = 0; p < k; p++) {
                    double d = 0;
                    for (int r = 0; r < m; r++) d += q[6 * r + p] * vv[r];
                    for (int r = 0; r < m; r++) vv[r] -= d * q[6 * r + p];
                }
            for (int r = 0; r < m; r++) nv += vv[r] * vv[r];
            if (!(n0 > 0) || !(nv > 1e-16 * n0)) continue;
            nv = 1 / sqrt(nv);
            for (int r = 0; r < m; r++) q[6 * r + k] = vv[r] * nv;
            k++;
        }
        free(big);
        for (int p = 0; p < k; p++)
            for (int j = 0; j < 6; j++) {
                double d = 0;
                for (int r = 0; r < m; r++) d += q[6 * r + p] * l->B[6 * (size_t)arows[aptr[a] + r] + j];
                ra[6 * p + j] = d;
            }
        rank[a] = k;
    }
    /* the coarse level's nodes (one per aggregate) and modes */
    memset(c, 0, sizeof *c);
    c->nnode = nagg;
    c->node_ptr = tw_malloc(sizeof(int) * ((size_t)nagg + 1), "AMG coarse level");
    if (!c->node_ptr) goto done;
    c->node_ptr[0] = 0;
    for (int a = 0; a < nagg; a++) c->node_ptr[a + 1] = c->node_ptr[a] + rank[a];
    c->n = c->node_ptr[nagg];
    c->B = tw_calloc((size_t)c->n * 6 + 1, sizeof(double), "AMG coarse modes");
    if (!c->B) goto done;
    for (int a = 0; a < nagg; a++)
        for (int p = 0; p < rank[a]; p++) memcpy(c->B + 6 * (size_t)(c->node_ptr[a] + p), R + 36 * (size_t)a + 6 * p, sizeof(double) * 6);
    /* P0 rows */
    csr *P0 = &l->P0;
    memset(P0, 0, sizeof *P0);
    P0->nr = l->n; P0->nc = c->n;
    P0->ptr = tw_calloc((size_t)l->n + 1, sizeof(int), "AMG prolongator");
    if (!P0->ptr) goto done;
    for (int a = 0; a < nagg; a++)
        for (int r = aptr[a]; r < aptr[a + 1]; r++) P0->ptr[arows[r] + 1] = rank[a];
    for (int r = 0; r < l->n; r++) P0->ptr[r + 1] += P0->ptr[r];
    P0->col = tw_malloc(sizeof(int) * (size_t)(P0->ptr[l->n] + 1), "AMG prolongator");
    P0->val = tw_malloc(sizeof(double) * (size_t)(P0->ptr[l->n] + 1), "AMG prolongator");
    if (!P0->col || !P0->val) goto done;
    for (int a = 0; a < nagg; a++)
        for (int r = aptr[a]; r < aptr[a + 1]; r++)
            for (int p = 0; p < rank[a]; p++) {
                int k = P0->ptr[arows[r]] + p;
                P0->col[k] = c->node_ptr[a] + p;
                P0->val[k] = Q[6 * (size_t)r + p];
            }
    st = TW_OK;
done:
    free(aptr); free(arows); free(rank); free(R); free(Q);
    if (st != TW_OK) tw_fail(st, "amg.c: out of memory building the tentative prolongator (%d aggregates)", nagg);
    return st;
}

/* The step's smoothed prolongator and the coarse operator below level li;
 * the patterns on the first call */
static tw_status level_galerkin(tw_amg *m, int li, int first)
{
    level *l = &m->lev[li], *c = &m->lev[li + 1];
    int th = m->threads;
    tw_status st = TW_OK;
    level_block_inverses(l, th);
    level_lambda(l, th, first ? 20 : 6);
    if (first) {
        l->T.nr = l->T.nc = l->n;
        l->T.ptr = l->A.ptr; l->T.col = l->A.col; /* shared with A; freed with A */
        l->T.val = tw_malloc(sizeof(double) * (size_t)(l->A.ptr[l->n] + 1), "AMG smoothing operator");
        if (!l->T.val) return TW_ERR_NOMEM;
    }
    level_smoothing_operator(l, th);
    if (first && (st = csr_matmul_symbolic(&l->T, &l->P0, &l->P, th)) != TW_OK) return st;
    if (first) csr_try_nodes(&l->P, l->node_ptr, l->nnode);
    if ((st = csr_matmul_numeric(&l->T, &l->P0, &l->P, th)) != TW_OK) return st;
    if (first && (st = csr_transpose_symbolic(&l->P, &l->Pt, &l->pt_map)) != TW_OK) return st;
    if (first) csr_try_nodes(&l->Pt, c->node_ptr, c->nnode);
    size_t nnz = (size_t)l->P.ptr[l->P.nr];
#pragma omp parallel for if (TW_PAR((int)nnz)) num_threads(TW_THREADS(th)) schedule(static)
    for (size_t q = 0; q < nnz; q++) l->Pt.val[q] = l->P.val[l->pt_map[q]];
    if (first && (st = csr_matmul_symbolic(&l->A, &l->P, &l->AP, th)) != TW_OK) return st;
    if ((st = csr_matmul_numeric(&l->A, &l->P, &l->AP, th)) != TW_OK) return st;
    if (first && (st = csr_matmul_symbolic(&l->Pt, &l->AP, &c->A, th)) != TW_OK) return st;
    if (first) csr_try_nodes(&c->A, c->node_ptr, c->nnode);
    return csr_matmul_numeric(&l->Pt, &l->AP, &c->A, th);
}

static tw_status coarsest_factor(tw_amg *m)
{
    level *l = &m->lev[m->nlev - 1];
    int n = l->n;
    if (!m->L) {
        m->L = tw_malloc(sizeof(double) * ((size_t)n * n + 1), "AMG coarsest factor");
        if (!m->L) return TW_ERR_NOMEM;
    }
    memset(m->L, 0, sizeof(double) * (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int k = l->A.ptr[i]; k < l->A.ptr[i + 1]; k++) m->L[(size_t)i * n + l->A.col[k]] += l->A.val[k];
    dense_cholesky(n, m->L);
    return TW_OK;
}

/* The finest operator from the step's BSR values, filtered: S A S on the
 * free directions, a fully constrained vertex decoupled with its diagonal
 * (the identity when that is empty), a contact vertex's normal decoupled
 * with trace/3 */
static void fine_operator(tw_amg *m, const tw_bsr *A, const tw_filter *f)
{
    level *l = &m->lev[0];
    const unsigned char *cons = f ? f->cons : NULL;
#pragma omp parallel for if (TW_PAR(A->n)) num_threads(TW_THREADS(m->threads)) schedule(static)
    for (int i = 0; i < A->n; i++) {
        int ci = cons ? cons[i] : 0, nb = A->row_ptr[i + 1] - A->row_ptr[i];
        for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
            int j = A->col[k], cj = cons ? cons[j] : 0;
            double b[9];
            for (int q = 0; q < 9; q++) b[q] = A->val[9 * (size_t)k + q];
            double tr = (b[0] + b[4] + b[8]) / 3;
            int fi = ci && ci != TW_FILTER_NORMAL, fj = cj && cj != TW_FILTER_NORMAL;
            if (fi || fj) {
                double s = i == j && tr > 0 ? tr : 1;
                for (int q = 0; q < 9; q++) b[q] = i == j && q % 4 == 0 ? s : 0;
            } else {
                if (ci == TW_FILTER_NORMAL) { /* b = (I - n n^T) b */
                    const tw_real *nn = f->normal + 3 * (size_t)i;
                    for (int c = 0; c < 3; c++) {
                        double d = nn[0] * b[c] + nn[1] * b[3 + c] + nn[2] * b[6 + c];
                        for (int r = 0; r < 3; r++) b[3 * r + c] -= nn[r] * d;
                    }
                }
                if (cj == TW_FILTER_NORMAL) { /* b = b (I - n n^T) */
                    const tw_real *nn = f->normal + 3 * (size_t)j;
                    for (int r = 0; r < 3; r++) {
                        double d = b[3 * r] * nn[0] + b[3 * r + 1] * nn[1] + b[3 * r + 2] * nn[2];
                        for (int c = 0; c < 3; c++) b[3 * r + c] -= d * nn[c];
                    }
                }
                if (i == j && ci == TW_FILTER_NORMAL) {
                    const tw_real *nn = f->normal + 3 * (size_t)i;
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++) b[3 * r + c] += tr * nn[r] * nn[c];
                }
            }
            for (int r = 0; r < 3; r++) {
                double *v = l->A.val + l->A.ptr[3 * i + r] + 3 * (k - A->row_ptr[i]);
                v[0] = b[3 * r]; v[1] = b[3 * r + 1]; v[2] = b[3 * r + 2];
            }
        }
        (void)nb;
    }
}

/* The finest P0 on the filtered subspace: a contact vertex's rows lose
 * their normal component, so the coarse spaces do not fight the
 * constraint (a direction the filter removes would otherwise be a coarse
 * unknown the decoupled normal diagonal penalises). Records the contact set. */
static void project_tentative(tw_amg *m, const tw_filter *f)
{
    level *l = &m->lev[0];
    memcpy(l->P0.val, m->p0_rest, sizeof(double) * (size_t)l->P0.ptr[l->n]);
    for (int i = 0; i < m->nv; i++) {
        int c = f && f->cons ? f->cons[i] : 0;
        m->contact[i] = c == TW_FILTER_NORMAL;
        if (!m->contact[i]) continue;
        const tw_real *nn = f->normal + 3 * (size_t)i;
        int p0 = l->P0.ptr[3 * i], len = l->P0.ptr[3 * i + 1] - p0; /* the three rows list the same columns */
        double *v0 = l->P0.val + p0, *v1 = l->P0.val + l->P0.ptr[3 * i + 1], *v2 = l->P0.val + l->P0.ptr[3 * i + 2];
        for (int q = 0; q < len; q++) {
            double d = nn[0] * v0[q] + nn[1] * v1[q] + nn[2] * v2[q];
            v0[q] -= d * nn[0]; v1[q] -= d * nn[1]; v2[q] -= d * nn[2];
        }
    }
}

/* 1 when the contact set differs from the last Galerkin update's */
static int contacts_changed(const tw_amg *m, const tw_filter *f)
{
    for (int i = 0; i < m->nv; i++) {
        int c = f && f->cons ? f->cons[i] : 0;
        if ((c == TW_FILTER_NORMAL) != (m->contact[i] != 0)) return 1;
    }
    return 0;
}

/* the float copies the V-cycle reads: the finest operator after every
 * update, the rest after a Galerkin update */
static tw_status refresh_shadows(tw_amg *m, int all)
{
    tw_status st = csr_shadow(&m->lev[0].A, m->threads);
    for (int li = 0; all && st == TW_OK && li + 1 < m->nlev; li++) {
        level *l = &m->lev[li];
        if (li > 0) st = csr_shadow(&l->A, m->threads);
        if (st == TW_OK) st = csr_shadow(&l->P, m->threads);
        if (st == TW_OK) st = csr_shadow(&l->Pt, m->threads);
    }
    return st;
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
    m->threads = A->threads;
    fine_operator(m, A, f);
    int changed = m->nlev > 1 && contacts_changed(m, f);
    if (m->nlev > 1 && ++m->since_galerkin < m->def.galerkin_interval && !changed) {
        level_block_inverses(&m->lev[0], m->threads);
        m->update_ms = tw_now_ms() - t0;
        return refresh_shadows(m, 0);
    }
    m->since_galerkin = 0;
    if (m->nlev > 1) project_tentative(m, f);
    for (int li = 0; li + 1 < m->nlev; li++) {
        tw_status st = level_galerkin(m, li, 0);
        if (st != TW_OK) return st;
    }
    level_block_inverses(&m->lev[m->nlev - 1], m->threads);
    tw_status st = coarsest_factor(m);
    if (st == TW_OK) st = refresh_shadows(m, 1);
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
    m->threads = A->threads;
    m->nv = A->n;
    int nv = A->n;
    m->fixed = tw_calloc((size_t)nv + 1, 1, "AMG");
    m->contact = tw_calloc((size_t)nv + 1, 1, "AMG");
    if (!m->fixed || !m->contact) goto fail;
    for (int i = 0; i < nv; i++) {
        int c = f && f->cons ? f->cons[i] : 0;
        m->fixed[i] = c && c != TW_FILTER_NORMAL;
    }
    /* the finest level: scalar CSR with A's block pattern */
    level *l0 = &m->lev[0];
    l0->n = 3 * nv; l0->nnode = nv;
    l0->node_ptr = tw_malloc(sizeof(int) * ((size_t)nv + 1), "AMG");
    l0->A.nr = l0->A.nc = 3 * nv;
    l0->A.ptr = tw_malloc(sizeof(int) * (3 * (size_t)nv + 1), "AMG fine operator");
    l0->A.col = tw_malloc(sizeof(int) * (9 * (size_t)A->nnzb + 1), "AMG fine operator");
    l0->A.val = tw_calloc(9 * (size_t)A->nnzb + 1, sizeof(double), "AMG fine operator");
    l0->B = tw_calloc(18 * (size_t)nv + 1, sizeof(double), "AMG rigid modes");
    if (!l0->node_ptr || !l0->A.ptr || !l0->A.col || !l0->A.val || !l0->B) goto fail;
    for (int i = 0; i <= nv; i++) l0->node_ptr[i] = 3 * i;
    for (int i = 0; i < nv; i++) {
        int nb = A->row_ptr[i + 1] - A->row_ptr[i];
        for (int r = 0; r < 3; r++) {
            int p = 9 * A->row_ptr[i] + 3 * r * nb;
            l0->A.ptr[3 * i + r] = p;
            for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
                for (int c = 0; c < 3; c++) l0->A.col[p++] = 3 * A->col[k] + c;
        }
    }
    l0->A.ptr[3 * nv] = 9 * A->nnzb;
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
    csr_try_nodes(&l0->A, l0->node_ptr, l0->nnode);
    fine_operator(m, A, f);
    m->nlev = 1;
    for (int li = 0; li + 1 < m->def.max_levels; li++) {
        level *l = &m->lev[li];
        if (l->n <= m->def.max_coarse) break;
        l->agg = tw_malloc(sizeof(int) * ((size_t)l->nnode + 1), "AMG aggregates");
        if (!l->agg) goto fail;
        double theta = m->def.strength * pow(0.5, li);
        int nagg = level_aggregate(l, theta, li == 0 ? m->fixed : NULL, li < m->def.distance2_levels);
        if (nagg < 0) goto fail;
        if (nagg == 0 || nagg * 6 >= l->n * 9 / 10) break; /* no useful coarsening: this is the coarsest */
        if (level_tentative(l, nagg, &m->lev[li + 1]) != TW_OK) goto fail;
        if (li == 0) {
            size_t nnz = (size_t)l->P0.ptr[l->n];
            m->p0_rest = tw_malloc(sizeof(double) * (nnz + 1), "AMG prolongator");
            if (!m->p0_rest) goto fail;
            memcpy(m->p0_rest, l->P0.val, sizeof(double) * nnz);
            project_tentative(m, f);
        }
        if (level_alloc_vectors(&m->lev[li + 1]) != TW_OK) goto fail;
        m->nlev = li + 2;
        if (level_galerkin(m, li, 1) != TW_OK) goto fail;
    }
    level_block_inverses(&m->lev[m->nlev - 1], m->threads);
    if (coarsest_factor(m) != TW_OK || refresh_shadows(m, 1) != TW_OK) goto fail;
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
        free(l->node_ptr); free(l->dof_node); free(l->dinv); free(l->dinv_off); free(l->eig); free(l->B);
        free(l->agg); free(l->pt_map); free(l->x); free(l->b); free(l->r);
        free(l->T.val); /* T's pattern is A's */
        csr_free(&l->A); csr_free(&l->P0); csr_free(&l->P); csr_free(&l->Pt); csr_free(&l->AP);
    }
    free(m->L); free(m->fixed); free(m->contact); free(m->p0_rest);
    free(m);
}

/* x = V b on level li, from x = 0 */
static void vcycle(const tw_amg *m, int li)
{
    const level *l = &m->lev[li];
    int n = l->n, th = m->threads;
    if (li == m->nlev - 1) {
        if (m->L) dense_cholesky_solve(n, m->L, l->b, l->x);
        return;
    }
    const level *c = &m->lev[li + 1];
    double w = l->omega;
    /* pre-smoothing; the first sweep from x = 0 is x = w D^-1 b */
    level_dinv(l, l->b, l->x, th);
    for (int i = 0; i < n; i++) l->x[i] *= w;
    for (int s = 1; s < m->def.smooth_steps; s++) {
        csr_spmv(&l->A, l->x, l->r, th);
        for (int i = 0; i < n; i++) l->r[i] = l->b[i] - l->r[i];
        level_dinv(l, l->r, l->r, th);
        for (int i = 0; i < n; i++) l->x[i] += w * l->r[i];
    }
    csr_spmv(&l->A, l->x, l->r, th);
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(th)) schedule(static)
    for (int i = 0; i < n; i++) l->r[i] = l->b[i] - l->r[i];
    csr_spmv(&l->Pt, l->r, c->b, th);
    vcycle(m, li + 1);
    csr_spmv(&l->P, c->x, l->r, th);
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(th)) schedule(static)
    for (int i = 0; i < n; i++) l->x[i] += l->r[i];
    for (int s = 0; s < m->def.smooth_steps; s++) {
        csr_spmv(&l->A, l->x, l->r, th);
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(th)) schedule(static)
        for (int i = 0; i < n; i++) l->r[i] = l->b[i] - l->r[i];
        level_dinv(l, l->r, l->r, th);
#pragma omp parallel for if (TW_PAR(n)) num_threads(TW_THREADS(th)) schedule(static)
        for (int i = 0; i < n; i++) l->x[i] += w * l->r[i];
    }
}

void tw_amg_apply(void *ctx, const tw_real *r, tw_real *z)
{
    tw_amg *m = ctx;
    level *l = &m->lev[0];
    for (int i = 0; i < l->n; i++) l->b[i] = r[i];
    vcycle(m, 0);
    for (int i = 0; i < l->n; i++) z[i] = (tw_real)l->x[i];
}

int tw_amg_levels(const tw_amg *m) { return m->nlev; }
int tw_amg_level_size(const tw_amg *m, int level) { return level >= 0 && level < m->nlev ? m->lev[level].n : 0; }
double tw_amg_update_ms(const tw_amg *m) { return m->update_ms; }

double tw_amg_rigid_mode_error(const tw_amg *m, int li)
{
    if (li < 0 || li + 1 >= m->nlev) return 0;
    const level *l = &m->lev[li], *c = &m->lev[li + 1];
    double err = 0, bmax = 0;
    for (int r = 0; r < l->n; r++) {
        if (l->P0.ptr[r] == l->P0.ptr[r + 1]) continue; /* a left-out (constrained) row */
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = l->P0.ptr[r]; k < l->P0.ptr[r + 1]; k++) s += l->P0.val[k] * c->B[6 * (size_t)l->P0.col[k] + j];
            err = fmax(err, fabs(s - l->B[6 * (size_t)r + j]));
            bmax = fmax(bmax, fabs(l->B[6 * (size_t)r + j]));
        }
    }
    return bmax > 0 ? err / bmax : err;
}
