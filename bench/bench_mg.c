/* The multigrid benchmarks' scenes and residual (bench_mg.h) */
#include "bench_mg.h"

#include <math.h>
#include <stdio.h>

tw_mesh *bench_mg_scene(const char *scene, int *is_bar)
{
    int nx, ny, nz;
    *is_bar = sscanf(scene, "bar:%d,%d,%d", &nx, &ny, &nz) == 3;
    if (*is_bar) return tw_mesh_bar(1, (double)ny / nx, (double)nz / nx, nx, ny, nz);
    tw_mesh_load_def d = tw_default_mesh_load_def();
    d.quiet = 1;
    return tw_mesh_load(scene, &d, NULL);
}

double bench_mg_rel_residual(const tw_bsr *A, const tw_real *b, const double *v, const unsigned char *fixed)
{
    double rr = 0, bb = 0;
    for (int i = 0; i < A->n; i++) {
        if (fixed[i]) continue;
        for (int c = 0; c < 3; c++) {
            double s = b[3 * i + c];
            for (int k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
                const int j = A->col[k];
                if (fixed[j]) continue;
                for (int d = 0; d < 3; d++) s -= (double)A->val[9 * k + 3 * c + d] * v[3 * j + d];
            }
            rr += s * s;
            bb += (double)b[3 * i + c] * b[3 * i + c];
        }
    }
    return bb > 0 ? sqrt(rr / bb) : sqrt(rr);
}
