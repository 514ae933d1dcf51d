/* One block row of the 3x3-BSR products the block-Jacobi PCG needs, and
 * one vertex of its preconditioner (the diagonal block's inverse, z = S D r),
 * written once for the CPU solvers (solver_impl.h, once per scalar type)
 * and the CUDA kernels (kernels/cuda_pcg.cu, cuda_pcg_fused.cu through
 * hd/pcg_fused.h, cuda_bicgstab.cu, cuda_bodies.cu, cuda_front.cu: a kernel
 * is this body on one thread). Like solver_impl.h it has no include guard:
 * it expects TW_S_REAL (the scalar) and TW_S(name) (the instance's name)
 * and TW_HD (host/hd/hd.h); hd/bsr_row_real.h is its guarded tw_real
 * instance. */
#include <math.h>

#include "bsr_half.h" /* tw_bsr_half_index (guarded) */
#include "solver.h"   /* TW_FILTER_NORMAL (guarded) */

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

/* z_i = D_i r_i, vertex i's block-Jacobi product with its inverted
 * diagonal block d (tw_block_jacobi_inverse's): each row's three products
 * summed left to right in the block's precision; zi may alias ri */
TW_HD void TW_S(tw_block_jacobi_product)(const TW_S_REAL *d, const TW_S_REAL *ri, TW_S_REAL *zi)
{
    TW_S_REAL z0 = d[0] * ri[0] + d[1] * ri[1] + d[2] * ri[2];
    TW_S_REAL z1 = d[3] * ri[0] + d[4] * ri[1] + d[5] * ri[2];
    TW_S_REAL z2 = d[6] * ri[0] + d[7] * ri[1] + d[8] * ri[2];
    zi[0] = z0; zi[1] = z1; zi[2] = z2;
}

/* v_i = S v_i, the Baraff-Witkin filter of vertex i (solver.h tw_filter):
 * c 0 free, TW_FILTER_NORMAL loses the component along normal[3i..3i+2]
 * (its dot in the vector's precision; normal is read only there, NULL
 * without contacts), any other value zeroed */
TW_HD void TW_S(tw_filter_block)(unsigned char c, const tw_real *normal, int i, TW_S_REAL *vi)
{
    if (!c) return;
    if (c == TW_FILTER_NORMAL) {
        const tw_real *nn = normal + 3 * (size_t)i;
        TW_S_REAL d = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
        vi[0] -= d * nn[0]; vi[1] -= d * nn[1]; vi[2] -= d * nn[2];
    } else {
        vi[0] = vi[1] = vi[2] = 0;
    }
}

/* zi = S D_i r_i: vertex i's filtered block-Jacobi preconditioner (c its
 * filter value, normal as tw_filter_block's), the body of the CPU's
 * tw_block_precondition and of every device solver's preconditioning; zi
 * is z + 3 i, or the caller's registers when it goes on with them */
TW_HD void TW_S(tw_block_jacobi_vertex)(const TW_S_REAL *dinv, const TW_S_REAL *r, int i, unsigned char c,
                                        const tw_real *normal, TW_S_REAL *zi)
{
    TW_S(tw_block_jacobi_product)(dinv + 9 * (size_t)i, r + 3 * (size_t)i, zi);
    TW_S(tw_filter_block)(c, normal, i, zi);
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
