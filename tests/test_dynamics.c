/* Time stepping: Müller fig. 6 volumes, constraints, energy, divergence. */
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"

/* Müller fig. 6's bar (demos/scenes.h: fixed at x = 0, under gravity, soft
 * enough to bend strongly). Steps for 2 s of simulated time and returns the
 * largest relative volume change seen. */
static double bar_volume_change(tw_method method, double *tip_drop)
{
    tw_mesh *m = demo_bar_mesh();
    if (!m) return -1;
    tw_world_def d = demo_bar_def(method);
    d.dt = 0.01;
    d.damping_stiffness = 0.02;
    tw_world *w = demo_wall_world(m, &d);
    if (!w) return -1;
    double v0 = tw_world_volume(w), worst = 0;
    int tip = tw_world_vertex_count(w) - 1;
    for (int s = 0; s < 200; s++) {
        if (tw_world_step(w, NULL) != TW_OK) {
            fprintf(stderr, "%s\n", tw_last_error());
            return -1;
        }
        worst = tw_test_max(worst, fabs(tw_world_volume(w) / v0 - 1));
    }
    *tip_drop = tw_mesh_positions(m)[3 * tip + 2] - tw_world_positions(w)[3 * tip + 2];
    printf("%s: largest volume change %.2f %%, tip dropped %.3f m\n", tw_method_name(method), 100 * worst, *tip_drop);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return worst;
}

TW_TEST(fig6_linear_volume_grows)
{
    double drop, dv = bar_volume_change(TW_LINEAR, &drop);
    CHECK(dv > 0.05);
    return 0;
}

TW_TEST(fig6_warp_vertex_volume_kept)
{
    double drop, dv = bar_volume_change(TW_WARP_VERTEX, &drop);
    CHECK(dv >= 0 && dv < 0.02);
    CHECK(drop > 0.2); /* it did bend */
    return 0;
}

TW_TEST(fig6_warp_edge_volume_kept)
{
    double drop, dv = bar_volume_change(TW_WARP_EDGE, &drop);
    CHECK(dv >= 0 && dv < 0.02);
    CHECK(drop > 0.2);
    return 0;
}

TW_TEST(fig6_corot_volume_kept)
{
    double drop, dv = bar_volume_change(TW_COROT_ELEMENT, &drop);
    CHECK(dv >= 0 && dv < 0.02);
    CHECK(drop > 0.2);
    return 0;
}

TW_TEST(fig6_green_runs)
{
    double drop, dv = bar_volume_change(TW_GREEN, &drop);
    CHECK(dv >= 0 && dv < 0.05);
    CHECK(drop > 0.2);
    return 0;
}

TW_TEST(pinned_vertices_stay_exactly)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    int pinned = tw_world_pin_where(w, 0, 1, 1e-6);
    CHECK(pinned == 9);
    for (int s = 0; s < 50; s++) CHECK_OK(tw_world_step(w, NULL));
    const tw_real *x = tw_world_positions(w);
    double moved = 0, free_moved = 0;
    for (int i = 0; i < tw_world_vertex_count(w); i++)
        for (int c = 0; c < 3; c++) {
            double dd = fabs(x[3 * i + c] - (tw_real)tw_mesh_positions(m)[3 * i + c]);
            if (tw_world_get_constraint(w, i) == TW_PINNED) moved = tw_test_max(moved, dd);
            else free_moved = tw_test_max(free_moved, dd);
        }
    CHECK(moved == 0);
    CHECK(free_moved > 1e-3);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* A kinematic end driven along +y drags the bar; its vertices hit their
 * targets exactly each step. */
TW_TEST(kinematic_vertices_follow_targets)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.gravity[2] = 0;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    int n = tw_world_vertex_count(w);
    for (int i = 0; i < n; i++)
        if (tw_mesh_positions(m)[3 * i] < 1e-6) CHECK_OK(tw_world_set_constraint(w, i, TW_KINEMATIC));
    for (int s = 1; s <= 20; s++) {
        for (int i = 0; i < n; i++)
            if (tw_world_get_constraint(w, i) == TW_KINEMATIC) {
                const double *X = tw_mesh_positions(m) + 3 * i;
                double p[3] = {X[0], X[1] + 0.01 * s, X[2]};
                CHECK_OK(tw_world_set_target(w, i, p));
            }
        CHECK_OK(tw_world_step(w, NULL));
    }
    const tw_real *x = tw_world_positions(w);
    for (int i = 0; i < n; i++)
        if (tw_world_get_constraint(w, i) == TW_KINEMATIC)
            CHECK_NEAR(x[3 * i + 1], tw_mesh_positions(m)[3 * i + 1] + 0.2, 1e-5);
    /* the free part followed, but lags behind the driven end */
    double mean_y = 0;
    for (int i = 0; i < n; i++) mean_y += (x[3 * i + 1] - tw_mesh_positions(m)[3 * i + 1]) / n;
    printf("mean y displacement %.4f m of the end's 0.2\n", mean_y);
    CHECK(mean_y > 0.02 && mean_y < 0.2);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* Released from a bent state with no damping and no gravity: total energy
 * stays bounded (implicit Euler only loses energy) over 2000 steps, and the
 * bar keeps moving for a while. */
static int release_bent_bar(double damping, double *e0, double *emax, double *e_end)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    if (!m) return 1;
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.gravity[2] = 0;
    d.damping_stiffness = damping;
    d.dt = 0.005;
    tw_world *w = tw_world_create(m, &d);
    if (!w) return 1;
    tw_world_pin_where(w, 0, 1, 1e-6);
    /* bend it by a static load on the free end, then let go */
    int n = tw_world_vertex_count(w);
    double up[3] = {0, 0, 0.3};
    for (int i = 0; i < n; i++)
        if (tw_mesh_positions(m)[3 * i] > 1 - 1e-6) tw_world_set_force(w, i, up);
    if (tw_world_solve_static(w, NULL, NULL) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_world_clear_forces(w);
    printf("bent: tip raised %.3f m\n", tw_world_positions(w)[3 * (n - 1) + 2] - tw_mesh_positions(m)[3 * (n - 1) + 2]);
    *e0 = tw_world_elastic_energy(w);
    *emax = *e0;
    for (int s = 0; s < 2000; s++) {
        if (tw_world_step(w, NULL) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
        double e = tw_world_elastic_energy(w) + tw_world_kinetic_energy(w);
        *emax = tw_test_max(*emax, e);
        *e_end = e;
    }
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(undamped_energy_bounded)
{
    double e0, emax, eend;
    CHECK(release_bent_bar(0, &e0, &emax, &eend) == 0);
    printf("undamped: E0 %.4g J, max %.4g J, after 2000 steps %.4g J\n", e0, emax, eend);
    CHECK(e0 > 0);
    CHECK(emax <= 1.01 * e0);
    CHECK(eend > 0.2 * e0); /* still oscillating: not damped to death by the integrator */
    return 0;
}

TW_TEST(damped_bar_comes_to_rest)
{
    double e0, emax, eend;
    CHECK(release_bent_bar(0.05, &e0, &emax, &eend) == 0);
    printf("damped: E0 %.4g J, after 2000 steps %.4g J\n", e0, eend);
    CHECK(eend < 1e-4 * e0);
    return 0;
}

/* The warp-vertex bar flying freely (1 x 0.1 x 0.1 m, 10 x 2 x 2 cells, no
 * gravity, undamped, CG to 1e-6) under integ, bent to z + bend x^3, every
 * vertex moving at vx along x where vx is not 0; NULL on failure. */
static tw_world *free_bent_bar(const tw_mesh *m, tw_integrator integ, double bend, double vx)
{
    tw_world_def d = tw_default_world_def();
    d.method = TW_WARP_VERTEX;
    d.integrator = integ;
    d.gravity[2] = 0;
    d.damping_stiffness = 0;
    d.cg_tolerance = 1e-6;
    tw_world *w = tw_world_create(m, &d);
    if (!w) return NULL;
    int n = tw_world_vertex_count(w);
    tw_real *x = malloc(sizeof(tw_real) * 3 * n), *v0 = malloc(sizeof(tw_real) * 3 * n);
    if (!x || !v0) {
        free(x);
        free(v0);
        tw_world_destroy(w);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const double *X = tw_mesh_positions(m) + 3 * i;
        x[3 * i] = (tw_real)X[0];
        x[3 * i + 1] = (tw_real)X[1];
        x[3 * i + 2] = (tw_real)(X[2] + bend * X[0] * X[0] * X[0]);
        v0[3 * i] = (tw_real)vx;
        v0[3 * i + 1] = v0[3 * i + 2] = 0;
    }
    tw_world_set_positions(w, x);
    if (vx != 0) tw_world_set_velocities(w, v0);
    free(x);
    free(v0);
    return w;
}

/* The momentum of w's vertices into p, kg m/s; returns their mass, kg. */
static double momentum(const tw_world *w, double p[3])
{
    double mt = 0;
    const tw_real *v = tw_world_velocities(w), *mass = tw_world_vertex_mass(w);
    p[0] = p[1] = p[2] = 0;
    for (int i = 0; i < tw_world_vertex_count(w); i++) {
        for (int c = 0; c < 3; c++) p[c] += mass[i] * v[3 * i + c];
        mt += mass[i];
    }
    return mt;
}

/* A warped bar flying freely keeps its momentum: ghost forces removed. */
TW_TEST(ghost_force_correction_keeps_momentum)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    CHECK(m);
    tw_world *w = free_bent_bar(m, tw_default_world_def().integrator, 0.05, 0);
    CHECK(w);
    for (int s = 0; s < 100; s++) CHECK_OK(tw_world_step(w, NULL));
    double p[3], mt = momentum(w, p);
    double drift = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) / mt;
    printf("centre-of-mass velocity after 100 steps: %.3g m/s\n", drift);
    CHECK(drift < 1e-3);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The same bar bent further, undamped, thrown at 0.3 m/s under BDF2: its
 * Newton iterations keep the momentum as the first solve does, and steps
 * that gain energy give it back from the motion about the centre of mass
 * (tw_world_step's energy projection), so the bar keeps its momentum and its
 * energy never rises above its start. */
TW_TEST(bdf2_warp_vertex_free_bar_keeps_momentum_and_energy)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    CHECK(m);
    tw_world *w = free_bent_bar(m, TW_BDF2, 0.2, 0.3);
    CHECK(w);
    double e0 = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w), emax = e0;
    for (int s = 0; s < 300; s++) {
        CHECK_OK(tw_world_step(w, NULL));
        emax = tw_test_max(emax, tw_world_kinetic_energy(w) + tw_world_elastic_energy(w));
    }
    double p[3], mt = momentum(w, p);
    double drift = sqrt((p[0] / mt - 0.3) * (p[0] / mt - 0.3) + (p[1] / mt) * (p[1] / mt) + (p[2] / mt) * (p[2] / mt));
    printf("free bar, bdf2: centre-of-mass velocity off 0.3 m/s by %.3g m/s after 300 steps; energy %.6g J at the "
           "start, at most %.6g J\n", drift, e0, emax);
    CHECK(drift < 1e-3);
    CHECK(emax <= e0);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* Absurdly soft material with an explicit-like huge step diverges: the step
 * reports which step and why instead of running on NaN. */
TW_TEST(divergence_is_reported)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 4, 1, 1);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.method = TW_GREEN;
    d.gravity[2] = -1e9;
    d.dt = 1;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    tw_world_pin_where(w, 0, 1, 1e-6);
    tw_status s = TW_OK;
    for (int k = 0; k < 50 && s == TW_OK; k++) s = tw_world_step(w, NULL);
    printf("message: %s\n", tw_last_error());
    CHECK(s == TW_ERR_DIVERGED);
    CHECK(strstr(tw_last_error(), "step ") != NULL);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The mouse spring pulls a free bar's vertex towards the anchor. */
TW_TEST(spring_pulls_vertex)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 10, 2, 2);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.gravity[2] = 0;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    tw_world_pin_where(w, 0, 1, 1e-6);
    int tip = tw_world_vertex_count(w) - 1;
    double anchor[3] = {1, 0.1, 0.5};
    CHECK_OK(tw_world_set_spring(w, tip, anchor, 1e3));
    for (int s = 0; s < 100; s++) CHECK_OK(tw_world_step(w, NULL));
    double z = tw_world_positions(w)[3 * tip + 2];
    printf("tip z after 1 s of pulling towards 0.5: %.3f\n", z);
    CHECK(z > 0.2);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(bad_parameters_rejected)
{
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 2, 1, 1);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = NAN;
    CHECK(tw_world_create(m, &d) == NULL);
    CHECK(strstr(tw_last_error(), "Young") != NULL);
    d = tw_default_world_def();
    d.poisson_ratio = 0.5;
    CHECK(tw_world_create(m, &d) == NULL);
    CHECK(strstr(tw_last_error(), "Poisson") != NULL);
    d = tw_default_world_def();
    d.density = 0;
    CHECK(tw_world_create(m, &d) == NULL);
    d = tw_default_world_def();
    d.dt = -1;
    CHECK(tw_world_create(m, &d) == NULL);
    CHECK(strstr(tw_last_error(), "dt") != NULL);
    tw_mesh_destroy(m);
    return 0;
}

/* Inhomogeneous stiffness (Imai et al.): a cantilever whose Young's modulus
 * falls from root to tip sags less than a uniform bar of the mean modulus,
 * and one whose modulus rises sags more (the bending moment, and so the
 * curvature that matters, is largest at the root). */
static double gradient_tip_sag(double E_root, double E_tip)
{
    tw_mesh *m = demo_bar_mesh();
    if (!m) return -1;
    double *E = malloc(sizeof(double) * (size_t)tw_mesh_tet_count(m));
    tw_fill_linear_gradient(m, 0, E_root, E_tip, E);
    tw_world_def d = demo_bar_def(TW_LINEAR);
    d.element_youngs = E;
    tw_world *w = demo_wall_world(m, &d);
    free(E);
    if (!w) return -1;
    if (tw_world_solve_static(w, NULL, NULL) != TW_OK) return -1;
    int tip = tw_world_vertex_count(w) - 1;
    double sag = tw_mesh_positions(m)[3 * tip + 2] - tw_world_positions(w)[3 * tip + 2];
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return sag;
}

TW_TEST(stiffness_gradient_orders_deflections)
{
    double stiff_root = gradient_tip_sag(2e6, 0.5e6), uniform = gradient_tip_sag(1.25e6, 1.25e6),
           soft_root = gradient_tip_sag(0.5e6, 2e6);
    printf("tip sag: stiff root %.4f m, uniform (mean E) %.4f m, soft root %.4f m\n", stiff_root, uniform, soft_root);
    CHECK(stiff_root > 0 && uniform > 0 && soft_root > 0);
    CHECK(stiff_root < 0.9 * uniform);
    CHECK(soft_root > 1.1 * uniform);
    return 0;
}
