/* tw_repro_tube_dt — Müller et al. 2002 §4.2: the largest stable time step of
 * a tube dropped 50 cm onto the floor, per method and Young's modulus.
 *
 * Scene (the paper's tube: ~1000 tets, 50 cm x 13 cm, density 1000, nu 0.33):
 * tw_mesh_tube(inner 0.045, outer 0.065, length 0.5, 1, 12, 14) = 1008 tets,
 * turned 45 degrees about y (diagonal, as in the paper) and lifted so its
 * lowest vertex is 0.5 m above the floor z = 0 (friction 0.5). The rotated
 * shape is the rest shape, so the tube starts undeformed and at rest.
 * Implicit Euler, library default damping (alpha 0, beta 0.01 s), CG
 * tolerance 1e-4, one thread, 1 s simulated.
 *
 * "Stable" for one run at time step dt means all of:
 *   (a) every step returns TW_OK (no TW_ERR_DIVERGED) for ceil(1 s / dt) steps;
 *   (b) no vertex is ever more than 1 mm below the floor after a step;
 *   (c) the volume stays within 10 % of the rest volume after every step;
 *   (d) the mechanical energy KE + elastic + gravity (0 at the start) never
 *       exceeds the drop energy m g 0.5 m: the run may not gain more energy
 *       than the fall gave it (a blow-up test; the largest energy of every
 *       run, over the drop energy, is in the trials file).
 * The largest stable dt is found by bisection in log(dt) between 1e-4 and
 * 0.1 s: 0.1 s is tried first (stable: the answer is ">= 0.1"); otherwise
 * 7 halvings of the log interval, assuming 1e-4 is stable, give the answer
 * to a factor 1000^(1/128) = 1.055. The assumption is checked when no trial
 * was stable. Stability need not be monotone in dt; the trials file lists
 * every run so that can be seen.
 *
 * usage: tw_repro_tube_dt [--csv SUMMARY.csv] [--trials TRIALS.csv]
 *                         [--methods a,b] [--E e1,e2,...] [--iterations N] [--newton N]
 *                         [--dt S --series SERIES.csv]  (one run per method and E, every step's energies)
 *        tw_repro_tube_dt --write-mesh STEM   (writes the dropped tube as STEM.node/.ele and exits)
 */
#define _POSIX_C_SOURCE 200809L
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

static tw_mesh *make_tube(void)
{
    tw_mesh *t = tw_mesh_tube(0.045, 0.065, 0.5, 1, 12, 14);
    if (!t) return NULL;
    int nv = tw_mesh_vertex_count(t), nt = tw_mesh_tet_count(t);
    double *X = malloc(sizeof(double) * 3 * nv);
    const double *P = tw_mesh_positions(t);
    double c = sqrt(0.5), s = sqrt(0.5), zmin = INFINITY;
    for (int i = 0; i < nv; i++) { /* rotate about y by 45 degrees, centre x on 0 */
        double x = P[3 * i] - 0.25, y = P[3 * i + 1], z = P[3 * i + 2];
        X[3 * i] = c * x + s * z;
        X[3 * i + 1] = y;
        X[3 * i + 2] = -s * x + c * z;
        if (X[3 * i + 2] < zmin) zmin = X[3 * i + 2];
    }
    for (int i = 0; i < nv; i++) X[3 * i + 2] += 0.5 - zmin;
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_create(X, nv, tw_mesh_tets(t), nt, NULL, &ld, NULL);
    free(X);
    tw_mesh_destroy(t);
    return m;
}

typedef struct trial {
    int stable, steps;
    char reason[160];
    double min_z, max_dvol, max_energy_ratio, wall_s;
} trial;

static FILE *series; /* --series: one row per step of every trial */

static int newton_iterations; /* --newton: tw_world_def.newton_iterations (0: automatic) */

static trial run_trial(const tw_mesh *m, tw_method method, double E, double dt)
{
    trial r;
    memset(&r, 0, sizeof r);
    r.min_z = INFINITY;
    tw_world_def d = tw_default_world_def();
    d.method = method;
    d.youngs_modulus = E;
    d.poisson_ratio = 0.33;
    d.density = 1000;
    d.dt = dt;
    d.threads = 1;
    d.newton_iterations = newton_iterations;
    tw_world *w = tw_world_create(m, &d);
    if (!w) {
        snprintf(r.reason, sizeof r.reason, "create: %s", tw_last_error());
        return r;
    }
    tw_collider_def floor = tw_default_collider_def(); /* z = 0, friction 0.5 */
    tw_world_add_collider(w, &floor);
    int n = tw_world_vertex_count(w);
    double mass = 0;
    for (int i = 0; i < n; i++) mass += tw_world_vertex_mass(w)[i];
    double drop = mass * 9.81 * 0.5, v0 = tw_world_volume(w);
    int steps = (int)ceil(1.0 / dt - 1e-9);
    double t0 = now_s();
    r.stable = 1;
    for (int k = 0; k < steps; k++) {
        tw_status s = tw_world_step(w, NULL);
        r.steps = k + 1;
        if (s != TW_OK) {
            snprintf(r.reason, sizeof r.reason, "%s at step %d", tw_status_name(s), k + 1);
            r.stable = 0;
            break;
        }
        const tw_real *x = tw_world_positions(w);
        double zmin = INFINITY;
        for (int i = 0; i < n; i++) zmin = fmin(zmin, x[3 * i + 2]);
        double dv = fabs(tw_world_volume(w) / v0 - 1);
        double e = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
        if (series)
            fprintf(series, "%s,%g,%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", tw_method_name(method), E, dt, (k + 1) * dt,
                    tw_world_kinetic_energy(w) / drop, tw_world_elastic_energy(w) / drop,
                    tw_world_gravity_energy(w) / drop, zmin, tw_world_volume(w) / v0 - 1);
        r.min_z = fmin(r.min_z, zmin);
        r.max_dvol = fmax(r.max_dvol, dv);
        r.max_energy_ratio = fmax(r.max_energy_ratio, e / drop);
        if (!isfinite(zmin) || zmin < -1e-3) {
            snprintf(r.reason, sizeof r.reason, "vertex %.2g m below the floor at t=%.3f", -zmin, (k + 1) * dt);
            r.stable = 0;
        } else if (!(dv <= 0.1)) {
            snprintf(r.reason, sizeof r.reason, "volume off by %.0f%% at t=%.3f", 100 * dv, (k + 1) * dt);
            r.stable = 0;
        } else if (!(e <= drop)) {
            snprintf(r.reason, sizeof r.reason, "energy gained %.2f x drop energy at t=%.3f", e / drop, (k + 1) * dt);
            r.stable = 0;
        }
        if (!r.stable) break;
    }
    r.wall_s = now_s() - t0;
    tw_world_destroy(w);
    return r;
}

static int split(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = tok;
    return n;
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *trials_csv = NULL;
    char methods_s[256] = "warp-vertex,green,corot-element", es[256] = "1e4,1e5,1e6,1e7";
    int iterations = 7;
    double fixed_dt = 0; /* --dt: one trial per method and E at this step, no bisection */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--trials") && i + 1 < argc) trials_csv = argv[++i];
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc) snprintf(methods_s, sizeof methods_s, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--E") && i + 1 < argc) snprintf(es, sizeof es, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--newton") && i + 1 < argc) newton_iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write-mesh") && i + 1 < argc) { /* the dropped tube, for tetwarp run --mesh */
            tw_mesh *t = make_tube();
            tw_status s = t ? tw_mesh_write_tetgen(t, argv[++i]) : TW_ERR_INVALID;
            if (s != TW_OK) fprintf(stderr, "%s\n", tw_last_error());
            tw_mesh_destroy(t);
            return s == TW_OK ? 0 : 1;
        } else if (!strcmp(argv[i], "--series") && i + 1 < argc) {
            if (!(series = fopen(argv[++i], "w"))) return 1;
            fprintf(series, "method,youngs_pa,dt_s,time_s,ke_over_drop,elastic_over_drop,gravity_over_drop,min_z_m,dvol\n");
        } else if (!strcmp(argv[i], "--dt") && i + 1 < argc) fixed_dt = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--csv F] [--trials F] [--methods a,b] [--E e1,e2] [--iterations N] [--newton N]\n",
                    argv[0]);
            return 2;
        }
    }
    char *mnames[TW_METHOD_COUNT], *enames[16];
    int nm = split(methods_s, mnames, TW_METHOD_COUNT), ne = split(es, enames, 16);
    tw_mesh *m = make_tube();
    if (!m) {
        fprintf(stderr, "tube: %s\n", tw_last_error());
        return 1;
    }
    FILE *fs = csv ? fopen(csv, "w") : NULL, *ft = trials_csv ? fopen(trials_csv, "w") : NULL;
    if ((csv && !fs) || (trials_csv && !ft)) {
        fprintf(stderr, "cannot open output csv\n");
        return 1;
    }
    const char *hdr = "# tube %d tets %d vertices, 45 deg, lowest vertex 0.5 m above the floor; nu 0.33, rho 1000; "
                      "implicit Euler, damping 0/0.01, 1 s; stable = no error, >= -1 mm, |dV/V| <= 10 %%, "
                      "energy <= m g h; real %s\n";
    if (fs) {
        fprintf(fs, hdr, tw_mesh_tet_count(m), tw_mesh_vertex_count(m), tw_real_name());
        fprintf(fs, "method,youngs_pa,dt_stable_max_s,dt_unstable_min_s,trials,first_failure\n");
    }
    if (ft) {
        fprintf(ft, hdr, tw_mesh_tet_count(m), tw_mesh_vertex_count(m), tw_real_name());
        fprintf(ft, "method,youngs_pa,dt_s,stable,steps,min_z_m,max_abs_dvol,max_energy_over_drop,wall_s,reason\n");
    }
    printf("tube: %d tets, %d vertices\n", tw_mesh_tet_count(m), tw_mesh_vertex_count(m));
    printf("%-14s %8s %12s %12s  %s\n", "method", "E", "dt_stable", "dt_unstable", "first failure");
    for (int a = 0; a < nm; a++) {
        int method = tw_method_parse(mnames[a]);
        if (method < 0) {
            fprintf(stderr, "unknown method %s\n", mnames[a]);
            return 2;
        }
        for (int b = 0; b < ne; b++) {
            double E = atof(enames[b]);
            double lo = 1e-4, hi = 0.1, best = 0, worst = INFINITY;
            int ntr = 0;
            char fail[256] = "";
            if (fixed_dt > 0) lo = hi = fixed_dt;
            for (int it = -1; it < (fixed_dt > 0 ? 0 : iterations); it++) {
                double dt = it < 0 ? hi : sqrt(lo * hi);
                trial r = run_trial(m, (tw_method)method, E, dt);
                ntr++;
                if (ft)
                    fprintf(ft, "%s,%g,%.6g,%d,%d,%.6g,%.4g,%.4g,%.3f,%s\n", mnames[a], E, dt, r.stable, r.steps,
                            r.min_z, r.max_dvol, r.max_energy_ratio, r.wall_s, r.reason);
                if (r.stable) {
                    best = fmax(best, dt);
                    lo = dt;
                    if (it < 0) break;
                } else {
                    if (dt < worst) snprintf(fail, sizeof fail, "dt %.3g: %s", dt, r.reason);
                    worst = fmin(worst, dt);
                    hi = dt;
                }
            }
            if (best == 0 && fixed_dt == 0) { /* no trial stable: check the lower end */
                trial r = run_trial(m, (tw_method)method, E, 1e-4);
                ntr++;
                if (ft)
                    fprintf(ft, "%s,%g,%.6g,%d,%d,%.6g,%.4g,%.4g,%.3f,%s\n", mnames[a], E, 1e-4, r.stable, r.steps,
                            r.min_z, r.max_dvol, r.max_energy_ratio, r.wall_s, r.reason);
                if (r.stable) best = 1e-4;
                else worst = 1e-4;
            }
            printf("%-14s %8.0e %12.4g %12.4g  %s\n", mnames[a], E, best, isfinite(worst) ? worst : NAN, fail);
            fflush(stdout);
            if (fs)
                fprintf(fs, "%s,%g,%.6g,%.6g,%d,%s\n", mnames[a], E, best, isfinite(worst) ? worst : NAN, ntr, fail);
            if (ft) fflush(ft);
        }
    }
    if (fs) fclose(fs);
    if (ft) fclose(ft);
    if (series) fclose(series);
    tw_mesh_destroy(m);
    return 0;
}
