/* Non-nested levels: point location (the transfer P) and the Voronoi
 * parents, on two independent meshes of the unit cube (a 2x2x2 bar and a
 * 5x5x5 one with its interior vertices jittered, so that no fine vertex
 * sits on a coarse one by construction and the fine tets cross the coarse
 * faces). */
#include <stdlib.h>
#include <string.h>

#include "hierarchy.h"
#include "mesh.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

/* The unit cube as an n^3 bar, interior vertices moved by up to `amount`
 * cells, then the whole shifted by `shift` along x. */
static tw_mesh *cube(int n, double amount, double shift)
{
    return tw_test_jittered_cube(1, n, amount, shift, 12345u);
}

static double row_apply(const tw_transfer *P, int i, const double *coarse_values)
{
    double s = 0;
    for (int k = 0; k < TW_HIER_ROW; k++)
        s += P->w[TW_HIER_ROW * i + k] * coarse_values[P->idx[TW_HIER_ROW * i + k]];
    return s;
}

/* A linear field on the coarse level, prolonged, equals the field at every
 * fine vertex (all inside the coarse mesh here). */
TW_TEST(locate_reproduces_linear_fields)
{
    tw_mesh *c = cube(2, 0, 0), *f = cube(5, 0.3, 0);
    CHECK(c && f);
    tw_transfer P;
    CHECK_OK(tw_transfer_locate(c, f, &P));
    CHECK(P.n_fine == f->nv && P.n_coarse == c->nv);
    double *u = malloc(sizeof *u * (size_t)c->nv);
    double worst = 0;
    for (int field = 0; field < 4; field++) {
        for (int j = 0; j < c->nv; j++) {
            const double *x = c->X + 3 * j;
            u[j] = field < 3 ? x[field] : 0.5 - 2 * x[0] + 3.25 * x[1] - 0.75 * x[2];
        }
        for (int i = 0; i < f->nv; i++) {
            const double *x = f->X + 3 * i;
            const double exact = field < 3 ? x[field] : 0.5 - 2 * x[0] + 3.25 * x[1] - 0.75 * x[2];
            worst = tw_test_max(worst, fabs(row_apply(&P, i, u) - exact));
        }
    }
    free(u);
    CHECK_NEAR(worst, 0, 1e-12);
    CHECK_NEAR(tw_transfer_position_error(&P, c, f), 0, 1e-12);
    tw_transfer_free(&P);
    tw_mesh_destroy(c);
    tw_mesh_destroy(f);
    return 0;
}

/* Every row has 4 valid indices and weights in [0, 1] (up to the location
 * tolerance) summing to 1, inside and outside alike. */
TW_TEST(locate_rows_sum_to_one)
{
    tw_mesh *c = cube(2, 0, 0), *f = cube(5, 0.3, 0.3);
    CHECK(c && f);
    tw_transfer P;
    CHECK_OK(tw_transfer_locate(c, f, &P));
    CHECK_NEAR(tw_transfer_row_sum_error(&P), 0, 1e-12);
    for (int i = 0; i < TW_HIER_ROW * P.n_fine; i++) {
        CHECK(P.idx[i] >= 0 && P.idx[i] < c->nv);
        CHECK(P.w[i] >= -1e-9 && P.w[i] <= 1 + 1e-9);
    }
    tw_transfer_free(&P);
    tw_mesh_destroy(c);
    tw_mesh_destroy(f);
    return 0;
}

/* A fine vertex outside the coarse mesh (the fine cube shifted by 0.3 along
 * x) gets the weights of the closest point of the coarse mesh: for a box,
 * the vertex clamped into it; vertices inside keep their positions. */
TW_TEST(locate_clamps_outside_vertices)
{
    tw_mesh *c = cube(2, 0, 0), *f = cube(5, 0.3, 0.3);
    CHECK(c && f);
    tw_transfer P;
    CHECK_OK(tw_transfer_locate(c, f, &P));
    int outside = 0;
    double worst = 0;
    for (int i = 0; i < f->nv; i++) {
        const double *x = f->X + 3 * i;
        if (x[0] > 1)
            outside++;
        for (int d = 0; d < 3; d++) {
            double s = 0;
            for (int k = 0; k < TW_HIER_ROW; k++)
                s += P.w[TW_HIER_ROW * i + k] * c->X[3 * P.idx[TW_HIER_ROW * i + k] + d];
            const double clamped = x[d] < 0 ? 0 : (x[d] > 1 ? 1 : x[d]);
            worst = tw_test_max(worst, fabs(s - clamped));
        }
    }
    CHECK(outside > 0);
    CHECK_NEAR(worst, 0, 1e-12);
    tw_transfer_free(&P);
    tw_mesh_destroy(c);
    tw_mesh_destroy(f);
    return 0;
}

/* The hierarchy copies the meshes, builds P per pair and gives every fine
 * vertex exactly one parent: a coarse vertex, the nearest one (checked by
 * brute force). */
TW_TEST(nonnested_voronoi_parents_are_nearest)
{
    tw_mesh *m[3] = {cube(2, 0, 0), cube(3, 0.25, 0), cube(5, 0.3, 0)};
    CHECK(m[0] && m[1] && m[2]);
    tw_hierarchy *h = tw_hier_nonnested((const tw_mesh *const *)m, 3);
    CHECK(h);
    CHECK(h->kind == TW_HIER_NONNESTED && h->n_levels == 3);
    CHECK(h->parent_tet == NULL && h->parent_vertex[0] == NULL);
    for (int l = 0; l < 3; l++)
        CHECK(h->level[l] != m[l] && h->level[l]->nv == m[l]->nv);
    for (int l = 1; l < 3; l++) {
        const tw_mesh *c = h->level[l - 1], *f = h->level[l];
        CHECK(h->P[l - 1].n_fine == f->nv && h->P[l - 1].n_coarse == c->nv);
        CHECK_NEAR(tw_transfer_position_error(&h->P[l - 1], c, f), 0, 1e-12);
        /* the parents' Voronoi regions partition the fine vertices */
        int *count = calloc((size_t)c->nv, sizeof *count);
        int total = 0;
        for (int i = 0; i < f->nv; i++) {
            const int p = h->parent_vertex[l][i];
            CHECK(p >= 0 && p < c->nv);
            count[p]++;
            double best = 1e300, dp = 0;
            for (int j = 0; j < c->nv; j++) {
                double s = 0;
                for (int d = 0; d < 3; d++)
                    s += (c->X[3 * j + d] - f->X[3 * i + d]) * (c->X[3 * j + d] - f->X[3 * i + d]);
                if (s < best)
                    best = s;
                if (j == p)
                    dp = s;
            }
            CHECK_NEAR(dp, best, 0);
        }
        for (int j = 0; j < c->nv; j++)
            total += count[j];
        free(count);
        CHECK(total == f->nv);
    }
    tw_hier_free(h);
    for (int l = 0; l < 3; l++)
        tw_mesh_destroy(m[l]);
    return 0;
}

TW_TEST(nonnested_rejects_missing_meshes)
{
    CHECK(tw_hier_nonnested(NULL, 2) == NULL);
    const tw_mesh *none[2] = {NULL, NULL};
    CHECK(tw_hier_nonnested(none, 2) == NULL);
    CHECK(strstr(tw_last_error(), "mesh 0") != NULL);
    return 0;
}
