/* One block row of the 3x3-BSR products the block-Jacobi PCG needs, written
 * once for the CPU solvers (solver_impl.h, once per scalar type) and the
 * CUDA kernels (kernels/cuda_pcg.cu: a kernel is this body on one thread).
 * Like solver_impl.h it has no include guard: it expects TW_S_REAL (the
 * scalar) and TW_S(name) (the instance's name) and TW_HD (host/hd/hd.h). */
#include "bsr_half.h" /* tw_bsr_half_index (guarded) */

/* y_i = sum_k A_ik x_k over block row i */
TW_HD void TW_S(tw_bsr_row_product)(const int *row_ptr, const int *col, const TW_S_REAL *val,
                                    const TW_S_REAL *x, TW_S_REAL *y, int i)
{
    TW_S_REAL y0 = 0, y1 = 0, y2 = 0;
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
        const TW_S_REAL *a = val + 9 * (size_t)k, *xj = x + 3 * (size_t)col[k];
        y0 += a[0] * xj[0] + a[1] * xj[1] + a[2] * xj[2];
        y1 += a[3] * xj[0] + a[4] * xj[1] + a[5] * xj[2];
        y2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];
    }
    y[3 * (size_t)i] = y0; y[3 * (size_t)i + 1] = y1; y[3 * (size_t)i + 2] = y2;
}

/* d = a^-1 of one diagonal block (cofactors in the block's precision, the
 * division in double); a singular block (an unused vertex) gives the
 * identity, which the filter zeroes anyway */
TW_HD void TW_S(tw_block_jacobi_inverse)(const TW_S_REAL *a, TW_S_REAL *d)
{
    double c[9] = {a[4] * a[8] - a[5] * a[7], a[2] * a[7] - a[1] * a[8], a[1] * a[5] - a[2] * a[4],
                   a[5] * a[6] - a[3] * a[8], a[0] * a[8] - a[2] * a[6], a[2] * a[3] - a[0] * a[5],
                   a[3] * a[7] - a[4] * a[6], a[1] * a[6] - a[0] * a[7], a[0] * a[4] - a[1] * a[3]};
    double det = a[0] * c[0] + a[1] * c[3] + a[2] * c[6], scale = 0;
    for (int k = 0; k < 9; k++) scale = fmax(scale, fabs((double)a[k]));
    if (fabs(det) > 1e-12 * scale * scale * scale && scale > 0)
        for (int k = 0; k < 9; k++) d[k] = (TW_S_REAL)(c[k] / det);
    else
        for (int k = 0; k < 9; k++) d[k] = (TW_S_REAL)(k % 4 == 0);
}

/* y_i of the symmetric half (hd/bsr_half.h): the transposed blocks of
 * column i, then row i's diagonal and upper blocks, in the full row's order
 * and with the full row's expression per block (an exactly symmetric full
 * matrix gives tw_bsr_row_product's bits) */
TW_HD void TW_S(tw_bsr_half_row_product)(const tw_bsr_half_index *h, const TW_S_REAL *val, const TW_S_REAL *x,
                                         TW_S_REAL *y, int i)
{
    TW_S_REAL y0 = 0, y1 = 0, y2 = 0;
    for (int k = h->lo_begin[i]; k < h->lo_end[i]; k++) {
        const TW_S_REAL *a = val + 9 * (size_t)h->lo_blk[k], *xj = x + 3 * (size_t)h->lo_row[k];
        y0 += a[0] * xj[0] + a[3] * xj[1] + a[6] * xj[2];
        y1 += a[1] * xj[0] + a[4] * xj[1] + a[7] * xj[2];
        y2 += a[2] * xj[0] + a[5] * xj[1] + a[8] * xj[2];
    }
    for (int k = h->up_begin[i]; k < h->up_end[i]; k++) {
        const TW_S_REAL *a = val + 9 * (size_t)k, *xj = x + 3 * (size_t)h->col[k];
        y0 += a[0] * xj[0] + a[1] * xj[1] + a[2] * xj[2];
        y1 += a[3] * xj[0] + a[4] * xj[1] + a[5] * xj[2];
        y2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];
    }
    y[3 * (size_t)i] = y0; y[3 * (size_t)i + 1] = y1; y[3 * (size_t)i + 2] = y2;
}
