/* The symmetric half of a 3x3-BSR matrix: its diagonal blocks and the
 * blocks above the diagonal, read as rows (A_ik, k >= i) and, transposed,
 * as columns (A_ji^T, j < i, gathered through a CSC-like index of the
 * upper blocks). Row i's product
 *
 *     y_i = sum_{j<i} A_ji^T x_j + A_ii x_i + sum_{k>i} A_ik x_k
 *
 * is one thread's work, writes y_i only and sums in the full row's order
 * (columns ascending): no atomics, the same bits on every run, and where
 * the full matrix stores each lower block as the exact transpose of its
 * upper one (the element methods' assembly does), the same bits as the full
 * row product. The lower blocks are never read, so a product streams about
 * half the matrix; the price is the gather index (one int per upper block)
 * and reading each upper block twice, by its row and by its column, which
 * costs memory traffic only where the second read misses the cache.
 *
 * One index describes two layouts:
 *  - in place: the full matrix's arrays (row_ptr, col, diag, val), of which
 *    only the upper half is read; up = [diag[i], row_ptr[i+1]), lo =
 *    [row_ptr[i], diag[i]) with lo_row = col and lo_blk the one new array;
 *  - compact: only the half stored (tw_bsr_half_compact, host/bsr_half.h).
 * Shared by the CPU solvers (host/solver_impl.h through bsr_row.h) and the
 * CUDA kernels (kernels/cuda_pcg.cu). */
#ifndef TW_HD_BSR_HALF_H
#define TW_HD_BSR_HALF_H
#include "hd.h"

typedef struct tw_bsr_half_index {
    const int *up_begin, *up_end; /* row i's diagonal and upper blocks: [up_begin[i], up_end[i]) of val */
    const int *col;               /* their block columns (ascending, the first i itself) */
    const int *lo_begin, *lo_end; /* row i's transposed blocks: [lo_begin[i], lo_end[i]) of lo_row, lo_blk */
    const int *lo_row;            /* j < i, ascending */
    const int *lo_blk;            /* the block (j, i) in val, read transposed */
} tw_bsr_half_index;

/* In place: lo_blk[p] for each lower position p of the full pattern is the
 * position of its transposed block (the upper block (j, i) of row j). Row
 * j's upper blocks each fill one lower position, found by bisection in
 * row i's lower columns, so rows link in parallel and each entry is written
 * once. Returns the number of upper blocks without a lower partner (0 for a
 * structurally symmetric pattern with ascending columns). */
TW_HD int tw_bsr_half_link_row(const int *row_ptr, const int *col, const int *diag, int *lo_blk, int j)
{
    int missing = 0;
    for (int k = diag[j] + 1; k < row_ptr[j + 1]; k++) {
        int i = col[k], lo = row_ptr[i], hi = diag[i]; /* row i's lower columns, ascending */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (col[mid] < j) lo = mid + 1;
            else hi = mid;
        }
        if (lo < diag[i] && col[lo] == j) lo_blk[lo] = k;
        else missing++;
    }
    return missing;
}

/* The in-place index of a full pattern (lo_blk linked by tw_bsr_half_link_row). */
TW_HD tw_bsr_half_index tw_bsr_half_in_place(const int *row_ptr, const int *col, const int *diag, const int *lo_blk)
{
    tw_bsr_half_index h;
    h.up_begin = diag;
    h.up_end = row_ptr + 1;
    h.col = col;
    h.lo_begin = row_ptr;
    h.lo_end = diag;
    h.lo_row = col;
    h.lo_blk = lo_blk;
    return h;
}
#endif
