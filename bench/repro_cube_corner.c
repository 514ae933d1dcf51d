/* tw_repro_cube_corner — Debunne et al. 2001 fig. 4/5: the vertical position
 * of a cube corner over time at three resolutions, linear (Cauchy) versus
 * Green strain, with and without damping.
 *
 * Scene (as the paper's test: a cube attached by one side to a vertical wall,
 * released from its undeformed horizontal position under gravity): a
 * 0.2 m cube tw_mesh_bar(0.2, 0.2, 0.2, n, n, n), vertices at x < 1e-6
 * pinned, gravity -z, E 2e4 Pa, nu 0.3, rho 1000. n = 2, 3, 4 cells per side
 * give 27, 64, 125 nodes (the paper: 27, 57, 135). Explicit Newmark at the
 * automatic step (0.5 x Courant), as the paper's explicit integration;
 * "damped" = mass-proportional damping alpha 4 1/s (explicit Newmark has no
 * stiffness damping), "undamped" = none. 2 s simulated. The corner is the
 * free corner (0.2, 0, 0.2); its z is written every 5 ms (linear
 * interpolation between steps, so resolutions with different steps align).
 *
 * usage: tw_repro_cube_corner [--csv OUT.csv] [--E PA] [--cells 2,3,4] [--time S]
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *csv = NULL;
    double E = 2e4, T = 2.0, alpha_damped = 4.0, L = 0.2, sample = 0.005;
    int cells[8] = {2, 3, 4}, nc = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--E") && i + 1 < argc) E = atof(argv[++i]);
        else if (!strcmp(argv[i], "--time") && i + 1 < argc) T = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cells") && i + 1 < argc) {
            nc = 0;
            for (char *t = strtok(argv[++i], ","); t && nc < 8; t = strtok(NULL, ",")) cells[nc++] = atoi(t);
        } else {
            fprintf(stderr, "usage: %s [--csv OUT.csv] [--E PA] [--cells 2,3,4] [--time S]\n", argv[0]);
            return 2;
        }
    }
    FILE *out = csv ? fopen(csv, "w") : stdout;
    if (!out) return 1;
    fprintf(out, "# cube %g m, pinned x<1e-6, E %g, nu 0.3, rho 1000, explicit Newmark auto dt, corner (L,0,L); real %s\n",
            L, E, tw_real_name());
    fprintf(out, "cells,nodes,tets,method,damping_alpha,dt_s,time_s,corner_z_m\n");
    const tw_method methods[2] = {TW_LINEAR, TW_GREEN};
    for (int c = 0; c < nc; c++) {
        int n = cells[c];
        tw_mesh *m = tw_mesh_bar(L, L, L, n, n, n);
        const double *X = tw_mesh_positions(m);
        int corner = 0;
        for (int i = 0; i < tw_mesh_vertex_count(m); i++) {
            double dx = X[3 * i] - L, dy = X[3 * i + 1], dz = X[3 * i + 2] - L;
            double e = dx * dx + dy * dy + dz * dz;
            double b = pow(X[3 * corner] - L, 2) + pow(X[3 * corner + 1], 2) + pow(X[3 * corner + 2] - L, 2);
            if (e < b) corner = i;
        }
        for (int a = 0; a < 2; a++)
            for (int damped = 0; damped < 2; damped++) {
                tw_world_def d = tw_default_world_def();
                d.method = methods[a];
                d.youngs_modulus = E;
                d.integrator = TW_EXPLICIT_NEWMARK;
                d.dt = 0;
                d.damping_mass = damped ? alpha_damped : 0;
                d.damping_stiffness = 0;
                d.threads = 1;
                tw_world *w = tw_world_create(m, &d);
                if (!w) {
                    fprintf(stderr, "%s\n", tw_last_error());
                    return 1;
                }
                tw_world_pin_where(w, 0, 1, 1e-6);
                double dt = tw_world_dt(w), zprev = X[3 * corner + 2], tprev = 0, zmin = zprev;
                int k = 0, ok = 1;
                fprintf(out, "%d,%d,%d,%s,%g,%.5g,%.4f,%.6f\n", n, tw_mesh_vertex_count(m), tw_mesh_tet_count(m),
                        tw_method_name(methods[a]), d.damping_mass, dt, 0.0, zprev);
                int next = 1;
                while (next * sample <= T + 1e-9) {
                    if (tw_world_step(w, NULL) != TW_OK) {
                        fprintf(stderr, "cells %d %s alpha %g: %s\n", n, tw_method_name(methods[a]), d.damping_mass,
                                tw_last_error());
                        ok = 0;
                        break;
                    }
                    k++;
                    double t = tw_world_time(w), z = tw_world_positions(w)[3 * corner + 2];
                    zmin = fmin(zmin, z);
                    while (next * sample <= t + 1e-12 && next * sample <= T + 1e-9) {
                        double ts = next * sample, u = (ts - tprev) / (t - tprev);
                        fprintf(out, "%d,%d,%d,%s,%g,%.5g,%.4f,%.6f\n", n, tw_mesh_vertex_count(m),
                                tw_mesh_tet_count(m), tw_method_name(methods[a]), d.damping_mass, dt, ts,
                                zprev + u * (z - zprev));
                        next++;
                    }
                    tprev = t, zprev = z;
                }
                fprintf(stderr, "cells %d (%d nodes) %-7s alpha %g: dt %.3g s, %d steps, lowest corner z %.4f m%s\n", n,
                        tw_mesh_vertex_count(m), tw_method_name(methods[a]), d.damping_mass, dt, k, zmin,
                        ok ? "" : " (FAILED)");
                tw_world_destroy(w);
            }
        tw_mesh_destroy(m);
    }
    if (csv) fclose(out);
    return 0;
}
