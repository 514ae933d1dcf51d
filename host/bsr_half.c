#include "bsr_half.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hd/hd.h"

/* ascending columns, the diagonal at diag[i], structurally symmetric; the
 * in-place links (lo_blk) as a side effect */
static tw_status check_and_link(int n, int nnzb, const int *row_ptr, const int *col, const int *diag, int *lo_blk)
{
    if (n < 0 || row_ptr[0] != 0 || row_ptr[n] != nnzb)
        return tw_fail(TW_ERR_INVALID, "%s:%d: symmetric half: row_ptr[0] %d and row_ptr[n] %d for %d blocks",
                       __FILE__, __LINE__, n >= 0 ? row_ptr[0] : -1, n >= 0 ? row_ptr[n] : -1, nnzb);
    long long lower = 0, upper = 0;
    for (int i = 0; i < n; i++) {
        if (diag[i] < row_ptr[i] || diag[i] >= row_ptr[i + 1] || col[diag[i]] != i)
            return tw_fail(TW_ERR_INVALID, "%s:%d: symmetric half: row %d has no diagonal block at diag[%d] = %d",
                           __FILE__, __LINE__, i, i, diag[i]);
        for (int k = row_ptr[i] + 1; k < row_ptr[i + 1]; k++)
            if (col[k] <= col[k - 1])
                return tw_fail(TW_ERR_INVALID, "%s:%d: symmetric half: row %d's columns are not ascending (%d then %d)",
                               __FILE__, __LINE__, i, col[k - 1], col[k]);
        lower += diag[i] - row_ptr[i];
        upper += row_ptr[i + 1] - diag[i] - 1;
        for (int k = row_ptr[i]; k < diag[i]; k++) lo_blk[k] = -1;
    }
    for (int j = 0; j < n; j++)
        if (tw_bsr_half_link_row(row_ptr, col, diag, lo_blk, j))
            return tw_fail(TW_ERR_INVALID, "%s:%d: symmetric half: row %d has an upper block whose transpose is not "
                           "in the pattern (not structurally symmetric)", __FILE__, __LINE__, j);
    if (lower != upper)
        return tw_fail(TW_ERR_INVALID, "%s:%d: symmetric half: %lld lower blocks but %lld upper ones (not "
                       "structurally symmetric)", __FILE__, __LINE__, lower, upper);
    return TW_OK;
}

tw_status tw_bsr_half_init(tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col, const int *diag)
{
    memset(h, 0, sizeof *h);
    h->lo_blk = tw_malloc(sizeof(int) * ((size_t)nnzb + 1), "symmetric half index");
    if (!h->lo_blk) return TW_ERR_NOMEM;
    tw_status st = check_and_link(n, nnzb, row_ptr, col, diag, h->lo_blk);
    if (st != TW_OK) { tw_bsr_half_free(h); return st; }
    h->n = n;
    h->nnzb = nnzb;
    h->row_ptr = row_ptr;
    h->col = col;
    h->index = tw_bsr_half_in_place(row_ptr, col, diag, h->lo_blk);
    return TW_OK;
}

tw_status tw_bsr_half_init_compact(tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col,
                                   const int *diag, const tw_real *val)
{
    tw_status st = tw_bsr_half_init(h, n, nnzb, row_ptr, col, diag);
    if (st != TW_OK) return st;
    int nh = n + (nnzb - n) / 2, nlo = nnzb - nh;
    h->nh = nh;
    h->up_ptr = tw_malloc(sizeof(int) * ((size_t)n + 1), "symmetric half");
    h->lo_ptr = tw_malloc(sizeof(int) * ((size_t)n + 1), "symmetric half");
    h->up_col = tw_malloc(sizeof(int) * ((size_t)nh + 1), "symmetric half");
    h->src = tw_malloc(sizeof(int) * ((size_t)nh + 1), "symmetric half");
    h->lo_row = tw_malloc(sizeof(int) * ((size_t)nlo + 1), "symmetric half");
    h->lo_cblk = tw_malloc(sizeof(int) * ((size_t)nlo + 1), "symmetric half");
    int *at = tw_malloc(sizeof(int) * ((size_t)nnzb + 1), "symmetric half"); /* full position -> stored one */
    h->val = tw_malloc(sizeof(tw_real) * 9 * ((size_t)nh + 1), "symmetric half values");
    if (!h->up_ptr || !h->lo_ptr || !h->up_col || !h->src || !h->lo_row || !h->lo_cblk || !at || !h->val) {
        free(at);
        tw_bsr_half_free(h);
        return TW_ERR_NOMEM;
    }
    int u = 0, l = 0;
    for (int i = 0; i < n; i++) {
        h->up_ptr[i] = u;
        for (int k = diag[i]; k < row_ptr[i + 1]; k++, u++) {
            at[k] = u;
            h->src[u] = k;
            h->up_col[u] = col[k];
        }
    }
    h->up_ptr[n] = u;
    for (int i = 0; i < n; i++) {
        h->lo_ptr[i] = l;
        for (int k = row_ptr[i]; k < diag[i]; k++, l++) {
            h->lo_row[l] = col[k];
            h->lo_cblk[l] = at[h->lo_blk[k]];
        }
    }
    h->lo_ptr[n] = l;
    free(at);
    h->index.up_begin = h->up_ptr;
    h->index.up_end = h->up_ptr + 1;
    h->index.col = h->up_col;
    h->index.lo_begin = h->lo_ptr;
    h->index.lo_end = h->lo_ptr + 1;
    h->index.lo_row = h->lo_row;
    h->index.lo_blk = h->lo_cblk;
    tw_bsr_half_refresh(h, val, 0);
    return TW_OK;
}

void tw_bsr_half_refresh(tw_bsr_half *h, const tw_real *val, int threads)
{
    (void)threads;
    if (!h->val) return;
#pragma omp parallel for if (TW_PAR(h->nh)) num_threads(TW_THREADS(threads)) schedule(static)
    for (int u = 0; u < h->nh; u++) memcpy(h->val + 9 * (size_t)u, val + 9 * (size_t)h->src[u], 9 * sizeof(tw_real));
}

int tw_bsr_half_matches(const tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col)
{
    return h->lo_blk && h->n == n && h->nnzb == nnzb && h->row_ptr == row_ptr && h->col == col;
}

double tw_bsr_half_bytes(const tw_bsr_half *h, size_t real)
{
    double n = h->n, up = (h->nnzb - h->n) / 2;
    /* values of the diagonal and upper blocks once; their columns; the
     * gather's row and block index per upper block; two row pointers per
     * row (diag and row_ptr, or up_ptr and lo_ptr); x and y once */
    return (n + up) * 9 * (double)real + (n + up) * 4 + up * 8 + 2 * n * 4 + 6 * n * (double)real;
}

void tw_bsr_half_free(tw_bsr_half *h)
{
    free(h->lo_blk); free(h->up_ptr); free(h->up_col); free(h->lo_ptr); free(h->lo_row); free(h->lo_cblk);
    free(h->src); free(h->val);
    memset(h, 0, sizeof *h);
}

int tw_spmv_half_wanted(tw_spmv_form def_form)
{
    const char *e = getenv("TW_SPMV");
    if (e && strcmp(e, "half") == 0) return 1;
    if (e && strcmp(e, "full") == 0) return 0;
    if (e && *e) fprintf(stderr, "tetwarp: TW_SPMV=%s is neither half nor full; the world def's form (%s) is used\n",
                         e, def_form == TW_SPMV_HALF ? "half" : "full");
    return def_form == TW_SPMV_HALF;
}
