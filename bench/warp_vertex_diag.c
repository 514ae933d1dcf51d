/* tw_warp_vertex_diag — what makes a vertex method's armadillo blow up.
 *
 * The armadillo (armadillo_4k, scaled to 0.3 m tall, E 1e5, density 1000,
 * the default Rayleigh damping), implicit Euler or BDF2, one thread, in free
 * fall or given a uniform velocity or a spin, optionally over a floor 0.1 m
 * below it. Per step: its linear solves (lin: 2 where warp-vertex's turn
 * test asked for a second linearisation, hd/step.h TW_WARP_TURN), the
 * mechanical energy against the start (kinetic,
 * elastic, gravity), the volume change, and where the vertex rotations go
 * bad: the largest angle between a vertex's R_i (the world's, recomputed at
 * the step's end) and the polar factor of its elements' volume-weighted
 * mean F, at which vertex, with its neighbour count and the conditioning
 * sigma_min / sigma_max of sum_j (X_j - X_i)(X_j - X_i)^T at rest (the
 * matrix whose deformed form warp-vertex's rotation decomposes).
 *
 * --elements adds per step the elastic energy's spread over the elements
 * (how many hold more than 0.01 J, how many green raises to its StVK floor,
 * tw_stvk_floor) and the three largest, with F's singular values.
 *
 * --rotations (vertex methods) adds per step what the step's single
 * linearisation holds fixed and how far it moves: at the step's start the
 * largest angle between an element's R_e (the projected mean of its
 * vertices' R_i, the system's) and its vertices' R_i, and the distance
 * between Müller's force (eq. 12, per-vertex R_i) and the element force
 * sum_e R_e K_e (R_e^T x - X) that matches the system (relative, 2-norm,
 * and the largest at a vertex); over the step, the largest change of a
 * vertex's R_i and how many turn more than 0.05 and 0.2 rad; the contacts
 * and contact passes; the three vertices holding most elastic energy at the
 * step's end (a quarter of each element's) with their energy at its start.
 *
 * Usage: tw_warp_vertex_diag MESH DT SECONDS [--method M] [--integrator I]
 *        [--gravity G] [--vy V] [--spin W] [--floor MU] [--newton N]
 *        [--warp-system symmetric|bicgstab] [--quiet] [--elements] [--rotations]
 * bench/warp_vertex_diag.sh runs the cases quoted in
 * contact_report.md ("warp-vertex on the armadillo"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hd/math3.h"
#include "world.h"

static double angle_between(tw_m3 A, tw_m3 B)
{
    tw_m3 C = tw_m3_mul_at(A, B);
    double c = ((double)C.m[0] + C.m[4] + C.m[8] - 1) / 2;
    return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

/* sigma_min / sigma_max of A */
static double conditioning(tw_m3 A)
{
    tw_m3 U, V;
    tw_real s[3];
    tw_svd3_rv(A, &U, s, &V);
    double lo = fmin(fmin(s[0], s[1]), s[2]), hi = fmax(fmax(fabs(s[0]), fabs(s[1])), fabs(s[2]));
    return hi > 0 ? lo / hi : 0;
}

/* F of element e at the world's positions */
static tw_m3 element_F(const tw_world *w, int e)
{
    const tw_fem *f = &w->fem;
    const int *t = f->tets + 4 * (size_t)e;
    tw_v3 us[4];
    for (int p = 0; p < 4; p++) us[p] = tw_v3_sub(tw_v3_load(w->x + 3 * t[p]), tw_v3_load(f->X + 3 * t[p]));
    return tw_elem_deformation(us, f->g + 12 * (size_t)e);
}

static void print_elements(const tw_world *w, tw_method m)
{
    const tw_fem *f = &w->fem;
    const tw_step_view sv = tw_world_view(w);
    int top[3] = {-1, -1, -1}, big = 0, floored = 0;
    double te[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int e = 0; e < f->nt; e++) {
        double en = (double)tw_element_energy_density(&sv, w->x, e, m) * f->vol[e];
        tw_m3 Fc;
        big += en > 0.01;
        floored += tw_stvk_floor(element_F(w, e), &Fc);
        for (int q = 0; q < 3; q++)
            if (en > te[q]) {
                for (int r = 2; r > q; r--) { te[r] = te[r - 1]; top[r] = top[r - 1]; }
                te[q] = en;
                top[q] = e;
                break;
            }
    }
    printf("    %d elements above 0.01 J, %d below the StVK floor; largest:", big, floored);
    for (int q = 0; q < 3; q++) {
        tw_m3 U, V;
        tw_real sg[3];
        tw_svd3_rv(element_F(w, top[q]), &U, sg, &V);
        printf(" %d %.3g J (stretches %.3f %.3f %.3f, y %.3f)", top[q], te[q], sg[0], sg[1], sg[2],
               w->x[3 * (size_t)f->tets[4 * (size_t)top[q]] + 1]);
    }
    printf("\n");
}

/* a quarter of each element's elastic energy on each of its vertices, into ev (n) */
static void vertex_energies(const tw_world *w, tw_method m, double *ev)
{
    const tw_fem *f = &w->fem;
    const tw_step_view sv = tw_world_view(w);
    memset(ev, 0, sizeof(double) * (size_t)f->n);
    for (int e = 0; e < f->nt; e++) {
        double en = (double)tw_element_energy_density(&sv, w->x, e, m) * f->vol[e];
        for (int p = 0; p < 4; p++) ev[f->tets[4 * (size_t)e + p]] += en / 4;
    }
}

/* At the step's start (w->R the vertex rotations at w->x): the largest
 * angle between an element's projected mean rotation and its vertices', and
 * Müller's force against the element force with those R_e. */
static void print_start_mismatch(tw_world *w, tw_real *fm, double *fe)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    double amax = 0;
    int ae = 0;
    memset(fe, 0, sizeof(double) * 3 * (size_t)n);
    for (int e = 0; e < f->nt; e++) {
        const int *t = f->tets + 4 * (size_t)e;
        tw_m3 A = tw_m3_zero();
        for (int p = 0; p < 4; p++) A = tw_m3_add(A, tw_m3_load(w->R + 9 * (size_t)t[p]));
        tw_m3 Re = tw_polar3(A);
        for (int p = 0; p < 4; p++) {
            double an = angle_between(Re, tw_m3_load(w->R + 9 * (size_t)t[p]));
            if (an > amax) { amax = an; ae = e; }
        }
        tw_m3 P = tw_corot_P(element_F(w, e), Re, f->lam[e], f->mu[e], NULL);
        tw_v3 fp[4];
        tw_elem_forces_from_P(P, f->g + 12 * (size_t)e, f->vol[e], fp);
        for (int p = 0; p < 4; p++) {
            fe[3 * t[p]] += fp[p].x; fe[3 * t[p] + 1] += fp[p].y; fe[3 * t[p] + 2] += fp[p].z;
        }
    }
    tw_compute_elastic_force(w, w->x, fm, 0);
    double d2 = 0, m2 = 0, dmax = 0;
    int dv = 0;
    for (int i = 0; i < n; i++) {
        double di = 0;
        for (int c = 0; c < 3; c++) {
            double d = (double)fm[3 * i + c] - fe[3 * i + c];
            di += d * d;
            m2 += (double)fm[3 * i + c] * fm[3 * i + c];
        }
        d2 += di;
        if (di > dmax) { dmax = di; dv = i; }
    }
    printf("    start: max angle(R_e, R_i) %.3g rad in element %d; |f_mueller - f_element(R_e)| / |f_mueller| %.3g "
           "(|f_mueller| %.3g N), largest at vertex %d: %.3g N\n", amax, ae, m2 > 0 ? sqrt(d2 / m2) : 0, sqrt(m2), dv,
           sqrt(dmax));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s MESH DT SECONDS [--method M] [--integrator I] [--gravity G] [--vy V] [--spin W] "
                        "[--floor MU] [--newton N] [--warp-system symmetric|bicgstab] [--quiet]\n", argv[0]);
        return 2;
    }
    double dt = atof(argv[2]), seconds = atof(argv[3]), grav = 9.81, vy = 0, spin = 0, mu = -1;
    int method = TW_WARP_VERTEX, integ = TW_IMPLICIT_EULER, newton = 0, quiet = 0, elements = 0, rotations = 0;
    tw_warp_system ws = TW_WARP_SYSTEM_SYMMETRIC;
    for (int a = 4; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(o, "--elements")) { elements = 1; continue; }
        if (!strcmp(o, "--rotations")) { rotations = 1; continue; }
        if (!v) { fprintf(stderr, "%s: %s needs a value\n", argv[0], o); return 2; }
        a++;
        if (!strcmp(o, "--method")) method = tw_method_parse(v);
        else if (!strcmp(o, "--integrator")) integ = tw_integrator_parse(v);
        else if (!strcmp(o, "--gravity")) grav = atof(v);
        else if (!strcmp(o, "--vy")) vy = atof(v);
        else if (!strcmp(o, "--spin")) spin = atof(v);
        else if (!strcmp(o, "--floor")) mu = atof(v);
        else if (!strcmp(o, "--newton")) newton = atoi(v);
        else if (!strcmp(o, "--warp-system")) ws = strcmp(v, "bicgstab") ? TW_WARP_SYSTEM_SYMMETRIC : TW_WARP_SYSTEM_BICGSTAB;
        else { fprintf(stderr, "%s: unknown option %s\n", argv[0], o); return 2; }
    }
    if (method < 0 || integ < 0 || !(dt > 0) || !(seconds > 0)) { fprintf(stderr, "%s: bad arguments\n", argv[0]); return 2; }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m0 = tw_mesh_load(argv[1], &ld, NULL);
    if (!m0) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    int n = tw_mesh_vertex_count(m0), nt = tw_mesh_tet_count(m0);
    const double *X0 = tw_mesh_positions(m0);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) { lo = fmin(lo, X0[3 * i + 1]); hi = fmax(hi, X0[3 * i + 1]); }
    double k = 0.3 / (hi - lo);
    double *P = malloc(sizeof(double) * 3 * (size_t)n);
    if (!P) return 1;
    for (int i = 0; i < 3 * n; i++) P[i] = X0[i] * k;
    tw_mesh *m = tw_mesh_create(P, n, tw_mesh_tets(m0), nt, NULL, NULL, NULL);
    if (!m) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_world_def d = tw_default_world_def();
    d.method = (tw_method)method;
    d.integrator = (tw_integrator)integ;
    d.dt = dt;
    d.youngs_modulus = 1e5;
    d.threads = 1;
    d.newton_iterations = newton;
    d.warp_system = ws;
    d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    d.gravity[1] = -grav;
    tw_world *w = tw_world_create(m, &d);
    if (!w) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    if (mu >= 0) {
        tw_collider_def fl = tw_default_collider_def();
        fl.normal[0] = fl.normal[2] = 0;
        fl.normal[1] = 1;
        fl.point[1] = lo * k - 0.1;
        fl.friction = mu;
        if (tw_world_add_collider(w, &fl) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    }
    const tw_fem *f = &w->fem;
    double mass = 0, c[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        mass += f->mass[i];
        for (int a = 0; a < 3; a++) c[a] += f->mass[i] * P[3 * i + a];
    }
    for (int a = 0; a < 3; a++) c[a] /= mass;
    /* rest conditioning of each vertex's sum_j dX dX^T */
    double *cond = malloc(sizeof(double) * (size_t)n), worst = 1;
    int worst_i = 0, below = 0;
    for (int i = 0; i < n; i++) {
        tw_m3 A = tw_m3_zero();
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) {
            tw_v3 dX = tw_v3_sub(tw_v3_load(f->X + 3 * f->col[b]), tw_v3_load(f->X + 3 * i));
            A = tw_m3_add_outer(A, dX, dX, 1);
        }
        cond[i] = conditioning(A);
        below += cond[i] < 0.01;
        if (cond[i] < worst) { worst = cond[i]; worst_i = i; }
    }
    printf("# %s %s, dt %g, %g s, gravity %g, vy %g, spin %g, floor %s%g, newton %d, warp_system %s\n",
           tw_method_name(d.method), tw_integrator_name(d.integrator), dt, seconds, grav, vy, spin,
           mu >= 0 ? "mu " : "none ", mu >= 0 ? mu : 0, newton, ws == TW_WARP_SYSTEM_SYMMETRIC ? "symmetric" : "bicgstab");
    printf("# %d vertices, %d tets, %.4g kg; rest sum_j dX dX^T: worst conditioning %.3g at vertex %d (%d neighbours), "
           "%d vertices below 0.01\n", n, nt, mass, worst, worst_i, f->row_ptr[worst_i + 1] - f->row_ptr[worst_i] - 1,
           below);
    if (vy != 0 || spin != 0) {
        tw_real *v = calloc(3 * (size_t)n, sizeof(tw_real));
        for (int i = 0; i < n; i++) {
            v[3 * i] = (tw_real)(-spin * (P[3 * i + 1] - c[1]));
            v[3 * i + 1] = (tw_real)(spin * (P[3 * i] - c[0]) + vy);
        }
        tw_world_set_velocities(w, v);
        free(v);
    }
    double e0 = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
    double vol0 = tw_world_volume(w), gain = -INFINITY;
    int steps = (int)ceil(seconds / dt - 1e-9), rc = TW_OK, s = 0;
    rotations = rotations && !quiet && (method == TW_WARP_VERTEX || method == TW_WARP_EDGE);
    tw_real *R0 = rotations ? malloc(sizeof(tw_real) * 9 * (size_t)n) : NULL, *fm = NULL;
    double *ev0 = NULL, *ev1 = NULL, *fe = NULL;
    if (rotations) {
        fm = malloc(sizeof(tw_real) * 3 * (size_t)n);
        ev0 = malloc(sizeof(double) * (size_t)n);
        ev1 = malloc(sizeof(double) * (size_t)n);
        fe = malloc(sizeof(double) * 3 * (size_t)n);
        if (!R0 || !fm || !ev0 || !ev1 || !fe) return 1;
    }
    for (; s < steps && rc == TW_OK; s++) {
        tw_step_stats st;
        if (rotations) { /* the rotations the step starts from (it computes the same ones) */
            tw_compute_rotations(w, w->x);
            memcpy(R0, w->R, sizeof(tw_real) * 9 * (size_t)n);
            vertex_energies(w, d.method, ev0);
            printf("step %3d\n", s + 1);
            print_start_mismatch(w, fm, fe);
        }
        rc = tw_world_step(w, &st);
        if (rc != TW_OK) { printf("step %d: %s\n", s + 1, tw_last_error()); break; }
        double ek = tw_world_kinetic_energy(w), ee = tw_world_elastic_energy(w), eg = tw_world_gravity_energy(w);
        gain = fmax(gain, ek + ee + eg - e0);
        if (quiet) continue;
        double amax = -1;
        int ai = 0;
        if (method == TW_WARP_VERTEX || method == TW_WARP_EDGE) {
            tw_compute_rotations(w, w->x);
            for (int i = 0; i < n; i++) {
                tw_m3 Fm = tw_m3_zero();
                for (int q = f->vt_ptr[i]; q < f->vt_ptr[i + 1]; q++) {
                    int e = f->vt[q] >> 2;
                    const int *t = f->tets + 4 * (size_t)e;
                    tw_v3 us[4];
                    for (int p = 0; p < 4; p++)
                        us[p] = tw_v3_sub(tw_v3_load(w->x + 3 * t[p]), tw_v3_load(f->X + 3 * t[p]));
                    Fm = tw_m3_add(Fm, tw_m3_scale(tw_elem_deformation(us, f->g + 12 * (size_t)e), f->vol[e]));
                }
                double an = angle_between(tw_m3_load(w->R + 9 * (size_t)i), tw_polar3(Fm));
                if (an > amax) { amax = an; ai = i; }
            }
        }
        printf("step %3d t %.4f lin %d cg %4d  E-E0 %+.4e J (kinetic %.4e, elastic %.4e, gravity %+.4e)  volume %+.3f %%", s + 1,
               (s + 1) * dt, st.newton_iterations, st.cg_iterations, ek + ee + eg - e0, ek, ee, eg, 100 * (tw_world_volume(w) / vol0 - 1));
        if (amax >= 0)
            printf("  max angle(R_i, polar(mean F)) %.3g rad at %d (%d neighbours, rest conditioning %.2g)", amax, ai,
                   f->row_ptr[ai + 1] - f->row_ptr[ai] - 1, cond[ai]);
        printf("\n");
        if (elements) print_elements(w, d.method);
        if (rotations) { /* w->R: at the step's end (computed above) */
            double rmax = 0;
            int ri = 0, over1 = 0, over2 = 0;
            for (int i = 0; i < n; i++) {
                double an = angle_between(tw_m3_load(R0 + 9 * (size_t)i), tw_m3_load(w->R + 9 * (size_t)i));
                over1 += an > 0.05;
                over2 += an > 0.2;
                if (an > rmax) { rmax = an; ri = i; }
            }
            vertex_energies(w, d.method, ev1);
            int top[3] = {-1, -1, -1};
            for (int i = 0; i < n; i++)
                for (int q = 0; q < 3; q++)
                    if (top[q] < 0 || ev1[i] > ev1[top[q]]) {
                        for (int r = 2; r > q; r--) top[r] = top[r - 1];
                        top[q] = i;
                        break;
                    }
            printf("    over the step: max rotation change %.3g rad at vertex %d (%d neighbours), %d vertices above 0.05 "
                   "rad, %d above 0.2; contacts %d, passes %d, unresolved %d; most elastic energy:",
                   rmax, ri, f->row_ptr[ri + 1] - f->row_ptr[ri] - 1, over1, over2, st.contacts, st.contact_passes,
                   st.contacts_unresolved);
            for (int q = 0; q < 3; q++)
                printf(" %d %.3g J (from %.3g, y %.3f)", top[q], ev1[top[q]], ev0[top[q]], w->x[3 * (size_t)top[q] + 1]);
            printf("\n");
        }
    }
    free(R0);
    free(fm);
    free(ev0);
    free(ev1);
    free(fe);
    printf("# %s: %d of %d steps, max E - E0 %.4g J (%.4g drop energies m g 0.1 m), volume %+.3f %%\n",
           rc == TW_OK ? "ok" : "failed", rc == TW_OK ? s : s, steps, gain, gain / (mass * 9.81 * 0.1),
           100 * (tw_world_volume(w) / vol0 - 1));
    free(cond);
    free(P);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    tw_mesh_destroy(m0);
    return rc == TW_OK ? 0 : 1;
}
