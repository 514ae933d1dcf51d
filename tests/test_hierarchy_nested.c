/* Nested levels (1:8 refinement by edge midpoints): the children fill their
 * parent exactly and lie inside it, the transfer P reproduces linear fields,
 * the level sizes, and the refined mesh conforms. */
#include <stdlib.h>
#include <string.h>

#include "hierarchy.h"
#include "mesh.h"
#include "tw_test.h"

/* The barycentric coordinates of p in the tet (a, b, c, d). */
static void barycentric(const double *a, const double *b, const double *c, const double *d,
                        const double *p, double l[4])
{
    const double det = tw_tet_det(a, b, c, d);
    l[0] = tw_tet_det(p, b, c, d) / det;
    l[1] = tw_tet_det(a, p, c, d) / det;
    l[2] = tw_tet_det(a, b, p, d) / det;
    l[3] = tw_tet_det(a, b, c, p) / det;
}

static const double *vtx(const tw_mesh *m, int e, int k)
{
    return m->X + 3 * (size_t)m->tets[4 * (size_t)e + k];
}

/* A 2x1x1-cell bar, its second cell tagged region 7, so inheritance shows. */
static tw_mesh *small_bar(void)
{
    tw_mesh *m = tw_mesh_bar(2.0, 1.0, 0.7, 2, 1, 1);
    if (!m)
        return NULL;
    for (int e = 0; e < m->nt; e++) {
        double cx = 0;
        for (int k = 0; k < 4; k++)
            cx += 0.25 * vtx(m, e, k)[0];
        m->region[e] = cx > 1.0 ? 7 : 0;
    }
    return m;
}

static int cmp2(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The number of distinct edges of m, by sorting. */
static int edge_count(const tw_mesh *m)
{
    int *e = malloc(12 * (size_t)m->nt * sizeof *e);
    if (!e)
        return -1;
    int n = 0;
    for (int t = 0; t < m->nt; t++)
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                const int a = m->tets[4 * t + i], b = m->tets[4 * t + j];
                e[2 * n] = a < b ? a : b;
                e[2 * n + 1] = a < b ? b : a;
                n++;
            }
    qsort(e, (size_t)n, 2 * sizeof *e, cmp2);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || cmp2(e + 2 * i, e + 2 * (i - 1)))
            distinct++;
    free(e);
    return distinct;
}

TW_TEST(sizes_and_parents)
{
    tw_mesh *b = small_bar();
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 4);
    CHECK(h);
    CHECK(h->kind == TW_HIER_NESTED && h->n_levels == 4);
    CHECK(h->parent_tet[0] == NULL);
    int nt = b->nt;
    for (int l = 0; l < 4; l++) {
        const tw_mesh *m = h->level[l];
        CHECK(m->nt == nt);
        if (l > 0) {
            const tw_transfer *P = &h->P[l - 1];
            CHECK(P->n_coarse == h->level[l - 1]->nv && P->n_fine == m->nv);
            for (int e = 0; e < m->nt; e++) {
                const int p = h->parent_tet[l][e];
                CHECK(p == e / 8);
                CHECK(m->region[e] == h->level[l - 1]->region[p]);
            }
        }
        nt *= 8;
    }
    /* the new vertices are the midpoints of the coarser level's edges, one each */
    for (int l = 0; l + 1 < 4; l++)
        CHECK(h->level[l + 1]->nv == h->level[l]->nv + edge_count(h->level[l]));
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

TW_TEST(children_fill_parent)
{
    tw_mesh *b = small_bar();
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 3);
    CHECK(h);
    double worst_vol = 0, worst_bary = 0, min_det = INFINITY;
    for (int l = 1; l < 3; l++) {
        const tw_mesh *c = h->level[l - 1], *f = h->level[l];
        for (int p = 0; p < c->nt; p++) {
            const double pd = tw_mesh_det(c, p);
            double sum = 0;
            for (int k = 0; k < 8; k++) {
                const int e = 8 * p + k;
                const double d = tw_mesh_det(f, e);
                if (!(d >= min_det))
                    min_det = d / pd;
                sum += d;
                for (int q = 0; q < 4; q++) {
                    double lam[4];
                    barycentric(vtx(c, p, 0), vtx(c, p, 1), vtx(c, p, 2), vtx(c, p, 3), vtx(f, e, q), lam);
                    for (int i = 0; i < 4; i++)
                        worst_bary = tw_test_max(worst_bary, lam[i] < 0 ? -lam[i] : lam[i] - 1);
                }
            }
            worst_vol = tw_test_max(worst_vol, fabs(sum - pd) / pd);
        }
    }
    CHECK(worst_vol <= 1e-12);
    CHECK(worst_bary <= 1e-12);
    /* every child positively oriented, 1/8 of its parent's volume */
    CHECK(min_det > 0);
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

TW_TEST(every_child_is_an_eighth)
{
    tw_mesh *b = small_bar();
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 2);
    CHECK(h);
    double worst = 0;
    for (int e = 0; e < h->level[1]->nt; e++) {
        const double r = tw_mesh_det(h->level[1], e) / tw_mesh_det(b, e / 8);
        worst = tw_test_max(worst, fabs(r - 0.125));
    }
    CHECK(worst <= 1e-12);
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

TW_TEST(transfer_linear_exact)
{
    tw_mesh *b = tw_mesh_load(tw_test_mesh_path("armadillo_4k.ele"), NULL, NULL);
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 3);
    CHECK(h);
    for (int l = 0; l + 1 < 3; l++) {
        const tw_transfer *P = &h->P[l];
        const tw_mesh *c = h->level[l], *f = h->level[l + 1];
        CHECK(tw_transfer_row_sum_error(P) <= 1e-15);
        CHECK(tw_transfer_position_error(P, c, f) <= 1e-12);
        /* a linear field u(x) = a + B x, prolonged, equals u at the fine vertices */
        const double a[3] = {0.3, -0.2, 0.1};
        const double B[3][3] = {{0.5, -1.0, 0.25}, {2.0, 0.1, -0.3}, {-0.7, 0.4, 1.5}};
        tw_real *uc = malloc(3 * (size_t)c->nv * sizeof *uc);
        tw_real *uf = malloc(3 * (size_t)f->nv * sizeof *uf);
        CHECK(uc && uf);
        double scale = 0;
        for (int i = 0; i < c->nv; i++)
            for (int d = 0; d < 3; d++) {
                double s = a[d];
                for (int k = 0; k < 3; k++)
                    s += B[d][k] * c->X[3 * (size_t)i + k];
                uc[3 * (size_t)i + d] = (tw_real)s;
                scale = tw_test_max(scale, fabs(s));
            }
        tw_transfer_prolong(P, uc, uf);
        double worst = 0;
        for (int i = 0; i < f->nv; i++)
            for (int d = 0; d < 3; d++) {
                double s = a[d];
                for (int k = 0; k < 3; k++)
                    s += B[d][k] * f->X[3 * (size_t)i + k];
                worst = tw_test_max(worst, fabs(s - (double)uf[3 * (size_t)i + d]));
            }
        free(uc);
        free(uf);
        /* the rounding of tw_real (float or double), not of the method */
        const double eps = sizeof(tw_real) == 4 ? 1e-6 : 1e-14;
        CHECK(worst <= 4 * eps * scale);
    }
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

/* Faces as sorted triples, counted by sorting. */
static int cmp3(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

static void sort3(int *t)
{
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (t[j] < t[i]) {
                const int s = t[i];
                t[i] = t[j];
                t[j] = s;
            }
}

/* Every face of m is shared by at most 2 tets, and one of exactly 1 tet
 * lies on the box [0,L]x[0,W]x[0,H]'s surface; returns the count of
 * boundary faces, or -1. */
static int conforming_box(const tw_mesh *m, double L, double W, double H)
{
    int *f = malloc(12 * (size_t)m->nt * sizeof *f);
    if (!f)
        return -1;
    static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    for (int e = 0; e < m->nt; e++)
        for (int k = 0; k < 4; k++) {
            int *t = f + 3 * (4 * (size_t)e + k);
            for (int j = 0; j < 3; j++)
                t[j] = m->tets[4 * (size_t)e + face[k][j]];
            sort3(t);
        }
    const size_t n = 4 * (size_t)m->nt;
    qsort(f, n, 3 * sizeof *f, cmp3);
    int boundary = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && cmp3(f + 3 * i, f + 3 * j) == 0)
            j++;
        if (j - i > 2) {
            free(f);
            return -1;
        }
        if (j - i == 1) {
            /* a boundary face: all three vertices on one side of the box */
            const double lim[3] = {L, W, H};
            int on = 0;
            for (int d = 0; d < 3 && !on; d++)
                for (int s = 0; s < 2 && !on; s++) {
                    int all = 1;
                    for (int q = 0; q < 3; q++)
                        if (fabs(m->X[3 * (size_t)f[3 * i + q] + d] - (s ? lim[d] : 0)) > 1e-12)
                            all = 0;
                    on = all;
                }
            if (!on) {
                free(f);
                return -1;
            }
            boundary++;
        }
        i = j;
    }
    free(f);
    return boundary;
}

TW_TEST(refined_bar_conforms)
{
    tw_mesh *b = tw_mesh_bar(3.0, 1.0, 1.0, 3, 1, 1);
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 3);
    CHECK(h);
    const int b0 = conforming_box(h->level[0], 3, 1, 1);
    CHECK(b0 > 0);
    for (int l = 1; l < 3; l++) {
        const int bl = conforming_box(h->level[l], 3, 1, 1);
        /* each boundary triangle splits into 4 */
        CHECK(bl == b0 << (2 * l));
    }
    /* a refined level refined again (a new hierarchy on level 1) conforms too */
    tw_hierarchy *h2 = tw_hier_nested(h->level[1], 2);
    CHECK(h2);
    CHECK(conforming_box(h2->level[1], 3, 1, 1) == b0 << 4);
    tw_hier_free(h2);
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

/* The shortest-diagonal cut keeps the shape: the worst child's quality (its
 * volume over its longest edge cubed) does not fall with the level. */
TW_TEST(quality_does_not_degrade)
{
    tw_mesh *b = tw_mesh_load(tw_test_mesh_path("armadillo_4k.ele"), NULL, NULL);
    CHECK(b);
    tw_hierarchy *h = tw_hier_nested(b, 3);
    CHECK(h);
    double q[3];
    for (int l = 0; l < 3; l++) {
        const tw_mesh *m = h->level[l];
        double worst = INFINITY;
        for (int e = 0; e < m->nt; e++) {
            double lmax = 0;
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++) {
                    const double *a = vtx(m, e, i), *c = vtx(m, e, j);
                    const double d = sqrt((a[0] - c[0]) * (a[0] - c[0]) + (a[1] - c[1]) * (a[1] - c[1]) +
                                          (a[2] - c[2]) * (a[2] - c[2]));
                    if (d > lmax)
                        lmax = d;
                }
            const double qe = tw_mesh_det(m, e) / (lmax * lmax * lmax);
            if (!(qe >= worst))
                worst = qe;
        }
        q[l] = worst;
    }
    printf("worst quality per level: %g %g %g\n", q[0], q[1], q[2]);
    /* the octahedron's tets can be worse than their parent, but not much,
     * and a second refinement loses no more than the first */
    CHECK(q[1] >= 0.5 * q[0]);
    CHECK(q[2] >= 0.99 * q[1] * (q[1] / q[0] < 1 ? q[1] / q[0] : 1));
    /* the octahedron is cut along its shortest diagonal: children 4..7
     * share their first two vertices, the ends of the diagonal */
    const tw_mesh *c = h->level[0], *f = h->level[1];
    for (int p = 0; p < c->nt; p++) {
        const double *a = vtx(f, 8 * p + 4, 0), *d = vtx(f, 8 * p + 4, 1);
        const double chosen = sqrt((a[0] - d[0]) * (a[0] - d[0]) + (a[1] - d[1]) * (a[1] - d[1]) +
                                   (a[2] - d[2]) * (a[2] - d[2]));
        static const int opposite[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}};
        for (int k = 0; k < 3; k++) {
            double s = 0;
            for (int i = 0; i < 3; i++) {
                const double m1 = 0.5 * (vtx(c, p, opposite[k][0])[i] + vtx(c, p, opposite[k][1])[i]);
                const double m2 = 0.5 * (vtx(c, p, opposite[k][2])[i] + vtx(c, p, opposite[k][3])[i]);
                s += (m1 - m2) * (m1 - m2);
            }
            CHECK(chosen <= sqrt(s) * (1 + 1e-12));
        }
        for (int k = 5; k < 8; k++)
            CHECK(vtx(f, 8 * p + k, 0) == a && vtx(f, 8 * p + k, 1) == d);
    }
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}

TW_TEST(levels_out_of_range)
{
    tw_mesh *b = tw_mesh_bar(1, 1, 1, 1, 1, 1);
    CHECK(b);
    CHECK(tw_hier_nested(b, 0) == NULL);
    CHECK(strstr(tw_last_error(), "0 levels") != NULL);
    CHECK(tw_hier_nested(NULL, 2) == NULL);
    tw_hierarchy *h = tw_hier_nested(b, 1);
    CHECK(h && h->n_levels == 1 && h->level[0]->nt == b->nt);
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}
