/* Hanging vertices' row bodies (host/hanging.c), shared by the CPU and the
 * CUDA kernels (kernels/cuda_pcg.cu, cuda_kernels.cu): TW_HD inline, C11
 * and nvcc alike (see hd.h).
 *
 * P writes every vertex's velocity as a combination of the non-hanging
 * ones: the identity on those, the constraint's weights on a hanging one.
 * Its rows are CSR (ptr, idx, wt: weights in double). The CPU numbers the
 * columns by reduced unknown (hanging.c's system); the device keeps the
 * vertex numbering, the hanging vertices' entries held at zero by the
 * solver's filter (they are kinematic), and applies P^T A P as P, A, P^T:
 * P^T's rows (the transpose, each sorted by vertex) gather what the CPU's
 * P^T b scatters in vertex order, the same terms in the same order.
 *
 * tw_hanging_device_rows builds the device's two CSR arrays from the
 * world's constraint lists (plain C, host memory, for cuda_world.cu and the
 * CPU test that checks it against hanging.c). */
#ifndef TW_HD_STEP_HANGING_H
#define TW_HD_STEP_HANGING_H
#include <stdlib.h>

#include "hd/math3.h"

/* out = row i of P times xr (3 per unknown): sum_k wt_k xr_idx_k in double
 * (tw_hanging_expand's body) */
TW_HD void tw_hanging_row_expand(const int *ptr, const int *idx, const double *wt, const tw_real *xr, int i,
                                 tw_real *out)
{
    double s[3] = {0, 0, 0};
    for (int k = ptr[i]; k < ptr[i + 1]; k++)
        for (int c = 0; c < 3; c++) s[c] += wt[k] * (double)xr[3 * (size_t)idx[k] + c];
    for (int c = 0; c < 3; c++) out[c] = (tw_real)s[c];
}

/* out = row J of P^T times b (3 per vertex): the terms (tw_real)(wt b_i)
 * added in tw_real in the order of the row (tw_hanging_reduce's scatter of
 * P^T b, read from the other side) */
TW_HD void tw_hanging_row_restrict(const int *ptr, const int *idx, const double *wt, const tw_real *b, int J,
                                   tw_real *out)
{
    tw_real s[3] = {0, 0, 0};
    for (int k = ptr[J]; k < ptr[J + 1]; k++)
        for (int c = 0; c < 3; c++) s[c] += (tw_real)(wt[k] * (double)b[3 * (size_t)idx[k] + c]);
    for (int c = 0; c < 3; c++) out[c] = s[c];
}

/* One term of P^T b (tw_hanging_reduce's scatter) */
TW_HD tw_real tw_hanging_restrict_term(double wt, tw_real b) { return (tw_real)(wt * (double)b); }

/* A hanging vertex's kinematic target for the step (tw_hanging_before_step):
 * the weighted average of its constrainers' x + h v, row `row` of (ptr,
 * idx, w) */
TW_HD void tw_hanging_target(const int *ptr, const int *idx, const double *w, const tw_real *x, const tw_real *v,
                             double h, int row, tw_real *out)
{
    double p[3] = {0, 0, 0};
    for (int j = ptr[row]; j < ptr[row + 1]; j++)
        for (int c = 0; c < 3; c++) {
            size_t q = 3 * (size_t)idx[j] + c;
            p[c] += w[j] * ((double)x[q] + h * v[q]);
        }
    for (int c = 0; c < 3; c++) out[c] = (tw_real)p[c];
}

/* A hanging vertex set to its constrainers' average position and velocity
 * after a step (tw_hanging_after_step) */
TW_HD void tw_hanging_average(const int *ptr, const int *idx, const double *w, const tw_real *x, const tw_real *v,
                              int row, tw_real *xo, tw_real *vo)
{
    double p[3] = {0, 0, 0}, u[3] = {0, 0, 0};
    for (int j = ptr[row]; j < ptr[row + 1]; j++)
        for (int c = 0; c < 3; c++) {
            size_t q = 3 * (size_t)idx[j] + c;
            p[c] += w[j] * x[q];
            u[c] += w[j] * v[q];
        }
    for (int c = 0; c < 3; c++) {
        xo[c] = (tw_real)p[c];
        vo[c] = (tw_real)u[c];
    }
}

/* The index of block (i, k) in the BSR pattern, -1 when it is not there */
TW_HD int tw_bsr_find(const int *row_ptr, const int *col, int i, int k)
{
    for (int b = row_ptr[i]; b < row_ptr[i + 1]; b++)
        if (col[b] == k) return b;
    return -1;
}

/* Diagonal block J of P^T A P (block-Jacobi on the reduced system) from
 * P^T's row J (J itself with weight 1, and the hanging vertices J
 * constrains): sum over pairs a, b of the row of w_a w_b A(i_a, i_b), in
 * double; a pair with no block in A's pattern adds nothing */
TW_HD void tw_hanging_diag_block(const int *row_ptr, const int *col, const tw_real *A, const int *pt_ptr,
                                 const int *pt_idx, const double *pt_wt, int J, tw_real *out)
{
    double s[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int a = pt_ptr[J]; a < pt_ptr[J + 1]; a++)
        for (int b = pt_ptr[J]; b < pt_ptr[J + 1]; b++) {
            int blk = tw_bsr_find(row_ptr, col, pt_idx[a], pt_idx[b]);
            if (blk < 0) continue;
            double ww = pt_wt[a] * pt_wt[b];
            for (int q = 0; q < 9; q++) s[q] += ww * (double)A[9 * (size_t)blk + q];
        }
    for (int q = 0; q < 9; q++) out[q] = (tw_real)s[q];
}

/* The device's P and P^T in vertex numbering from the world's constraint
 * lists (tw_world_set_hanging's: nhang vertices, their rows hptr/hidx/hw):
 * P's row i is (i, 1) for a non-hanging vertex, its constraint for a hanging
 * one; P^T's row J lists (i, w) over the rows of P holding J, i increasing.
 * Each of *p_ptr, *pt_ptr n + 1 ints, the others *nnz entries; freed by
 * the caller (free). Returns 0, or -1 when out of memory (nothing left
 * allocated). */
static inline int tw_hanging_device_rows(int n, int nhang, const int *hvertex, const int *hptr, const int *hidx,
                                         const double *hw, int **p_ptr, int **p_idx, double **p_wt, int **pt_ptr,
                                         int **pt_idx, double **pt_wt, int *nnz)
{
    int *row = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    size_t m = (size_t)(n - nhang) + (size_t)(nhang > 0 ? hptr[nhang] : 0);
    int *pp = (int *)malloc(sizeof(int) * ((size_t)n + 1)), *pi = (int *)malloc(sizeof(int) * (m + 1));
    int *tp = (int *)calloc((size_t)n + 2, sizeof(int)), *ti = (int *)malloc(sizeof(int) * (m + 1));
    double *pw = (double *)malloc(sizeof(double) * (m + 1)), *tw = (double *)malloc(sizeof(double) * (m + 1));
    if (!row || !pp || !pi || !tp || !ti || !pw || !tw) {
        free(row); free(pp); free(pi); free(tp); free(ti); free(pw); free(tw);
        return -1;
    }
    for (int i = 0; i < n; i++) row[i] = -1;
    for (int k = 0; k < nhang; k++) row[hvertex[k]] = k;
    size_t q = 0;
    for (int i = 0; i < n; i++) {
        pp[i] = (int)q;
        if (row[i] < 0) {
            pi[q] = i;
            pw[q++] = 1;
        } else {
            for (int j = hptr[row[i]]; j < hptr[row[i] + 1]; j++) {
                pi[q] = hidx[j];
                pw[q++] = hw[j];
            }
        }
    }
    pp[n] = (int)q;
    /* the transpose by counting: rows of P visited in vertex order, so each
     * row of P^T comes out sorted by i */
    for (size_t k = 0; k < q; k++) tp[pi[k] + 2]++;
    for (int J = 0; J < n; J++) tp[J + 2] += tp[J + 1];
    for (int i = 0; i < n; i++)
        for (int k = pp[i]; k < pp[i + 1]; k++) {
            int t = tp[pi[k] + 1]++;
            ti[t] = i;
            tw[t] = pw[k];
        }
    free(row);
    *p_ptr = pp; *p_idx = pi; *p_wt = pw;
    *pt_ptr = tp; *pt_idx = ti; *pt_wt = tw;
    *nnz = (int)q;
    return 0;
}
#endif
