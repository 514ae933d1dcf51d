/* The Galerkin products' lists (amg_lists.h). Each list is built in two
 * passes over amg.c's loops (count, then fill), visiting the products in
 * the order amg.c's level_prolongator, level_ap and level_coarse_operator
 * add them, so that a block's sum from its list is amg.c's sum. */
#include "amg_lists.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

void tw_amg_lists_free(tw_amg_lists *t)
{
    if (!t) return;
    free(t->p_row); free(t->pl_ptr); free(t->pl_k); free(t->pl_j); free(t->p0_self);
    free(t->ap_row); free(t->apl_ptr); free(t->apl_k); free(t->apl_kb);
    free(t->ac_row); free(t->acl_ptr); free(t->acl_p); free(t->acl_ap);
    memset(t, 0, sizeof *t);
}

static int *ints(size_t n) { return malloc(sizeof(int) * (n + 1)); }

/* block of row `row` of (ptr, col) with column c, -1 when none */
static int find_block(const int *ptr, const int *col, int row, int c)
{
    for (int k = ptr[row]; k < ptr[row + 1]; k++)
        if (col[k] == c) return k;
    return -1;
}

tw_status tw_amg_lists_build(const int *gptr, const int *gcol, const tw_amg_level_view *l,
                             const tw_amg_level_view *c, tw_amg_lists *t)
{
    memset(t, 0, sizeof *t);
    int nn = l->nnode, nc = c->nnode, np = l->p_nnzb, nap = l->ap_nnzb, nac = c->nnzb;
    int *pos = ints((size_t)nc), *fill = NULL;
    t->p_row = ints((size_t)np); t->pl_ptr = ints((size_t)np + 1); t->p0_self = ints((size_t)np);
    t->ap_row = ints((size_t)nap); t->apl_ptr = ints((size_t)nap + 1);
    t->ac_row = ints((size_t)nac); t->acl_ptr = ints((size_t)nac + 1);
    if (!pos || !t->p_row || !t->pl_ptr || !t->p0_self || !t->ap_row || !t->apl_ptr || !t->ac_row || !t->acl_ptr)
        goto nomem;
    for (int a = 0; a < nc; a++) pos[a] = -1;
    /* P: level_prolongator's row i, block by block */
    memset(t->pl_ptr, 0, sizeof(int) * ((size_t)np + 1));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < nn; i++) {
            if (l->p_ptr[i] == l->p_ptr[i + 1]) continue;
            for (int k = gptr[i]; k < gptr[i + 1]; k++) {
                int j = gcol[k];
                if (l->p0_ptr[j] == l->p0_ptr[j + 1]) continue;
                int q = find_block(l->p_ptr, l->p_col, i, l->p0_col[l->p0_ptr[j]]);
                if (q < 0) goto invalid;
                if (!pass) { t->pl_ptr[q + 1]++; continue; }
                int u = t->pl_ptr[q] + fill[q]++;
                t->pl_k[u] = k;
                t->pl_j[u] = j;
            }
        }
        if (!pass) {
            for (int q = 0; q < np; q++) t->pl_ptr[q + 1] += t->pl_ptr[q];
            t->pl_k = ints((size_t)t->pl_ptr[np]);
            t->pl_j = ints((size_t)t->pl_ptr[np]);
            fill = calloc((size_t)np + 1, sizeof(int));
            if (!t->pl_k || !t->pl_j || !fill) goto nomem;
        }
    }
    free(fill);
    fill = NULL;
    for (int i = 0; i < nn; i++)
        for (int q = l->p_ptr[i]; q < l->p_ptr[i + 1]; q++) {
            t->p_row[q] = i;
            int own = l->p0_ptr[i] < l->p0_ptr[i + 1] && l->p0_col[l->p0_ptr[i]] == l->p_col[q];
            t->p0_self[q] = own ? l->p0_ptr[i] : -1;
        }
    for (int a = 0; a < nc; a++) pos[a] = -1;
    /* A P: level_ap's row i */
    memset(t->apl_ptr, 0, sizeof(int) * ((size_t)nap + 1));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < nn; i++) {
            for (int e = l->ap_ptr[i]; e < l->ap_ptr[i + 1]; e++) pos[l->ap_col[e]] = e;
            for (int k = gptr[i]; k < gptr[i + 1]; k++) {
                int j = gcol[k];
                for (int kb = l->p_ptr[j]; kb < l->p_ptr[j + 1]; kb++) {
                    int e = pos[l->p_col[kb]];
                    if (e < l->ap_ptr[i] || e >= l->ap_ptr[i + 1]) goto invalid;
                    if (!pass) { t->apl_ptr[e + 1]++; continue; }
                    int u = t->apl_ptr[e] + fill[e]++;
                    t->apl_k[u] = k;
                    t->apl_kb[u] = kb;
                }
            }
            for (int e = l->ap_ptr[i]; e < l->ap_ptr[i + 1]; e++) {
                pos[l->ap_col[e]] = -1;
                t->ap_row[e] = i;
            }
        }
        if (!pass) {
            for (int e = 0; e < nap; e++) t->apl_ptr[e + 1] += t->apl_ptr[e];
            t->apl_k = ints((size_t)t->apl_ptr[nap]);
            t->apl_kb = ints((size_t)t->apl_ptr[nap]);
            fill = calloc((size_t)nap + 1, sizeof(int));
            if (!t->apl_k || !t->apl_kb || !fill) goto nomem;
        }
    }
    free(fill);
    fill = NULL;
    /* P^T A P: level_coarse_operator's row a, its blocks on or right of the diagonal */
    memset(t->acl_ptr, 0, sizeof(int) * ((size_t)nac + 1));
    for (int pass = 0; pass < 2; pass++) {
        for (int a = 0; a < nc; a++) {
            for (int e = c->ptr[a]; e < c->ptr[a + 1]; e++) pos[c->col[e]] = e;
            for (int kt = l->pt_ptr[a]; kt < l->pt_ptr[a + 1]; kt++) {
                int i = l->pt_col[kt];
                for (int k = l->ap_ptr[i]; k < l->ap_ptr[i + 1]; k++) {
                    int b = l->ap_col[k];
                    if (b < a) continue;
                    int e = pos[b];
                    if (e < c->ptr[a] || e >= c->ptr[a + 1]) goto invalid;
                    if (!pass) { t->acl_ptr[e + 1]++; continue; }
                    int u = t->acl_ptr[e] + fill[e]++;
                    t->acl_p[u] = l->pt_map[kt];
                    t->acl_ap[u] = k;
                }
            }
            for (int e = c->ptr[a]; e < c->ptr[a + 1]; e++) {
                pos[c->col[e]] = -1;
                t->ac_row[e] = a;
            }
        }
        if (!pass) {
            for (int e = 0; e < nac; e++) t->acl_ptr[e + 1] += t->acl_ptr[e];
            t->acl_p = ints((size_t)t->acl_ptr[nac]);
            t->acl_ap = ints((size_t)t->acl_ptr[nac]);
            fill = calloc((size_t)nac + 1, sizeof(int));
            if (!t->acl_p || !t->acl_ap || !fill) goto nomem;
        }
    }
    free(fill);
    free(pos);
    t->entries = (long)t->pl_ptr[np] + t->apl_ptr[nap] + t->acl_ptr[nac];
    return TW_OK;
invalid:
    free(fill);
    free(pos);
    tw_amg_lists_free(t);
    return tw_fail(TW_ERR_INVALID, "amg_lists.c: a product lands outside its output's pattern (levels of %d and %d "
                                   "nodes)", nn, nc);
nomem:
    free(fill);
    free(pos);
    tw_amg_lists_free(t);
    return tw_fail(TW_ERR_NOMEM, "amg_lists.c: out of memory for the Galerkin product lists (levels of %d and %d "
                                 "nodes)", nn, nc);
}
