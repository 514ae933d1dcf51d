/* The multigrid hierarchy's per-step values (host/amg.c tw_amg_update)
 * written once for the device (kernels/cuda_amg.cu) and its CPU emulation
 * (tests/test_amg_emul.c): the smoother's block inverses, the smoothed
 * prolongator P, A P and the Galerkin operator P^T A P, one output block
 * at a time from a precomputed list of the products that add into it
 * (host/amg_lists.h), in the order amg.c adds them. A block is one thread's:
 * no atomics, the same sums on every run, and in double the same roundings
 * as amg.c's up to the compiler's contraction of a*b+c into an FMA (nvcc
 * contracts, the CPU build does not).
 *
 * The arithmetic is amg.c's: the 3x3 and dense inverses, the dense
 * Cholesky factor and solve, the filter and the filtered finest block here
 * are the ones amg.c calls; block_mul_add, block_tmul_add,
 * level_prolongator's row and the power iteration's step are written as
 * amg.c's own loops are (those amg.c keeps: its versions are its threads'
 * and SSE's order). */
#ifndef TW_HD_AMG_GALERKIN_H
#define TW_HD_AMG_GALERKIN_H
#include <math.h>

#include "amg_cycle.h"
#include "bsr_row_double.h" /* tw_filter_block_d */

/* d = a^-1 (3 x 3 symmetric) by cofactors, symmetrised; 0 when a is close to
 * singular (amg.c inverse3) */
TW_HD int tw_amg_inverse3(const double *a, double *d)
{
    double c[9] = {a[4] * a[8] - a[5] * a[7], a[2] * a[7] - a[1] * a[8], a[1] * a[5] - a[2] * a[4],
                   a[5] * a[6] - a[3] * a[8], a[0] * a[8] - a[2] * a[6], a[2] * a[3] - a[0] * a[5],
                   a[3] * a[7] - a[4] * a[6], a[1] * a[6] - a[0] * a[7], a[0] * a[4] - a[1] * a[3]};
    double det = a[0] * c[0] + a[1] * c[3] + a[2] * c[6], scale = fmax(fabs(a[0]), fmax(fabs(a[4]), fabs(a[8])));
    if (!(det > 1e-9 * scale * scale * scale)) return 0;
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) d[3 * r + q] = 0.5 * (c[3 * r + q] + c[3 * q + r]) / det;
    return 1;
}

/* The Cholesky factor of a (k x k, row-major) one column at a time (amg.c
 * dense_cholesky): the pivot of column j, then each entry below it. dmax:
 * the largest |diagonal| of a before the factorisation. */
TW_HD double tw_amg_chol_pivot(int k, const double *a, int j)
{
    const double *rj = a + (size_t)j * k;
    double s = rj[j];
    for (int q = 0; q < j; q++) s -= rj[q] * rj[q];
    return s;
}

/* entry (i, j), i > j, once column j's pivot d = sqrt(s) is in place */
TW_HD void tw_amg_chol_entry(int k, double *a, int i, int j)
{
    const double *rj = a + (size_t)j * k;
    double *ri = a + (size_t)i * k, t = ri[j];
    for (int q = 0; q < j; q++) t -= ri[q] * rj[q];
    ri[j] = t / rj[j];
}

/* the whole factorisation on one thread: a pivot below 1e-12 of the largest
 * diagonal makes its direction a null direction (its column zero) */
TW_HD void tw_amg_dense_cholesky(int k, double *a)
{
    double dmax = 0;
    for (int i = 0; i < k; i++) dmax = fmax(dmax, fabs(a[(size_t)i * k + i]));
    for (int j = 0; j < k; j++) {
        double s = tw_amg_chol_pivot(k, a, j);
        if (!(s > 1e-12 * dmax)) {
            for (int i = j; i < k; i++) a[(size_t)i * k + j] = 0;
            continue;
        }
        a[(size_t)j * k + j] = sqrt(s);
        for (int i = j + 1; i < k; i++) tw_amg_chol_entry(k, a, i, j);
    }
}

/* x = (L L^T)^+ b with the factor's null pivots giving 0 (amg.c
 * dense_cholesky_solve) */
TW_HD void tw_amg_dense_cholesky_solve(int k, const double *L, const double *b, double *x)
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

/* d = a^+ (k x k symmetric, k <= 6), symmetrised (amg.c dense_pseudo_inverse) */
TW_HD void tw_amg_pseudo_inverse(int k, const double *a, double *d)
{
    double f[TW_AMG_CB * TW_AMG_CB], e[TW_AMG_CB], x[TW_AMG_CB];
    for (int q = 0; q < k * k; q++) f[q] = a[q];
    tw_amg_dense_cholesky(k, f);
    for (int c = 0; c < k; c++) {
        for (int r = 0; r < k; r++) e[r] = r == c;
        tw_amg_dense_cholesky_solve(k, f, e, x);
        for (int r = 0; r < k; r++) d[r * k + c] = x[r];
    }
    for (int r = 0; r < k; r++)
        for (int c = 0; c < r; c++) d[r * k + c] = d[c * k + r] = 0.5 * (d[r * k + c] + d[c * k + r]);
}

/* v = S_i v in double (the solvers' filter, tw_filter_block, on a double
 * vector, with the vertex's own normal nn) */
TW_HD void tw_amg_filter3(unsigned char c, const tw_real *nn, double *v) { tw_filter_block_d(c, nn, 0, v); }

/* The filtered finest operator's block (i, j) in double from the step's
 * block a: S A S on the free directions, a fully
 * constrained vertex decoupled with its diagonal (the identity when that is
 * empty), a contact vertex's normal decoupled with trace/3. ci, cj: the
 * filter codes, ni, nj: the normals. */
TW_HD void tw_amg_fine_block(const tw_real *a, int i, int j, unsigned char ci, unsigned char cj, const tw_real *ni,
                             const tw_real *nj, double *b)
{
    for (int q = 0; q < 9; q++) b[q] = a[q];
    if (!ci && !cj) return;
    double tr = (b[0] + b[4] + b[8]) / 3;
    if ((ci && ci != TW_FILTER_NORMAL) || (cj && cj != TW_FILTER_NORMAL)) {
        double s = i == j && tr > 0 ? tr : 1;
        for (int q = 0; q < 9; q++) b[q] = i == j && q % 4 == 0 ? s : 0;
        return;
    }
    if (ci) { /* b = (I - n n^T) b */
        for (int c = 0; c < 3; c++) {
            double d = (double)ni[0] * b[c] + (double)ni[1] * b[3 + c] + (double)ni[2] * b[6 + c];
            for (int r = 0; r < 3; r++) b[3 * r + c] -= (double)ni[r] * d;
        }
    }
    if (cj) { /* b = b (I - n n^T) */
        for (int r = 0; r < 3; r++) {
            double d = b[3 * r] * (double)nj[0] + b[3 * r + 1] * (double)nj[1] + b[3 * r + 2] * (double)nj[2];
            for (int c = 0; c < 3; c++) b[3 * r + c] -= d * (double)nj[c];
        }
    }
    if (i == j)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) b[3 * r + c] += tr * (double)ni[r] * (double)ni[c];
}

/* o += a b (a: R x K, b: K x C, row-major; amg.c block_mul_add) */
TW_HD void tw_amg_block_mul_add(int R, int K, int C, const double *a, const double *b, double *o)
{
    for (int r = 0; r < R; r++) {
        double acc[TW_AMG_CB];
        for (int c = 0; c < C; c++) acc[c] = o[r * C + c];
        for (int t = 0; t < K; t++) {
            double s = a[r * K + t];
            for (int c = 0; c < C; c++) acc[c] += s * b[t * C + c];
        }
        for (int c = 0; c < C; c++) o[r * C + c] = acc[c];
    }
}

/* o += a^T b (a: K x R, b: K x C; amg.c block_tmul_add) */
TW_HD void tw_amg_block_tmul_add(int R, int K, int C, const double *a, const double *b, double *o)
{
    for (int r = 0; r < R; r++) {
        double acc[TW_AMG_CB];
        for (int c = 0; c < C; c++) acc[c] = o[r * C + c];
        for (int t = 0; t < K; t++) {
            double s = a[t * R + r];
            for (int c = 0; c < C; c++) acc[c] += s * b[t * C + c];
        }
        for (int c = 0; c < C; c++) o[r * C + c] = acc[c];
    }
}

/* The finest level's operator as the Galerkin products read it: the step's
 * BSR and the filter (cons NULL: none) */
typedef struct tw_amg_fine {
    const int *row_ptr, *col;
    const tw_real *val;
    const unsigned char *cons;
    const tw_real *normal;
} tw_amg_fine;

/* Block (i, j) = A's block k of the level's operator in double: fine (the
 * finest level) filtered when filtered is 1, else a coarse level's val */
TW_HD void tw_amg_level_block(const tw_amg_fine *fine, const double *cval, int filtered, int i, int j, int k,
                              double *b)
{
    if (cval) {
        for (int q = 0; q < TW_AMG_CB * TW_AMG_CB; q++) b[q] = cval[(size_t)TW_AMG_CB * TW_AMG_CB * k + q];
        return;
    }
    const tw_real *a = fine->val + 9 * (size_t)k;
    if (!filtered) {
        for (int q = 0; q < 9; q++) b[q] = a[q];
        return;
    }
    unsigned char ci = fine->cons ? fine->cons[i] : 0, cj = fine->cons ? fine->cons[j] : 0;
    tw_amg_fine_block(a, i, j, ci, cj, fine->normal + 3 * (size_t)i, fine->normal + 3 * (size_t)j, b);
}

/* Node i's smoother inverse (amg.c level_block_inverses): the filtered
 * diagonal block's inverse3 on the finest level (its pseudo-inverse when
 * that fails), a coarse diagonal block's pseudo-inverse */
TW_HD void tw_amg_node_inverse(const tw_amg_fine *fine, const double *cval, int bs, int i, int kdiag, double *d)
{
    double a[TW_AMG_CB * TW_AMG_CB];
    tw_amg_level_block(fine, cval, 1, i, i, kdiag, a);
    if (bs == 3 && tw_amg_inverse3(a, d)) return;
    tw_amg_pseudo_inverse(bs, a, d);
}

/* P's block q of row i (amg.c level_prolongator): o = sum over the list
 * (A blocks lk[0..nl) of row i, columns lj) of A_ij P0_j, its columns
 * filtered (finest level), then -omega D_i^-1 o, plus P0_i when node i
 * belongs to this block's aggregate (p0i: its P0 block, NULL when not).
 * p0: P0's values (one bs x 6 block per aggregated node, at p0_ptr[j]). */
TW_HD void tw_amg_prolongator_block(const tw_amg_fine *fine, const double *cval, int bs, int i, int nl,
                                    const int *lk, const int *lj, const int *p0_ptr, const double *p0,
                                    const double *dinv_i, double omega, const double *p0i, double *o)
{
    const int pb = bs * TW_AMG_CB;
    for (int e = 0; e < pb; e++) o[e] = 0;
    for (int u = 0; u < nl; u++) {
        double ab[TW_AMG_CB * TW_AMG_CB];
        tw_amg_level_block(fine, cval, 1, i, lj[u], lk[u], ab);
        tw_amg_block_mul_add(bs, bs, TW_AMG_CB, ab, p0 + (size_t)pb * p0_ptr[lj[u]], o);
    }
    if (!cval && fine->cons)
        for (int c = 0; c < TW_AMG_CB; c++) {
            double col[3] = {o[c], o[TW_AMG_CB + c], o[2 * TW_AMG_CB + c]};
            tw_amg_filter3(fine->cons[i], fine->normal + 3 * (size_t)i, col);
            o[c] = col[0]; o[TW_AMG_CB + c] = col[1]; o[2 * TW_AMG_CB + c] = col[2];
        }
    double t[TW_AMG_CB * TW_AMG_CB];
    for (int r = 0; r < bs; r++)
        for (int c = 0; c < TW_AMG_CB; c++) {
            double s = 0;
            for (int v = 0; v < bs; v++) s += dinv_i[r * bs + v] * o[v * TW_AMG_CB + c];
            t[r * TW_AMG_CB + c] = -omega * s;
        }
    for (int e = 0; e < pb; e++) o[e] = t[e];
    if (p0i)
        for (int e = 0; e < pb; e++) o[e] += p0i[e];
}

/* A P's block of row i (amg.c level_ap): o = sum over the list of A_k P_kb
 * (A unfiltered: P's columns are filtered) */
TW_HD void tw_amg_ap_block(const tw_amg_fine *fine, const double *cval, int bs, int i, int nl, const int *lk,
                           const int *lkb, const double *p, double *o)
{
    const int pb = bs * TW_AMG_CB;
    for (int e = 0; e < pb; e++) o[e] = 0;
    for (int u = 0; u < nl; u++) {
        double ab[TW_AMG_CB * TW_AMG_CB];
        tw_amg_level_block(fine, cval, 0, i, i, lk[u], ab);
        tw_amg_block_mul_add(bs, bs, TW_AMG_CB, ab, p + (size_t)pb * lkb[u], o);
    }
}

/* P^T A P's upper block (amg.c level_coarse_operator): o = sum over the
 * list of P_pq^T (AP)_apk */
TW_HD void tw_amg_coarse_block(int bs, int nl, const int *lp, const int *lap, const double *p, const double *ap,
                               double *o)
{
    const int pb = bs * TW_AMG_CB;
    for (int e = 0; e < TW_AMG_CB * TW_AMG_CB; e++) o[e] = 0;
    for (int u = 0; u < nl; u++)
        tw_amg_block_tmul_add(TW_AMG_CB, bs, TW_AMG_CB, p + (size_t)pb * lp[u], ap + (size_t)pb * lap[u], o);
}

/* The power iteration's per-node step (amg.c level_lambda): y_i = -S A x
 * in, t = D_i^-1 y_i in double out to y_i (rounded); adds x_i . x_i and
 * t . t to xx and yy */
TW_HD void tw_amg_power_node(int bs, int i, const double *dinv, const tw_real *x, tw_real *y, double *xx,
                             double *yy)
{
    const double *d = dinv + (size_t)bs * bs * i;
    double t[TW_AMG_CB];
    for (int r = 0; r < bs; r++) {
        double s = 0;
        for (int c = 0; c < bs; c++) s += d[r * bs + c] * y[(size_t)bs * i + c];
        t[r] = s;
    }
    for (int r = 0; r < bs; r++) {
        size_t q = (size_t)bs * i + r;
        *xx += (double)x[q] * x[q];
        *yy += t[r] * t[r];
        y[q] = (tw_real)t[r];
    }
}
#endif
