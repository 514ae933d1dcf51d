/* Creep of a block resting on a slope near the friction angle: the 0.2 m
 * block of tests/test_contact.c (4x4x4 cells, E 1e6, corot-element,
 * friction 0.5) on a plane tilted by atan(TAN), placed at rest (or, with
 * HOLD > 0, first held by friction 2 for HOLD s), the whole scene moved by
 * OFFSET m along x (coordinates far from the origin round to more). One CSV row: the distance
 * its centre moves down the slope in the first 0.5 s (settling) and from
 * 0.5 to 1.5 s (creep), mm; the contact solves and CG iterations per step
 * over 1.0-1.5 s; the kinetic energy at the end, J; OFFSET.
 *
 * Usage: tw_bench_slope_creep TAN DT BDF2(0|1) [HOLD [OFFSET]]
 * The sweep is bench/slope_creep.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "tetwarp.h"
static double along(const tw_world *w, int n, double c, double s, double off)
{
    const tw_real *p = tw_world_positions(w);
    double m = 0;
    for (int i = 0; i < n; i++) m += ((p[3 * i] - off) * c + p[3 * i + 2] * s) / n;
    return m;
}
int main(int argc, char **argv)
{
    double tanth = atof(argv[1]), dt = atof(argv[2]);
    int bdf2 = atoi(argv[3]);
    double hold = argc > 4 ? atof(argv[4]) : 0, off = argc > 5 ? atof(argv[5]) : 0;
    tw_mesh *m = tw_mesh_bar(0.2, 0.2, 0.2, 4, 4, 4);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e6; d.dt = dt; d.integrator = bdf2 ? TW_BDF2 : TW_IMPLICIT_EULER;
    tw_world *w = tw_world_create(m, &d);
    int n = tw_world_vertex_count(w);
    const double *X = tw_mesh_positions(m);
    double th = atan(tanth), c = cos(th), s = sin(th);
    tw_real *x = malloc(sizeof(tw_real) * 3 * n);
    for (int i = 0; i < n; i++) {
        x[3 * i] = (tw_real)(off + X[3 * i] * c - X[3 * i + 2] * s);
        x[3 * i + 1] = (tw_real)X[3 * i + 1];
        x[3 * i + 2] = (tw_real)(X[3 * i] * s + X[3 * i + 2] * c);
    }
    tw_world_set_positions(w, x);
    tw_collider_def pl = tw_default_collider_def();
    pl.point[0] = off; pl.normal[0] = -s; pl.normal[2] = c; pl.friction = hold > 0 ? 2 : 0.5;
    tw_world_add_collider(w, &pl);
    int held = (int)ceil(hold / dt - 1e-9);
    for (int k = 0; k < held; k++) tw_world_step(w, NULL);
    if (hold > 0) { pl.friction = 0.5; tw_world_set_collider(w, 0, &pl); }
    double m0 = along(w, n, c, s, off), m05 = 0, m15;
    int steps = (int)ceil(1.5 / dt - 1e-9), k05 = (int)ceil(0.5 / dt - 1e-9), k10 = (int)ceil(1.0 / dt - 1e-9);
    long passes = 0, cg = 0, cnt = 0;
    for (int k = 0; k < steps; k++) {
        tw_step_stats st;
        if (tw_world_step(w, &st) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
        if (k + 1 == k05) m05 = along(w, n, c, s, off);
        if (k >= k10) { passes += st.contact_passes; cg += st.cg_iterations; cnt++; }
    }
    m15 = along(w, n, c, s, off);
    printf("%s,%g,%s,%g,%.4g,%.4g,%.2f,%.1f,%.3g,%g\n", bdf2 ? "bdf2" : "implicit-euler", dt, hold > 0 ? "held" : "placed", tanth,
           1e3 * (m0 - m05), 1e3 * (m05 - m15), (double)passes / cnt, (double)cg / cnt, tw_world_kinetic_energy(w), off);
    return 0;
}
