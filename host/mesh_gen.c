/* Structured tet meshes: a box and a tube.
 *
 * Both are a grid of hexahedral cells in parameter space (i,j,k), each cut
 * into the 6 tets of the Kuhn (Freudenthal) split: for every permutation
 * (p,q,r) of the three axes, the tet walks from corner 000 along +p, then +q,
 * then +r to corner 111. Cells are mirrored along every axis whose cell index
 * is odd (corner c becomes c XOR flip): cutting every cell the same way would
 * give the mesh a preferred diagonal, and a bar bent in z would also bend in
 * y (measured 7 % of the deflection on a 40x4x4 bar). A face's diagonal
 * depends only on the flips of the two axes in its plane, which neighbours
 * across it share, so the tets still conform. Each tet
 * is checked after mapping and its last two vertices swapped where it came
 * out negative (odd permutations), so all are positively oriented. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "mesh.h"

static const int tw_perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* vertex index of grid point (i,j,k); the j axis wraps when wrap_j */
typedef struct grid {
    int ni, nj, nk; /* cells */
    int wrap_j;
} grid;

static int grid_vertex(const grid *g, int i, int j, int k)
{
    int vj = g->wrap_j ? g->nj : g->nj + 1;
    if (g->wrap_j) j %= g->nj;
    return i + (g->ni + 1) * (j + vj * k);
}

/* Fills tets (6 per cell) and fixes orientation against X. */
static void kuhn_split(const grid *g, const double *X, int *tets)
{
    size_t t = 0;
    for (int k = 0; k < g->nk; k++)
        for (int j = 0; j < g->nj; j++)
            for (int i = 0; i < g->ni; i++)
                for (int p = 0; p < 6; p++) {
                    /* a wrapped axis stays unmirrored unless its cell count is even */
                    int flip[3] = {i & 1, (g->wrap_j && g->nj % 2) ? 0 : j & 1, k & 1};
                    int c[3] = {flip[0], flip[1], flip[2]};
                    int *out = tets + 4 * t;
                    out[0] = grid_vertex(g, i + c[0], j + c[1], k + c[2]);
                    for (int s = 0; s < 3; s++) {
                        c[tw_perms[p][s]] ^= 1;
                        out[s + 1] = grid_vertex(g, i + c[0], j + c[1], k + c[2]);
                    }
                    double det = tw_tet_det(X + 3 * (size_t)out[0], X + 3 * (size_t)out[1],
                                            X + 3 * (size_t)out[2], X + 3 * (size_t)out[3]);
                    if (det < 0) {
                        int s = out[2];
                        out[2] = out[3];
                        out[3] = s;
                    }
                    t++;
                }
}

/* Allocates X and tets for vertex and cell counts (checked against int). */
static int alloc_grid(const char *what, double nvd, double ncd, double **X, int **tets)
{
    *X = NULL;
    *tets = NULL;
    if (nvd > 2e9 || 6.0 * ncd > 2e9) {
        tw_fail(TW_ERR_INVALID, "%s: %.0f vertices and %.0f tets are too many (limit 2e9)", what,
                nvd, 6.0 * ncd);
        return 0;
    }
    *X = tw_malloc((size_t)nvd * 3 * sizeof **X, "generated positions");
    *tets = tw_malloc((size_t)ncd * 6 * 4 * sizeof **tets, "generated tets");
    if (!*X || !*tets) {
        free(*X);
        free(*tets);
        *X = NULL;
        *tets = NULL;
        return 0;
    }
    return 1;
}

static int positive(double x) { return isfinite(x) && x > 0; }

tw_mesh *tw_mesh_bar(double length, double width, double height, int nx, int ny, int nz)
{
    if (!positive(length) || !positive(width) || !positive(height)) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_bar: size must be positive and finite (length %g, width %g, height %g)",
                length, width, height);
        return NULL;
    }
    if (nx < 1 || ny < 1 || nz < 1) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_bar: cell counts must be >= 1 (nx %d, ny %d, nz %d)", nx,
                ny, nz);
        return NULL;
    }
    double nvd = (nx + 1.0) * (ny + 1.0) * (nz + 1.0), ncd = (double)nx * ny * nz;
    double *X;
    int *tets;
    if (!alloc_grid("tw_mesh_bar", nvd, ncd, &X, &tets)) return NULL;
    for (int k = 0; k <= nz; k++)
        for (int j = 0; j <= ny; j++)
            for (int i = 0; i <= nx; i++) {
                size_t v = (size_t)i + (size_t)(nx + 1) * ((size_t)j + (size_t)(ny + 1) * k);
                X[3 * v] = length * i / nx;
                X[3 * v + 1] = width * j / ny;
                X[3 * v + 2] = height * k / nz;
            }
    grid g = {nx, ny, nz, 0};
    kuhn_split(&g, X, tets);
    char name[160];
    snprintf(name, sizeof name, "bar %gx%gx%g (%dx%dx%d cells)", length, width, height, nx, ny, nz);
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    return tw_mesh_adopt(X, (int)nvd, tets, (int)(6 * ncd), NULL, name, &def, NULL);
}

tw_mesh *tw_mesh_tube(double inner_radius, double outer_radius, double length, int nr,
                      int ntheta, int nl)
{
    if (!positive(inner_radius) || !positive(outer_radius) || !positive(length)) {
        tw_fail(TW_ERR_INVALID,
                "tw_mesh_tube: radii and length must be positive and finite (inner %g, outer %g, length %g)",
                inner_radius, outer_radius, length);
        return NULL;
    }
    if (!(inner_radius < outer_radius)) {
        tw_fail(TW_ERR_INVALID, "tw_mesh_tube: inner radius %g must be less than outer radius %g",
                inner_radius, outer_radius);
        return NULL;
    }
    if (nr < 1 || ntheta < 3 || nl < 1) {
        tw_fail(TW_ERR_INVALID,
                "tw_mesh_tube: need nr >= 1, ntheta >= 3, nl >= 1 (nr %d, ntheta %d, nl %d)", nr,
                ntheta, nl);
        return NULL;
    }
    double nvd = (nr + 1.0) * ntheta * (nl + 1.0), ncd = (double)nr * ntheta * nl;
    double *X;
    int *tets;
    if (!alloc_grid("tw_mesh_tube", nvd, ncd, &X, &tets)) return NULL;
    grid g = {nr, ntheta, nl, 1};
    const double two_pi = 6.28318530717958647692;
    for (int k = 0; k <= nl; k++)
        for (int j = 0; j < ntheta; j++)
            for (int i = 0; i <= nr; i++) {
                size_t v = (size_t)grid_vertex(&g, i, j, k);
                double r = inner_radius + (outer_radius - inner_radius) * i / nr;
                double th = two_pi * j / ntheta;
                X[3 * v] = length * k / nl;
                X[3 * v + 1] = r * cos(th);
                X[3 * v + 2] = r * sin(th);
            }
    kuhn_split(&g, X, tets);
    char name[160];
    snprintf(name, sizeof name, "tube r %g..%g, length %g (%dx%dx%d cells)", inner_radius,
             outer_radius, length, nr, ntheta, nl);
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    return tw_mesh_adopt(X, (int)nvd, tets, (int)(6 * ncd), NULL, name, &def, NULL);
}
