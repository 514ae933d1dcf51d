/* Moving kinematic colliders (a tool) and the force the body exerts on them. */
#include <stdlib.h>
#include <string.h>

#include "tool_press.h"
#include "tw_test.h"

#define PI 3.14159265358979323846

/* How far the deepest vertex is inside collider k where it is now, m
 * (negative: none inside). */
static double deepest_inside(const tw_world *w, int k)
{
    tw_collider_def c;
    if (tw_world_get_collider(w, k, &c) != TW_OK) return NAN;
    double worst = -INFINITY, n[3];
    const tw_real *x = tw_world_positions(w);
    for (int i = 0; i < tw_world_vertex_count(w); i++) {
        double p[3] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
        worst = tw_test_max(worst, -tw_collider_distance(&c, p, n));
    }
    return worst;
}

/* The force the pins exert on the body: minus the elastic force on the
 * pinned vertices (at rest it holds them against it), N. */
static void pin_reaction(tw_world *w, double r[3])
{
    int n = tw_world_vertex_count(w);
    tw_real *f = malloc(sizeof(tw_real) * 3 * (size_t)n);
    r[0] = r[1] = r[2] = 0;
    if (!f) { r[0] = NAN; return; }
    tw_world_elastic_force(w, f);
    for (int i = 0; i < n; i++)
        if (tw_world_get_constraint(w, i) == TW_PINNED)
            for (int a = 0; a < 3; a++) r[a] -= f[3 * i + a];
    free(f);
}

static tw_world_def press_def(tw_integrator integ, double dt)
{
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.gravity[2] = 0; /* the tool's force and the pins' alone */
    d.damping_mass = 5;
    d.integrator = integ;
    d.dt = dt;
    return d;
}

/* A sphere (4 cm, friction mu; capsule: a capsule of that radius lying
 * along x, 10 cm long) moved down into the middle of the fixed block's top,
 * `depth` m deep over `ramp` s along the path the test drives
 * (tw_world_move_collider), then held there for 1.5 s. F: the force on the
 * tool at the end, R: the pins' reaction, deepest: the deepest a vertex ended
 * a step inside the tool, m. */
static int press(int capsule, double depth, double ramp, double mu, tw_integrator integ, double dt, double F[3],
                 double R[3], double *deepest)
{
    tw_mesh *m = demo_tool_block_mesh(8);
    CHECK(m);
    tw_world_def d = press_def(integ, dt);
    tw_world *w = demo_tool_block_world(m, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.04, 0, mu);
    if (capsule) {
        tool.kind = TW_COLLIDER_CAPSULE;
        tool.center[0] -= 0.05;
        tool.end[0] += 0.05;
    }
    CHECK_OK(tw_world_add_collider(w, &tool));
    double c0[3] = {tool.center[0], tool.center[1], tool.center[2]};
    int steps = (int)((ramp + 1.5) / dt + 0.5);
    *deepest = -INFINITY;
    for (int s = 0; s < steps; s++) {
        double t = (s + 1) * dt, c[3] = {c0[0], c0[1], c0[2] - depth * fmin(t / ramp, 1.0)};
        CHECK_OK(tw_world_move_collider(w, 0, c, NULL));
        tw_step_stats st;
        CHECK_OK(tw_world_step(w, &st));
        *deepest = tw_test_max(*deepest, deepest_inside(w, 0));
    }
    CHECK_OK(tw_world_collider_force(w, 0, F));
    pin_reaction(w, R);
    printf("%s%s dt %g, depth %g mm over %g s, mu %g: force on the tool (%.4g, %.4g, %.4g) N, pins' reaction "
           "(%.4g, %.4g, %.4g) N; deepest %.3g mm inside\n",
           capsule ? "capsule, " : "", tw_integrator_name(integ), dt, 1e3 * depth, ramp, mu, F[0], F[1], F[2], R[0], R[1], R[2], 1e3 * *deepest);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* |F - R| / |R| */
static double rel_diff(const double F[3], const double R[3])
{
    double d2 = 0, r2 = 0;
    for (int a = 0; a < 3; a++) {
        d2 += (F[a] - R[a]) * (F[a] - R[a]);
        r2 += R[a] * R[a];
    }
    return sqrt(d2 / r2);
}

/* press (over 0.2 s) then held: the force on the tool balances the pins'
 * reaction (the body is at rest, no gravity) within 3 %, it pushes the tool
 * up, out of the body, and no vertex ends a step 0.5 mm inside the tool. */
static int press_balances(int capsule, double depth, double mu, tw_integrator integ, double dt)
{
    double F[3], R[3], deepest;
    CHECK(press(capsule, depth, 0.2, mu, integ, dt, F, R, &deepest) == 0);
    double e = rel_diff(F, R);
    printf("relative difference %.3g\n", e);
    CHECK(R[2] > 1);  /* the press loads the body (about 10 N) */
    CHECK(F[2] > 0);  /* the body pushes the tool back up */
    CHECK(!(e > 0.03));
    CHECK(!(deepest > 0.5e-3));
    return 0;
}

/* Pressed 1 cm into the block and held. */
TW_TEST(press_force_equals_reaction) { return press_balances(0, 0.01, 0, TW_IMPLICIT_EULER, 0.01); }

/* The same with friction on the tool and with BDF2 (the impulse over its
 * effective step 2 dt / 3). */
TW_TEST(press_force_friction_bdf2) { return press_balances(0, 0.01, 0.5, TW_BDF2, 1.0 / 60); }

/* A fast press (1 cm in 0.02 s, 0.5 m/s): no vertex ends a step more than
 * 0.5 mm inside the tool. */
TW_TEST(fast_press_no_penetration)
{
    double F[3], R[3], deepest;
    CHECK(press(0, 0.01, 0.02, 0.5, TW_IMPLICIT_EULER, 0.01, F, R, &deepest) == 0);
    CHECK(!(deepest > 0.5e-3));
    CHECK(F[2] > 0);
    return 0;
}

/* The body's momentum along x, N s. */
static double momentum_x(const tw_world *w)
{
    double p = 0;
    for (int i = 0; i < tw_world_vertex_count(w); i++) p += tw_world_vertex_mass(w)[i] * tw_world_velocities(w)[3 * i];
    return p;
}

/* A capsule pressed 5 mm in along its length at dt 1/30 s: the force on it
 * balances the pins' reaction too. */
TW_TEST(capsule_press_force) { return press_balances(1, 0.005, 0.5, TW_IMPLICIT_EULER, 1.0 / 30); }

/* A free block resting on a frictionless floor under gravity; the sphere
 * (friction mu) pressed 3 mm into its top, then moved along x at 0.1 m/s for
 * 0.6 s. *moved: how far the block's centre went along x while the tool
 * moved, m; *fx: the mean x force on the tool while it moved, N; *dp: the
 * block's momentum gained along x meanwhile, N s. */
static int drag(double mu, double *moved, double *fx, double *dp, double *deepest)
{
    tw_mesh *m = demo_tool_block_mesh(8);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 0.01;
    tw_world *w = demo_tool_block_world(m, &d, 0);
    CHECK(w);
    tw_collider_def floor = tw_default_collider_def();
    floor.friction = 0;
    tw_collider_def tool = demo_tool_sphere(0.04, 0, mu);
    CHECK_OK(tw_world_add_collider(w, &tool));
    CHECK_OK(tw_world_add_collider(w, &floor));
    int n = tw_world_vertex_count(w);
    double c[3] = {tool.center[0], tool.center[1], tool.center[2]}, x0 = 0, x1 = 0, v = 0.1;
    *fx = 0;
    *deepest = -INFINITY;
    for (int s = 0; s < 90; s++) {
        if (s < 20) c[2] -= 0.003 / 20; /* press 3 mm in 0.2 s */
        else if (s >= 30) c[0] += v * d.dt; /* then, after 0.1 s, along x */
        if (s == 30) {
            for (int i = 0; i < n; i++) x0 += tw_world_positions(w)[3 * i] / n;
            *dp = -momentum_x(w);
        }
        CHECK_OK(tw_world_move_collider(w, 0, c, NULL));
        CHECK_OK(tw_world_step(w, NULL));
        *deepest = tw_test_max(*deepest, deepest_inside(w, 0));
        double f[3];
        CHECK_OK(tw_world_collider_force(w, 0, f));
        if (s >= 30) *fx += f[0] / 60;
    }
    for (int i = 0; i < n; i++) x1 += tw_world_positions(w)[3 * i] / n;
    *moved = x1 - x0;
    *dp += momentum_x(w);
    printf("tool friction %g: the block moved %.4g m of the tool's %.4g m and gained %.4g N s along x; mean force "
           "on the tool along x %.4g N (x 0.6 s: %.4g N s); deepest %.3g mm inside\n",
           mu, *moved, 0.6 * v, *dp, *fx, 0.6 * *fx, 1e3 * *deepest);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* With friction the moving tool drags the block along (most of the way: it
 * sticks), and the block holds the tool back: the force on the tool along x
 * is the block's momentum gain with the sign turned, within 5 % (nothing
 * else pushes along x: the floor is frictionless); without friction the
 * sphere slides over the top and the block moves far less. */
TW_TEST(moving_tool_drags_block)
{
    double moved, fx, dp, deepest, moved0, fx0, dp0, deepest0;
    CHECK(drag(0.8, &moved, &fx, &dp, &deepest) == 0);
    CHECK(drag(0, &moved0, &fx0, &dp0, &deepest0) == 0);
    CHECK(moved > 0.7 * 0.06);
    CHECK(fx < 0);
    CHECK(!(fabs(-0.6 * fx / dp - 1) > 0.05));
    CHECK(moved0 < 0.5 * moved);
    CHECK(!(deepest > 0.5e-3) && !(deepest0 > 0.5e-3));
    return 0;
}

/* The path: a capsule driven along a line plus an oscillation
 * (tw_world_move_collider each step) is exactly where the path puts it at
 * each step's end; a sphere given only a velocity moves by dt x velocity a
 * step. */
TW_TEST(tool_path_followed_exactly)
{
    tw_mesh *m = demo_tool_block_mesh(4);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.dt = 1.0 / 60;
    tw_world *w = demo_tool_block_world(m, &d, 1);
    CHECK(w);
    tw_collider_def cap = tw_default_collider_def();
    cap.kind = TW_COLLIDER_CAPSULE;
    cap.radius = 0.02;
    double a0[3] = {0.05, 0.1, 0.2}, b0[3] = {0.15, 0.1, 0.2};
    for (int k = 0; k < 3; k++) { cap.center[k] = a0[k]; cap.end[k] = b0[k]; }
    CHECK_OK(tw_world_add_collider(w, &cap));
    tw_collider_def sph = demo_tool_sphere(0.03, -0.05, 0.5);
    sph.velocity[1] = 0.25;
    CHECK_OK(tw_world_add_collider(w, &sph));
    double worst = 0, worst_v = 0;
    for (int s = 1; s <= 60; s++) {
        double t = s * d.dt, off[3] = {0.02 * sin(2 * PI * 3 * t), 0, -0.2 * t};
        double a[3], b[3];
        for (int k = 0; k < 3; k++) { a[k] = a0[k] + off[k]; b[k] = b0[k] + off[k]; }
        b[1] += 0.01 * t; /* the capsule turns a little */
        CHECK_OK(tw_world_move_collider(w, 0, a, b));
        CHECK_OK(tw_world_step(w, NULL));
        tw_collider_def c;
        CHECK_OK(tw_world_get_collider(w, 0, &c));
        for (int k = 0; k < 3; k++) worst = tw_test_max(worst, fmax(fabs(c.center[k] - a[k]), fabs(c.end[k] - b[k])));
        CHECK_OK(tw_world_get_collider(w, 1, &c));
        worst_v = tw_test_max(worst_v, fabs(c.center[1] - (sph.center[1] + 0.25 * t)));
    }
    printf("off the path by at most %.3g m (moved), %.3g m (velocity)\n", worst, worst_v);
    CHECK(worst == 0);
    CHECK(!(worst_v > 1e-12));
    CHECK(fabs(tw_world_time(w) - 1) < 1e-9);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* A static collider's force too: a block resting on the floor (dt 1/60 s)
 * presses on it with its weight, within 1 %. */
TW_TEST(floor_force_is_weight)
{
    tw_mesh *m = demo_tool_block_mesh(4);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 1.0 / 60;
    tw_world *w = demo_tool_block_world(m, &d, 0);
    CHECK(w);
    tw_collider_def floor = tw_default_collider_def();
    CHECK_OK(tw_world_add_collider(w, &floor));
    for (int s = 0; s < 120; s++) CHECK_OK(tw_world_step(w, NULL));
    double f[3], mass = 0;
    CHECK_OK(tw_world_collider_force(w, 0, f));
    for (int i = 0; i < tw_world_vertex_count(w); i++) mass += tw_world_vertex_mass(w)[i];
    printf("force on the floor (%.4g, %.4g, %.4g) N, weight %.4g N\n", f[0], f[1], f[2], mass * 9.81);
    CHECK(!(fabs(f[2] / (-mass * 9.81) - 1) > 0.01));
    CHECK(!(fabs(f[0]) + fabs(f[1]) > 1e-3 * mass * 9.81));
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(capsule_distance)
{
    tw_collider_def c = tw_default_collider_def();
    c.kind = TW_COLLIDER_CAPSULE;
    c.radius = 0.1;
    c.end[0] = 1;
    double n[3], mid[3] = {0.5, 0, 0.3}, beyond[3] = {1.3, 0.4, 0}, inside[3] = {0.2, 0.05, 0};
    CHECK_NEAR(tw_collider_distance(&c, mid, n), 0.2, 1e-12);
    CHECK_NEAR(n[2], 1, 1e-12);
    CHECK_NEAR(tw_collider_distance(&c, beyond, n), 0.4, 1e-12); /* 0.5 from the end */
    CHECK_NEAR(n[0], 0.6, 1e-12);
    CHECK_NEAR(tw_collider_distance(&c, inside, n), -0.05, 1e-12);
    CHECK_NEAR(n[1], 1, 1e-12);
    return 0;
}

TW_TEST(bad_tool_rejected)
{
    tw_mesh *m = demo_tool_block_mesh(2);
    CHECK(m);
    tw_world *w = tw_world_create(m, NULL);
    CHECK(w);
    double p[3] = {0, 0, 0}, f[3];
    CHECK(tw_world_move_collider(w, 0, p, NULL) == TW_ERR_INVALID);
    CHECK(strstr(tw_last_error(), "collider 0") != NULL);
    CHECK(tw_world_collider_force(w, 0, f) == TW_ERR_INVALID);
    tw_collider_def c = demo_tool_sphere(0.02, 0, 0.5);
    c.velocity[0] = NAN;
    CHECK(tw_world_add_collider(w, &c) == TW_ERR_INVALID);
    CHECK(strstr(tw_last_error(), "velocity") != NULL);
    c = demo_tool_sphere(0.02, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &c));
    p[0] = INFINITY;
    CHECK(tw_world_move_collider(w, 0, p, NULL) == TW_ERR_INVALID);
    tw_world_destroy(w);
    tw_world_def d = tw_default_world_def();
    d.contact_passes = -1;
    CHECK(tw_world_create(m, &d) == NULL);
    CHECK(strstr(tw_last_error(), "contact passes -1") != NULL);
    tw_mesh_destroy(m);
    return 0;
}

/* The model tests' press: a 5 cm sphere pressed 6 mm into the 1536-tet
 * block over 0.1 s, with friction (mu > 0) while sliding 3 mm along x (its
 * contacts end stuck, loaded sideways), then held (dt 10 ms, linear, mass damping 30/s
 * so that it comes to rest within the 0.8 s held); then moved by `shift`
 * and held 0.8 s more. F0 / F1: the force on the tool at rest before / after
 * the shift, m the model at rest before it; x the positions at the first
 * rest (3n) when not NULL; models 0 runs without them. */
static int model_settle(double mu, int models, const double shift[3], double F0[3], double F1[3], tw_collider_model *m,
                        tw_real *x)
{
    tw_mesh *mesh = demo_tool_block_mesh(8);
    CHECK(mesh);
    tw_world_def d = press_def(TW_IMPLICIT_EULER, 0.01);
    d.method = TW_LINEAR;
    d.youngs_modulus = 5e4;
    d.damping_mass = 30;
    d.threads = 1;
    d.cg_tolerance = 1e-6;
    d.cg_max_iterations = 2000;
    d.collider_models = models;
    tw_world *w = demo_tool_block_world(mesh, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.05, 0, mu);
    CHECK_OK(tw_world_add_collider(w, &tool));
    tw_step_stats st;
    int contacts = 0;
    double slide = mu > 0 ? 0.003 : 0;
    for (int s = 0; s < 170; s++) {
        double t = (s + 1) * d.dt, r = fmin(t / 0.1, 1.0), p[3] = {tool.center[0] + slide * r, tool.center[1],
                                                                   tool.center[2] - 0.006 * r};
        if (s >= 90)
            for (int a = 0; a < 3; a++) p[a] += shift[a];
        CHECK_OK(tw_world_move_collider(w, 0, p, NULL));
        CHECK_OK(tw_world_step(w, &st));
        if (s == 89) {
            CHECK_OK(tw_world_collider_force(w, 0, F0));
            if (models) CHECK_OK(tw_world_collider_model(w, 0, m));
            if (x) memcpy(x, tw_world_positions(w), sizeof(tw_real) * 3 * (size_t)tw_world_vertex_count(w));
            contacts = st.contacts;
        }
    }
    CHECK(st.contacts == contacts && contacts > 0); /* the same contact set: the model's domain */
    CHECK_OK(tw_world_collider_force(w, 0, F1));
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
    return 0;
}

/* The collider model's stiffness is the body's at rest: the tool held at
 * rest, then moved by 0.01 mm along each axis and held until the body is at
 * rest again (the contact set unchanged), the force changes by K dc within
 * 1 % of the largest change the three shifts make (what is left is the
 * non-linearity of the contact over the shift). With mu = 0.5 (stuck
 * contacts held whole; a shift forward would make them slip, where the
 * model does not reach) and without friction (the normal alone
 * constrained: the sideways stiffness is the curvature's, the contact's
 * normal turning as the vertex slides on the sphere). Also: the model's
 * solves leave the step's results unchanged to the bit. */
static int model_predicts(double mu)
{
    double zero[3] = {0, 0, 0}, F0[3], F1[3], G0[3], G1[3];
    tw_collider_model m;
    tw_mesh *mesh = demo_tool_block_mesh(8);
    CHECK(mesh);
    size_t n3 = 3 * (size_t)tw_mesh_vertex_count(mesh);
    tw_mesh_destroy(mesh);
    tw_real *x0 = malloc(sizeof(tw_real) * n3), *x1 = malloc(sizeof(tw_real) * n3);
    CHECK(x0 && x1);
    CHECK(model_settle(mu, 1, zero, F0, F1, &m, x0) == 0);
    CHECK(model_settle(mu, 0, zero, G0, G1, NULL, x1) == 0);
    CHECK(memcmp(x0, x1, sizeof(tw_real) * n3) == 0);
    free(x0);
    free(x1);
    printf("mu %g: %d contacts, force (%.4g, %.4g, %.4g) N, K (N/m) [%.4g %.4g %.4g; %.4g %.4g %.4g; %.4g %.4g %.4g], "
           "%d CG iterations\n",
           mu, m.contacts, F0[0], F0[1], F0[2], m.stiffness[0], m.stiffness[1], m.stiffness[2], m.stiffness[3],
           m.stiffness[4], m.stiffness[5], m.stiffness[6], m.stiffness[7], m.stiffness[8], m.cg_iterations);
    CHECK(F0[2] > 0.5); /* pressed in: the body pushes the tool up */
    double err = 0, change = 0;
    for (int a = 0; a < 3; a++) {
        double shift[3] = {0, 0, 0}, P[3], c[3];
        shift[a] = -1e-5;
        CHECK(model_settle(mu, 0, shift, G0, F1, NULL, NULL) == 0);
        for (int r = 0; r < 3; r++) c[r] = m.center[r] + shift[r];
        tw_collider_model_force(&m, c, NULL, P);
        double e2 = 0, d2 = 0;
        for (int r = 0; r < 3; r++) {
            e2 += (F1[r] - P[r]) * (F1[r] - P[r]);
            d2 += (F1[r] - F0[r]) * (F1[r] - F0[r]);
        }
        printf("  shift %c -0.01 mm: the force at rest changes by (%.4g, %.4g, %.4g) N, the model's by (%.4g, %.4g, "
               "%.4g) N, error %.3g of it\n",
               "xyz"[a], F1[0] - F0[0], F1[1] - F0[1], F1[2] - F0[2], P[0] - F0[0], P[1] - F0[1], P[2] - F0[2],
               sqrt(e2 / d2));
        err = tw_test_max(err, sqrt(e2));
        change = tw_test_max(change, sqrt(d2));
    }
    CHECK(change > 1e-3);
    CHECK(!(err > 0.01 * change));
    return 0;
}

/* The model is about where the step left the tool: a tw_world_move_collider
 * for the next step (which sets the collider's velocity at once) leaves
 * its centre and velocity as they were; a collider replaced (set, or
 * cleared and added in its place) has no model until the next step. */
static int same_model(const tw_collider_model *a, const tw_collider_model *b)
{
    return !memcmp(a->center, b->center, sizeof a->center) && !memcmp(a->velocity, b->velocity, sizeof a->velocity) &&
           !memcmp(a->stiffness, b->stiffness, sizeof a->stiffness) && a->contacts == b->contacts;
}

TW_TEST(model_stays_with_its_step)
{
    tw_mesh *mesh = demo_tool_block_mesh(4);
    CHECK(mesh);
    tw_world_def d = press_def(TW_IMPLICIT_EULER, 0.01);
    d.collider_models = 1;
    tw_world *w = demo_tool_block_world(mesh, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.05, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &tool));
    for (int s = 0; s < 12; s++) {
        double p[3] = {tool.center[0], tool.center[1], tool.center[2] - 0.0005 * (s + 1)};
        CHECK_OK(tw_world_move_collider(w, 0, p, NULL));
        CHECK_OK(tw_world_step(w, NULL));
    }
    tw_collider_model m0, m1;
    CHECK_OK(tw_world_collider_model(w, 0, &m0));
    CHECK(m0.contacts > 0 && m0.stiffness[8] < 0 && m0.velocity[2] < 0);
    double p[3] = {m0.center[0] + 0.001, m0.center[1], m0.center[2] + 0.002};
    CHECK_OK(tw_world_move_collider(w, 0, p, NULL));
    CHECK_OK(tw_world_collider_model(w, 0, &m1));
    CHECK(same_model(&m0, &m1));
    tw_collider_def c;
    CHECK_OK(tw_world_get_collider(w, 0, &c));
    CHECK_OK(tw_world_set_collider(w, 0, &c));
    CHECK_OK(tw_world_collider_model(w, 0, &m1));
    CHECK(m1.contacts == 0 && m1.stiffness[8] == 0);
    CHECK_OK(tw_world_step(w, NULL));
    CHECK_OK(tw_world_collider_model(w, 0, &m1));
    CHECK(m1.contacts > 0);
    tw_world_clear_colliders(w);
    tool = demo_tool_sphere(0.01, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &tool));
    CHECK_OK(tw_world_collider_model(w, 0, &m1));
    CHECK(m1.contacts == 0 && m1.stiffness[8] == 0);
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
    return 0;
}

/* A capsule's side is straight along its axis: a frictionless capsule
 * lying across the block's top (longer than the block: its contacts all on
 * its side), pressed in, has no stiffness along its axis (sliding along it
 * moves no contact), and the curvature's around it (measured, 5 contacts:
 * K_xx 1.5e-26, K_yy 1.5e3, K_zz -1.6e4 N/m; K_xx 1.5e3 with the curvature
 * taken as a sphere's). */
TW_TEST(model_capsule_straight_along_its_axis)
{
    tw_mesh *mesh = demo_tool_block_mesh(4);
    CHECK(mesh);
    tw_world_def d = press_def(TW_IMPLICIT_EULER, 0.01);
    d.collider_models = 1;
    d.cg_tolerance = 1e-6;
    tw_world *w = demo_tool_block_world(mesh, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.05, 0, 0);
    tool.kind = TW_COLLIDER_CAPSULE;
    tool.center[0] = -0.1;
    tool.end[0] = 0.3;
    CHECK_OK(tw_world_add_collider(w, &tool));
    for (int s = 0; s < 20; s++) {
        double r = fmin((s + 1) / 10.0, 1.0), p[3] = {tool.center[0], tool.center[1], tool.center[2] - 0.004 * r},
               e[3] = {tool.end[0], tool.end[1], tool.end[2] - 0.004 * r};
        CHECK_OK(tw_world_move_collider(w, 0, p, e));
        CHECK_OK(tw_world_step(w, NULL));
    }
    tw_collider_model m;
    CHECK_OK(tw_world_collider_model(w, 0, &m));
    printf("%d contacts: K_xx %.3g, K_yy %.3g, K_zz %.3g N/m\n", m.contacts, m.stiffness[0], m.stiffness[4],
           m.stiffness[8]);
    CHECK(m.contacts > 0 && m.stiffness[8] < 0);
    CHECK(!(fabs(m.stiffness[0]) > 1e-3 * fabs(m.stiffness[8])));
    CHECK(!(fabs(m.stiffness[4]) < 1e-3 * fabs(m.stiffness[8]))); /* the curvature's, around the axis */
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
    return 0;
}

TW_TEST(model_predicts_rest_frictionless) { return model_predicts(0); }
TW_TEST(model_predicts_rest_friction) { return model_predicts(0.5); }

TW_TEST(model_needs_its_def)
{
    tw_mesh *m = demo_tool_block_mesh(2);
    CHECK(m);
    tw_world *w = tw_world_create(m, NULL);
    CHECK(w);
    tw_collider_def c = demo_tool_sphere(0.02, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &c));
    tw_collider_model model;
    CHECK(tw_world_collider_model(w, 0, &model) == TW_ERR_UNSUPPORTED);
    CHECK(strstr(tw_last_error(), "collider_models") != NULL);
    tw_world_destroy(w);
    tw_world_def d = tw_default_world_def();
    d.collider_models = 2;
    CHECK(tw_world_create(m, &d) == NULL);
    CHECK(strstr(tw_last_error(), "collider models 2") != NULL);
    tw_mesh_destroy(m);
    return 0;
}

/* The multirate scheme on the 1536-tet block (bench/tool_rate.c --multirate
 * at a test's size): a 3 cm sphere (mu 0.5) pressed 5 mm in over 0.05 s,
 * then moved 2 mm up and down at 5 Hz and 1 cm sideways at 2 Hz. The force
 * at every 1 ms tick over 0.1-0.2 s from the model of a 10 ms simulation,
 * one step behind (the model of the step ending at T serves from T + 10 ms
 * to T + 20 ms), against the 1 ms simulation (CG to 1e-6): within 20 % RMS
 * (12 % measured) and less than half the error of the last step's force
 * held (39 %). A model of the wrong sign or size, or none, fails. */
static void multirate_path(const tw_collider_def *c0, double t, double p[3])
{
    double press = 0.005 * fmin(t / 0.05, 1.0), after = fmax(t - 0.05, 0.0);
    p[0] = c0->center[0] + 0.01 * sin(2 * PI * 2 * after);
    p[1] = c0->center[1];
    p[2] = c0->center[2] - press - 0.002 * sin(2 * PI * 5 * after);
}

/* Steps the block with the tool on multirate_path at dt for `steps` steps;
 * the force after each into F (3 per step), the models into M when not NULL. */
static int multirate_run(double dt, int steps, double tol, double *F, tw_collider_model *M)
{
    tw_mesh *mesh = demo_tool_block_mesh(8);
    CHECK(mesh);
    tw_world_def d = tw_default_world_def();
    d.method = TW_LINEAR;
    d.youngs_modulus = 5e4;
    d.dt = dt;
    d.threads = 1;
    d.cg_tolerance = tol;
    d.cg_max_iterations = 5000;
    d.collider_models = M != NULL;
    d.collider_model_tolerance = 0.1;
    tw_world *w = demo_tool_block_world(mesh, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.03, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &tool));
    for (int s = 0; s < steps; s++) {
        double p[3];
        multirate_path(&tool, (s + 1) * dt, p);
        CHECK_OK(tw_world_move_collider(w, 0, p, NULL));
        CHECK_OK(tw_world_step(w, NULL));
        CHECK_OK(tw_world_collider_force(w, 0, F + 3 * s));
        if (M) CHECK_OK(tw_world_collider_model(w, 0, &M[s]));
    }
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
    return 0;
}

TW_TEST(model_multirate_tracks_simulation)
{
    enum { FINE = 200, SLOW = 20, RATIO = 10 };
    double ref[3 * FINE], slow[3 * SLOW];
    tw_collider_model M[SLOW];
    CHECK(multirate_run(0.001, FINE, 1e-6, ref, NULL) == 0);
    CHECK(multirate_run(0.01, SLOW, 1e-4, slow, M) == 0);
    tw_collider_def c0 = demo_tool_sphere(0.03, 0, 0.5);
    double e2 = 0, h2 = 0, n2 = 0;
    for (int s = 100; s < FINE; s++) {
        int j = (s + 1) / RATIO - 2; /* one slow step behind */
        double p[3], q[3], v[3], f[3];
        multirate_path(&c0, (s + 1) * 0.001, p);
        multirate_path(&c0, s * 0.001, q);
        for (int a = 0; a < 3; a++) v[a] = (p[a] - q[a]) / 0.001;
        tw_collider_model_force(&M[j], p, v, f);
        for (int a = 0; a < 3; a++) {
            double r = ref[3 * s + a];
            e2 += (f[a] - r) * (f[a] - r);
            h2 += (M[j].force[a] - r) * (M[j].force[a] - r);
            n2 += r * r;
        }
    }
    double err = sqrt(e2 / n2), held = sqrt(h2 / n2);
    printf("1 kHz force from the 10 ms simulation's models (one step behind): RMS error %.3g; the force held: %.3g\n",
           err, held);
    CHECK(!(err > 0.2));
    CHECK(!(err > 0.5 * held));
    return 0;
}
