/* The mesh hierarchy's shared part: freeing, applying a transfer P and its
 * transpose, the checks of a transfer, and the owned block matrix. The level
 * builders are in hier_nested.c (1:8 refinement) and hier_nonnested.c
 * (independent meshes, point location). */
#include "hierarchy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tw_transfer_free(tw_transfer *P)
{
    if (!P)
        return;
    free(P->idx);
    free(P->w);
    memset(P, 0, sizeof *P);
}

void tw_hier_free(tw_hierarchy *h)
{
    if (!h)
        return;
    for (int l = 0; l < h->n_levels; l++) {
        if (h->level)
            tw_mesh_destroy(h->level[l]);
        if (h->parent_tet)
            free(h->parent_tet[l]);
        if (h->parent_vertex)
            free(h->parent_vertex[l]);
        if (h->P && l + 1 < h->n_levels)
            tw_transfer_free(&h->P[l]);
    }
    free(h->level);
    free(h->parent_tet);
    free(h->parent_vertex);
    free(h->P);
    free(h);
}

void tw_transfer_prolong(const tw_transfer *P, const tw_real *coarse, tw_real *fine)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < P->n_fine; i++) {
        double s[3] = {0, 0, 0};
        for (int k = 0; k < TW_HIER_ROW; k++) {
            const int j = P->idx[TW_HIER_ROW * i + k];
            const double wk = P->w[TW_HIER_ROW * i + k];
            for (int c = 0; c < 3; c++)
                s[c] += wk * (double)coarse[3 * j + c];
        }
        for (int c = 0; c < 3; c++)
            fine[3 * i + c] = (tw_real)s[c];
    }
}

/* A scatter: serial, so that the sum's order (and the result) does not
 * depend on the thread count. */
void tw_transfer_restrict(const tw_transfer *P, const tw_real *fine, tw_real *coarse)
{
    memset(coarse, 0, sizeof(tw_real) * 3 * (size_t)P->n_coarse);
    for (int i = 0; i < P->n_fine; i++)
        for (int k = 0; k < TW_HIER_ROW; k++) {
            const int j = P->idx[TW_HIER_ROW * i + k];
            const double wk = P->w[TW_HIER_ROW * i + k];
            if (wk == 0)
                continue;
            for (int c = 0; c < 3; c++)
                coarse[3 * j + c] += (tw_real)(wk * (double)fine[3 * i + c]);
        }
}

double tw_transfer_row_sum_error(const tw_transfer *P)
{
    double worst = 0;
    for (int i = 0; i < P->n_fine; i++) {
        double s = 0;
        for (int k = 0; k < TW_HIER_ROW; k++)
            s += P->w[TW_HIER_ROW * i + k];
        const double e = fabs(s - 1);
        if (!(e <= worst)) /* NaN propagates */
            worst = e;
    }
    return worst;
}

double tw_transfer_position_error(const tw_transfer *P, const tw_mesh *c, const tw_mesh *f)
{
    double worst = 0;
    for (int i = 0; i < P->n_fine; i++) {
        double s[3] = {0, 0, 0};
        for (int k = 0; k < TW_HIER_ROW; k++) {
            const int j = P->idx[TW_HIER_ROW * i + k];
            for (int d = 0; d < 3; d++)
                s[d] += P->w[TW_HIER_ROW * i + k] * c->X[3 * j + d];
        }
        for (int d = 0; d < 3; d++) {
            const double e = fabs(s[d] - f->X[3 * i + d]);
            if (!(e <= worst))
                worst = e;
        }
    }
    return worst;
}

tw_bsr tw_hier_matrix_bsr(const tw_hier_matrix *M)
{
    tw_bsr b;
    memset(&b, 0, sizeof b);
    b.n = M->n;
    b.nnzb = M->nnzb;
    b.row_ptr = M->row_ptr;
    b.col = M->col;
    b.diag = M->diag;
    b.val = M->val;
    return b;
}

void tw_hier_matrix_free(tw_hier_matrix *M)
{
    if (!M)
        return;
    free(M->row_ptr);
    free(M->col);
    free(M->diag);
    free(M->val);
    memset(M, 0, sizeof *M);
}
