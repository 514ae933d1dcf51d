/* tw_repro_force_error — Hauth & Straßer: how far each method's elastic force
 * is from the Green-strain (StVK) force on a rotated, sheared cube.
 *
 * Cube tw_mesh_bar(1, 1, 1, 4, 4, 4) (384 tets, 125 vertices), centre c.
 * Imposed positions x = c + R_y(theta) (I + gamma e_x e_z^T) (X - c): a simple
 * shear of the x-z plane, then a rigid rotation about y (the axis normal to
 * the shear plane). For each method, tw_world_elastic_force (the force a step
 * uses, before the ghost-force correction) and
 *   err = |f - f_green| / |f_green|   (2-norms over all 3n components).
 *
 * Pressure and shear parts. For every method here the stress is linear in
 * the two moduli kappa = lambda + 2 mu / 3 (bulk) and mu (shear) at fixed
 * positions: f = kappa f_k + mu f_m, where for StVK, corotated and linear the
 * kappa term is the trace (volumetric) term kappa tr(E) I and the mu term the
 * deviatoric 2 mu dev(E); for hybrid the kappa term is its Green pressure.
 * Two materials, (E 1e5, nu 0.3) and (E 1e5, nu -0.5), give f_k and f_m
 * exactly (a 2x2 solve per component); pressure = kappa f_k, shear = mu f_m
 * for the first material, and the same relative errors are reported for each.
 *
 * usage: tw_repro_force_error [--csv OUT.csv]
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tw_method METHODS[] = {TW_LINEAR, TW_WARP_EDGE, TW_WARP_VERTEX, TW_COROT_ELEMENT, TW_HYBRID, TW_GREEN};
enum { NM = 6, GREEN = 5 };

static void moduli(double E, double nu, double *kappa, double *mu)
{
    double lam = E * nu / ((1 + nu) * (1 - 2 * nu));
    *mu = E / (2 * (1 + nu));
    *kappa = lam + 2 * *mu / 3;
}

static double norm(const double *a, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * a[i];
    return sqrt(s);
}

static double rel_diff(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    double d = norm(b, n);
    return d > 0 ? sqrt(s) / d : NAN;
}

int main(int argc, char **argv)
{
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--csv OUT.csv]\n", argv[0]);
            return 2;
        }
    }
    tw_mesh *m = tw_mesh_bar(1, 1, 1, 4, 4, 4);
    if (!m) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    int n = tw_mesh_vertex_count(m), n3 = 3 * n;
    const double nus[2] = {0.3, -0.5}, E = 1e5;
    double kap[2], mu[2];
    tw_world *w[2];
    for (int k = 0; k < 2; k++) {
        tw_world_def d = tw_default_world_def();
        d.youngs_modulus = E;
        d.poisson_ratio = nus[k];
        d.threads = 1;
        moduli(E, nus[k], &kap[k], &mu[k]);
        if (!(w[k] = tw_world_create(m, &d))) {
            fprintf(stderr, "%s\n", tw_last_error());
            return 1;
        }
    }
    double det = kap[0] * mu[1] - kap[1] * mu[0];
    const double *X = tw_mesh_positions(m);
    tw_real *x = malloc(sizeof(tw_real) * n3), *fr = malloc(sizeof(tw_real) * n3);
    double *f[NM], *fp[NM], *fs[NM], *f2 = malloc(sizeof(double) * n3);
    for (int a = 0; a < NM; a++) {
        f[a] = malloc(sizeof(double) * n3);
        fp[a] = malloc(sizeof(double) * n3);
        fs[a] = malloc(sizeof(double) * n3);
    }
    FILE *out = csv ? fopen(csv, "w") : stdout;
    if (!out) {
        fprintf(stderr, "cannot open %s\n", csv);
        return 1;
    }
    fprintf(out, "# cube 1 m, 4x4x4 cells, %d tets; x = c + R_y(theta)(I + gamma e_x e_z^T)(X - c); "
                 "E 1e5 nu 0.3 (split with nu -0.5); real %s\n",
            tw_mesh_tet_count(m), tw_real_name());
    fprintf(out, "method,gamma,theta_deg,rel_error,rel_error_pressure,rel_error_shear,force_norm,green_norm\n");
    const int ng = 21, nth = 19;
    for (int ig = 0; ig < ng; ig++) {
        double g = 0.025 * ig;
        for (int it = 0; it < nth; it++) {
            double th = 5.0 * it * 3.14159265358979323846 / 180, c = cos(th), s = sin(th);
            for (int i = 0; i < n; i++) {
                double p[3] = {X[3 * i] - 0.5, X[3 * i + 1] - 0.5, X[3 * i + 2] - 0.5};
                p[0] += g * p[2];
                x[3 * i] = (tw_real)(0.5 + c * p[0] + s * p[2]);
                x[3 * i + 1] = (tw_real)(0.5 + p[1]);
                x[3 * i + 2] = (tw_real)(0.5 - s * p[0] + c * p[2]);
            }
            for (int k = 0; k < 2; k++) tw_world_set_positions(w[k], x);
            for (int a = 0; a < NM; a++) {
                for (int k = 0; k < 2; k++) {
                    tw_world_set_method(w[k], METHODS[a]);
                    tw_world_elastic_force(w[k], fr);
                    for (int q = 0; q < n3; q++) (k ? f2 : f[a])[q] = fr[q];
                }
                for (int q = 0; q < n3; q++) { /* f_k = (mu1 f0 - mu0 f1)/det, f_m = (kap0 f1 - kap1 f0)/det */
                    double fk = (mu[1] * f[a][q] - mu[0] * f2[q]) / det;
                    double fm = (kap[0] * f2[q] - kap[1] * f[a][q]) / det;
                    fp[a][q] = kap[0] * fk;
                    fs[a][q] = mu[0] * fm;
                }
            }
            for (int a = 0; a < NM; a++)
                fprintf(out, "%s,%.4g,%.4g,%.6g,%.6g,%.6g,%.6g,%.6g\n", tw_method_name(METHODS[a]), g, 5.0 * it,
                        rel_diff(f[a], f[GREEN], n3), rel_diff(fp[a], fp[GREEN], n3), rel_diff(fs[a], fs[GREEN], n3),
                        norm(f[a], n3), norm(f[GREEN], n3));
        }
    }
    if (csv) fclose(out);
    for (int a = 0; a < NM; a++) free(f[a]), free(fp[a]), free(fs[a]);
    free(f2), free(x), free(fr);
    for (int k = 0; k < 2; k++) tw_world_destroy(w[k]);
    tw_mesh_destroy(m);
    return 0;
}
