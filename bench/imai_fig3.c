/* Imai et al. 2013 fig. 3: the stress of one coarse tet against the
 * magnitude alpha of a strain basis, sampled by relaxing its finest
 * descendants, with the fitted slope and the valid range of eq. 4-5. A unit
 * cube (6 tets) refined three times, the finest tets in slabs of E 1e5 and
 * 1e6 Pa across z; tet 0 of the base, bases zz (m = 2) and xy (m = 5).
 *
 *   tw_bench_imai_fig3 > fig3.csv      (alpha,basis,component,sigma,fit,in_range)
 * the estimate (C's column and the ranges) on stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mesh.h"
#include "tetra_tree.h"

int main(void)
{
    tw_mesh *b = tw_mesh_bar(1, 1, 1, 1, 1, 1);
    tw_hierarchy *h = b ? tw_hier_nested(b, 4) : NULL;
    if (!h) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    const tw_mesh *f = h->level[3];
    double *E = malloc(sizeof *E * f->nt), *nu = malloc(sizeof *nu * f->nt);
    for (int e = 0; e < f->nt; e++) {
        double z = 0;
        for (int k = 0; k < 4; k++)
            z += 0.25 * f->X[3 * f->tets[4 * e + k] + 2];
        E[e] = (int)floor(z * 8) % 2 ? 1e6 : 1e5;
        nu[e] = 0.3;
    }
    const double t1 = 1e-2, t2 = 3e-6;
    double C[36], amin[6], amax[6];
    const int failed = tw_tetra_tree_estimate_one(h, 0, 0, E, nu, t1, t2, C, amin, amax);
    fprintf(stderr, "tet 0 of the base, 512 finest tets in E slabs 1e5/1e6, T1 %g, T2 %g: %d samples failed\n", t1, t2,
            failed);
    static const char *name[6] = {"xx", "yy", "zz", "yz", "xz", "xy"};
    for (int m = 0; m < 6; m++) {
        fprintf(stderr, "basis %s: range [%g, %g], C column", name[m], amin[m], amax[m]);
        for (int j = 0; j < 6; j++)
            fprintf(stderr, " %.4g", C[6 * j + m]);
        fprintf(stderr, "\n");
    }
    printf("alpha,basis,component,sigma,fit,in_range\n");
    const int bases[2] = {2, 5};
    for (int bi = 0; bi < 2; bi++) {
        const int m = bases[bi];
        for (int k = -60; k <= 60; k++) {
            const double a = 0.005 * k;
            double s[6];
            if (k == 0 || tw_tetra_tree_response(h, 0, 0, E, nu, m, a, s) != TW_OK)
                continue;
            for (int j = 0; j < 6; j++)
                printf("%.4g,%s,%s,%.9g,%.9g,%d\n", a, name[m], name[j], s[j], a * C[6 * j + m],
                       a >= amin[m] && a <= amax[m]);
        }
    }
    free(E);
    free(nu);
    tw_hier_free(h);
    tw_mesh_destroy(b);
    return 0;
}
