/* The hierarchical-basis corotated simulation (Hauth and Straßer, "Corotational
 * simulation of deformable solids", WSCG 2004); the design is at the top of
 * hier_basis.h.
 *
 * Layout: the finest level's tw_fem (its BSR pattern, gather lists, lumped
 * mass) holds the offsets' corotated blocks R K_e R^T; the coarsest level's
 * tw_fem holds the coarse block (the StVK tangent's form with A = F_T - R in
 * place of F) on the coarse vertices' rows (a vertex keeps its index on
 * every finer level, so coarse vertex i is finest vertex i); a rectangular
 * pattern (finest rows, coarse columns) holds their coupling. With one level
 * the finest and coarsest level are the same mesh and the three parts add up
 * to the StVK tangent; the solve is block-Jacobi PCG as the world's.
 *
 * Matrices are assembled per block from the gather lists in a fixed order;
 * forces are scattered in element order: the result does not depend on a
 * thread count (the loops are serial). */
#include "hier_basis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fem.h"
#include "hd/element.h"
#include "hd/math3.h"
#include "mesh.h"
#include "solver.h"
#include "world.h" /* tw_now_ms */

struct tw_hb {
    const tw_hierarchy *h;
    tw_hb_def def;
    int L, nf, nc;
    tw_fem ff, fc_own;   /* finest level; coarsest level when L > 1 */
    const tw_fem *fc;    /* the coarsest level: &fc_own, or &ff when L == 1 */
    int *anc;            /* per finest tet: the coarse tet it refines */
    double *X, *x, *v, *fext, *fpoint; /* 3 nf: rest, state, point forces + gravity, point forces */
    double *mass, *mass_c; /* nf lumped mass; nc: the coarse vertices' hierarchical lumped mass */
    unsigned char *cons; /* nf: 1 pinned */
    double size;         /* bounding-box diagonal, m */
    double time;
    /* per evaluation */
    double *Rc, *Ac, *Qc; /* 9 per coarse tet: R = polar(F_T), A = F_T - R, Q = G(F_T) - (sym(R^T F_T) - I) */
    double *Sc;          /* 9 per coarse tet: sum over its finest tets of V_e sigma_e */
    int *cp_ptr, *cp_col; /* the coupling's pattern: per finest vertex, the coarse vertices of its tets' coarse tets */
    int *cp_blk;         /* 16 per finest tet: block of (finest corner p, coarse corner a) */
    double *Cv;          /* 9 per coupling block */
    tw_real *pkf;        /* TW_COROT_PACK per finest tet */
    tw_real *pkg, *pkp;  /* TW_GREEN_PACK per coarse tet: A's (Acorr), F_T's (Apc) */
    /* the system: A v = Af v + Acorr v_c + C v_c + C^T v */
    double ck;
    double *Af;          /* 9 per finest block */
    double *Acorr;       /* 9 per coarse block */
    double *Apc;         /* 9 per coarse block: the preconditioner's coarse system */
    double *Dinv;        /* 9 per finest vertex: the offsets' (or, L == 1, all) diagonal inverses */
    double *Dall;        /* 9 per finest vertex: block-Jacobi's inverses (two-level, Jacobi) */
    double *Drest;       /* 9 per finest vertex: rest-state diagonal blocks of intermediate levels' offsets */
    /* solver scratch (3 nf) */
    double *r, *z, *zp, *p, *q, *y, *b, *vn, *dv, *vt, *G, *xk, *f;
    double *yc, *zc;     /* 3 nc */
    unsigned char *cons_c;
    tw_solver_work_d cwork;
    double *chol;        /* (3 nc)^2: the coarse system's Cholesky factor (dense, when small) */
    int *chol_first;     /* 3 nc: the first column of each row's envelope (the factor keeps it) */
    int *chol_pos;       /* nc: a coarse vertex's place in the factor's order (reverse Cuthill-McKee) */
    int chol_ok, chol_age;
    int coarse_iters;
};

tw_hb_def tw_default_hb_def(void)
{
    tw_hb_def d;
    memset(&d, 0, sizeof d);
    d.youngs_modulus = 1e6;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.dt = 0.01;
    d.damping_stiffness = 0.01;
    d.cg_tolerance = 1e-4;
    d.cg_max_iterations = 1000;
    d.newton_iterations = 1;
    d.newton_tolerance = 1e-3;
    d.coarse_green = 1;
    d.coarse_tolerance = 1e-8;
    d.coarse_refresh = 1;
    d.precond = TW_HB_PRECOND_TWO_LEVEL;
    return d;
}


/* ------------------------------------------------------ hierarchical basis */

void tw_hb_to_hierarchical(const tw_hierarchy *h, const double *x, double *y)
{
    const int nf = h->level[h->n_levels - 1]->nv;
    memcpy(y, x, 3 * (size_t)nf * sizeof *y);
    /* every offset reads nodal values only (x), so the order does not matter */
    for (int l = 1; l < h->n_levels; l++) {
        const tw_transfer *P = &h->P[l - 1];
        for (int v = P->n_coarse; v < P->n_fine; v++)
            for (int k = 0; k < TW_HIER_ROW; k++) {
                const int j = P->idx[TW_HIER_ROW * (size_t)v + k];
                const double w = P->w[TW_HIER_ROW * (size_t)v + k];
                for (int c = 0; c < 3; c++) y[3 * (size_t)v + c] -= w * x[3 * (size_t)j + c];
            }
    }
}

void tw_hb_to_nodal(const tw_hierarchy *h, const double *y, double *x)
{
    const int nf = h->level[h->n_levels - 1]->nv;
    memcpy(x, y, 3 * (size_t)nf * sizeof *x);
    /* coarse to fine: a new vertex's parents are final before it is read */
    for (int l = 1; l < h->n_levels; l++) {
        const tw_transfer *P = &h->P[l - 1];
        for (int v = P->n_coarse; v < P->n_fine; v++)
            for (int k = 0; k < TW_HIER_ROW; k++) {
                const int j = P->idx[TW_HIER_ROW * (size_t)v + k];
                const double w = P->w[TW_HIER_ROW * (size_t)v + k];
                for (int c = 0; c < 3; c++) x[3 * (size_t)v + c] += w * x[3 * (size_t)j + c];
            }
    }
}

/* y = S^T y in place (the transpose of tw_hb_to_nodal: fine to coarse). */
static void hb_transpose_in_place(const tw_hierarchy *h, double *y)
{
    for (int l = h->n_levels - 1; l >= 1; l--) {
        const tw_transfer *P = &h->P[l - 1];
        for (int v = P->n_fine - 1; v >= P->n_coarse; v--)
            for (int k = 0; k < TW_HIER_ROW; k++) {
                const int j = P->idx[TW_HIER_ROW * (size_t)v + k];
                const double w = P->w[TW_HIER_ROW * (size_t)v + k];
                for (int c = 0; c < 3; c++) y[3 * (size_t)j + c] += w * y[3 * (size_t)v + c];
            }
    }
}

/* y = S y in place. */
static void hb_nodal_in_place(const tw_hierarchy *h, double *y)
{
    for (int l = 1; l < h->n_levels; l++) {
        const tw_transfer *P = &h->P[l - 1];
        for (int v = P->n_coarse; v < P->n_fine; v++)
            for (int k = 0; k < TW_HIER_ROW; k++) {
                const int j = P->idx[TW_HIER_ROW * (size_t)v + k];
                const double w = P->w[TW_HIER_ROW * (size_t)v + k];
                for (int c = 0; c < 3; c++) y[3 * (size_t)v + c] += w * y[3 * (size_t)j + c];
            }
    }
}

/* -------------------------------------------------------------- creation */

void tw_hb_destroy(tw_hb *hb)
{
    if (!hb) return;
    tw_fem_free(&hb->ff);
    if (hb->fc == &hb->fc_own) tw_fem_free(&hb->fc_own);
    tw_solver_work_free_d(&hb->cwork);
    free(hb->anc); free(hb->X); free(hb->x); free(hb->v); free(hb->fext); free(hb->fpoint);
    free(hb->mass); free(hb->mass_c); free(hb->cons); free(hb->Rc); free(hb->Ac); free(hb->Qc); free(hb->Sc);
    free(hb->cp_ptr); free(hb->cp_col); free(hb->cp_blk); free(hb->Cv); free(hb->pkf); free(hb->pkg); free(hb->pkp); free(hb->Af); free(hb->Acorr); free(hb->Apc); free(hb->Dinv); free(hb->Dall); free(hb->Drest);
    free(hb->r); free(hb->z); free(hb->zp); free(hb->p); free(hb->q); free(hb->y); free(hb->b); free(hb->vn);
    free(hb->dv); free(hb->vt); free(hb->G); free(hb->xk); free(hb->f); free(hb->yc); free(hb->zc);
    free(hb->cons_c);
    free(hb->chol);
    free(hb->chol_first);
    free(hb->chol_pos);
    free(hb);
}

static void refresh_fext(tw_hb *hb)
{
    for (int i = 0; i < hb->nf; i++)
        for (int c = 0; c < 3; c++)
            hb->fext[3 * (size_t)i + c] = hb->fpoint[3 * (size_t)i + c] + hb->mass[i] * hb->def.gravity[c];
}

static void inverse3(const double *a, double *out)
{
    const double d = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                     a[2] * (a[3] * a[7] - a[4] * a[6]);
    if (!(fabs(d) > 0) || !isfinite(d)) { /* identity where singular, as block-Jacobi does */
        memset(out, 0, 9 * sizeof *out);
        out[0] = out[4] = out[8] = 1;
        return;
    }
    const double id = 1 / d;
    out[0] = (a[4] * a[8] - a[5] * a[7]) * id;
    out[1] = (a[2] * a[7] - a[1] * a[8]) * id;
    out[2] = (a[1] * a[5] - a[2] * a[4]) * id;
    out[3] = (a[5] * a[6] - a[3] * a[8]) * id;
    out[4] = (a[0] * a[8] - a[2] * a[6]) * id;
    out[5] = (a[2] * a[3] - a[0] * a[5]) * id;
    out[6] = (a[3] * a[7] - a[4] * a[6]) * id;
    out[7] = (a[1] * a[6] - a[0] * a[7]) * id;
    out[8] = (a[0] * a[4] - a[1] * a[3]) * id;
}

/* The offsets of intermediate levels (1 .. L-2) have the level's hat
 * functions as basis functions: their diagonal blocks are those of the
 * Galerkin operators P^T A P down the levels. Computed once from the rest
 * operator cm M + ck K (the preconditioner's only use of them). */
static tw_status rest_diagonals(tw_hb *hb, double cm, double ck)
{
    const tw_hierarchy *h = hb->h;
    if (hb->L < 3) return TW_OK;
    const tw_fem *f = &hb->ff;
    tw_real *val = tw_malloc(9 * (size_t)f->nnzb * sizeof *val, "rest operator");
    if (!val) return TW_ERR_NOMEM;
    for (int b = 0; b < f->nnzb; b++)
        for (int k = 0; k < 9; k++) val[9 * (size_t)b + k] = (tw_real)(ck * f->K[9 * (size_t)b + k]);
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) val[9 * (size_t)f->diag[i] + 4 * c] += (tw_real)(cm * f->mass[i]);
    tw_bsr A = {f->n, f->nnzb, f->row_ptr, f->col, f->diag, val, 1};
    tw_hier_matrix M[2];
    memset(M, 0, sizeof M);
    int cur = -1;
    tw_status s = TW_OK;
    for (int l = hb->L - 2; l >= 1 && s == TW_OK; l--) {
        const int nxt = cur < 0 ? 0 : 1 - cur;
        tw_bsr src = cur < 0 ? A : tw_hier_matrix_bsr(&M[cur]);
        s = tw_transfer_galerkin(&h->P[l], &src, &M[nxt]);
        if (s != TW_OK) break;
        if (cur >= 0) tw_hier_matrix_free(&M[cur]);
        cur = nxt;
        const tw_hier_matrix *Al = &M[cur];
        for (int v = h->P[l - 1].n_coarse; v < h->P[l - 1].n_fine; v++)
            for (int k = 0; k < 9; k++) hb->Drest[9 * (size_t)v + k] = Al->val[9 * (size_t)Al->diag[v] + k];
    }
    if (cur >= 0) tw_hier_matrix_free(&M[cur]);
    free(val);
    return s;
}

/* The coupling's pattern: row i (a finest vertex) holds the corners of the
 * coarse tets its finest tets refine, in ascending order. */
static tw_status coupling_pattern(tw_hb *hb)
{
    const tw_fem *ff = &hb->ff, *fc = hb->fc;
    int *mark = malloc((size_t)hb->nc * sizeof *mark);
    hb->cp_ptr = calloc((size_t)hb->nf + 1, sizeof *hb->cp_ptr);
    hb->cp_blk = malloc(16 * (size_t)ff->nt * sizeof *hb->cp_blk);
    if (!mark || !hb->cp_ptr || !hb->cp_blk) {
        free(mark);
        return tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory (coupling pattern)");
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int a = 0; a < hb->nc; a++) mark[a] = -1;
        int nnz = 0;
        for (int i = 0; i < hb->nf; i++) {
            const int start = nnz;
            for (int k = ff->vt_ptr[i]; k < ff->vt_ptr[i + 1]; k++) {
                const int *tc = fc->tets + 4 * (size_t)hb->anc[ff->vt[k] >> 2];
                for (int a = 0; a < 4; a++)
                    if (mark[tc[a]] < start) {
                        mark[tc[a]] = nnz;
                        if (pass) hb->cp_col[nnz] = tc[a];
                        nnz++;
                    }
            }
            if (pass) { /* ascending columns, then the marks point at the sorted slots */
                for (int u = start + 1; u < nnz; u++)
                    for (int w = u; w > start && hb->cp_col[w - 1] > hb->cp_col[w]; w--) {
                        const int t = hb->cp_col[w];
                        hb->cp_col[w] = hb->cp_col[w - 1];
                        hb->cp_col[w - 1] = t;
                    }
                for (int u = start; u < nnz; u++) mark[hb->cp_col[u]] = u;
                for (int k = ff->vt_ptr[i]; k < ff->vt_ptr[i + 1]; k++) {
                    const int e = ff->vt[k] >> 2, p = ff->vt[k] & 3;
                    const int *tc = fc->tets + 4 * (size_t)hb->anc[e];
                    for (int a = 0; a < 4; a++) hb->cp_blk[16 * (size_t)e + 4 * p + a] = mark[tc[a]];
                }
            } else {
                hb->cp_ptr[i + 1] = nnz;
            }
        }
        if (!pass) {
            hb->cp_col = malloc((size_t)nnz * sizeof *hb->cp_col);
            hb->Cv = calloc(9 * (size_t)nnz, sizeof *hb->Cv);
            if (!hb->cp_col || !hb->Cv) {
                free(mark);
                return tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory (coupling of %d blocks)", nnz);
            }
        }
    }
    free(mark);
    return TW_OK;
}

/* The coarse factor's order: reverse Cuthill-McKee on the coarse vertex
 * graph (breadth first from a vertex of least degree, neighbours by
 * increasing degree, each component in turn, reversed), which keeps the
 * envelope narrow whatever the mesh's numbering; and each row's envelope. */
static tw_status coarse_order(tw_hb *hb)
{
    const tw_fem *fc = hb->fc;
    const int nc = hb->nc;
    int *order = malloc((size_t)nc * sizeof *order), *seen = calloc((size_t)nc, sizeof *seen);
    if (!order || !seen) {
        free(order);
        free(seen);
        return tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory (coarse order)");
    }
    int head = 0, tail = 0;
    while (tail < nc) {
        int start = -1;
        for (int i = 0; i < nc; i++)
            if (!seen[i] && (start < 0 || fc->row_ptr[i + 1] - fc->row_ptr[i] < fc->row_ptr[start + 1] - fc->row_ptr[start]))
                start = i;
        seen[start] = 1;
        order[tail++] = start;
        while (head < tail) {
            const int v = order[head++], first = tail;
            for (int b = fc->row_ptr[v]; b < fc->row_ptr[v + 1]; b++) {
                const int u = fc->col[b];
                if (seen[u]) continue;
                seen[u] = 1;
                order[tail++] = u;
            }
            for (int a = first + 1; a < tail; a++) /* by increasing degree */
                for (int c = a; c > first; c--) {
                    const int du = fc->row_ptr[order[c] + 1] - fc->row_ptr[order[c]];
                    const int dw = fc->row_ptr[order[c - 1] + 1] - fc->row_ptr[order[c - 1]];
                    if (dw <= du) break;
                    const int t = order[c];
                    order[c] = order[c - 1];
                    order[c - 1] = t;
                }
        }
    }
    for (int k = 0; k < nc; k++) hb->chol_pos[order[nc - 1 - k]] = k;
    for (int i = 0; i < nc; i++) {
        int lo = hb->chol_pos[i];
        for (int b = fc->row_ptr[i]; b < fc->row_ptr[i + 1]; b++)
            if (hb->chol_pos[fc->col[b]] < lo) lo = hb->chol_pos[fc->col[b]];
        for (int r = 0; r < 3; r++) hb->chol_first[3 * hb->chol_pos[i] + r] = 3 * lo;
    }
    free(order);
    free(seen);
    return TW_OK;
}

tw_hb *tw_hb_create(const tw_hierarchy *h, const tw_hb_def *def)
{
    if (!h || h->kind != TW_HIER_NESTED || h->n_levels < 1) {
        tw_fail(TW_ERR_INVALID, "tw_hb_create: nested levels needed (tw_hier_nested)");
        return NULL;
    }
    if (!(def->dt > 0) || !(def->cg_tolerance > 0 && def->cg_tolerance < 1) || def->cg_max_iterations < 1 || def->coarse_refresh < 1 ||
        def->newton_iterations < 1 || !(def->coarse_tolerance > 0 && def->coarse_tolerance < 1)) {
        tw_fail(TW_ERR_INVALID, "tw_hb_create: dt %g, cg tolerance %g, cg max %d, Newton iterations %d, coarse "
                "tolerance %g out of range", def->dt, def->cg_tolerance, def->cg_max_iterations,
                def->newton_iterations, def->coarse_tolerance);
        return NULL;
    }
    tw_hb *hb = calloc(1, sizeof *hb);
    if (!hb) {
        tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory");
        return NULL;
    }
    hb->h = h;
    hb->def = *def;
    hb->L = h->n_levels;
    const tw_mesh *mf = h->level[hb->L - 1], *mc = h->level[0];
    hb->nf = mf->nv;
    hb->nc = mc->nv;
    tw_status s = tw_fem_build(&hb->ff, mf, def->youngs_modulus, def->poisson_ratio, def->density, NULL, NULL, NULL);
    if (s != TW_OK) goto fail;
    if (hb->L > 1) {
        s = tw_fem_build(&hb->fc_own, mc, def->youngs_modulus, def->poisson_ratio, def->density, NULL, NULL, NULL);
        if (s != TW_OK) goto fail;
        hb->fc = &hb->fc_own;
    } else {
        hb->fc = &hb->ff;
    }
    const size_t n3 = 3 * (size_t)hb->nf, ntf = (size_t)mf->nt, ntc = (size_t)mc->nt;
    const size_t nbf = (size_t)hb->ff.nnzb, nbc = (size_t)hb->fc->nnzb;
    hb->anc = malloc(ntf * sizeof *hb->anc);
    double **vec3[] = {&hb->X, &hb->x, &hb->v, &hb->fext, &hb->fpoint, &hb->r, &hb->z, &hb->zp, &hb->p, &hb->q,
                       &hb->y, &hb->b, &hb->vn, &hb->dv, &hb->vt, &hb->G, &hb->xk, &hb->f};
    int ok = hb->anc != NULL;
    for (size_t k = 0; k < sizeof vec3 / sizeof *vec3; k++) ok &= (*vec3[k] = calloc(n3, sizeof(double))) != NULL;
    hb->mass = calloc((size_t)hb->nf, sizeof *hb->mass);
    hb->mass_c = calloc((size_t)hb->nc, sizeof *hb->mass_c);
    hb->cons = calloc((size_t)hb->nf, 1);
    hb->cons_c = calloc((size_t)hb->nc, 1);
    double **per_coarse[] = {&hb->Rc, &hb->Ac, &hb->Qc, &hb->Sc};
    for (size_t k = 0; k < sizeof per_coarse / sizeof *per_coarse; k++)
        ok &= (*per_coarse[k] = calloc(9 * ntc, sizeof(double))) != NULL;
    hb->pkf = calloc(TW_COROT_PACK * ntf, sizeof *hb->pkf);
    hb->pkg = calloc(TW_GREEN_PACK * ntc, sizeof *hb->pkg);
    hb->pkp = calloc(TW_GREEN_PACK * ntc, sizeof *hb->pkp);
    hb->Af = calloc(9 * nbf, sizeof *hb->Af);
    hb->Acorr = calloc(9 * nbc, sizeof *hb->Acorr);
    hb->Apc = calloc(9 * nbc, sizeof *hb->Apc);
    hb->Dinv = calloc(9 * (size_t)hb->nf, sizeof *hb->Dinv);
    hb->Drest = calloc(9 * (size_t)hb->nf, sizeof *hb->Drest);
    hb->Dall = calloc(9 * (size_t)hb->nf, sizeof *hb->Dall);
    hb->yc = calloc(3 * (size_t)hb->nc, sizeof *hb->yc);
    hb->zc = calloc(3 * (size_t)hb->nc, sizeof *hb->zc);
    ok &= hb->mass && hb->mass_c && hb->cons && hb->cons_c && hb->pkf && hb->pkg && hb->pkp && hb->Af && hb->Acorr && hb->Apc && hb->Dinv && hb->Dall && hb->Drest && hb->yc && hb->zc;
    if (!ok || tw_solver_work_init_d(&hb->cwork, hb->nc) != TW_OK) {
        s = tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory (%d vertices, %zu tets)", hb->nf, ntf);
        goto fail;
    }
    /* the children of tet e are tets 8e .. 8e + 7 of the next level */
    for (size_t e = 0; e < ntf; e++) hb->anc[e] = (int)(e >> (3 * (hb->L - 1)));
    if ((s = coupling_pattern(hb)) != TW_OK) goto fail;
    if (3 * (size_t)hb->nc <= TW_HB_DENSE_COARSE && hb->L > 1 &&
        (!(hb->chol = malloc(9 * (size_t)hb->nc * hb->nc * sizeof *hb->chol)) ||
         !(hb->chol_first = malloc(3 * (size_t)hb->nc * sizeof *hb->chol_first)) ||
         !(hb->chol_pos = malloc((size_t)hb->nc * sizeof *hb->chol_pos)))) {
        s = tw_fail(TW_ERR_NOMEM, "tw_hb_create: out of memory (coarse factor of %d vertices)", hb->nc);
        goto fail;
    }
    if (hb->chol && (s = coarse_order(hb)) != TW_OK) goto fail;
    memcpy(hb->X, mf->X, n3 * sizeof(double));
    memcpy(hb->x, mf->X, n3 * sizeof(double));
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < hb->nf; i++) {
        hb->mass[i] = hb->ff.mass[i];
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], hb->X[3 * (size_t)i + c]);
            hi[c] = fmax(hi[c], hb->X[3 * (size_t)i + c]);
        }
    }
    hb->size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                    (hi[2] - lo[2]) * (hi[2] - lo[2]));
    /* the coarse vertices' lumped mass in the hierarchical basis: S^T m */
    double *m3 = hb->y;
    for (int i = 0; i < hb->nf; i++) m3[3 * (size_t)i] = hb->mass[i], m3[3 * (size_t)i + 1] = m3[3 * (size_t)i + 2] = 0;
    hb_transpose_in_place(h, m3);
    for (int i = 0; i < hb->nc; i++) hb->mass_c[i] = m3[3 * (size_t)i];
    refresh_fext(hb);
    const double hstep = def->dt;
    if ((s = rest_diagonals(hb, 1 + hstep * def->damping_mass, hstep * hstep + hstep * def->damping_stiffness)) !=
        TW_OK)
        goto fail;
    return hb;
fail:
    tw_hb_destroy(hb);
    return NULL;
}

int tw_hb_pin_where(tw_hb *hb, int axis, int less, double value)
{
    int n = 0;
    for (int i = 0; i < hb->nf; i++) {
        const double c = hb->X[3 * (size_t)i + axis];
        if (less ? c < value : c > value) hb->cons[i] = 1;
        n += hb->cons[i] != 0;
    }
    for (int i = 0; i < hb->nc; i++) hb->cons_c[i] = hb->cons[i];
    return n;
}

tw_status tw_hb_set_force(tw_hb *hb, int vertex, const double f[3])
{
    if (vertex < 0 || vertex >= hb->nf || !isfinite(f[0]) || !isfinite(f[1]) || !isfinite(f[2]))
        return tw_fail(TW_ERR_INVALID, "tw_hb_set_force: vertex %d (of %d) or force (%g, %g, %g) invalid", vertex,
                       hb->nf, f[0], f[1], f[2]);
    for (int c = 0; c < 3; c++) {
        hb->fpoint[3 * (size_t)vertex + c] = f[c];
        hb->fext[3 * (size_t)vertex + c] = f[c] + hb->mass[vertex] * hb->def.gravity[c];
    }
    return TW_OK;
}

double *tw_hb_x(tw_hb *hb) { return hb->x; }
double *tw_hb_v(tw_hb *hb) { return hb->v; }
int tw_hb_vertex_count(const tw_hb *hb) { return hb->nf; }
double tw_hb_time(const tw_hb *hb) { return hb->time; }

/* ------------------------------------------------------ forces and system */

/* 3x3 in double, row-major. */
static void m3_mul(const double *a, const double *b, double *c)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}
static void m3_tmul(const double *a, const double *b, double *c) /* a^T b */
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
}
static void m3_sym(double *a)
{
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) a[3 * i + j] = a[3 * j + i] = 0.5 * (a[3 * i + j] + a[3 * j + i]);
}
/* Hooke: sigma = 2 mu eps + lambda tr(eps) I; returns psi = mu eps:eps + lambda/2 tr^2 */
static double hooke(const double *eps, double lam, double mu, double *sig)
{
    const double tr = eps[0] + eps[4] + eps[8];
    double ee = 0;
    for (int k = 0; k < 9; k++) {
        sig[k] = 2 * mu * eps[k];
        ee += eps[k] * eps[k];
    }
    sig[0] += lam * tr, sig[4] += lam * tr, sig[8] += lam * tr;
    return mu * ee + 0.5 * lam * tr * tr;
}
/* sum_p x_p g_p^T over the tet t (gradients g, 12) minus rest when X given: F - I */
static void grad_of(const double *x, const double *X, const int *t, const tw_real *g, double *G)
{
    memset(G, 0, 9 * sizeof *G);
    for (int p = 0; p < 4; p++) {
        const size_t k = 3 * (size_t)t[p];
        for (int i = 0; i < 3; i++) {
            const double u = X ? x[k + i] - X[k + i] : x[k + i];
            for (int j = 0; j < 3; j++) G[3 * i + j] += u * (double)g[3 * p + j];
        }
    }
}
/* f_p -= M g_p for the 4 corners of t (M a 3x3 that includes the volume) */
static void scatter(double *f, const int *t, const tw_real *g, const double *M, double scale)
{
    for (int p = 0; p < 4; p++) {
        const double g0 = g[3 * p], g1 = g[3 * p + 1], g2 = g[3 * p + 2];
        double *fp = f + 3 * (size_t)t[p];
        for (int i = 0; i < 3; i++) fp[i] += scale * (M[3 * i] * g0 + M[3 * i + 1] * g1 + M[3 * i + 2] * g2);
    }
}

/* Energy and force (into f, 3 nf) at x, and the per-tet data the system
 * reads (the rotations R, A = F_c - R, the coarse tets' summed stress).
 *
 * Strain of a finest tet e in coarse tet T: the hierarchical basis splits
 * x = P c + d, so F_e = F_T + grad d, and the strain is Green's of the
 * coarse part plus the corotated linear strain of the offsets:
 *   eps_e = G(F_T) + sym(R_T^T (F_e - F_T)) = [sym(R_T^T F_e) - I] + Q_T,
 *   Q_T = G(F_T) - (sym(R_T^T F_T) - I) = (U_T - I)^2 / 2,  F_T = R_T U_T
 * (Q_T = 0 when coarse_green is off: the corotated strain with the coarse
 * rotation). psi = mu eps:eps + lambda/2 tr(eps)^2 >= 0 per tet, so E is
 * bounded below whatever the levels do. With R held (the corotational
 * approximation), d eps = sym(R^T dF_e) + sym(A^T dF_T), A = F_T - R, and
 *   f_p (finest corner p of e) = -V_e R sigma_e g_p,
 *   f_a (coarse corner a of T) = -A (sum_{e in T} V_e sigma_e) g_a^T.
 * One level: eps = G(F), f = -V F sigma g: St. Venant-Kirchhoff exactly. */
static double evaluate(tw_hb *hb, const double *x, double *f)
{
    const tw_fem *fc = hb->fc, *ff = &hb->ff;
    const int green = hb->def.coarse_green;
    double energy = 0;
    memset(f, 0, 3 * (size_t)hb->nf * sizeof *f);
    for (int T = 0; T < fc->nt; T++) {
        const tw_real *g = fc->g + 12 * (size_t)T;
        double H[9];
        grad_of(x, hb->X, fc->tets + 4 * (size_t)T, g, H); /* F - I */
        tw_m3 Fm;
        for (int k = 0; k < 9; k++) Fm.m[k] = (tw_real)(H[k] + (k % 4 == 0));
        const tw_m3 Rm = tw_polar3(Fm);
        double *R = hb->Rc + 9 * (size_t)T, *A = hb->Ac + 9 * (size_t)T, *Q = hb->Qc + 9 * (size_t)T;
        for (int k = 0; k < 9; k++) {
            R[k] = (double)Rm.m[k];
            A[k] = H[k] + (k % 4 == 0) - R[k];
        }
        memset(Q, 0, 9 * sizeof *Q);
        if (green) {
            /* Q = (F^T F - I)/2 - (sym(R^T F) - I), from F - I = H without cancellation:
               F^T F - I = H + H^T + H^T H, R^T F - I = R^T H + (R^T - I) */
            double HtH[9], RtF[9];
            m3_tmul(H, H, HtH);
            m3_tmul(R, H, RtF);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) RtF[3 * i + j] += R[3 * j + i] - (i == j);
            m3_sym(RtF);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    Q[3 * i + j] = 0.5 * (H[3 * i + j] + H[3 * j + i] + HtH[3 * i + j]) - RtF[3 * i + j];
            m3_sym(Q);
        }
        memset(hb->Sc + 9 * (size_t)T, 0, 9 * sizeof(double));
    }
    for (int e = 0; e < ff->nt; e++) {
        const int T = hb->anc[e];
        const tw_real *g = ff->g + 12 * (size_t)e;
        const double V = ff->vol[e], lam = ff->lam[e], mu = ff->mu[e];
        const double *R = hb->Rc + 9 * (size_t)T, *Q = hb->Qc + 9 * (size_t)T;
        const int *t = ff->tets + 4 * (size_t)e;
        double H[9], eps[9], sig[9], Rs[9];
        grad_of(x, hb->X, t, g, H);
        m3_tmul(R, H, eps); /* R^T F - I = R^T H + R^T - I */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) eps[3 * i + j] += R[3 * j + i] - (i == j);
        m3_sym(eps);
        for (int k = 0; k < 9; k++) eps[k] += Q[k];
        energy += V * hooke(eps, lam, mu, sig);
        m3_mul(R, sig, Rs);
        scatter(f, t, g, Rs, -V);
        double *S = hb->Sc + 9 * (size_t)T;
        for (int k = 0; k < 9; k++) S[k] += V * sig[k];
        tw_m3 Rm;
        for (int k = 0; k < 9; k++) Rm.m[k] = (tw_real)R[k];
        tw_corot_pack(hb->pkf + TW_COROT_PACK * (size_t)e, Rm, g, (tw_real)V, (tw_real)lam, (tw_real)mu);
    }
    if (green)
        for (int T = 0; T < fc->nt; T++) {
            double AS[9];
            m3_mul(hb->Ac + 9 * (size_t)T, hb->Sc + 9 * (size_t)T, AS);
            scatter(f, fc->tets + 4 * (size_t)T, fc->g + 12 * (size_t)T, AS, -1);
        }
    return energy;
}

static void coarse_factor(tw_hb *hb);

/* A = cm M + ck K' with K' the Hessian of E at fixed R:
 *   finest pattern Af: sum_e R K_e R^T (the offsets' corotated stiffness);
 *   coarse pattern Acc: the coarse tets' sym(A^T dF_T) : C : sym(A^T dF_T)
 *     plus the geometric term (sum V_e sigma_e) : sym(dF_T^T dF_T), which is
 *     the StVK tangent's form with F -> A (tw_green_pack_psd: the geometric
 *     term at the stress's positive part, as green's);
 *   the coupling C of the two (finest rows, coarse columns).
 * The preconditioner's coarse system Apc is the Hessian's coarse block in
 * the hierarchical basis (dF_e = dF_T): the StVK tangent with F = F_T and
 * the summed stress; the offsets' diagonal blocks are Af's. */
static void assemble(tw_hb *hb, double cm, double ck)
{
    const tw_fem *ff = &hb->ff, *fc = hb->fc;
    const int green = hb->def.coarse_green;
    for (int b = 0; b < ff->nnzb; b++) {
        tw_m3 K = tw_m3_zero();
        for (int k = ff->contrib_ptr[b]; k < ff->contrib_ptr[b + 1]; k++) {
            const int c = ff->contrib[k], e = c >> 4;
            K = tw_corot_block_add(K, hb->pkf + TW_COROT_PACK * (size_t)e, (c >> 2) & 3, c & 3);
        }
        for (int k = 0; k < 9; k++) hb->Af[9 * (size_t)b + k] = ck * (double)K.m[k];
    }
    for (int i = 0; i < ff->n; i++)
        for (int c = 0; c < 3; c++) hb->Af[9 * (size_t)ff->diag[i] + 4 * c] += cm * hb->mass[i];
    /* coarse packs: A (for Acc) and F_T (for Apc), both with the summed stress */
    for (int T = 0; T < fc->nt; T++) {
        const tw_real *g = fc->g + 12 * (size_t)T;
        const tw_real V = fc->vol[T];
        tw_m3 A, F, S;
        for (int k = 0; k < 9; k++) {
            A.m[k] = (tw_real)hb->Ac[9 * (size_t)T + k];
            F.m[k] = (tw_real)(hb->Ac[9 * (size_t)T + k] + hb->Rc[9 * (size_t)T + k]);
            S.m[k] = (tw_real)(hb->Sc[9 * (size_t)T + k] / V);
        }
        tw_green_pack_psd(hb->pkg + TW_GREEN_PACK * (size_t)T, A, tw_m3_mul_bt(A, A), S, g, V, fc->lam[T], fc->mu[T]);
        tw_green_pack_psd(hb->pkp + TW_GREEN_PACK * (size_t)T, F, tw_m3_mul_bt(F, F), S, g, V, fc->lam[T], fc->mu[T]);
    }
    for (int b = 0; b < fc->nnzb; b++) {
        tw_m3 Kg = tw_m3_zero(), Kp = tw_m3_zero();
        for (int k = fc->contrib_ptr[b]; k < fc->contrib_ptr[b + 1]; k++) {
            const int c = fc->contrib[k], T = c >> 4, p = (c >> 2) & 3, q = c & 3;
            if (green) Kg = tw_green_block_add(Kg, hb->pkg + TW_GREEN_PACK * (size_t)T, p, q);
            Kp = tw_green_block_add(Kp, hb->pkp + TW_GREEN_PACK * (size_t)T, p, q);
        }
        for (int k = 0; k < 9; k++) {
            hb->Acorr[9 * (size_t)b + k] = ck * (double)Kg.m[k];
            hb->Apc[9 * (size_t)b + k] = ck * (double)Kp.m[k];
        }
    }
    for (int i = 0; i < hb->nc; i++)
        for (int c = 0; c < 3; c++) hb->Apc[9 * (size_t)fc->diag[i] + 4 * c] += cm * hb->mass_c[i];
    /* diagonal inverses: the finest level's offsets are the finest hats (the
     * diagonal of Af); intermediate levels' from the rest operator; one
     * level: Af's and Acc's diagonal (block-Jacobi without the coupling) */
    const int first = hb->L > 1 ? hb->h->P[hb->L - 2].n_coarse : 0;
    for (int i = 0; i < hb->nf; i++) {
        double d[9];
        if (i >= first) {
            memcpy(d, hb->Af + 9 * (size_t)ff->diag[i], sizeof d);
            if (hb->L == 1)
                for (int k = 0; k < 9; k++) d[k] += hb->Acorr[9 * (size_t)fc->diag[i] + k];
        } else if (i >= hb->nc) {
            memcpy(d, hb->Drest + 9 * (size_t)i, sizeof d);
        } else {
            continue; /* coarse vertices: the coarse solve */
        }
        inverse3(d, hb->Dinv + 9 * (size_t)i);
    }
    if (hb->def.precond != TW_HB_PRECOND_HIERARCHICAL)
        for (int i = 0; i < hb->nf; i++) {
            double d[9];
            memcpy(d, hb->Af + 9 * (size_t)ff->diag[i], sizeof d);
            if (i < hb->nc)
                for (int k = 0; k < 9; k++) d[k] += hb->Acorr[9 * (size_t)fc->diag[i] + k];
            inverse3(d, hb->Dall + 9 * (size_t)i);
        }
    /* the coupling, x_p^T C_pa y_a = ck V_e sym(R^T x_p g_p^T) : C : sym(A^T y_a h_a^T):
     * C_pa = ck V_e [mu (g_p.h_a) R A^T + mu (R h_a)(A g_p)^T + lambda (R g_p)(A h_a)^T] */
    if (green) {
        memset(hb->Cv, 0, 9 * (size_t)hb->cp_ptr[hb->nf] * sizeof *hb->Cv);
        for (int e = 0; e < ff->nt; e++) {
            const int T = hb->anc[e];
            const double *R = hb->Rc + 9 * (size_t)T, *A = hb->Ac + 9 * (size_t)T;
            const tw_real *g = ff->g + 12 * (size_t)e, *hg = fc->g + 12 * (size_t)T;
            const double V = ck * ff->vol[e], lam = V * ff->lam[e], mu = V * ff->mu[e];
            double RAt[9], Rg[4][3], Ag[4][3], Rh[4][3], Ah[4][3];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    RAt[3 * i + j] = R[3 * i] * A[3 * j] + R[3 * i + 1] * A[3 * j + 1] + R[3 * i + 2] * A[3 * j + 2];
            for (int p = 0; p < 4; p++)
                for (int i = 0; i < 3; i++) {
                    Rg[p][i] = Ag[p][i] = Rh[p][i] = Ah[p][i] = 0;
                    for (int j = 0; j < 3; j++) {
                        Rg[p][i] += R[3 * i + j] * g[3 * p + j];
                        Ag[p][i] += A[3 * i + j] * g[3 * p + j];
                        Rh[p][i] += R[3 * i + j] * hg[3 * p + j];
                        Ah[p][i] += A[3 * i + j] * hg[3 * p + j];
                    }
                }
            for (int p = 0; p < 4; p++)
                for (int a = 0; a < 4; a++) {
                    double *C = hb->Cv + 9 * (size_t)hb->cp_blk[16 * (size_t)e + 4 * p + a];
                    const double gh = g[3 * p] * hg[3 * a] + g[3 * p + 1] * hg[3 * a + 1] + g[3 * p + 2] * hg[3 * a + 2];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            C[3 * i + j] += mu * gh * RAt[3 * i + j] + mu * Rh[a][i] * Ag[p][j] + lam * Rg[p][i] * Ah[a][j];
                }
        }
    }
    if (hb->chol && hb->def.precond != TW_HB_PRECOND_JACOBI && (hb->chol_age <= 0 || !hb->chol_ok)) {
        coarse_factor(hb);
        hb->chol_age = hb->def.coarse_refresh;
    }
    hb->chol_age--;
    hb->ck = ck;
}

static void bsr_mul_add(const int *row_ptr, const int *col, const double *val, int n, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s0 = 0, s1 = 0, s2 = 0;
        for (int b = row_ptr[i]; b < row_ptr[i + 1]; b++) {
            const double *a = val + 9 * (size_t)b, *xj = x + 3 * (size_t)col[b];
            s0 += a[0] * xj[0] + a[1] * xj[1] + a[2] * xj[2];
            s1 += a[3] * xj[0] + a[4] * xj[1] + a[5] * xj[2];
            s2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];
        }
        y[3 * (size_t)i] += s0;
        y[3 * (size_t)i + 1] += s1;
        y[3 * (size_t)i + 2] += s2;
    }
}

static void filter(const tw_hb *hb, double *a)
{
    for (int i = 0; i < hb->nf; i++)
        if (hb->cons[i]) a[3 * (size_t)i] = a[3 * (size_t)i + 1] = a[3 * (size_t)i + 2] = 0;
}

/* y = A x (unfiltered): Af x + Acc x_c + C x_c + C^T x (the coupling of
 * the finest tets' sym(R^T dF_e) with their coarse tet's sym(A^T dF_T)). */
static void apply_A(const tw_hb *hb, const double *x, double *y)
{
    memset(y, 0, 3 * (size_t)hb->nf * sizeof *y);
    bsr_mul_add(hb->ff.row_ptr, hb->ff.col, hb->Af, hb->nf, x, y);
    if (!hb->def.coarse_green) return;
    const tw_fem *fc = hb->fc;
    bsr_mul_add(fc->row_ptr, fc->col, hb->Acorr, hb->nc, x, y);
    for (int i = 0; i < hb->nf; i++) {
        const double *xi = x + 3 * (size_t)i;
        double s0 = 0, s1 = 0, s2 = 0;
        for (int b = hb->cp_ptr[i]; b < hb->cp_ptr[i + 1]; b++) {
            const double *C = hb->Cv + 9 * (size_t)b, *xa = x + 3 * (size_t)hb->cp_col[b];
            double *ya = y + 3 * (size_t)hb->cp_col[b];
            s0 += C[0] * xa[0] + C[1] * xa[1] + C[2] * xa[2];
            s1 += C[3] * xa[0] + C[4] * xa[1] + C[5] * xa[2];
            s2 += C[6] * xa[0] + C[7] * xa[1] + C[8] * xa[2];
            ya[0] += C[0] * xi[0] + C[3] * xi[1] + C[6] * xi[2];
            ya[1] += C[1] * xi[0] + C[4] * xi[1] + C[7] * xi[2];
            ya[2] += C[2] * xi[0] + C[5] * xi[1] + C[8] * xi[2];
        }
        y[3 * (size_t)i] += s0;
        y[3 * (size_t)i + 1] += s1;
        y[3 * (size_t)i + 2] += s2;
    }
}

static double dot(const double *a, const double *b, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains: the sum is not latency-bound */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* z_i = D_i r_i: the solvers' block-Jacobi product (hd/bsr_row.h) in
 * double, this solver's vectors' type */
#define TW_S_REAL double
#define TW_S(name) hb_##name
#include "hd/bsr_row.h"
#undef TW_S_REAL
#undef TW_S
#define block_mul hb_tw_block_jacobi_product

/* Cholesky of Apc (pinned rows and columns replaced by identity) in dense
 * storage, in coarse_order's order, computed within each row's envelope
 * (from its first non-zero column: the factor has no fill outside it); chol_ok = 0 when not
 * positive definite (then the inner PCG solves). */
static void coarse_factor(tw_hb *hb)
{
    const int n = 3 * hb->nc;
    const tw_fem *fc = hb->fc;
    double *L = hb->chol;
    memset(L, 0, (size_t)n * n * sizeof *L);
    const int *pos = hb->chol_pos;
    for (int i = 0; i < hb->nc; i++)
        for (int b = fc->row_ptr[i]; b < fc->row_ptr[i + 1]; b++) {
            const int j = fc->col[b];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    L[(size_t)(3 * pos[i] + r) * n + 3 * pos[j] + c] =
                        hb->cons_c[i] || hb->cons_c[j] ? (i == j && r == c) : hb->Apc[9 * (size_t)b + 3 * r + c];
        }
    hb->chol_ok = 1;
    const int *f = hb->chol_first;
    for (int j = 0; j < n; j++) {
        const double *Lj = L + (size_t)j * n;
        double d = Lj[j] - dot(Lj + f[j], Lj + f[j], (size_t)(j - f[j]));
        if (!(d > 0)) {
            hb->chol_ok = 0;
            return;
        }
        d = sqrt(d);
        L[(size_t)j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            if (f[i] > j) continue; /* outside row i's envelope: 0 */
            double *Li = L + (size_t)i * n;
            const int k0 = f[i] > f[j] ? f[i] : f[j];
            Li[j] = (Li[j] - dot(Li + k0, Lj + k0, (size_t)(j - k0))) / d;
        }
    }
}

/* The inner coarse solve Apc zc = yc (pinned coarse vertices filtered):
 * by the dense factor when there is one, else PCG to coarse_tolerance. */
static void coarse_solve(tw_hb *hb)
{
    if (hb->chol && hb->chol_ok) {
        const int n = 3 * hb->nc;
        const double *L = hb->chol;
        double *z = hb->cwork.s; /* in the factor's order */
        const int *f = hb->chol_first, *pos = hb->chol_pos;
        for (int i = 0; i < hb->nc; i++)
            for (int r = 0; r < 3; r++) z[3 * pos[i] + r] = hb->cons_c[i] ? 0 : hb->yc[3 * i + r];
        for (int i = 0; i < n; i++) /* L w = y, then L^T z = w by rows of L */
            z[i] = (z[i] - dot(L + (size_t)i * n + f[i], z + f[i], (size_t)(i - f[i]))) / L[(size_t)i * n + i];
        for (int i = n - 1; i >= 0; i--) {
            const double *Li = L + (size_t)i * n;
            const double zi = z[i] /= Li[i];
            for (int k = f[i]; k < i; k++) z[k] -= Li[k] * zi;
        }
        for (int i = 0; i < hb->nc; i++)
            for (int r = 0; r < 3; r++) hb->zc[3 * i + r] = hb->cons_c[i] ? 0 : z[3 * pos[i] + r];
        return;
    }
    const size_t nc3 = 3 * (size_t)hb->nc;
    for (int i = 0; i < hb->nc; i++)
        if (hb->cons_c[i]) hb->yc[3 * (size_t)i] = hb->yc[3 * (size_t)i + 1] = hb->yc[3 * (size_t)i + 2] = 0;
    memset(hb->zc, 0, nc3 * sizeof *hb->zc);
    if (!(dot(hb->yc, hb->yc, nc3) > 0)) return;
    const tw_fem *fc = hb->fc;
    tw_bsr_d Ac = {fc->n, fc->nnzb, fc->row_ptr, fc->col, fc->diag, hb->Apc, 1};
    tw_filter fl = {hb->cons_c, NULL};
    tw_solve_result sr = tw_pcg_d(&Ac, hb->yc, hb->zc, &fl, hb->def.coarse_tolerance, 500, 0, &hb->cwork);
    hb->coarse_iters += sr.iterations;
}

/* z = F S B S^T r: the hierarchical-basis preconditioner; or block-Jacobi,
 * or the two added (tw_hb_precond). */
static void precondition(tw_hb *hb, const double *r, double *z)
{
    const size_t n3 = 3 * (size_t)hb->nf;
    if (hb->L > 1 && hb->def.precond != TW_HB_PRECOND_HIERARCHICAL) {
        for (int i = 0; i < hb->nf; i++) block_mul(hb->Dall + 9 * (size_t)i, r + 3 * (size_t)i, z + 3 * (size_t)i);
        if (hb->def.precond == TW_HB_PRECOND_TWO_LEVEL) {
            double *y = hb->y;
            memcpy(y, r, n3 * sizeof *y);
            hb_transpose_in_place(hb->h, y);
            memcpy(hb->yc, y, 3 * (size_t)hb->nc * sizeof *y);
            coarse_solve(hb);
            memset(y, 0, n3 * sizeof *y);
            memcpy(y, hb->zc, 3 * (size_t)hb->nc * sizeof *y);
            hb_nodal_in_place(hb->h, y);
            for (size_t k = 0; k < n3; k++) z[k] += y[k];
        }
        filter(hb, z);
        return;
    }
    if (hb->L == 1) {
        for (int i = 0; i < hb->nf; i++) block_mul(hb->Dinv + 9 * (size_t)i, r + 3 * (size_t)i, z + 3 * (size_t)i);
        filter(hb, z);
        return;
    }
    double *y = hb->y;
    memcpy(y, r, n3 * sizeof *y);
    hb_transpose_in_place(hb->h, y);
    const size_t nc3 = 3 * (size_t)hb->nc;
    memcpy(hb->yc, y, nc3 * sizeof *y);
    coarse_solve(hb);
    memcpy(z, hb->zc, nc3 * sizeof *z);
    for (int i = hb->nc; i < hb->nf; i++) block_mul(hb->Dinv + 9 * (size_t)i, y + 3 * (size_t)i, z + 3 * (size_t)i);
    hb_nodal_in_place(hb->h, z);
    filter(hb, z);
}

/* A x = b on the free vertices, x holding the initial guess (its pinned
 * components are kept). Flexible PCG (Polak-Ribière: the inner coarse
 * solve makes the preconditioner slightly non-linear). */
static tw_solve_result solve(tw_hb *hb, const double *b, double *x)
{
    const size_t n3 = 3 * (size_t)hb->nf;
    double *r = hb->r, *z = hb->z, *zp = hb->zp, *p = hb->p, *q = hb->q;
    tw_solve_result res = {0, 0, 0};
    apply_A(hb, x, q);
    for (size_t k = 0; k < n3; k++) r[k] = b[k] - q[k];
    filter(hb, r);
    memcpy(q, b, n3 * sizeof *q);
    filter(hb, q);
    double bn = sqrt(dot(q, q, n3));
    if (!(bn > 0)) bn = 1;
    double rn = sqrt(dot(r, r, n3));
    res.residual = rn / bn;
    if (!(rn > hb->def.cg_tolerance * bn)) return res;
    precondition(hb, r, z);
    memcpy(p, z, n3 * sizeof *p);
    double rz = dot(r, z, n3);
    for (int it = 1; it <= hb->def.cg_max_iterations; it++) {
        apply_A(hb, p, q);
        filter(hb, q);
        const double pq = dot(p, q, n3);
        if (!(pq > 0)) {
            res.negative_curvature = 1;
            res.iterations = it;
            break;
        }
        const double alpha = rz / pq;
        for (size_t k = 0; k < n3; k++) {
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
        }
        rn = sqrt(dot(r, r, n3));
        res.iterations = it;
        res.residual = rn / bn;
        if (!(rn > hb->def.cg_tolerance * bn)) break;
        memcpy(zp, z, n3 * sizeof *zp);
        precondition(hb, r, z);
        const double rz1 = dot(r, z, n3), beta = (rz1 - dot(r, zp, n3)) / rz;
        rz = rz1;
        for (size_t k = 0; k < n3; k++) p[k] = z[k] + beta * p[k];
    }
    return res;
}

/* --------------------------------------------------------------- the step */

/* The step's residual at velocity v (xk = x + h v), as the world's Newton
 * iterations: G = M (v - v0) + h alpha M v + h beta K' v - h (f(xk) + f_ext),
 * K' v = (A v - cm M v) / ck with the A assembled last; filtered; |G|. */
static double step_residual(tw_hb *hb, const double *v, double cm, double ck)
{
    const size_t n3 = 3 * (size_t)hb->nf;
    const double h = hb->def.dt, alpha = hb->def.damping_mass, beta = hb->def.damping_stiffness;
    for (size_t k = 0; k < n3; k++) hb->xk[k] = hb->x[k] + h * v[k];
    apply_A(hb, v, hb->q);
    evaluate(hb, hb->xk, hb->f);
    for (int i = 0; i < hb->nf; i++)
        for (int c = 0; c < 3; c++) {
            const size_t k = 3 * (size_t)i + c;
            const double mv = hb->mass[i] * v[k], Kv = (hb->q[k] - cm * mv) / ck;
            hb->G[k] = mv - hb->mass[i] * hb->v[k] + h * alpha * mv + h * beta * Kv - h * (hb->f[k] + hb->fext[k]);
        }
    filter(hb, hb->G);
    return sqrt(dot(hb->G, hb->G, n3));
}

tw_status tw_hb_step(tw_hb *hb, tw_hb_stats *stats)
{
    tw_hb_stats st;
    memset(&st, 0, sizeof st);
    const double t0 = tw_now_ms();
    const size_t n3 = 3 * (size_t)hb->nf;
    const double h = hb->def.dt, cm = 1 + h * hb->def.damping_mass, ck = h * h + h * hb->def.damping_stiffness;
    hb->coarse_iters = 0;
    /* the first linearisation, at x: (M + h C + h^2 K') v+ = M v + h (f + f_ext) */
    evaluate(hb, hb->x, hb->f);
    assemble(hb, cm, ck);
    for (int i = 0; i < hb->nf; i++)
        for (int c = 0; c < 3; c++) {
            const size_t k = 3 * (size_t)i + c;
            hb->b[k] = hb->mass[i] * hb->v[k] + h * (hb->f[k] + hb->fext[k]);
        }
    memcpy(hb->vn, hb->v, n3 * sizeof *hb->vn);
    filter(hb, hb->vn);
    const double t1 = tw_now_ms();
    tw_solve_result sr = solve(hb, hb->b, hb->vn);
    st.cg_iterations = sr.iterations;
    st.residual = sr.residual;
    st.newton_iterations = 1;
    /* Newton iterations at x + h v+, with a backtracking line search on |G| */
    double g0 = -1;
    for (int it = 1; it < hb->def.newton_iterations; it++) {
        for (size_t k = 0; k < n3; k++) hb->xk[k] = hb->x[k] + h * hb->vn[k];
        evaluate(hb, hb->xk, hb->f);
        assemble(hb, cm, ck);
        double g = step_residual(hb, hb->vn, cm, ck);
        if (g0 < 0) g0 = g > 0 ? g : 1;
        if (g <= hb->def.newton_tolerance * g0 && it > 1) break;
        for (size_t k = 0; k < n3; k++) hb->dv[k] = -hb->G[k];
        memset(hb->vt, 0, n3 * sizeof *hb->vt);
        sr = solve(hb, hb->dv, hb->vt);
        memcpy(hb->dv, hb->vt, n3 * sizeof *hb->dv);
        st.cg_iterations += sr.iterations;
        st.residual = sr.residual;
        st.newton_iterations++;
        double a = 1, best = INFINITY, best_a = 0;
        for (int ls = 0; ls < 8; ls++, a *= 0.5) {
            for (size_t k = 0; k < n3; k++) hb->vt[k] = hb->vn[k] + a * hb->dv[k];
            const double gt = step_residual(hb, hb->vt, cm, ck);
            if (gt < best) best = gt, best_a = a;
            if (gt <= (1 - 1e-4 * a) * g) break;
        }
        if (!(best < g)) break;
        for (size_t k = 0; k < n3; k++) hb->vn[k] += best_a * hb->dv[k];
    }
    const double t2 = tw_now_ms();
    /* divergence: a non-finite velocity, or a vertex moving 10 body sizes in a step */
    double vmax = 0;
    for (int i = 0; i < hb->nf; i++) {
        const double *vi = hb->vn + 3 * (size_t)i;
        const double s = sqrt(vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
        if (!isfinite(s)) {
            if (stats) *stats = st;
            return tw_fail(TW_ERR_DIVERGED, "hierarchical basis: step at t = %g s: vertex %d's velocity is not finite "
                           "(CG %d iterations, residual %g); reduce dt", hb->time + h, i, st.cg_iterations, st.residual);
        }
        vmax = fmax(vmax, s);
    }
    if (vmax * h > 10 * hb->size) {
        if (stats) *stats = st;
        return tw_fail(TW_ERR_DIVERGED, "hierarchical basis: step at t = %g s: a vertex would move %g m, %g body "
                       "sizes; reduce dt", hb->time + h, vmax * h, vmax * h / hb->size);
    }
    memcpy(hb->v, hb->vn, n3 * sizeof *hb->v);
    for (size_t k = 0; k < n3; k++) hb->x[k] += h * hb->v[k];
    hb->time += h;
    st.coarse_iterations = hb->coarse_iters;
    st.ms_forces = t1 - t0;
    st.ms_solve = t2 - t1;
    st.ms_total = tw_now_ms() - t0;
    if (stats) *stats = st;
    return TW_OK;
}

double tw_hb_elastic_force(tw_hb *hb, const double *x, double *f)
{
    return evaluate(hb, x, f);
}

void tw_hb_energy(tw_hb *hb, double *kinetic, double *elastic, double *gravity)
{
    double k = 0, g = 0;
    for (int i = 0; i < hb->nf; i++)
        for (int c = 0; c < 3; c++) {
            const size_t j = 3 * (size_t)i + c;
            k += 0.5 * hb->mass[i] * hb->v[j] * hb->v[j];
            g -= hb->mass[i] * hb->def.gravity[c] * (hb->x[j] - hb->X[j]);
        }
    if (kinetic) *kinetic = k;
    if (gravity) *gravity = g;
    if (elastic) *elastic = evaluate(hb, hb->x, hb->G);
}
