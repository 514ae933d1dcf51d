#include "fem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hd/element.h"
#include "error.h"
#include "mesh.h"

void tw_fem_free(tw_fem *f)
{
    free(f->tets); free(f->g); free(f->vol); free(f->lam); free(f->mu);
    free(f->row_ptr); free(f->col); free(f->diag); free(f->contrib_ptr); free(f->contrib);
    free(f->vt_ptr); free(f->vt); free(f->K); free(f->mass); free(f->X);
    memset(f, 0, sizeof *f);
}

size_t tw_fem_memory_bytes(const tw_fem *f)
{
    size_t r = sizeof(tw_real), i = sizeof(int);
    return (size_t)f->nt * (4 * i + 15 * r + 16 * i + 4 * i) + (size_t)f->n * (3 * i + 4 * r) +
           (size_t)f->nnzb * (2 * i + 9 * r);
}

int tw_fem_block(const tw_fem *f, int i, int j)
{
    int lo = f->row_ptr[i], hi = f->row_ptr[i + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (f->col[mid] == j) return mid;
        if (f->col[mid] < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

double tw_tet_gradients(const double *X, const int *t, double g[4][3])
{
    double Dm[9], B[9];
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++) Dm[3 * r + c] = X[3 * t[c + 1] + r] - X[3 * t[0] + r];
    double det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) +
                 Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
    if (det == 0) return 0;
    double id = 1.0 / det;
    B[0] = (Dm[4] * Dm[8] - Dm[5] * Dm[7]) * id;
    B[1] = (Dm[2] * Dm[7] - Dm[1] * Dm[8]) * id;
    B[2] = (Dm[1] * Dm[5] - Dm[2] * Dm[4]) * id;
    B[3] = (Dm[5] * Dm[6] - Dm[3] * Dm[8]) * id;
    B[4] = (Dm[0] * Dm[8] - Dm[2] * Dm[6]) * id;
    B[5] = (Dm[2] * Dm[3] - Dm[0] * Dm[5]) * id;
    B[6] = (Dm[3] * Dm[7] - Dm[4] * Dm[6]) * id;
    B[7] = (Dm[1] * Dm[6] - Dm[0] * Dm[7]) * id;
    B[8] = (Dm[0] * Dm[4] - Dm[1] * Dm[3]) * id;
    for (int k = 0; k < 3; k++) {
        g[0][k] = -(B[k] + B[3 + k] + B[6 + k]);
        for (int p = 0; p < 3; p++) g[p + 1][k] = B[3 * p + k];
    }
    return det;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static tw_status check_material(int e, double E, double nu, double rho)
{
    if (!(E > 0) || !isfinite(E))
        return tw_fail(TW_ERR_INVALID, "Young's modulus of element %d is %g Pa: it must be finite and > 0", e, E);
    if (!(nu > -1 && nu < 0.5))
        return tw_fail(TW_ERR_INVALID, "Poisson ratio of element %d is %g: it must lie in (-1, 0.5)", e, nu);
    if (!(rho > 0) || !isfinite(rho))
        return tw_fail(TW_ERR_INVALID, "density of element %d is %g kg/m^3: it must be finite and > 0", e, rho);
    return TW_OK;
}

/* The vertex -> (element, local) lists, the BSR pattern and the gather
 * lists of f->tets (fem.h), on one CPU thread. */
static tw_status build_pattern_cpu(tw_fem *f)
{
    int n = f->n, nt = f->nt;
    f->vt_ptr = tw_calloc((size_t)n + 1, sizeof(int), "vertex-element offsets");
    f->vt = tw_malloc(sizeof(int) * 4 * (size_t)nt, "vertex-element lists");
    f->row_ptr = tw_calloc((size_t)n + 1, sizeof(int), "BSR row offsets");
    f->diag = tw_malloc(sizeof(int) * (size_t)n, "BSR diagonal");
    int *fill = tw_malloc(sizeof(int) * (size_t)n, "scratch");
    if (!f->vt_ptr || !f->vt || !f->row_ptr || !f->diag || !fill) { free(fill); return TW_ERR_NOMEM; }

    /* vertex -> (element, local) lists, in element order */
    for (size_t k = 0; k < 4 * (size_t)nt; k++) f->vt_ptr[f->tets[k] + 1]++;
    for (int i = 0; i < n; i++) f->vt_ptr[i + 1] += f->vt_ptr[i];
    memcpy(fill, f->vt_ptr, sizeof(int) * (size_t)n);
    for (int e = 0; e < nt; e++)
        for (int p = 0; p < 4; p++) f->vt[fill[f->tets[4 * e + p]]++] = 4 * e + p;
    free(fill);

    /* BSR pattern: per row, the union of its elements' vertices, sorted.
     * Two passes (count, fill); each row is independent. */
    int maxdeg = 0;
    for (int i = 0; i < n; i++) {
        int d = f->vt_ptr[i + 1] - f->vt_ptr[i];
        if (d > maxdeg) maxdeg = d;
    }
    int *cols_tmp = tw_malloc(sizeof(int) * (size_t)(4 * maxdeg + 1), "scratch");
    if (!cols_tmp) return TW_ERR_NOMEM;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            int c = 0;
            for (int k = f->vt_ptr[i]; k < f->vt_ptr[i + 1]; k++) {
                int e = f->vt[k] >> 2;
                for (int q = 0; q < 4; q++) cols_tmp[c++] = f->tets[4 * e + q];
            }
            if (c == 0) cols_tmp[c++] = i; /* unused vertex: keep a diagonal block */
            qsort(cols_tmp, (size_t)c, sizeof(int), cmp_int);
            int u = 0;
            for (int k = 0; k < c; k++)
                if (u == 0 || cols_tmp[k] != cols_tmp[u - 1]) cols_tmp[u++] = cols_tmp[k];
            if (pass == 0) f->row_ptr[i + 1] = u;
            else memcpy(f->col + f->row_ptr[i], cols_tmp, sizeof(int) * (size_t)u);
        }
        if (pass == 0) {
            for (int i = 0; i < n; i++) f->row_ptr[i + 1] += f->row_ptr[i];
            f->nnzb = f->row_ptr[n];
            f->col = tw_malloc(sizeof(int) * (size_t)f->nnzb, "BSR columns");
            if (!f->col) { free(cols_tmp); return TW_ERR_NOMEM; }
        }
    }
    free(cols_tmp);
    for (int i = 0; i < n; i++) f->diag[i] = tw_fem_block(f, i, i);

    /* gather lists: count per block, then fill in element order */
    f->contrib_ptr = tw_calloc((size_t)f->nnzb + 1, sizeof(int), "gather offsets");
    f->contrib = tw_malloc(sizeof(int) * 16 * (size_t)nt, "gather lists");
    int *blk = tw_malloc(sizeof(int) * 16 * (size_t)nt, "scratch");
    if (!f->contrib_ptr || !f->contrib || !blk) { free(blk); return TW_ERR_NOMEM; }
    for (int e = 0; e < nt; e++)
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++) {
                int b = tw_fem_block(f, f->tets[4 * e + p], f->tets[4 * e + q]);
                blk[16 * e + 4 * p + q] = b;
                f->contrib_ptr[b + 1]++;
            }
    for (int b = 0; b < f->nnzb; b++) f->contrib_ptr[b + 1] += f->contrib_ptr[b];
    int *cfill = tw_malloc(sizeof(int) * (size_t)f->nnzb, "scratch");
    if (!cfill) { free(blk); return TW_ERR_NOMEM; }
    memcpy(cfill, f->contrib_ptr, sizeof(int) * (size_t)f->nnzb);
    for (int e = 0; e < nt; e++)
        for (int pq = 0; pq < 16; pq++) f->contrib[cfill[blk[16 * e + pq]]++] = 16 * e + pq;
    free(cfill);
    free(blk);
    return TW_OK;
}

/* Drops whatever pattern arrays a failed builder left. */
static void free_pattern(tw_fem *f)
{
    free(f->row_ptr); free(f->col); free(f->diag); free(f->contrib_ptr); free(f->contrib);
    free(f->vt_ptr); free(f->vt);
    f->row_ptr = f->col = f->diag = f->contrib_ptr = f->contrib = f->vt_ptr = f->vt = NULL;
    f->nnzb = 0;
}

tw_status tw_fem_build(tw_fem *f, const tw_mesh *mesh, double E0, double nu0, double rho0,
                       const double *elem_E, const double *elem_nu, const double *elem_rho)
{
    return tw_fem_build_using(f, mesh, E0, nu0, rho0, elem_E, elem_nu, elem_rho, NULL);
}

tw_status tw_fem_build_using(tw_fem *f, const tw_mesh *mesh, double E0, double nu0, double rho0,
                             const double *elem_E, const double *elem_nu, const double *elem_rho,
                             tw_fem_pattern_fn pattern)
{
    memset(f, 0, sizeof *f);
    int n = mesh->nv, nt = mesh->nt;
    f->n = n;
    f->nt = nt;
    f->tets = tw_malloc(sizeof(int) * 4 * (size_t)nt, "element indices");
    f->g = tw_malloc(sizeof(tw_real) * 12 * (size_t)nt, "shape gradients");
    f->vol = tw_malloc(sizeof(tw_real) * (size_t)nt, "volumes");
    f->lam = tw_malloc(sizeof(tw_real) * (size_t)nt, "Lame lambda");
    f->mu = tw_malloc(sizeof(tw_real) * (size_t)nt, "Lame mu");
    f->mass = tw_calloc((size_t)n, sizeof(tw_real), "vertex masses");
    f->X = tw_malloc(sizeof(tw_real) * 3 * (size_t)n, "rest positions");
    if (!f->tets || !f->g || !f->vol || !f->lam || !f->mu || !f->mass || !f->X) goto fail;
    memcpy(f->tets, mesh->tets, sizeof(int) * 4 * (size_t)nt);
    for (size_t i = 0; i < 3 * (size_t)n; i++) f->X[i] = (tw_real)mesh->X[i];

    /* elements: gradients (in double, then rounded), volume, material */
    double *massd = tw_calloc((size_t)n, sizeof(double), "vertex masses");
    if (!massd) goto fail;
    tw_status st = TW_OK;
    for (int e = 0; e < nt && st == TW_OK; e++) {
        const int *t = mesh->tets + 4 * e;
        double gd[4][3];
        double det = tw_tet_gradients(mesh->X, t, gd);
        if (!(det > 0)) {
            st = tw_fail(TW_ERR_INVALID, "%s: element %d is degenerate or inverted (6V = %g)", mesh->name, e, det);
            break;
        }
        tw_real *g = f->g + 12 * (size_t)e;
        for (int p = 0; p < 4; p++)
            for (int k = 0; k < 3; k++) g[3 * p + k] = (tw_real)gd[p][k];
        double V = det / 6.0;
        double E = elem_E ? elem_E[e] : E0, nu = elem_nu ? elem_nu[e] : nu0, rho = elem_rho ? elem_rho[e] : rho0;
        st = check_material(e, E, nu, rho);
        f->vol[e] = (tw_real)V;
        f->lam[e] = (tw_real)(E * nu / ((1 + nu) * (1 - 2 * nu)));
        f->mu[e] = (tw_real)(E / (2 * (1 + nu)));
        /* Courant: smallest altitude 3V / (largest face area) over the wave speed */
        double amax = 0;
        for (int skip = 0; skip < 4; skip++) {
            const double *q[3];
            for (int k = 0, c = 0; k < 4; k++)
                if (k != skip) q[c++] = mesh->X + 3 * t[k];
            double u[3], v[3];
            for (int r = 0; r < 3; r++) { u[r] = q[1][r] - q[0][r]; v[r] = q[2][r] - q[0][r]; }
            double cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2], cz = u[0] * v[1] - u[1] * v[0];
            amax = fmax(amax, 0.5 * sqrt(cx * cx + cy * cy + cz * cz));
        }
        double wave = sqrt((f->lam[e] + 2.0 * f->mu[e]) / rho);
        if (st == TW_OK) f->courant_dt = e == 0 ? 3 * V / amax / wave : fmin(f->courant_dt, 3 * V / amax / wave);
        for (int p = 0; p < 4; p++) massd[t[p]] += rho * V / 4;
    }
    for (int i = 0; i < n; i++) f->mass[i] = (tw_real)massd[i];
    free(massd);
    if (st != TW_OK) goto fail_keep;

    /* the pattern: by the caller's builder when it succeeds, else here */
    if (pattern && pattern(f) == TW_OK) {
        f->pattern_builder_used = 1;
    } else {
        if (pattern) { /* it said why on stderr: drop what it left, and its message */
            free_pattern(f);
            tw_clear_error();
        }
        if (build_pattern_cpu(f) != TW_OK) goto fail;
    }
    f->K = tw_calloc((size_t)f->nnzb * 9, sizeof(tw_real), "stiffness matrix");
    if (!f->K) goto fail;

    /* linear K by gather (accumulated in double for the reference accuracy) */
#pragma omp parallel for if (TW_PAR(f->nnzb)) schedule(static)
    for (int b = 0; b < f->nnzb; b++) {
        double acc[9] = {0};
        for (int k = f->contrib_ptr[b]; k < f->contrib_ptr[b + 1]; k++) {
            int c = f->contrib[k], e = c >> 4, p = (c >> 2) & 3, q = c & 3;
            tw_m3 Kb = tw_elem_linear_block(f->g + 12 * (size_t)e, f->vol[e], f->lam[e], f->mu[e], p, q);
            for (int m = 0; m < 9; m++) acc[m] += Kb.m[m];
        }
        for (int m = 0; m < 9; m++) f->K[9 * (size_t)b + m] = (tw_real)acc[m];
    }
    return TW_OK;

fail:
    if (!tw_last_error()[0]) tw_fail(TW_ERR_NOMEM, "out of memory building the FEM data");
    tw_fem_free(f);
    return TW_ERR_NOMEM;
fail_keep:
    tw_fem_free(f);
    return st;
}
