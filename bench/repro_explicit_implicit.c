/* tw_repro_explicit_implicit — Zhuang & Canny: explicit Newmark with Green
 * strain (their method) versus implicit Euler with corotated elements, on
 * the same scene: wall time per simulated second, steps, and how far apart
 * the two motions are; then how the explicit cost grows with E.
 *
 * Scene: the drop cube of demos/scenes.h (0.2 m, 4x4x4 cells, 384 tets), turned
 * 30 degrees about x and then 20 degrees about y (so it lands on a corner),
 * lowest vertex 0.5 m above the floor z = 0 (friction 0.5); the turned shape
 * is the rest shape. nu 0.3, rho 1000, no Rayleigh damping in either run
 * (explicit Newmark only has mass damping; implicit Euler damps numerically).
 *   explicit: green, explicit-newmark, dt 0 = 0.5 x Courant limit.
 *   implicit: corot-element, implicit-euler, dt 0.01, CG tolerance 1e-4.
 * One thread. Comparison at E 1e5 over 2 s; samples every 10 ms (the
 * explicit run interpolated linearly between its steps): centre-of-mass
 * height (vertex mean), the lowest corner's displacement, and the
 * deformation: the largest vertex distance from the rest shape after
 * removing the mean translation (so it includes rotation).
 * E sweep 1e4..1e7 over 0.5 s: Courant dt, steps and wall time per
 * simulated second for both.
 *
 * usage: tw_repro_explicit_implicit [--csv TRAJ.csv] [--sweep SWEEP.csv]
 *        [--courant-factor F] (explicit dt = F x Courant; default 0.5, automatic)
 *        [--explicit-method NAME] (default green)
 */
#define _POSIX_C_SOURCE 200809L
#include "scenes.h"
#include "tetwarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static tw_mesh *make_cube(int *corner)
{
    tw_mesh *b = demo_drop_cube_mesh();
    int nv = tw_mesh_vertex_count(b);
    const double *P = tw_mesh_positions(b);
    double *X = malloc(sizeof(double) * 3 * nv), ax = 30 * 3.14159265358979 / 180, ay = 20 * 3.14159265358979 / 180;
    double zmin = INFINITY;
    for (int i = 0; i < nv; i++) {
        double p[3] = {P[3 * i] - 0.1, P[3 * i + 1] - 0.1, P[3 * i + 2] - 0.1};
        double y1 = cos(ax) * p[1] - sin(ax) * p[2], z1 = sin(ax) * p[1] + cos(ax) * p[2];
        double x2 = cos(ay) * p[0] + sin(ay) * z1, z2 = -sin(ay) * p[0] + cos(ay) * z1;
        X[3 * i] = x2, X[3 * i + 1] = y1, X[3 * i + 2] = z2;
        if (z2 < zmin) zmin = z2, *corner = i;
    }
    for (int i = 0; i < nv; i++) X[3 * i + 2] += 0.5 - zmin;
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_create(X, nv, tw_mesh_tets(b), tw_mesh_tet_count(b), NULL, &ld, NULL);
    free(X);
    tw_mesh_destroy(b);
    return m;
}

typedef struct sample { double com_z, corner_u[3], deform; } sample;

static sample measure(const tw_mesh *m, const tw_real *x, int corner)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    double mean[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) mean[c] += (x[3 * i + c] - X[3 * i + c]) / n;
    sample s = {0, {0, 0, 0}, 0};
    for (int i = 0; i < n; i++) {
        double d2 = 0;
        for (int c = 0; c < 3; c++) d2 += pow(x[3 * i + c] - X[3 * i + c] - mean[c], 2);
        s.deform = fmax(s.deform, sqrt(d2));
        s.com_z += x[3 * i + 2] / n; /* vertex mean (uniform grid: close to the centre of mass) */
    }
    for (int c = 0; c < 3; c++) s.corner_u[c] = x[3 * corner + c] - X[3 * corner + c];
    return s;
}

typedef struct run_out { int ok, steps; double dt, wall_s; sample *s; int ns; } run_out;

/* Runs to time T, sampling every `every` s (interpolated); s may be NULL. */
static double courant_factor = 0; /* --courant-factor: explicit dt = F x Courant limit; 0 = automatic (0.5) */
static int explicit_method = TW_GREEN;  /* --explicit-method */

static run_out run(const tw_mesh *m, int corner, int explicit_green, double E, double T, double every, int want)
{
    run_out r = {1, 0, 0, 0, NULL, 0};
    tw_world_def d = tw_default_world_def();
    d.method = explicit_green ? (tw_method)explicit_method : TW_COROT_ELEMENT;
    d.integrator = explicit_green ? TW_EXPLICIT_NEWMARK : TW_IMPLICIT_EULER;
    d.dt = explicit_green ? 0 : 0.01;
    d.youngs_modulus = E;
    d.damping_mass = 0;
    d.damping_stiffness = 0;
    d.threads = 1;
    tw_world *w = tw_world_create(m, &d);
    if (!w) {
        fprintf(stderr, "%s\n", tw_last_error());
        r.ok = 0;
        return r;
    }
    tw_collider_def ground = tw_default_collider_def();
    tw_world_add_collider(w, &ground);
    if (explicit_green && courant_factor > 0) tw_world_set_dt(w, courant_factor * tw_world_courant_dt(w));
    r.dt = tw_world_dt(w);
    int nsamp = (int)floor(T / every + 1e-9) + 1;
    if (want) r.s = calloc(nsamp, sizeof(sample));
    sample prev = measure(m, tw_world_positions(w), corner);
    double tprev = 0;
    if (want) r.s[0] = prev;
    r.ns = 1;
    double t0 = now_s();
    while (tw_world_time(w) < T - 1e-9) {
        if (tw_world_step(w, NULL) != TW_OK) {
            fprintf(stderr, "%s E %g: %s\n", explicit_green ? "explicit green" : "implicit corot", E, tw_last_error());
            r.ok = 0;
            break;
        }
        r.steps++;
        double t = tw_world_time(w);
        if (want) {
            sample cur = measure(m, tw_world_positions(w), corner);
            while (r.ns < nsamp && r.ns * every <= t + 1e-9) {
                double u = (r.ns * every - tprev) / (t - tprev);
                sample *o = &r.s[r.ns++];
                o->com_z = prev.com_z + u * (cur.com_z - prev.com_z);
                o->deform = prev.deform + u * (cur.deform - prev.deform);
                for (int c = 0; c < 3; c++) o->corner_u[c] = prev.corner_u[c] + u * (cur.corner_u[c] - prev.corner_u[c]);
            }
            prev = cur;
            tprev = t;
        }
    }
    r.wall_s = now_s() - t0;
    tw_world_destroy(w);
    return r;
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *sweep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--sweep") && i + 1 < argc) sweep = argv[++i];
        else if (!strcmp(argv[i], "--courant-factor") && i + 1 < argc) courant_factor = atof(argv[++i]);
        else if (!strcmp(argv[i], "--explicit-method") && i + 1 < argc) explicit_method = tw_method_parse(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--csv TRAJ.csv] [--sweep SWEEP.csv]\n", argv[0]);
            return 2;
        }
    }
    int corner = 0;
    tw_mesh *m = make_cube(&corner);
    if (!m) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    const double T = 2.0, every = 0.01;
    run_out ex = run(m, corner, 1, 1e5, T, every, 1), im = run(m, corner, 0, 1e5, T, every, 1);
    FILE *out = csv ? fopen(csv, "w") : stdout;
    if (!out) return 1;
    fprintf(out, "# cube 0.2 m 4x4x4 (%d tets) dropped on a corner from 0.5 m, E 1e5, nu 0.3, rho 1000, no Rayleigh "
                 "damping, 1 thread; real %s\n",
            tw_mesh_tet_count(m), tw_real_name());
    fprintf(out, "time_s,explicit_com_z,implicit_com_z,explicit_deform,implicit_deform,explicit_corner_uz,"
                 "implicit_corner_uz,corner_distance\n");
    int ns = ex.ns < im.ns ? ex.ns : im.ns;
    double max_cd = 0, max_dz = 0, peak_def_ex = 0, peak_def_im = 0;
    for (int k = 0; k < ns; k++) {
        double cd = 0;
        for (int c = 0; c < 3; c++) cd += pow(ex.s[k].corner_u[c] - im.s[k].corner_u[c], 2);
        cd = sqrt(cd);
        max_cd = fmax(max_cd, cd);
        max_dz = fmax(max_dz, fabs(ex.s[k].com_z - im.s[k].com_z));
        peak_def_ex = fmax(peak_def_ex, ex.s[k].deform);
        peak_def_im = fmax(peak_def_im, im.s[k].deform);
        fprintf(out, "%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", k * every, ex.s[k].com_z, im.s[k].com_z,
                ex.s[k].deform, im.s[k].deform, ex.s[k].corner_u[2], im.s[k].corner_u[2], cd);
    }
    if (csv) fclose(out);
    double fcd = 0;
    for (int c = 0; c < 3; c++) fcd += pow(ex.s[ns - 1].corner_u[c] - im.s[ns - 1].corner_u[c], 2);
    printf("E 1e5, %g s simulated (%d samples compared)\n", T, ns);
    printf("%-26s %10s %8s %12s %14s %16s\n", "run", "dt_s", "steps", "wall_s", "wall_s/sim_s", "peak_deform_m");
    char exname[64];
    snprintf(exname, sizeof exname, "explicit-newmark %s", tw_method_name((tw_method)explicit_method));
    printf("%-26s %10.4g %8d %12.4f %14.4f %16.5f %s\n", exname, ex.dt, ex.steps, ex.wall_s,
           ex.wall_s / T, peak_def_ex, ex.ok ? "" : "FAILED");
    printf("%-26s %10.4g %8d %12.4f %14.4f %16.5f %s\n", "implicit-euler corot", im.dt, im.steps, im.wall_s,
           im.wall_s / T, peak_def_im, im.ok ? "" : "FAILED");
    printf("corner distance explicit vs implicit: max %.4f m, final %.4f m; centre height difference max %.4f m; "
           "final centre z explicit %.4f implicit %.4f m\n",
           max_cd, sqrt(fcd), max_dz, ex.s[ns - 1].com_z, im.s[ns - 1].com_z);
    free(ex.s), free(im.s);
    if (sweep) {
        FILE *f = fopen(sweep, "w");
        if (!f) return 1;
        fprintf(f, "# same scene, 0.5 s simulated per run, 1 thread; real %s\n", tw_real_name());
        fprintf(f, "youngs_pa,run,dt_s,steps_per_sim_s,wall_s_per_sim_s,ok\n");
        const double Es[4] = {1e4, 1e5, 1e6, 1e7};
        for (int k = 0; k < 4; k++)
            for (int e = 1; e >= 0; e--) {
                run_out r = run(m, corner, e, Es[k], 0.5, every, 0);
                fprintf(f, "%g,%s,%.5g,%.1f,%.5f,%d\n", Es[k], e ? "explicit-green" : "implicit-corot", r.dt,
                        r.steps / 0.5, r.wall_s / 0.5, r.ok);
                printf("sweep E %8.0e %-15s dt %.3g s  %8.0f steps/s  %.4f wall s per sim s%s\n", Es[k],
                       e ? "explicit-green" : "implicit-corot", r.dt, r.steps / 0.5, r.wall_s / 0.5, r.ok ? "" : " FAILED");
            }
        fclose(f);
    }
    tw_mesh_destroy(m);
    return 0;
}
