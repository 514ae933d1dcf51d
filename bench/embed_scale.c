/* Embedding a render surface at scale: the 69k Stanford scan against tet
 * meshes of growing size. Prints one CSV row per mesh:
 *
 *   mesh,tets,vertices,surface_vertices,inside,outside,max_distance_m,
 *   min_weight,grid,threads,embed_ms,tet_grid_ms,boundary_ms,apply_ms,
 *   normals_ms,rest_error_m
 *
 * The meshes: bars of about 10k, 100k and 1M tets spanning the scan's
 * bounding box (every scan vertex inside: the containing-tet path), then
 * any tet meshes named on the command line (real bunnies: 2/3 of the scan
 * vertices lie up to 1.1 mm outside the coarser closed surface: the
 * nearest-face path).
 * embed_ms is the whole tw_embed_surface call (grids built, all vertices
 * located; tet_grid_ms and boundary_ms are its parts that build the search
 * structures); apply and normals are the per-frame costs, the best of 5.
 *
 * usage: tw_bench_embed_scale SCAN.obj [MESH ...] > embed_scale.csv */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "embed.h" /* tw_points_bbox */
#include "tetwarp.h"

double tw_now_ms(void);

static int row(const char *name, const tw_mesh *m, const tw_surface *s)
{
    tw_embed_report rep;
    tw_embedding *e = tw_embed_surface(m, s, 0, &rep);
    if (!e) {
        fprintf(stderr, "%s: %s\n", name, tw_last_error());
        return 1;
    }
    int n = tw_mesh_vertex_count(m), ns = s->vertex_count;
    tw_real *x = malloc(3 * sizeof(tw_real) * (size_t)n);
    float *xyz = malloc(3 * sizeof(float) * (size_t)ns), *nrm = malloc(3 * sizeof(float) * (size_t)ns);
    for (int i = 0; i < 3 * n; i++) x[i] = (tw_real)tw_mesh_positions(m)[i];
    double apply = DBL_MAX, normals = DBL_MAX;
    for (int r = 0; r < 5; r++) {
        double t0 = tw_now_ms();
        tw_embedding_apply(e, x, xyz);
        double t1 = tw_now_ms();
        tw_embedding_normals(e, xyz, nrm);
        double t2 = tw_now_ms();
        if (t1 - t0 < apply) apply = t1 - t0;
        if (t2 - t1 < normals) normals = t2 - t1;
    }
    double err = 0;
    for (int i = 0; i < 3 * ns; i++)
        if (fabs(xyz[i] - s->positions[i]) > err) err = fabs(xyz[i] - s->positions[i]);
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    printf("%s,%d,%d,%d,%d,%d,%.4g,%.4g,%dx%dx%d,%d,%.2f,%.2f,%.2f,%.3f,%.3f,%.3g\n", name, tw_mesh_tet_count(m), n, ns,
           rep.inside, rep.outside, rep.max_distance, rep.min_weight, rep.grid_cells[0], rep.grid_cells[1],
           rep.grid_cells[2], threads, rep.ms, rep.ms_tet_grid, rep.ms_boundary, apply, normals, err);
    fflush(stdout);
    free(x);
    free(xyz);
    free(nrm);
    tw_embedding_destroy(e);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCAN.obj [MESH ...]\n", argv[0]);
        return 2;
    }
    tw_surface *s = tw_surface_load(argv[1]);
    if (!s) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    double lo[3], hi[3], ext[3];
    tw_points_bbox(s->positions, s->vertex_count, lo, hi);
    for (int a = 0; a < 3; a++) ext[a] = hi[a] - lo[a];
    printf("mesh,tets,vertices,surface_vertices,inside,outside,max_distance_m,min_weight,grid,threads,embed_ms,"
           "tet_grid_ms,boundary_ms,apply_ms,normals_ms,rest_error_m\n");
    /* bars over the scan's box: the scan shifted to the bar's frame */
    tw_surface shifted = *s;
    shifted.positions = malloc(3 * sizeof(double) * (size_t)s->vertex_count);
    for (int i = 0; i < s->vertex_count; i++)
        for (int a = 0; a < 3; a++) shifted.positions[3 * i + a] = s->positions[3 * i + a] - lo[a];
    const double targets[3] = {1e4, 1e5, 1e6};
    int fail = 0;
    for (int k = 0; k < 3; k++) {
        double scale = cbrt(targets[k] / 6 / (ext[0] * ext[1] * ext[2]));
        int nx = (int)lround(ext[0] * scale), ny = (int)lround(ext[1] * scale), nz = (int)lround(ext[2] * scale);
        tw_mesh *m = tw_mesh_bar(ext[0], ext[1], ext[2], nx, ny, nz);
        if (!m) {
            fprintf(stderr, "%s\n", tw_last_error());
            return 1;
        }
        char name[64];
        snprintf(name, sizeof name, "bar_%dx%dx%d", nx, ny, nz);
        fail |= row(name, m, &shifted);
        tw_mesh_destroy(m);
    }
    free(shifted.positions);
    for (int i = 2; i < argc; i++) {
        tw_mesh_load_def ld = tw_default_mesh_load_def();
        ld.quiet = 1;
        double t0 = tw_now_ms();
        tw_mesh *m = tw_mesh_load(argv[i], &ld, NULL);
        if (!m) {
            fprintf(stderr, "%s\n", tw_last_error());
            return 1;
        }
        fprintf(stderr, "%s: loaded in %.0f ms\n", argv[i], tw_now_ms() - t0);
        const char *base = strrchr(argv[i], '/');
        fail |= row(base ? base + 1 : argv[i], m, s);
        tw_mesh_destroy(m);
    }
    tw_surface_destroy(s);
    return fail;
}
