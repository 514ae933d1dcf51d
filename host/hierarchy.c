/* The mesh hierarchy's shared part: freeing, applying a transfer P and its
 * transpose, the checks of a transfer, and the owned block matrix. The level
 * builders are in hier_nested.c (1:8 refinement) and hier_nonnested.c
 * (independent meshes, point location). */
#include "hierarchy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "error.h"
#include "hd/hd.h"

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

tw_hierarchy *tw_hier_alloc(tw_hier_kind kind, int n_levels)
{
    tw_hierarchy *h = tw_calloc(1, sizeof *h, "hierarchy");
    if (!h)
        return NULL;
    h->kind = kind;
    h->n_levels = n_levels;
    h->level = tw_calloc((size_t)n_levels, sizeof *h->level, "hierarchy levels");
    h->P = tw_calloc(n_levels > 1 ? (size_t)n_levels - 1 : 1, sizeof *h->P, "hierarchy transfers");
    int ok = h->level && h->P;
    if (kind == TW_HIER_NESTED)
        ok = ok && (h->parent_tet = tw_calloc((size_t)n_levels, sizeof *h->parent_tet, "parent tets"));
    if (kind == TW_HIER_NONNESTED)
        ok = ok && (h->parent_vertex = tw_calloc((size_t)n_levels, sizeof *h->parent_vertex, "parent vertices"));
    if (!ok) {
        tw_hier_free(h);
        return NULL;
    }
    return h;
}

tw_mesh *tw_hier_copy_mesh(const tw_mesh *m)
{
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    tw_mesh *copy = tw_mesh_create(m->X, m->nv, m->tets, m->nt, m->region, &def, NULL);
    if (copy)
        memcpy(copy->name, m->name, sizeof copy->name);
    return copy;
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
        if (e != e) /* a NaN row is the worst: a later row must not replace it */
            return e;
        if (e > worst)
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
            if (e != e)
                return e;
            if (e > worst)
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

/* ---- the Galerkin product
 *
 * Ac_IJ = sum over fine i, j of P_iI A_ij P_jJ (each A_ij a 3x3 block, each
 * P entry a scalar). Row I of Ac is gathered from P^T's row I (the fine rows
 * that reach I, by increasing fine index), their rows of A in A's order, and
 * those columns' rows of P in P's order: the same terms in the same order
 * whatever the thread count, so the result is deterministic, with no
 * atomics. The sums are in double whatever tw_real is. Symmetric A gives a
 * symmetric Ac up to the rounding of the two sums' orders. */

tw_transfer_rows tw_transfer_rows_of(const tw_transfer *P)
{
    tw_transfer_rows r;
    r.n_fine = P->n_fine;
    r.n_coarse = P->n_coarse;
    r.ptr = NULL;
    r.idx = P->idx;
    r.w = P->w;
    return r;
}

static int row_begin(const tw_transfer_rows *P, int i) { return P->ptr ? P->ptr[i] : TW_HIER_ROW * i; }
static int row_end(const tw_transfer_rows *P, int i) { return P->ptr ? P->ptr[i + 1] : TW_HIER_ROW * (i + 1); }

/* P^T as CSR over the coarse vertices: the fine rows and weights of the
 * non-zero entries, by increasing fine index within a coarse row. */
typedef struct transposed {
    int *ptr, *fine;
    double *w;
} transposed;

static void transposed_free(transposed *T)
{
    free(T->ptr);
    free(T->fine);
    free(T->w);
}

static tw_status transpose_rows(const tw_transfer_rows *P, transposed *T)
{
    memset(T, 0, sizeof *T);
    size_t nnz = P->n_fine > 0 ? (size_t)row_end(P, P->n_fine - 1) : 0;
    T->ptr = tw_calloc((size_t)P->n_coarse + 1, sizeof(int), "transfer transpose");
    T->fine = tw_malloc(sizeof(int) * (nnz + 1), "transfer transpose");
    T->w = tw_malloc(sizeof(double) * (nnz + 1), "transfer transpose");
    if (!T->ptr || !T->fine || !T->w) {
        transposed_free(T);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i < P->n_fine; i++)
        for (int k = row_begin(P, i); k < row_end(P, i); k++) {
            int J = P->idx[k];
            if (J < 0 || J >= P->n_coarse) {
                transposed_free(T);
                return tw_fail(TW_ERR_INVALID, "transfer: fine vertex %d refers to coarse vertex %d, out of [0, %d)",
                               i, J, P->n_coarse);
            }
            if (P->w[k] != 0) T->ptr[J + 1]++;
        }
    for (int J = 0; J < P->n_coarse; J++) T->ptr[J + 1] += T->ptr[J];
    int *fill = tw_malloc(sizeof(int) * ((size_t)P->n_coarse + 1), "transfer transpose");
    if (!fill) {
        transposed_free(T);
        return TW_ERR_NOMEM;
    }
    memcpy(fill, T->ptr, sizeof(int) * (size_t)P->n_coarse);
    for (int i = 0; i < P->n_fine; i++)
        for (int k = row_begin(P, i); k < row_end(P, i); k++) {
            if (P->w[k] == 0) continue;
            int q = fill[P->idx[k]]++;
            T->fine[q] = i;
            T->w[q] = P->w[k];
        }
    free(fill);
    return TW_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The columns of Ac's row I into cols (unsorted; the diagonal first), with
 * mark[J] == I for each: returns how many. */
static int coarse_row_columns(const tw_transfer_rows *P, const tw_bsr *A, const transposed *T, int I, int *mark,
                              int *cols)
{
    int n = 0;
    mark[I] = I;
    cols[n++] = I;
    for (int q = T->ptr[I]; q < T->ptr[I + 1]; q++) {
        int i = T->fine[q];
        for (int b = A->row_ptr[i]; b < A->row_ptr[i + 1]; b++) {
            int j = A->col[b];
            for (int k = row_begin(P, j); k < row_end(P, j); k++) {
                int J = P->idx[k];
                if (P->w[k] == 0 || mark[J] == I) continue;
                mark[J] = I;
                cols[n++] = J;
            }
        }
    }
    return n;
}

static tw_status check_sizes(const tw_transfer_rows *P, const tw_bsr *A, const char *who)
{
    if (!P || !A || (P->n_fine > 0 && (!P->idx || !P->w)) || P->n_fine < 0 || P->n_coarse < 0)
        return tw_fail(TW_ERR_INVALID, "%s: null or empty transfer or matrix", who);
    if (A->n != P->n_fine)
        return tw_fail(TW_ERR_INVALID, "%s: the matrix has %d block rows, the transfer %d fine vertices", who, A->n,
                       P->n_fine);
    return TW_OK;
}

/* Per-thread scratch of n_coarse marks (-1) and columns. */
static int *scratch_marks(int n)
{
    int *m = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    if (m)
        for (int J = 0; J < n; J++) m[J] = -1;
    return m;
}

#ifdef _OPENMP
#define TW_HIER_THREADS(A) num_threads(TW_THREADS((A)->threads))
#else
#define TW_HIER_THREADS(A)
#endif

tw_status tw_transfer_rows_galerkin(const tw_transfer_rows *P, const tw_bsr *A, tw_hier_matrix *Ac)
{
    memset(Ac, 0, sizeof *Ac);
    tw_status st = check_sizes(P, A, "tw_transfer_rows_galerkin");
    if (st != TW_OK) return st;
    transposed T;
    if ((st = transpose_rows(P, &T)) != TW_OK) return st;
    int nc = P->n_coarse;
    Ac->n = nc;
    Ac->row_ptr = tw_calloc((size_t)nc + 1, sizeof(int), "Galerkin rows");
    Ac->diag = tw_malloc(sizeof(int) * ((size_t)nc + 1), "Galerkin diagonal");
    int failed = !Ac->row_ptr || !Ac->diag;
    /* the pattern: count, then fill and sort (each row by one thread) */
    for (int pass = 0; pass < 2 && !failed; pass++) {
#pragma omp parallel if (TW_PAR(nc)) TW_HIER_THREADS(A)
        {
            int *mark = scratch_marks(nc), *cols = mark ? mark + nc : NULL;
            if (!mark) {
#pragma omp atomic write
                failed = 1;
            }
#pragma omp for schedule(dynamic, 256)
            for (int I = 0; I < nc; I++) {
                if (!mark) continue;
                int cnt = coarse_row_columns(P, A, &T, I, mark, cols);
                if (pass == 0) {
                    Ac->row_ptr[I + 1] = cnt;
                    continue;
                }
                qsort(cols, (size_t)cnt, sizeof(int), cmp_int);
                memcpy(Ac->col + Ac->row_ptr[I], cols, sizeof(int) * (size_t)cnt);
                for (int q = 0; q < cnt; q++)
                    if (cols[q] == I) Ac->diag[I] = Ac->row_ptr[I] + q;
            }
            free(mark);
        }
        if (pass == 0 && !failed) {
            for (int I = 0; I < nc; I++) Ac->row_ptr[I + 1] += Ac->row_ptr[I];
            Ac->nnzb = Ac->row_ptr[nc];
            Ac->col = tw_malloc(sizeof(int) * ((size_t)Ac->nnzb + 1), "Galerkin columns");
            Ac->val = tw_malloc(sizeof(tw_real) * 9 * ((size_t)Ac->nnzb + 1), "Galerkin values");
            failed = !Ac->col || !Ac->val;
        }
    }
    transposed_free(&T);
    if (failed) {
        tw_hier_matrix_free(Ac);
        return tw_fail(TW_ERR_NOMEM, "tw_transfer_rows_galerkin: out of memory (%d coarse vertices)", nc);
    }
    st = tw_transfer_rows_galerkin_values(P, A, Ac);
    if (st != TW_OK) tw_hier_matrix_free(Ac);
    return st;
}

tw_status tw_transfer_rows_galerkin_values(const tw_transfer_rows *P, const tw_bsr *A, tw_hier_matrix *Ac)
{
    tw_status st = check_sizes(P, A, "tw_transfer_rows_galerkin_values");
    if (st != TW_OK) return st;
    if (Ac->n != P->n_coarse || !Ac->row_ptr)
        return tw_fail(TW_ERR_INVALID, "tw_transfer_rows_galerkin_values: the coarse matrix has %d rows, the transfer "
                       "%d coarse vertices", Ac->n, P->n_coarse);
    transposed T;
    if ((st = transpose_rows(P, &T)) != TW_OK) return st;
    int nc = P->n_coarse, widest = 0, failed = 0, missing = -1;
    for (int I = 0; I < nc; I++)
        if (Ac->row_ptr[I + 1] - Ac->row_ptr[I] > widest) widest = Ac->row_ptr[I + 1] - Ac->row_ptr[I];
#pragma omp parallel if (TW_PAR(nc)) TW_HIER_THREADS(A)
    {
        /* pos[J]: J's place in the current row (-1 elsewhere); acc: the row's sums */
        int *pos = scratch_marks(nc);
        double *acc = malloc(sizeof(double) * 9 * ((size_t)widest + 1));
        if (!pos || !acc) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 256)
        for (int I = 0; I < nc; I++) {
            if (!pos || !acc) continue;
            int r0 = Ac->row_ptr[I], len = Ac->row_ptr[I + 1] - r0;
            for (int q = 0; q < len; q++) pos[Ac->col[r0 + q]] = q;
            memset(acc, 0, sizeof(double) * 9 * (size_t)len);
            for (int t = T.ptr[I]; t < T.ptr[I + 1]; t++) {
                int i = T.fine[t];
                double wi = T.w[t];
                for (int b = A->row_ptr[i]; b < A->row_ptr[i + 1]; b++) {
                    int j = A->col[b];
                    const tw_real *a = A->val + 9 * (size_t)b;
                    for (int k = row_begin(P, j); k < row_end(P, j); k++) {
                        double wk = P->w[k];
                        if (wk == 0) continue;
                        int q = pos[P->idx[k]];
                        if (q < 0) {
#pragma omp critical(tw_galerkin_missing)
                            missing = I;
                            continue;
                        }
                        double s = wi * wk;
                        for (int e = 0; e < 9; e++) acc[9 * q + e] += s * (double)a[e];
                    }
                }
            }
            for (int q = 0; q < 9 * len; q++) Ac->val[9 * (size_t)r0 + q] = (tw_real)acc[q];
            for (int q = 0; q < len; q++) pos[Ac->col[r0 + q]] = -1;
        }
        free(pos);
        free(acc);
    }
    transposed_free(&T);
    if (failed) return tw_fail(TW_ERR_NOMEM, "tw_transfer_rows_galerkin_values: out of memory");
    if (missing >= 0)
        return tw_fail(TW_ERR_INVALID, "tw_transfer_rows_galerkin_values: coarse row %d reaches a column outside the "
                       "matrix's pattern (built for another transfer or pattern)", missing);
    return TW_OK;
}

tw_status tw_transfer_galerkin(const tw_transfer *P, const tw_bsr *A, tw_hier_matrix *Ac)
{
    if (!P) {
        memset(Ac, 0, sizeof *Ac);
        return tw_fail(TW_ERR_INVALID, "tw_transfer_galerkin: null transfer");
    }
    tw_transfer_rows r = tw_transfer_rows_of(P);
    return tw_transfer_rows_galerkin(&r, A, Ac);
}

/* ---- the covering-lattice kind */

tw_status tw_transfer_lattice(const tw_mesh *lattice, const tw_mesh *m, tw_transfer *P)
{
    memset(P, 0, sizeof *P);
    if (!lattice || !m || lattice->nt <= 0 || m->nv <= 0)
        return tw_fail(TW_ERR_INVALID, "tw_transfer_lattice: null or empty lattice or mesh");
    /* the mesh's vertices as a point set (no triangles) in the lattice */
    tw_surface pts;
    memset(&pts, 0, sizeof pts);
    pts.vertex_count = m->nv;
    pts.positions = m->X;
    tw_embedding *e = tw_embed_surface(lattice, &pts, 0, NULL);
    if (!e) return TW_ERR_INVALID; /* the message names the vertex outside */
    P->n_fine = m->nv;
    P->n_coarse = lattice->nv;
    P->idx = tw_malloc(sizeof(int) * TW_HIER_ROW * (size_t)m->nv, "lattice transfer");
    P->w = tw_malloc(sizeof(double) * TW_HIER_ROW * (size_t)m->nv, "lattice transfer");
    if (!P->idx || !P->w) {
        tw_embedding_destroy(e);
        tw_transfer_free(P);
        return TW_ERR_NOMEM;
    }
    const double *L = lattice->X;
    for (int i = 0; i < m->nv; i++) {
        /* the embedding's weights are float (a vertex buffer's); the tet's
         * weights again in double, as ratios of signed volumes */
        const int *t = lattice->tets + 4 * (size_t)e->tet[i];
        const double *p = m->X + 3 * (size_t)i;
        const double *a = L + 3 * (size_t)t[0], *b = L + 3 * (size_t)t[1], *c = L + 3 * (size_t)t[2],
                     *d = L + 3 * (size_t)t[3];
        double vol = tw_tet_det(a, b, c, d), *w = P->w + TW_HIER_ROW * (size_t)i;
        w[1] = tw_tet_det(a, p, c, d) / vol;
        w[2] = tw_tet_det(a, b, p, d) / vol;
        w[3] = tw_tet_det(a, b, c, p) / vol;
        w[0] = 1.0 - w[1] - w[2] - w[3];
        for (int k = 0; k < TW_HIER_ROW; k++) P->idx[TW_HIER_ROW * (size_t)i + k] = t[k];
    }
    tw_embedding_destroy(e);
    return TW_OK;
}
