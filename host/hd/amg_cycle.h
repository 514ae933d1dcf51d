/* The multigrid V-cycle's per-row arithmetic (host/amg.c's vcycle) written
 * once for the device cycle (kernels/cuda_amg.cu: a kernel is one of these
 * bodies on one thread) and its CPU emulation (tests/test_amg_emul.c).
 *
 * The arithmetic is amg.c's (half_finish, bmat_row, the coarsest solve;
 * the filter and the Chebyshev coefficients are the ones amg.c calls);
 * what differs is the order of a row's product: amg.c's sweeps read each
 * level's operator as its upper half and add a block's transpose into
 * a later row (a scatter: deterministic on the CPU's thread ranges, a race
 * on the device), so the device reads every row in full (a gather, one
 * thread a row, no atomics) and its sums differ from the CPU's in the last
 * bits. The level's operator is symmetric, so the two compute the same
 * product. The coarsest level is a dense pseudo-inverse applied as a
 * matrix-vector product (see amg_galerkin.h) instead of amg.c's two
 * triangular solves: the same operator, rounded differently.
 *
 * The V-cycle from x = 0, per level above the coarsest (amg.c vcycle, with
 * one block-Jacobi sweep each side; a Chebyshev smoother's steps replace
 * each side's sweeps by the polynomial's, see tw_amg_sweep_finish):
 *   x = w D^-1 S b                      (the first sweep: no product)
 *   r = S (b - A x)                     (the residual sweep)
 *   b_c = P^T r, x_c = V_c b_c          (restriction, the next level)
 *   x += P x_c                          (prolongation)
 *   t = x + w D^-1 S (b - A x)          (the post-smoothing sweep)
 * with S the Baraff-Witkin filter on the finest level only. */
#ifndef TW_HD_AMG_CYCLE_H
#define TW_HD_AMG_CYCLE_H
#include "hd.h"
#include "solver.h" /* TW_FILTER_NORMAL */

#define TW_AMG_CB 6 /* unknowns per coarse node (amg.c's CB) */

/* v = S_i v for a fine vertex with filter code c and unit normal nn (the
 * dot and the products in double, rounded to the vector's type) */
TW_HD void tw_amg_filter3v(unsigned char c, const tw_real *nn, tw_real *v)
{
    if (!c) return;
    if (c == TW_FILTER_NORMAL) {
        tw_real d = (tw_real)((double)nn[0] * v[0] + (double)nn[1] * v[1] + (double)nn[2] * v[2]);
        for (int q = 0; q < 3; q++) v[q] -= (tw_real)((double)d * (double)nn[q]);
    } else {
        v[0] = v[1] = v[2] = 0;
    }
}

/* The finest operator's entry as the cycle reads it: amg.c's sweeps read a
 * float copy of the step's matrix (the same values in a float build) */
#define TW_AMG_FINE(a) ((tw_real)(float)(a))

/* lane's share of row i of the finest operator times x: the step's 3x3 BSR
 * blocks lane, lane + lanes, ... of the row (the warp SpMV's split,
 * host/hd/pcg_fused.h tw_row_lane_product) */
TW_HD void tw_amg_fine_row_lane(const int *row_ptr, const int *col, const tw_real *val, const tw_real *x, int i,
                                int lane, int lanes, tw_real *y)
{
    tw_real y0 = 0, y1 = 0, y2 = 0;
    for (int k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += lanes) {
        const tw_real *a = val + 9 * (size_t)k;
        const tw_real *xj = x + 3 * (size_t)col[k];
        y0 += TW_AMG_FINE(a[0]) * xj[0] + TW_AMG_FINE(a[1]) * xj[1] + TW_AMG_FINE(a[2]) * xj[2];
        y1 += TW_AMG_FINE(a[3]) * xj[0] + TW_AMG_FINE(a[4]) * xj[1] + TW_AMG_FINE(a[5]) * xj[2];
        y2 += TW_AMG_FINE(a[6]) * xj[0] + TW_AMG_FINE(a[7]) * xj[1] + TW_AMG_FINE(a[8]) * xj[2];
    }
    y[0] = y0; y[1] = y1; y[2] = y2;
}

/* y = row i of the finest operator times x, in full (amg.c level_row's
 * block order): one lane */
TW_HD void tw_amg_fine_row(const int *row_ptr, const int *col, const tw_real *val, const tw_real *x, int i,
                           tw_real *y)
{
    tw_amg_fine_row_lane(row_ptr, col, val, x, i, 0, 1, y);
}

/* y_i (br values) = row i of M x, M block CSR of br x bc float blocks
 * (amg.c bmat_row: a block's row sums, then added); add: y_i += it */
TW_HD void tw_amg_block_row(const int *ptr, const int *col, const float *fval, const tw_real *x, int i, int br,
                            int bc, int add, tw_real *yi)
{
    tw_real acc[TW_AMG_CB] = {0, 0, 0, 0, 0, 0};
    for (int k = ptr[i]; k < ptr[i + 1]; k++) {
        const float *a = fval + (size_t)br * bc * k;
        const tw_real *xj = x + (size_t)bc * col[k];
        tw_real xv[TW_AMG_CB] = {0, 0, 0, 0, 0, 0};
        for (int c = 0; c < bc; c++) xv[c] = xj[c];
        for (int r = 0; r < br; r++) {
            tw_real s = 0;
            for (int c = 0; c < bc; c++) s += a[r * bc + c] * xv[c];
            acc[r] += s;
        }
    }
    if (add)
        for (int r = 0; r < br; r++) yi[r] += acc[r];
    else
        for (int r = 0; r < br; r++) yi[r] = acc[r];
}

/* The Chebyshev smoother's step coefficients (amg.c smooth): step s of
 * the polynomial in D^-1 A smallest on [lambda / ratio, lambda] updates the
 * direction cd = ca cd + cc fdinv r, where fdinv already holds damping /
 * lambda (hence the scale). The recurrence runs from step 0 each call: the
 * same operations, in the same order, as amg.c's loop over the steps. */
TW_HD void tw_amg_cheb_coeffs(double lambda, double damping, double ratio, int step, tw_real *ca, tw_real *cc)
{
    double scale = lambda / damping;
    double lmax = lambda, lmin = lmax / ratio;
    double theta = 0.5 * (lmax + lmin), delta = 0.5 * (lmax - lmin);
    double sigma = theta / delta, rho = 1 / sigma;
    *ca = 0;
    *cc = (tw_real)(scale / theta);
    for (int s = 1; s <= step; s++) {
        double rn = 1 / (2 * sigma - rho);
        *ca = (tw_real)(rn * rho);
        *cc = (tw_real)(scale * 2 * rn / delta);
        rho = rn;
    }
}

/* The end of a sweep's row i once yi = (A x)_i (amg.c half_finish):
 * r_i = S (b_i - yi) (b NULL: 0; the filter on the finest level only, cons
 * NULL elsewhere), then either r_i stored (out NULL), or the damped
 * block-Jacobi update out_i = x_i + fdinv_i r_i (x NULL: 0), or with a
 * Chebyshev direction cd (not NULL) the step cd_i = ca cd_i + cc fdinv_i r_i
 * (ca 0: cd_i's old values unread), out_i = x_i + cd_i. */
TW_HD void tw_amg_sweep_finish(int bs, int i, const tw_real *yi, const tw_real *b, const tw_real *x,
                               const float *fdinv, const unsigned char *cons, const tw_real *normal, tw_real *r,
                               tw_real *out, tw_real *cd, tw_real ca, tw_real cc)
{
    size_t s0 = (size_t)bs * i;
    tw_real ri[TW_AMG_CB] = {0, 0, 0, 0, 0, 0};
    for (int q = 0; q < bs; q++) ri[q] = (b ? b[s0 + q] : 0) - yi[q];
    if (cons) tw_amg_filter3v(cons[i], normal + 3 * (size_t)i, ri);
    if (!out) {
        for (int q = 0; q < bs; q++) r[s0 + q] = ri[q];
        return;
    }
    const float *d = fdinv + (size_t)bs * bs * i;
    if (cd) {
        for (int q = 0; q < bs; q++) {
            tw_real s = 0;
            for (int c = 0; c < bs; c++) s += d[q * bs + c] * ri[c];
            s = ca != 0 ? ca * cd[s0 + q] + cc * s : cc * s;
            cd[s0 + q] = s;
            out[s0 + q] = (x ? x[s0 + q] : 0) + s;
        }
        return;
    }
    for (int q = 0; q < bs; q++) {
        tw_real s = x ? x[s0 + q] : 0;
        for (int c = 0; c < bs; c++) s += d[q * bs + c] * ri[c];
        out[s0 + q] = s;
    }
}

/* x_i = (tw_real) sum_j inv_ij b_j over the coarsest level's n unknowns,
 * inv its dense pseudo-inverse (row-major, double), b rounded up to double
 * as amg.c's lb */
TW_HD tw_real tw_amg_coarsest_row(int n, const double *inv, const tw_real *b, int i)
{
    const double *row = inv + (size_t)n * i;
    double s = 0;
    for (int j = 0; j < n; j++) s += row[j] * (double)b[j];
    return (tw_real)s;
}
#endif
