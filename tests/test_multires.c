/* The space- and time-adaptive multiresolution simulation (host/multires.h)
 * on three independent meshes of a 0.1 m cube (2^3, 3^3 and a jittered 5^3
 * bar), clamped at x = 0 and sagging under gravity. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "multires.h"
#include "scenes.h"
#include "mesh.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

static tw_multires_def soft_def(void)
{
    tw_multires_def d = tw_default_multires_def();
    d.youngs = 2e4;
    d.poisson = 0.3;
    d.density = 1000;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.frame_dt = 1.0 / 30;
    return d;
}

/* soft_def with the gamma thresholds out of reach: nodes split and merge
 * only where a test (or the tool) makes them; gravity: 0 for none. */
static tw_multires_def manual_def(int gravity)
{
    tw_multires_def d = soft_def();
    if (!gravity)
        d.gravity[2] = 0;
    d.gamma_min = 0;
    d.gamma_max = 1e9;
    return d;
}

/* Three levels, clamped at x = 0 unless free (NULL on failure). */
static tw_multires *make_fixed(const tw_multires_def *d, int fixed)
{
    const int cells[3] = {2, 3, 5};
    const double amount[3] = {0, 0.2, 0.3};
    tw_hierarchy *h = tw_test_mr_cubes(cells, amount);
    tw_multires *s = h ? tw_multires_create(h, d) : NULL;
    if (!s) {
        fprintf(stderr, "make: %s\n", tw_last_error());
        tw_hier_free(h);
        return NULL;
    }
    if (fixed)
        tw_multires_fix(s, 0, 1, 1e-9);
    return s;
}

static tw_multires *make(const tw_multires_def *d) { return make_fixed(d, 1); }

static int count_state(const tw_multires *s, int l, int state)
{
    int n = 0;
    for (int i = 0; i < tw_mesh_vertex_count(tw_multires_mesh(s, l)); i++)
        n += tw_multires_states(s, l)[i] == state;
    return n;
}

/* Splits every active node of level l whose rest x is above `x0`. */
static int split_above(tw_multires *s, int l, double x0)
{
    const tw_mesh *me = tw_multires_mesh(s, l);
    int n = 0;
    for (int i = 0; i < me->nv; i++)
        if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE && me->X[3 * i] > x0 &&
            tw_multires_split(s, l, i) == TW_OK)
            n++;
    return n;
}

static void affine(const double *X, double *x, double *v)
{
    const double a[3] = {0.01, -0.02, 0.005};
    const double B[9] = {0.1, 0.02, -0.03, 0.05, -0.1, 0.04, 0.02, 0.03, 0.07};
    for (int r = 0; r < 3; r++) {
        x[r] = X[r] + a[r] + B[3 * r] * X[0] + B[3 * r + 1] * X[1] + B[3 * r + 2] * X[2];
        v[r] = -a[r] + B[3 * r + 2] * X[0] - B[3 * r] * X[1] + B[3 * r + 1] * X[2];
    }
}

/* With every active node on one affine field (position and velocity), every
 * interface node, whether its source is coarser or finer, is on it too. */
TW_TEST(interface_exact_for_linear_fields)
{
    tw_multires_def d = soft_def();
    tw_multires *s = make_fixed(&d, 0); /* pinned nodes stay at rest, off the field */
    CHECK(s);
    CHECK(split_above(s, 0, 0.04) > 0);
    CHECK(split_above(s, 1, 0.07) > 0);
    for (int l = 0; l < 3; l++)
        CHECK(count_state(s, l, TW_MR_ACTIVE) > 0);
    /* interface nodes fed from a finer level (level 0) and from coarser ones (levels 1, 2) */
    CHECK(count_state(s, 0, TW_MR_INTERFACE) > 0 && count_state(s, 2, TW_MR_INTERFACE) > 0);
    for (int l = 0; l < 3; l++) {
        const tw_mesh *me = tw_multires_mesh(s, l);
        for (int i = 0; i < me->nv; i++)
            if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE)
                affine(me->X + 3 * i, tw_multires_positions(s, l) + 3 * i, tw_multires_velocities(s, l) + 3 * i);
            else
                for (int k = 0; k < 3; k++) /* garbage where the interpolation must write */
                    tw_multires_positions(s, l)[3 * i + k] = tw_multires_velocities(s, l)[3 * i + k] = 1e3;
    }
    tw_multires_update_interface(s);
    double worst = 0;
    int checked = 0;
    for (int l = 0; l < 3; l++) {
        const tw_mesh *me = tw_multires_mesh(s, l);
        for (int i = 0; i < me->nv; i++) {
            if (tw_multires_states(s, l)[i] != TW_MR_INTERFACE)
                continue;
            double x[3], v[3];
            affine(me->X + 3 * i, x, v);
            for (int k = 0; k < 3; k++) {
                worst = tw_test_max(worst, fabs(tw_multires_positions(s, l)[3 * i + k] - x[k]));
                worst = tw_test_max(worst, fabs(tw_multires_velocities(s, l)[3 * i + k] - v[k]));
            }
            checked++;
        }
    }
    CHECK(checked > 0);
    CHECK_NEAR(worst, 0, 1e-12);
    tw_multires_destroy(s);
    return 0;
}

/* Frames with no adaptivity (gamma thresholds out of reach). */
static int run_frames(tw_multires *s, int frames, tw_mr_frame_stats *last)
{
    for (int f = 0; f < frames; f++)
        if (tw_multires_frame(s, last) != TW_OK)
            return 1;
    return 0;
}

/* A sagging, moving cube: split one node, merge it back: the node's state
 * and every other active node's are what they were. */
TW_TEST(split_then_merge_restores_coarse_state)
{
    tw_multires_def d = manual_def(1);
    tw_multires *s = make(&d);
    CHECK(s);
    tw_mr_frame_stats st;
    CHECK(run_frames(s, 4, &st) == 0);
    const tw_mesh *c = tw_multires_mesh(s, 0);
    double *x0 = malloc(sizeof(double) * 3 * (size_t)c->nv), *v0 = malloc(sizeof(double) * 3 * (size_t)c->nv);
    memcpy(x0, tw_multires_positions(s, 0), sizeof(double) * 3 * (size_t)c->nv);
    memcpy(v0, tw_multires_velocities(s, 0), sizeof(double) * 3 * (size_t)c->nv);
    double worst = 0, moved = 0;
    int tried = 0;
    for (int i = 0; i < c->nv; i++) {
        if (c->X[3 * i] < 0.05 || tw_multires_split(s, 0, i) != TW_OK)
            continue;
        CHECK(tw_multires_states(s, 0)[i] != TW_MR_ACTIVE);
        CHECK_OK(tw_multires_merge(s, 0, i));
        tried++;
        for (int j = 0; j < c->nv; j++)
            for (int k = 0; k < 3; k++) {
                worst = tw_test_max(worst, fabs(tw_multires_positions(s, 0)[3 * j + k] - x0[3 * j + k]));
                worst = tw_test_max(worst, fabs(tw_multires_velocities(s, 0)[3 * j + k] - v0[3 * j + k]));
                moved = tw_test_max(moved, fabs(x0[3 * j + k] - c->X[3 * j + k]));
            }
    }
    free(x0);
    free(v0);
    CHECK(tried > 0);
    CHECK(moved > 1e-3); /* the state is not the rest state */
    CHECK_NEAR(worst, 0, 1e-12);
    tw_multires_destroy(s);
    return 0;
}

/* Adaptive frames with the speed-change rule on: every active node's step
 * stays within its Courant limit, semi-implicit or not: with the altitude
 * limit, eq. 10's h sqrt(rho / (lambda + 2 mu)), h its smallest tet altitude
 * (no larger than the distance to its nearest neighbour); with the
 * stiffness limit, the node's own (courant_factor 2 / omega). */
TW_TEST(time_steps_within_courant_limit)
{
    for (int run = 0; run < 4; run++) {
        const int semi = run & 1, altitude = run >> 1;
        tw_multires_def d = soft_def();
        d.step_limit = altitude ? TW_MR_STEP_ALTITUDE : TW_MR_STEP_STIFFNESS;
        d.gamma_min = 2e-5;
        d.gamma_max = 5e-5;
        d.speed_change = 0.01;
        d.semi_implicit = semi;
        tw_multires *s = make(&d);
        CHECK(s);
        int finer = 0, top = 0;
        double worst = 0;
        for (int f = 0; f < 12; f++) {
            tw_mr_frame_stats st;
            CHECK_OK(tw_multires_frame(s, &st));
            finer += st.active_per_level[1] + st.active_per_level[2];
            for (int l = 0; l < 3; l++) {
                const tw_mesh *me = tw_multires_mesh(s, l);
                for (int i = 0; i < me->nv; i++) {
                    if (tw_multires_states(s, l)[i] != TW_MR_ACTIVE)
                        continue;
                    const int k = tw_multires_dt_levels(s, l)[i];
                    const double dt = tw_multires_frame_dt(s) / (1 << k);
                    /* eq. 10's altitude limit, or the node's own limit from its stiffness
                       (courant_factor included) */
                    const double limit = altitude ? tw_multires_node_h(s, l)[i] / tw_multires_wave_speed(s)
                                                  : tw_multires_node_dt_limit(s, l)[i];
                    worst = tw_test_max(worst, dt / limit);
                    top = k > top ? k : top;
                }
            }
        }
        CHECK(finer > 0); /* it did refine */
        CHECK(top > 0); /* and took steps below the frame */
        CHECK(worst <= 1);
        tw_multires_destroy(s);
    }
    return 0;
}

/* The budget: a scene that refines everything it can without one needs
 * more tet evaluations a frame than the budget; with it, every frame's
 * evaluations stay within the budget and equal the plan. */
TW_TEST(frame_budget_holds)
{
    tw_multires_def d = soft_def();
    d.gamma_min = 1e-6;
    d.gamma_max = 2e-6;
    tw_multires *s = make(&d);
    CHECK(s);
    long coarse = 0, most = 0;
    for (int f = 0; f < 10; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        if (f == 0)
            coarse = st.work;
        if (st.work > most)
            most = st.work;
    }
    tw_multires_destroy(s);
    const double budget = 3.0 * (double)coarse;
    CHECK(most > budget); /* unadapted, the scene passes the budget */
    d.work_budget = budget;
    s = make(&d);
    CHECK(s);
    int refused = 0;
    long used = 0;
    for (int f = 0; f < 10; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        CHECK(st.work <= budget);
        CHECK(st.work == st.predicted_work);
        CHECK(!st.over_budget);
        refused += st.refused_splits;
        if (st.work > used)
            used = st.work;
    }
    CHECK(refused > 0);
    CHECK(used > coarse); /* it refined within the budget */
    tw_multires_destroy(s);
    return 0;
}

static double total_energy(tw_multires *s)
{
    double k, e, g;
    tw_multires_energy(s, &k, &e, &g);
    return k + e + g;
}

/* A split or a merge in a moving, deformed cube changes the energy of the
 * representation (kinetic, elastic and gravitational, relative to rest)
 * only as much as the two levels' discretisations of the same motion
 * differ: at most 10 % of the energy the cube holds (its kinetic and
 * elastic energy) for one node; and a split followed by the merge restores
 * the energy exactly, so that split-merge cycles pump none in. */
TW_TEST(split_merge_gain_no_energy)
{
    tw_multires_def d = manual_def(1);
    tw_multires *s = make(&d);
    CHECK(s);
    tw_mr_frame_stats st;
    CHECK(run_frames(s, 3, &st) == 0);
    double k, e, g;
    tw_multires_energy(s, &k, &e, &g);
    const double held = k + e;
    CHECK(held > 0);
    const tw_mesh *c = tw_multires_mesh(s, 0);
    double worst_gain = -1e300, worst_cycle = 0, worst_loss = 1e300;
    for (int i = 0; i < c->nv; i++) {
        const double e0 = total_energy(s);
        if (tw_multires_split(s, 0, i) != TW_OK)
            continue;
        const double e1 = total_energy(s);
        CHECK_OK(tw_multires_merge(s, 0, i));
        const double e2 = total_energy(s);
        worst_gain = tw_test_max(worst_gain, (e1 - e0) / held);
        worst_loss = fmin(worst_loss, (e1 - e0) / held);
        worst_cycle = tw_test_max(worst_cycle, fabs(e2 - e0) / held);
    }
    printf("held %.6g J; one split: energy change %.4g .. %.4g of it; split-merge cycle %.3g\n", held, worst_loss,
           worst_gain, worst_cycle);
    CHECK(worst_gain <= 0.10);
    CHECK_NEAR(worst_cycle, 0, 1e-9);
    tw_multires_destroy(s);
    return 0;
}

/* The rigid tool (§4.2): a sphere pressed 13 mm into the top face of a cube
 * standing on z = 0, then lifted. No node of the top face is inside it at
 * a frame's end, the body pushes it back up (a positive z force), the region
 * under it refines to the finest level, and once the tool has gone back up
 * the force is 0. */
TW_TEST(tool_pushes_surface_and_feels_reaction)
{
    tw_multires_def d = manual_def(0); /* only the tool refines */
    tw_multires *s = make_fixed(&d, 0);
    CHECK(s);
    tw_multires_fix(s, 2, 1, 1e-9);
    /* 2 mm above the top face, down 15 mm over 0.3 s, back over 0.3 s */
    tw_mr_tool tool = tw_test_mr_tool(0.03, 0.05, 0.05, -0.002, -0.015, 0.3);
    tw_multires_set_tool(s, &tool);
    double fz_max = 0, inside = 0, fz_end = 1;
    int frames = (int)(0.7 / d.frame_dt), touched = 0;
    for (int f = 0; f < frames; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        const double t = tw_multires_time(s), u = t / tool.move_time;
        const double c[3] = {0.05, 0.05, tool.center0[2] + (u <= 1 ? u : u <= 2 ? 2 - u : 0) * tool.move[2]};
        touched += st.tool_nodes > 0;
        fz_max = tw_test_max(fz_max, st.tool_force[2]);
        fz_end = st.tool_force[2];
        /* every active boundary node is out of the sphere at the frame's end */
        for (int l = 0; l < 3; l++) {
            const tw_mesh *me = tw_multires_mesh(s, l);
            const double *x = tw_multires_positions(s, l);
            for (int i = 0; i < me->nv; i++) {
                if (tw_multires_states(s, l)[i] != TW_MR_ACTIVE || me->X[3 * i + 2] < 0.1 - 1e-9)
                    continue; /* the top face's nodes */
                double r2 = 0;
                for (int k = 0; k < 3; k++)
                    r2 += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
                inside = tw_test_max(inside, tool.radius - sqrt(r2));
            }
        }
        if (f == (int)(0.3 / d.frame_dt) - 1)
            CHECK(st.active_per_level[2] > 0); /* refined under the tool */
    }
    printf("tool: %d frames in contact, largest push-back %.4g N, last %.3g N, deepest node %.3g m inside\n",
           touched, fz_max, fz_end, inside);
    CHECK(touched > 0);
    CHECK(fz_max > 0.1); /* N: 15 mm into a 20 kPa cube under a 30 mm sphere */
    CHECK(inside <= 1e-9);
    CHECK(fz_end == 0);
    tw_multires_destroy(s);
    return 0;
}

/* Undamped, with no gravity and a fixed mix of levels (the top centre of
 * the cube on level 2, the rest on level 0, level 1 inactive between them),
 * after a push: the interface forces are the gradient of one energy, so it
 * stays within 2 % over 2 s (feeding interface nodes one way only, with no
 * transpose, gained it a hundredfold in 0.5 s). */
TW_TEST(mixed_levels_conserve_energy)
{
    tw_multires_def d = manual_def(0);
    tw_multires *s = make_fixed(&d, 0);
    CHECK(s);
    tw_multires_fix(s, 2, 1, 1e-9);
    const tw_mesh *c = tw_multires_mesh(s, 0), *f1 = tw_multires_mesh(s, 1);
    for (int i = 0; i < c->nv; i++)
        if (fabs(c->X[3 * i] - 0.05) < 1e-9 && fabs(c->X[3 * i + 1] - 0.05) < 1e-9 && c->X[3 * i + 2] > 0.099)
            CHECK_OK(tw_multires_split(s, 0, i));
    for (int i = 0; i < f1->nv; i++)
        if (tw_multires_states(s, 1)[i] == TW_MR_ACTIVE)
            CHECK_OK(tw_multires_split(s, 1, i));
    CHECK(count_state(s, 1, TW_MR_ACTIVE) == 0 && count_state(s, 2, TW_MR_ACTIVE) > 0);
    /* the push: the active nodes of the top face move down at 0.3 m/s */
    for (int l = 0; l < 3; l++) {
        const tw_mesh *me = tw_multires_mesh(s, l);
        for (int i = 0; i < me->nv; i++)
            if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE && me->X[3 * i + 2] > 0.099)
                tw_multires_velocities(s, l)[3 * i + 2] = -0.3;
    }
    tw_multires_update_interface(s);
    const double e0 = total_energy(s);
    double worst = 0;
    for (int f = 0; f < 60; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        CHECK(st.splits == 0 && st.merges == 0);
        worst = tw_test_max(worst, fabs(total_energy(s) - e0) / e0);
    }
    printf("energy %.4g J, largest change %.3g of it over 60 frames\n", e0, worst);
    CHECK(worst <= 0.02);
    tw_multires_destroy(s);
    return 0;
}

/* The mixed levels of mixed_levels_conserve_energy, pushed by a velocity
 * field of the given size, run `frames` frames; NULL on failure. */
static tw_multires *pushed_mixed(const tw_multires_def *d, double speed)
{
    tw_multires *s = make_fixed(d, 0);
    if (!s)
        return NULL;
    tw_multires_fix(s, 2, 1, 1e-9);
    const tw_mesh *c = tw_multires_mesh(s, 0), *f1 = tw_multires_mesh(s, 1);
    for (int i = 0; i < c->nv; i++)
        if (fabs(c->X[3 * i] - 0.05) < 1e-9 && fabs(c->X[3 * i + 1] - 0.05) < 1e-9 && c->X[3 * i + 2] > 0.099)
            tw_multires_split(s, 0, i);
    for (int i = 0; i < f1->nv; i++)
        if (tw_multires_states(s, 1)[i] == TW_MR_ACTIVE)
            tw_multires_split(s, 1, i);
    for (int l = 0; l < 3; l++) {
        const tw_mesh *me = tw_multires_mesh(s, l);
        for (int i = 0; i < me->nv; i++)
            if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE && me->X[3 * i + 2] > 0.099)
                tw_multires_velocities(s, l)[3 * i + 2] = -speed;
    }
    tw_multires_update_interface(s);
    return s;
}

/* The visco-elastic stress (eq. 4) on the mixed levels: the energy never
 * grows by more than the undamped run's 2 % wobble and ends well below
 * where it started, and below where the undamped run ends. */
TW_TEST(visco_damping_dissipates_on_mixed_levels)
{
    tw_multires_def d = manual_def(0);
    double end[2] = {0, 0}, e0 = 0;
    for (int damped = 0; damped < 2; damped++) {
        d.damping_phi = d.damping_psi = damped ? 5 : 0;
        tw_multires *s = pushed_mixed(&d, 0.3);
        CHECK(s);
        e0 = total_energy(s);
        double most = 0;
        for (int f = 0; f < 60; f++) {
            tw_mr_frame_stats st;
            CHECK_OK(tw_multires_frame(s, &st));
            most = tw_test_max(most, total_energy(s) / e0);
        }
        end[damped] = total_energy(s) / e0;
        printf("%s: energy %.4g J at the start, at most %.3f and at the end %.3f of it\n",
               damped ? "damped" : "undamped", e0, most, end[damped]);
        CHECK(most <= 1.02);
        tw_multires_destroy(s);
    }
    CHECK(end[1] <= 0.5);
    CHECK(end[1] < end[0] - 0.3);
    return 0;
}

/* Strong visco-elastic damping (phi, psi = lambda, mu times 0.01 s: its
 * explicit limit 2 m / c far below the elastic one) on the mixed levels,
 * with either step limit: each node's step limit is the damped
 * oscillator's, courant_factor times 2 / (sqrt(omega^2 + b^2 / 4) + b / 2),
 * omega from the undamped run's limit and b = 0.01 s omega^2 (the damping
 * proportional to the stiffness; the altitude limit's b is
 * (phi + 2 psi) / (lambda + 2 mu) omega^2, the same here); the run takes
 * steps within it, stays finite and loses energy (an explicit step on the
 * elastic limit alone diverged). */
TW_TEST(visco_steps_within_damped_limit)
{
    const double alpha = 0.01;
    for (int altitude = 0; altitude < 2; altitude++) {
        tw_multires_def d = manual_def(0);
        d.step_limit = altitude ? TW_MR_STEP_ALTITUDE : TW_MR_STEP_STIFFNESS;
        const double lam = d.youngs * d.poisson / ((1 + d.poisson) * (1 - 2 * d.poisson)),
                     mu = d.youngs / (2 * (1 + d.poisson));
        tw_multires *plain = make_fixed(&d, 0);
        CHECK(plain);
        d.damping_phi = alpha * lam;
        d.damping_psi = alpha * mu;
        tw_multires *s = pushed_mixed(&d, 0.3);
        CHECK(s);
        const double cf = d.courant_factor;
        double worst_limit = 0, ratio = 0;
        for (int l = 0; l < 3; l++) {
            const tw_mesh *me = tw_multires_mesh(s, l);
            for (int i = 0; i < me->nv; i++) {
                const double lu = tw_multires_node_dt_limit(plain, l)[i], ld = tw_multires_node_dt_limit(s, l)[i];
                if (lu == DBL_MAX) { /* a node of no tet */
                    CHECK(ld == DBL_MAX);
                    continue;
                }
                const double w = cf * 2 / lu, b = alpha * w * w;
                const double want = cf * 2 / (sqrt(w * w + b * b / 4) + b / 2);
                worst_limit = tw_test_max(worst_limit, fabs(ld - want) / want);
                ratio = tw_test_max(ratio, lu / ld);
            }
        }
        tw_multires_destroy(plain);
        const double e0 = total_energy(s);
        double most = 0, worst_step = 0;
        int top = 0;
        for (int f = 0; f < 10; f++) {
            tw_mr_frame_stats st;
            CHECK_OK(tw_multires_frame(s, &st));
            most = tw_test_max(most, total_energy(s) / e0);
            for (int l = 0; l < 3; l++) {
                const tw_mesh *me = tw_multires_mesh(s, l);
                for (int i = 0; i < me->nv; i++) {
                    if (tw_multires_states(s, l)[i] != TW_MR_ACTIVE)
                        continue;
                    const int k = tw_multires_dt_levels(s, l)[i];
                    const double dt = tw_multires_frame_dt(s) / (1 << k);
                    worst_step = tw_test_max(worst_step, dt / tw_multires_node_dt_limit(s, l)[i]);
                    top = k > top ? k : top;
                }
            }
        }
        const double end = total_energy(s) / e0;
        printf("%s limit: damped off the oscillator's by %.3g, up to %.3g-fold below the undamped; steps to "
               "level %d, at most %.3g of the limit; energy at most %.3f, at the end %.3g of %.4g J\n",
               altitude ? "altitude" : "stiffness", worst_limit, ratio, top, worst_step, most, end, e0);
        CHECK(worst_limit <= 1e-9);
        CHECK(ratio >= 10); /* the damping does set the limit here */
        CHECK(worst_step <= 1);
        CHECK(most <= 1.02);
        CHECK(end <= 0.5);
        tw_multires_destroy(s);
    }
    return 0;
}

/* At strains of 1e-6 Green's strain is Cauchy's to first order: the two
 * strains move the mixed levels' top node alike (within 1e-4 of its
 * displacement), damped and undamped. */
TW_TEST(cauchy_matches_green_at_small_strain)
{
    for (int damped = 0; damped < 2; damped++) {
        double x[2][3];
        int node = -1;
        for (int k = 0; k < 2; k++) {
            tw_multires_def d = manual_def(0);
            d.strain = k ? TW_MR_CAUCHY : TW_MR_GREEN;
            d.damping_phi = d.damping_psi = damped ? 2 : 0;
            tw_multires *s = pushed_mixed(&d, 1e-6);
            CHECK(s);
            const tw_mesh *me = tw_multires_mesh(s, 2);
            for (int i = 0; i < me->nv && node < 0; i++)
                if (tw_multires_states(s, 2)[i] == TW_MR_ACTIVE && me->X[3 * i + 2] > 0.099)
                    node = i;
            CHECK(node >= 0);
            for (int f = 0; f < 10; f++)
                CHECK_OK(tw_multires_frame(s, NULL));
            for (int r = 0; r < 3; r++)
                x[k][r] = tw_multires_positions(s, 2)[3 * node + r] - me->X[3 * node + r];
            tw_multires_destroy(s);
        }
        const double u = sqrt(x[0][0] * x[0][0] + x[0][1] * x[0][1] + x[0][2] * x[0][2]);
        double diff = 0;
        for (int r = 0; r < 3; r++)
            diff = tw_test_max(diff, fabs(x[1][r] - x[0][r]));
        printf("%s: displacement %.3g m, Green - Cauchy %.3g m\n", damped ? "damped" : "undamped", u, diff);
        CHECK(u > 1e-9);
        CHECK(diff <= 1e-4 * u);
    }
    return 0;
}

/* The level that places each finest point (tw_multires_point_level, the
 * viewer's level colours): the coarsest while only it is active; after the
 * coarse nodes at x > 5 cm (of the 10 cm cube) split, level 1 for some
 * finest points beyond 9 cm and still level 0 for every finest point within
 * 1 cm of x = 0, and each point's probe
 * is that level's interpolation (at rest: the rest position). */
TW_TEST(point_level_follows_splits)
{
    tw_multires_def d = soft_def();
    tw_multires *s = make(&d);
    CHECK(s);
    const tw_mesh *f = tw_multires_mesh(s, 2);
    int before = 0;
    for (int i = 0; i < f->nv; i++)
        before += tw_multires_point_level(s, 2, i) != 0;
    CHECK(split_above(s, 0, 0.05) > 0);
    int near_wall_fine = 0, far_fine = 0;
    double worst = 0;
    for (int i = 0; i < f->nv; i++) {
        const int l = tw_multires_point_level(s, 2, i);
        if (f->X[3 * i] < 0.01)
            near_wall_fine += l != 0;
        if (f->X[3 * i] > 0.09)
            far_fine += l == 1;
        double p[3];
        tw_multires_probe(s, 2, i, p);
        for (int k = 0; k < 3; k++)
            worst = tw_test_max(worst, fabs(p[k] - f->X[3 * i + k]));
    }
    printf("finest points simulated by a finer level: %d before the splits; after: %d within 1 cm of x = 0, %d of level 1 "
           "beyond x = 9 cm; probe at rest off by %.3g m\n", before, near_wall_fine, far_fine, worst);
    CHECK(before == 0);
    CHECK(near_wall_fine == 0);
    CHECK(far_fine > 0);
    CHECK(worst <= 1e-12);
    tw_multires_destroy(s);
    return 0;
}

/* The viewer's tool on the mr-liver scene (demos/mr_scene.c): a sphere
 * collider put into the liver's drawn world becomes the simulation's tool.
 * Put 6 mm below the scripted sphere's start, it is followed at 0.1 m/s
 * and moves the surface millimetres within six frames; the scene's own
 * scripted sphere, starting above the surface, barely touches it then. */
TW_TEST(scene_tool_from_world_collider)
{
    double moved[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        demo_options o = demo_default_options();
        o.data_dir = TW_DATA_DIR;
        demo_scene s;
        CHECK(demo_scene_build(&s, "mr-liver", &o, "test") == 0);
        CHECK(s.body_count == 2 && s.body[0].mr && s.body[1].display_only);
        tw_world *w = s.body[0].world;
        if (r) {
            tw_collider_def c = tw_default_collider_def();
            c.kind = TW_COLLIDER_SPHERE;
            c.radius = 0.008;
            c.center[0] = c.end[0] = -0.0144;
            c.center[1] = c.end[1] = 0.0269;
            c.center[2] = c.end[2] = 0.0363 - 0.006;
            CHECK_OK(tw_world_add_collider(w, &c));
        }
        const int nv = tw_world_vertex_count(w);
        double *x0 = malloc(3 * sizeof(double) * (size_t)nv);
        CHECK(x0);
        for (int i = 0; i < 3 * nv; i++)
            x0[i] = tw_world_positions(w)[i];
        int cg;
        for (int k = 0; k < 6; k++)
            CHECK_OK(demo_scene_step(&s, &cg));
        for (int i = 0; i < nv; i++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++)
                d2 += (tw_world_positions(w)[3 * i + k] - x0[3 * i + k]) *
                      (tw_world_positions(w)[3 * i + k] - x0[3 * i + k]);
            moved[r] = tw_test_max(moved[r], sqrt(d2));
        }
        free(x0);
        demo_scene_destroy(&s);
    }
    printf("mr-liver, 6 frames: the surface moved at most %.3g mm with the scripted sphere, %.3g mm with a sphere "
           "collider in the drawn world\n", 1e3 * moved[0], 1e3 * moved[1]);
    CHECK(moved[1] > 2e-3);
    CHECK(moved[1] > 5 * moved[0]);
    return 0;
}

/* Random mixes of the three levels (every active node of levels 0 and 1
 * split or not by a coin), pushed, undamped, no gravity, no adaptation:
 * many interface nodes lie in tets of other levels that read each other
 * (no order fills them from current values). Their values are fixed linear
 * functions of the active nodes and the forces go back by the transpose,
 * so the energy stays within 2 % over 2 s. Filled a substep late (as they
 * were), they pumped it up a thousandfold or diverged in most mixes. */
TW_TEST(random_mixed_levels_conserve_energy)
{
    int cycles = 0;
    for (int seed = 1; seed <= 8; seed++) {
        tw_multires_def d = manual_def(0);
        d.speed_change = 0;
        tw_multires *s = make(&d);
        CHECK(s);
        unsigned st = (unsigned)seed * 2654435761u;
        for (int l = 0; l < 2; l++) {
            const tw_mesh *me = tw_multires_mesh(s, l);
            for (int i = 0; i < me->nv; i++)
                if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE && tw_test_jitter(&st, 1) > 0)
                    CHECK_OK(tw_multires_split(s, l, i));
        }
        for (int l = 0; l < 3; l++) {
            const tw_mesh *me = tw_multires_mesh(s, l);
            for (int i = 0; i < me->nv; i++)
                if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE)
                    for (int k = 0; k < 3; k++)
                        tw_multires_velocities(s, l)[3 * i + k] = 0.3 * me->X[3 * i] / 0.1 * (k == 2 ? -1 : 0.3);
        }
        tw_multires_update_interface(s);
        const double e0 = total_energy(s);
        double worst = 0;
        for (int f = 0; f < 60; f++) {
            tw_mr_frame_stats fs;
            CHECK_OK(tw_multires_frame(s, &fs));
            CHECK(fs.splits == 0 && fs.merges == 0);
            cycles += f == 0 && fs.stale_interface > 0;
            worst = tw_test_max(worst, fabs(total_energy(s) - e0) / e0);
        }
        printf("mix %d: active %d, %d, %d nodes; energy %.4g J, largest change %.3g of it\n", seed,
               count_state(s, 0, TW_MR_ACTIVE), count_state(s, 1, TW_MR_ACTIVE), count_state(s, 2, TW_MR_ACTIVE), e0,
               worst);
        CHECK(worst <= 0.02);
        tw_multires_destroy(s);
    }
    CHECK(cycles >= 4); /* the mixes do have such nodes */
    return 0;
}

/* The liver's first `levels` levels of data/meshes/liver_mr0..3 (cm to m),
 * E 5 kPa, nu 0.3, 1060 kg/m^3, no gravity, 10 ms frames, the base (z <
 * -12 mm) pinned, the 8 mm sphere 1 mm above the top going 9 mm down over
 * 0.1 s and back; refined `margin` ahead of it; NULL on failure. */
static tw_multires *liver(int levels, double gamma_min, double gamma_max, int semi, double margin)
{
    tw_mesh *m[4] = {NULL, NULL, NULL, NULL};
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    int ok = 1;
    for (int l = 0; l < levels && ok; l++) {
        char name[64];
        snprintf(name, sizeof name, "liver_mr%d.node", l);
        tw_mesh *cm = tw_mesh_load(tw_test_mesh_path(name), &ld, NULL);
        if (!cm) {
            ok = 0;
            break;
        }
        double *X = malloc(sizeof *X * 3 * (size_t)cm->nv);
        for (int k = 0; k < 3 * cm->nv; k++)
            X[k] = 0.01 * cm->X[k];
        m[l] = tw_mesh_create(X, cm->nv, cm->tets, cm->nt, NULL, &ld, NULL);
        free(X);
        tw_mesh_destroy(cm);
        ok = m[l] != NULL;
    }
    tw_hierarchy *h = ok ? tw_hier_nonnested((const tw_mesh *const *)m, levels) : NULL;
    for (int l = 0; l < levels; l++)
        tw_mesh_destroy(m[l]);
    if (!h)
        return NULL;
    tw_multires_def d = tw_default_multires_def();
    d.youngs = 5e3;
    d.poisson = 0.3;
    d.density = 1060;
    d.gravity[2] = 0;
    d.frame_dt = 0.01;
    d.gamma_min = gamma_min;
    d.gamma_max = gamma_max;
    d.semi_implicit = semi;
    d.tool_margin = margin;
    tw_multires *s = tw_multires_create(h, &d);
    if (!s) {
        tw_hier_free(h);
        return NULL;
    }
    tw_multires_fix(s, 2, 1, -0.012);
    tw_mr_tool tool;
    memset(&tool, 0, sizeof tool);
    tool.center0[0] = -0.0144;
    tool.center0[1] = 0.0269;
    tool.center0[2] = 0.0363;
    tool.radius = 0.008;
    tool.move[2] = -0.009;
    tool.move_time = 0.1;
    tw_multires_set_tool(s, &tool);
    return s;
}

/* The largest distance of an active node of levels 0..levels-1 from its
 * rest place, m (NaN wins). */
static double active_displacement(tw_multires *s, int levels)
{
    double far = 0;
    for (int l = 0; l < levels; l++) {
        const tw_mesh *me = tw_multires_mesh(s, l);
        const double *x = tw_multires_positions(s, l);
        for (int i = 0; i < me->nv; i++)
            if (tw_multires_states(s, l)[i] == TW_MR_ACTIVE)
                for (int k = 0; k < 3; k++)
                    far = tw_test_max(far, fabs(x[3 * i + k] - me->X[3 * i + k]));
    }
    return far;
}

/* All four liver levels, damped (eq. 11), gamma 0.01, 0.05 mm: at 0.1 s a
 * level-1 node splits where level 3 is already active around, and one of
 * its children (coarse motion) shares a sliver of level 2 at the surface
 * with three interface nodes on level 3's motion: the sliver starts
 * inverted (det F -8) and its forces blew the frame up at its first
 * substep. Such a child splits in turn: the 14 frames run, and every
 * active node stays within 2 cm of its rest place. */
TW_TEST(liver_split_among_finer_levels_stable)
{
    tw_multires *s = liver(4, 1e-5, 5e-5, 1, 0);
    CHECK(s);
    double far = 0;
    for (int f = 0; f < 14; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        far = tw_test_max(far, active_displacement(s, 4));
    }
    printf("14 frames; largest displacement %.3g m\n", far);
    CHECK(far <= 0.02);
    tw_multires_destroy(s);
    return 0;
}

/* The liver's three coarser levels (181, 705 and 2,207 nodes, cm to m), its
 * base pinned, the 8 mm sphere pressing 9 mm in over 0.1 s, undamped, at
 * gamma 0.03, 0.15 mm: the refinement under the tool leaves coarse active
 * nodes that finer levels' tets reach through the interface, stiffer than
 * their own tets. Their steps follow that stiffness, and the run stays
 * finite with every active node within 2 cm of its rest place; with each
 * node's step from its own tets alone it diverged at frame 16. */
TW_TEST(liver_levels_tool_undamped_stable)
{
    tw_multires *s = liver(3, 3e-5, 1.5e-4, 0, 0);
    CHECK(s);
    int finer = 0;
    double far = 0;
    for (int f = 0; f < 20; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        finer += st.active_per_level[2] > 0;
        far = tw_test_max(far, active_displacement(s, 3));
    }
    printf("20 frames, %d on the finest level; largest displacement %.3g m\n", finer, far);
    CHECK(finer > 0);
    CHECK(far <= 0.02);
    tw_multires_destroy(s);
    return 0;
}

/* All four liver levels, undamped, gamma 0.1, 0.5 mm, refined 8 mm ahead
 * of the tool: as the tool leaves, stretched tets of mixed levels are
 * stiffer than at rest (Green strain), and with steps from the rest
 * stiffness the run diverged at frame 19 (a level-2 node's velocity
 * doubling with alternating sign every 8 substeps). The steps follow the
 * stretch: 22 frames run, every active node within 2 cm of its rest place. */
TW_TEST(liver_stretched_tets_step_finer)
{
    tw_multires *s = liver(4, 1e-4, 5e-4, 0, 0.008);
    CHECK(s);
    double far = 0;
    for (int f = 0; f < 22; f++) {
        tw_mr_frame_stats st;
        CHECK_OK(tw_multires_frame(s, &st));
        far = tw_test_max(far, active_displacement(s, 4));
    }
    printf("22 frames; largest displacement %.3g m\n", far);
    CHECK(far <= 0.02);
    tw_multires_destroy(s);
    return 0;
}

/* The splits of two frames with the tool --tool-margin M ahead of it: a
 * sphere of 30 mm, 6 cm above the cube's top (out of any node's reach),
 * M 7 cm, gamma out of play; moving down 1 cm over move_time (0: still). */
static int margin_splits(double move_time)
{
    tw_multires_def d = manual_def(0);
    d.tool_margin = 0.07;
    tw_multires *s = make_fixed(&d, 0);
    if (!s)
        return -1;
    tw_multires_fix(s, 2, 1, 1e-9);
    tw_mr_tool tool = tw_test_mr_tool(0.03, 0.05, 0.05, -0.06, -0.01, move_time);
    tw_multires_set_tool(s, &tool);
    int splits = 0;
    for (int f = 0; f < 2; f++) {
        tw_mr_frame_stats st;
        if (tw_multires_frame(s, &st) != TW_OK)
            splits = -1000;
        splits += st.splits;
    }
    tw_multires_destroy(s);
    return splits;
}

/* The margin refines ahead of a contact while the tool moves (or holds the
 * surface); a tool at rest off the body refines nothing, so that the region
 * under it merges once it has left (otherwise it stays refined to the end
 * of a run). */
TW_TEST(tool_margin_refines_only_while_the_tool_moves)
{
    const int still = margin_splits(0), moving = margin_splits(0.3);
    printf("splits: tool still %d, moving %d\n", still, moving);
    CHECK(still == 0);
    CHECK(moving > 0);
    return 0;
}

/* A finest-level tet that inverts among interface nodes whose sources have
 * not changed since the frame's start splits nothing: its coarser sources
 * stay (splitting them moves the refined front onto more finest-level
 * slivers, which the coarse field inverts, and the finest level spreads
 * over the body). The cube's right half on level 1, its right quarter on
 * level 2; one active level-2 node next to an interface node is moved
 * through its neighbours, inverting its tets. */
TW_TEST(inverted_finest_tet_among_unchanged_sources_splits_nothing)
{
    tw_multires_def d = manual_def(1);
    tw_multires *s = make(&d);
    CHECK(s);
    CHECK_OK(tw_multires_frame(s, NULL));
    CHECK(split_above(s, 0, 0.05) > 0);
    CHECK(split_above(s, 1, 0.07) > 0);
    CHECK_OK(tw_multires_frame(s, NULL));
    const tw_mesh *me = tw_multires_mesh(s, 2);
    const unsigned char *state = tw_multires_states(s, 2);
    int moved = -1;
    for (int i = 0; i < me->nv && moved < 0; i++) {
        if (state[i] != TW_MR_ACTIVE || me->X[3 * i] >= 0.09)
            continue;
        for (int e = 0; e < me->nt && moved < 0; e++) {
            const int *t = me->tets + 4 * e;
            int has_i = 0, has_iface = 0;
            for (int p = 0; p < 4; p++) {
                has_i |= t[p] == i;
                has_iface |= state[t[p]] == TW_MR_INTERFACE;
            }
            if (has_i && has_iface)
                moved = i;
        }
    }
    CHECK(moved >= 0);
    tw_multires_positions(s, 2)[3 * moved] -= 0.04; /* two level-2 cells to the left */
    tw_multires_update_interface(s);
    tw_mr_frame_stats st;
    CHECK_OK(tw_multires_frame(s, &st));
    printf("node %d moved through its neighbours: %d splits\n", moved, st.splits);
    CHECK(st.splits == 0);
    tw_multires_destroy(s);
    return 0;
}

/* Three cube levels (2^3, 4^3 and a jittered 10^3 bar), sagging, split and
 * merged by gamma (gamma_min, gamma_max 1e-4 m), pressed by the tool, run
 * `frames` frames with def.threads = `threads` and def.kick_lanes = `lanes`
 * (their substeps kick 600,000 tets a frame, many of them over the
 * threads' threshold): the frames' tool forces, then every level's
 * positions and velocities, *count values (NULL on failure; with *refused
 * set where tw_multires_create refused the lanes on this CPU or build); in
 * changes (not NULL) the frames' splits and merges. */
static double *cubes_run(int threads, int lanes, int frames, double gamma_min, size_t *count, int *refused,
                         int changes[2])
{
    const int cells[3] = {2, 4, 10};
    const double amount[3] = {0, 0.2, 0.1};
    tw_hierarchy *h = tw_test_mr_cubes(cells, amount);
    tw_multires_def d = soft_def();
    d.gamma_min = gamma_min;
    d.gamma_max = 1e-4;
    d.threads = threads;
    d.kick_lanes = lanes;
    tw_multires *s = h ? tw_multires_create(h, &d) : NULL;
    if (refused)
        *refused = h && !s && strstr(tw_last_error(), "tets at a time") != NULL;
    if (!s) {
        fprintf(stderr, "cubes_run: %s\n", tw_last_error());
        tw_hier_free(h);
        return NULL;
    }
    tw_multires_fix(s, 0, 1, 1e-9);
    tw_mr_tool tool = tw_test_mr_tool(0.03, 0.07, 0.05, 0.004, -0.01, 0.2);
    tw_multires_set_tool(s, &tool);
    size_t n = 6 * (size_t)frames;
    for (int l = 0; l < 3; l++)
        n += 6 * (size_t)tw_multires_mesh(s, l)->nv;
    double *out = malloc(sizeof *out * n);
    size_t k = 0;
    long work = 0;
    int split = 0, merged = 0;
    for (int f = 0; f < frames && out; f++) {
        tw_mr_frame_stats st;
        if (tw_multires_frame(s, &st) != TW_OK) {
            fprintf(stderr, "cubes_run: %s\n", tw_last_error());
            free(out);
            out = NULL;
            break;
        }
        work += st.work;
        split += st.splits;
        merged += st.merges;
        memcpy(out + k, st.tool_force, sizeof st.tool_force);
        memcpy(out + k + 3, st.tool_force_last, sizeof st.tool_force_last);
        k += 6;
    }
    for (int l = 0; l < 3 && out; l++) {
        const size_t nv = (size_t)tw_multires_mesh(s, l)->nv;
        memcpy(out + k, tw_multires_positions(s, l), sizeof *out * 3 * nv);
        memcpy(out + k + 3 * nv, tw_multires_velocities(s, l), sizeof *out * 3 * nv);
        k += 6 * nv;
    }
    printf("threads %d, kick lanes %d: %ld tet evaluations, %d splits and %d merges in %d frames\n", threads, lanes,
           work, split, merged, frames);
    if (changes) {
        changes[0] = split;
        changes[1] = merged;
    }
    *count = n;
    tw_multires_destroy(s);
    return out;
}

/* The substeps' tet kicks on 2 and 3 threads give the serial run's state
 * bit for bit: the gather adds each node's forces in the serial order. */
TW_TEST(threads_same_bits)
{
    size_t n1 = 0, n2 = 0, n3 = 0;
    double *a = cubes_run(1, 0, 8, 2e-5, &n1, NULL, NULL), *b = cubes_run(2, 0, 8, 2e-5, &n2, NULL, NULL),
           *c = cubes_run(3, 0, 8, 2e-5, &n3, NULL, NULL);
    CHECK(a && b && c && n1 == n2 && n1 == n3);
    size_t differ = 0;
    for (size_t i = 0; i < n1; i++)
        differ += memcmp(a + i, b + i, sizeof *a) != 0 || memcmp(a + i, c + i, sizeof *a) != 0;
    printf("%zu of %zu values differ\n", differ, n1);
    CHECK(differ == 0);
    free(a);
    free(b);
    free(c);
    return 0;
}

/* The cubes run 16 frames (the tool in and out, gamma_min 8e-5: 167 splits
 * and 15 merges) with the substeps' kicks one, two and four tets at a time
 * (def.kick_lanes: a range's tets evaluated by kick_packed alone, by
 * kick_pair with one-tet ends, by kick_quad with one- and two-tet ends):
 * the same bits. Four lanes need AVX (x86-64): where tw_multires_create
 * refuses them, one and two are compared. */
TW_TEST(kick_lanes_same_bits)
{
    const int lanes[3] = {1, 2, 4};
    double *r[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0};
    int refused[3] = {0, 0, 0}, changes[2] = {0, 0}, ran = 0;
    for (int k = 0; k < 3; k++) {
        r[k] = cubes_run(1, lanes[k], 16, 8e-5, &n[k], &refused[k], k ? NULL : changes);
        CHECK(r[k] || refused[k]);
        ran += r[k] != NULL;
    }
    CHECK(r[0] && r[1]); /* one tet at a time runs everywhere; two where the compiler has vector types */
    CHECK(changes[0] > 0 && changes[1] > 0);
    size_t differ[3] = {0, 0, 0};
    for (int k = 1; k < 3; k++) {
        if (!r[k])
            continue;
        CHECK(n[k] == n[0]);
        for (size_t i = 0; i < n[0]; i++)
            differ[k] += memcmp(r[0] + i, r[k] + i, sizeof(double)) != 0;
        printf("%d lanes against 1: %zu of %zu values differ\n", lanes[k], differ[k], n[0]);
    }
    if (refused[2])
        printf("four lanes: refused on this CPU or build, not compared\n");
    printf("%d of 3 lane counts compared\n", ran);
    CHECK(differ[1] == 0 && differ[2] == 0);
    for (int k = 0; k < 3; k++)
        free(r[k]);
    return 0;
}
