/* The mesh hierarchy's shared part: prolongation and restriction, the
 * transfer checks, the Galerkin product P^T A P, and the covering-lattice
 * transfer. Small meshes (bars of a few cells) with their stiffness K, and
 * hand-made transfers where a builder is not needed. */
#include <stdlib.h>
#include <string.h>

#include "fem.h"
#include "hierarchy.h"
#include "mesh.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

static unsigned long long rng_state = 12345;
static double rnd(void) /* uniform in [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A random transfer: entries per row, random coarse vertices (repeats
 * allowed), positive weights summing to 1. CSR arrays (ptr may be left NULL
 * by passing entries == TW_HIER_ROW and ptr_out NULL). */
static void random_rows(int n_fine, int n_coarse, int entries, int *ptr, int *idx, double *w)
{
    for (int i = 0; i < n_fine; i++) {
        double s = 0;
        if (ptr) ptr[i] = entries * i;
        for (int k = 0; k < entries; k++) {
            idx[entries * i + k] = (int)(rnd() * n_coarse);
            w[entries * i + k] = 0.1 + rnd();
            s += w[entries * i + k];
        }
        for (int k = 0; k < entries; k++) w[entries * i + k] /= s;
    }
    if (ptr) ptr[n_fine] = entries * n_fine;
}

/* random_rows of TW_HIER_ROW entries as a transfer from n_coarse to n_fine
 * vertices (freed with tw_transfer_free) */
static tw_transfer random_transfer(int n_fine, int n_coarse)
{
    tw_transfer P = {n_fine, n_coarse, malloc(sizeof(int) * TW_HIER_ROW * n_fine),
                     malloc(sizeof(double) * TW_HIER_ROW * n_fine)};
    random_rows(n_fine, n_coarse, TW_HIER_ROW, NULL, P.idx, P.w);
    return P;
}

static tw_bsr fem_bsr(const tw_fem *f)
{
    tw_bsr A;
    memset(&A, 0, sizeof A);
    A.n = f->n;
    A.nnzb = f->nnzb;
    A.row_ptr = f->row_ptr;
    A.col = f->col;
    A.diag = f->diag;
    A.val = f->K;
    A.threads = 2;
    return A;
}

/* Dense (3 n x 3 n, row-major) copy of a block matrix. */
static double *dense_of(const tw_bsr *A)
{
    int N = 3 * A->n;
    double *D = calloc((size_t)N * N, sizeof(double));
    for (int i = 0; i < A->n; i++)
        for (int b = A->row_ptr[i]; b < A->row_ptr[i + 1]; b++)
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    D[(size_t)(3 * i + r) * N + 3 * A->col[b] + c] += A->val[9 * b + 3 * r + c];
    return D;
}

/* Dense P (3 nf x 3 nc) of CSR rows. */
static double *dense_P(const tw_transfer_rows *P)
{
    int NF = 3 * P->n_fine, NC = 3 * P->n_coarse;
    double *D = calloc((size_t)NF * NC, sizeof(double));
    for (int i = 0; i < P->n_fine; i++) {
        int k0 = P->ptr ? P->ptr[i] : TW_HIER_ROW * i, k1 = P->ptr ? P->ptr[i + 1] : TW_HIER_ROW * (i + 1);
        for (int k = k0; k < k1; k++)
            for (int c = 0; c < 3; c++) D[(size_t)(3 * i + c) * NC + 3 * P->idx[k] + c] += P->w[k];
    }
    return D;
}

/* max |Ac - P^T A P| / max |P^T A P|, by dense products. */
static double galerkin_vs_dense(const tw_transfer_rows *P, const tw_bsr *A, const tw_hier_matrix *Ac)
{
    int NF = 3 * P->n_fine, NC = 3 * P->n_coarse;
    double *Ad = dense_of(A), *Pd = dense_P(P), *AP = calloc((size_t)NF * NC, sizeof(double));
    tw_bsr Cb = tw_hier_matrix_bsr(Ac);
    double *Cd = dense_of(&Cb);
    for (int r = 0; r < NF; r++)
        for (int k = 0; k < NF; k++) {
            double a = Ad[(size_t)r * NF + k];
            if (a != 0)
                for (int c = 0; c < NC; c++) AP[(size_t)r * NC + c] += a * Pd[(size_t)k * NC + c];
        }
    double worst = 0, scale = 0;
    for (int r = 0; r < NC; r++)
        for (int c = 0; c < NC; c++) {
            double s = 0;
            for (int k = 0; k < NF; k++) s += Pd[(size_t)k * NC + r] * AP[(size_t)k * NC + c];
            scale = tw_test_max(scale, fabs(s));
            worst = tw_test_max(worst, fabs(s - Cd[(size_t)r * NC + c]));
        }
    free(Ad);
    free(Pd);
    free(AP);
    free(Cd);
    return worst / scale;
}

/* The stiffness of a small bar (3x2x2 cells: 36 vertices). */
static int small_fem(tw_fem *f, tw_mesh **m)
{
    *m = tw_mesh_bar(3, 2, 2, 3, 2, 2);
    if (!*m) return 1;
    return tw_fem_build(f, *m, 1e5, 0.3, 1000, NULL, NULL, NULL) != TW_OK;
}

/* Ac against the dense product, for a random transfer of 4 entries per row. */
TW_TEST(galerkin_matches_dense)
{
    tw_fem f;
    tw_mesh *m;
    CHECK(!small_fem(&f, &m));
    tw_bsr A = fem_bsr(&f);
    int nc = 11;
    tw_transfer P = random_transfer(f.n, nc);
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_galerkin(&P, &A, &Ac));
    tw_transfer_rows r = tw_transfer_rows_of(&P);
    double err = galerkin_vs_dense(&r, &A, &Ac);
    printf("relative error vs dense %.3g (%d coarse, %d blocks)\n", err, Ac.n, Ac.nnzb);
    CHECK(err <= 1e-5);
    tw_hier_matrix_free(&Ac);
    tw_transfer_free(&P);
    tw_fem_free(&f);
    tw_mesh_destroy(m);
    return 0;
}

/* Rows longer than TW_HIER_ROW (CSR, 7 entries), and the values-only
 * update: A doubled gives Ac doubled in the same pattern. */
TW_TEST(galerkin_long_rows_and_values_update)
{
    tw_fem f;
    tw_mesh *m;
    CHECK(!small_fem(&f, &m));
    tw_bsr A = fem_bsr(&f);
    int nc = 9, e = 7;
    int *ptr = malloc(sizeof(int) * (f.n + 1)), *idx = malloc(sizeof(int) * e * f.n);
    double *w = malloc(sizeof(double) * e * f.n);
    random_rows(f.n, nc, e, ptr, idx, w);
    tw_transfer_rows r = {f.n, nc, ptr, idx, w};
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_rows_galerkin(&r, &A, &Ac));
    double err = galerkin_vs_dense(&r, &A, &Ac);
    tw_real *K2 = malloc(sizeof(tw_real) * 9 * f.nnzb);
    for (int q = 0; q < 9 * f.nnzb; q++) K2[q] = 2 * f.K[q];
    tw_bsr A2 = A;
    A2.val = K2;
    CHECK_OK(tw_transfer_rows_galerkin_values(&r, &A2, &Ac));
    double err2 = galerkin_vs_dense(&r, &A2, &Ac);
    printf("relative error vs dense %.3g, after the values update %.3g\n", err, err2);
    CHECK(err <= 1e-5);
    CHECK(err2 <= 1e-5);
    tw_hier_matrix_free(&Ac);
    free(K2);
    free(ptr);
    free(idx);
    free(w);
    tw_fem_free(&f);
    tw_mesh_destroy(m);
    return 0;
}

/* Sorted columns, and diag[I] is the block (I, I). */
TW_TEST(galerkin_pattern_sorted_with_diagonal)
{
    tw_fem f;
    tw_mesh *m;
    CHECK(!small_fem(&f, &m));
    tw_bsr A = fem_bsr(&f);
    int nc = 13;
    tw_transfer P = random_transfer(f.n, nc);
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_galerkin(&P, &A, &Ac));
    CHECK(Ac.n == nc && Ac.row_ptr[nc] == Ac.nnzb);
    for (int I = 0; I < nc; I++) {
        CHECK(Ac.col[Ac.diag[I]] == I && Ac.diag[I] >= Ac.row_ptr[I] && Ac.diag[I] < Ac.row_ptr[I + 1]);
        for (int b = Ac.row_ptr[I] + 1; b < Ac.row_ptr[I + 1]; b++) CHECK(Ac.col[b - 1] < Ac.col[b]);
    }
    tw_hier_matrix_free(&Ac);
    tw_transfer_free(&P);
    tw_fem_free(&f);
    tw_mesh_destroy(m);
    return 0;
}

/* A symmetric A gives a symmetric Ac (to rounding). */
TW_TEST(galerkin_symmetric)
{
    tw_fem f;
    tw_mesh *m;
    CHECK(!small_fem(&f, &m));
    tw_bsr A = fem_bsr(&f);
    int nc = 10;
    tw_transfer P = random_transfer(f.n, nc);
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_galerkin(&P, &A, &Ac));
    tw_bsr C = tw_hier_matrix_bsr(&Ac);
    double *D = dense_of(&C), asym = 0, scale = 0;
    int N = 3 * nc;
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            asym = tw_test_max(asym, fabs(D[(size_t)r * N + c] - D[(size_t)c * N + r]));
            scale = tw_test_max(scale, fabs(D[(size_t)r * N + c]));
        }
    printf("max |Ac - Ac^T| / max |Ac| = %.3g\n", asym / scale);
    CHECK(scale > 0);
    CHECK(asym / scale <= 1e-6);
    free(D);
    tw_hier_matrix_free(&Ac);
    tw_transfer_free(&P);
    tw_fem_free(&f);
    tw_mesh_destroy(m);
    return 0;
}

/* (P^T A P) v = restrict(A prolong(v)) for a coarse vector v. */
TW_TEST(galerkin_equals_restrict_a_prolong)
{
    tw_fem f;
    tw_mesh *m;
    CHECK(!small_fem(&f, &m));
    tw_bsr A = fem_bsr(&f);
    int nc = 12;
    tw_transfer P = random_transfer(f.n, nc);
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_galerkin(&P, &A, &Ac));
    tw_real *v = malloc(sizeof(tw_real) * 3 * nc), *y1 = malloc(sizeof(tw_real) * 3 * nc),
            *y2 = malloc(sizeof(tw_real) * 3 * nc), *pv = malloc(sizeof(tw_real) * 3 * f.n),
            *apv = malloc(sizeof(tw_real) * 3 * f.n);
    for (int q = 0; q < 3 * nc; q++) v[q] = (tw_real)(rnd() - 0.5);
    tw_bsr C = tw_hier_matrix_bsr(&Ac);
    tw_bsr_spmv(&C, v, y1);
    tw_transfer_prolong(&P, v, pv);
    tw_bsr_spmv(&A, pv, apv);
    tw_transfer_restrict(&P, apv, y2);
    double err = 0, scale = 0;
    for (int q = 0; q < 3 * nc; q++) {
        err = tw_test_max(err, fabs((double)y1[q] - y2[q]));
        scale = tw_test_max(scale, fabs((double)y2[q]));
    }
    printf("max |Ac v - P^T A P v| / max = %.3g\n", err / scale);
    CHECK(scale > 0);
    CHECK(err / scale <= 1e-5);
    free(v);
    free(y1);
    free(y2);
    free(pv);
    free(apv);
    tw_hier_matrix_free(&Ac);
    tw_transfer_free(&P);
    tw_fem_free(&f);
    tw_mesh_destroy(m);
    return 0;
}

/* Restriction is prolongation's transpose: u . (P v) = (P^T u) . v. */
TW_TEST(prolong_restrict_transposes)
{
    int nf = 50, nc = 17;
    tw_transfer P = random_transfer(nf, nc);
    P.w[4 * 7 + 3] = 0; /* an unused entry */
    tw_real *u = malloc(sizeof(tw_real) * 3 * nf), *v = malloc(sizeof(tw_real) * 3 * nc),
            *pv = malloc(sizeof(tw_real) * 3 * nf), *ptu = malloc(sizeof(tw_real) * 3 * nc);
    for (int q = 0; q < 3 * nf; q++) u[q] = (tw_real)(rnd() - 0.5);
    for (int q = 0; q < 3 * nc; q++) v[q] = (tw_real)(rnd() - 0.5);
    tw_transfer_prolong(&P, v, pv);
    tw_transfer_restrict(&P, u, ptu);
    double a = 0, b = 0, scale = 0;
    for (int q = 0; q < 3 * nf; q++) {
        a += (double)u[q] * pv[q];
        scale += fabs((double)u[q] * pv[q]);
    }
    for (int q = 0; q < 3 * nc; q++) b += (double)ptu[q] * v[q];
    printf("u . P v = %.9g, P^T u . v = %.9g\n", a, b);
    CHECK(scale > 0);
    CHECK(fabs(a - b) <= 1e-5 * scale);
    free(u);
    free(v);
    free(pv);
    free(ptu);
    tw_transfer_free(&P);
    return 0;
}

/* The row-sum check is 0 on a good transfer and finds one bad row. */
TW_TEST(row_sum_check_catches_bad_row)
{
    int nf = 40, nc = 9;
    tw_transfer P = random_transfer(nf, nc);
    double good = tw_transfer_row_sum_error(&P);
    P.w[4 * 23 + 1] += 2e-3;
    double bad = tw_transfer_row_sum_error(&P);
    P.w[4 * 23 + 1] = NAN;
    double nan_row = tw_transfer_row_sum_error(&P);
    printf("row-sum error: good %.3g, one row off by 2e-3: %.3g, a NaN weight: %g\n", good, bad, nan_row);
    CHECK(good <= 1e-14);
    CHECK(fabs(bad - 2e-3) <= 1e-12);
    CHECK(!(nan_row <= 1)); /* NaN reported, not hidden */
    tw_transfer_free(&P);
    return 0;
}

/* The lattice transfer from a coarse box lattice to a finer, offset bar
 * inside it (vertices off the lattice's nodes) reproduces linear fields. */
static double linear_field(const double *X, int c)
{
    static const double a[3] = {0.3, -1.2, 2.0}, B[3][3] = {{1.5, -0.25, 0.7}, {0.2, 0.9, -1.1}, {-0.6, 0.4, 1.3}};
    return a[c] + B[c][0] * X[0] + B[c][1] * X[1] + B[c][2] * X[2];
}

static double linear_error(const tw_transfer *P, const tw_mesh *c, const tw_mesh *f)
{
    tw_real *vc = malloc(sizeof(tw_real) * 3 * c->nv), *vf = malloc(sizeof(tw_real) * 3 * f->nv);
    for (int i = 0; i < c->nv; i++)
        for (int k = 0; k < 3; k++) vc[3 * i + k] = (tw_real)linear_field(c->X + 3 * i, k);
    tw_transfer_prolong(P, vc, vf);
    double worst = 0;
    for (int i = 0; i < f->nv; i++)
        for (int k = 0; k < 3; k++) worst = tw_test_max(worst, fabs(vf[3 * i + k] - linear_field(f->X + 3 * i, k)));
    free(vc);
    free(vf);
    return worst;
}

TW_TEST(lattice_reproduces_linear_fields)
{
    tw_mesh *c = tw_mesh_bar(2.0, 1.0, 1.0, 4, 2, 2);
    tw_mesh *f0 = tw_mesh_bar(1.7, 0.8, 0.6, 7, 5, 3);
    CHECK(c && f0);
    /* shift the fine bar off the lattice's planes, inside the box */
    double *X = malloc(sizeof(double) * 3 * f0->nv);
    for (int i = 0; i < f0->nv; i++)
        for (int k = 0; k < 3; k++) X[3 * i + k] = f0->X[3 * i + k] + (k == 0 ? 0.13 : k == 1 ? 0.07 : 0.21);
    tw_mesh *f = tw_mesh_create(X, f0->nv, f0->tets, f0->nt, NULL, NULL, NULL);
    CHECK(f);
    tw_transfer P;
    CHECK_OK(tw_transfer_lattice(c, f, &P));
    double lin = linear_error(&P, c, f), rows = tw_transfer_row_sum_error(&P),
           pos = tw_transfer_position_error(&P, c, f);
    int outside = 0;
    for (int q = 0; q < 4 * f->nv; q++) outside += P.w[q] < -1e-12;
    printf("linear field error %.3g, row sums %.3g, positions %.3g; %d negative weights\n", lin, rows, pos, outside);
    CHECK(P.n_fine == f->nv && P.n_coarse == c->nv);
    CHECK(lin <= 1e-5);
    CHECK(rows <= 1e-12);
    CHECK(pos <= 1e-12);
    CHECK(outside == 0); /* all inside: no extrapolated weights */
    tw_transfer_free(&P);
    free(X);
    tw_mesh_destroy(f);
    tw_mesh_destroy(f0);
    tw_mesh_destroy(c);
    return 0;
}

/* The shipped bunny in its covering lattice (the bunny scene's pair). */
TW_TEST(lattice_bunny_reproduces_linear_fields)
{
    tw_mesh *f;
    tw_mesh *lat = tw_test_bunny_lattice(&f);
    CHECK(lat);
    tw_transfer P;
    CHECK_OK(tw_transfer_lattice(lat, f, &P));
    double lin = linear_error(&P, lat, f), pos = tw_transfer_position_error(&P, lat, f);
    printf("bunny (%d vertices) in a %d-vertex lattice: linear field error %.3g, positions %.3g\n", f->nv,
           lat->nv, lin, pos);
    CHECK(lin <= 1e-5);
    CHECK(pos <= 1e-9);
    tw_transfer_free(&P);
    tw_mesh_destroy(lat);
    tw_mesh_destroy(f);
    return 0;
}

/* Nested levels: the coarse level's linear shape functions are fine-level
 * functions, so the Galerkin product of the fine stiffness is the coarse
 * stiffness itself (the variational property), block for block. */
TW_TEST(galerkin_nested_is_coarse_stiffness)
{
    tw_mesh *base = tw_mesh_bar(2, 1, 1, 2, 1, 1);
    CHECK(base);
    tw_hierarchy *h = tw_hier_nested(base, 3);
    CHECK(h && h->n_levels == 3);
    tw_fem fc, ff;
    CHECK_OK(tw_fem_build(&fc, h->level[1], 1e5, 0.3, 1000, NULL, NULL, NULL));
    CHECK_OK(tw_fem_build(&ff, h->level[2], 1e5, 0.3, 1000, NULL, NULL, NULL));
    tw_bsr Af = fem_bsr(&ff), Ac0 = fem_bsr(&fc);
    tw_hier_matrix Ac;
    CHECK_OK(tw_transfer_galerkin(&h->P[1], &Af, &Ac));
    tw_bsr C = tw_hier_matrix_bsr(&Ac);
    double *G = dense_of(&C), *K = dense_of(&Ac0), err = 0, scale = 0;
    int N = 3 * fc.n;
    for (int q = 0; q < N * N; q++) {
        err = tw_test_max(err, fabs(G[q] - K[q]));
        scale = tw_test_max(scale, fabs(K[q]));
    }
    printf("nested levels of %d and %d vertices: max |P^T K_f P - K_c| / max |K_c| = %.3g\n", fc.n, ff.n,
           err / scale);
    CHECK(scale > 0);
    CHECK(err / scale <= 1e-5);
    free(G);
    free(K);
    tw_hier_matrix_free(&Ac);
    tw_fem_free(&fc);
    tw_fem_free(&ff);
    tw_hier_free(h);
    tw_mesh_destroy(base);
    return 0;
}
