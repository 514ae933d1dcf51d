/* Body contact on the CUDA backend (kernels/cuda_bodies.cu) against the CPU
 * backend, on the shared scenes (demos/scenes.c): the stack of three cubes
 * and the bunny dropped on the soft block, each stepped on both backends
 * side by side. A CPU case first shows that the stack's result depends on
 * body contact (the same mesh as one body, with no body contact, ends far
 * from it), so a device step that skipped body contact could not pass the
 * parity cases. The GPU cases exit 77 (skipped) in a build without CUDA or
 * on a machine without a GPU; so does the refusal case.
 *
 * The tolerances (float build; the double build passes them with room):
 * - Positions: the largest distance between the backends' vertices over all
 *   steps within 2e-3 of the scene's size, their RMS within 4e-4. Both
 *   backends solve to a relative residual of 1e-6 here (the scenes' own
 *   1e-4 would let the two solves stop at iterates that differ by more than
 *   the rounding). What remains is float rounding in other orders (device
 *   sums, the gather form of the coupled solve) and what it can flip in the
 *   active set: a vertex that joins its contact one pass or one step later
 *   on one backend. Such a vertex ends at most about twice TW_BODY_SLACK
 *   (2.5e-4 of the size) from where the other backend puts it (the side
 *   that does not hold lands that deep, and the end-of-step projection
 *   catches anything deeper), and resting contact damps the difference; a
 *   few flips in a row stay within 2e-3. The RMS bound is what rounding
 *   alone gives, with room (flips move a few vertices, not the bodies):
 *   rounding-sized differences grow as the bodies settle by friction, so
 *   two CPU runs of these cases, one started from positions perturbed by
 *   about one float ulp or solved to 5e-7 instead of 1e-6, or both, end up
 *   to 1.4e-4 of the size apart in RMS (the stack over 60 steps; the
 *   others 0.5e-4 to 1.1e-4), with the max within 3.6e-4 and the same
 *   active contacts to one.
 * - Active contacts per step (tw_step_stats.contacts): within 2 % + 2 of
 *   the CPU's (the flips above, a few vertices at a time).
 * - Mechanical energy: within 1 % of the drop's energy at every step.
 *
 * THE GPU CASES HAVE NEVER RUN: written on a machine without a GPU. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"

#define PARITY_MAX 2e-3
#define PARITY_RMS 4e-4

static double mech_energy(const tw_world *w)
{
    return tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
}

/* The bounding-box diagonal of a world's positions, m */
static double world_size(const tw_world *w)
{
    const tw_real *x = tw_world_positions(w);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < tw_world_vertex_count(w); i++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], x[3 * i + c]);
            hi[c] = fmax(hi[c], x[3 * i + c]);
        }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

/* max and RMS of |x_a - x_b| over the vertices, m (NaN counts as the worst) */
static void distance(const tw_world *a, const tw_world *b, double *worst, double *rms, int *at)
{
    int n = tw_world_vertex_count(a);
    const tw_real *xa = tw_world_positions(a), *xb = tw_world_positions(b);
    double s = 0;
    *worst = 0;
    *at = -1;
    for (int i = 0; i < n; i++) {
        double d2 = 0;
        for (int c = 0; c < 3; c++) d2 += ((double)xa[3 * i + c] - xb[3 * i + c]) * ((double)xa[3 * i + c] - xb[3 * i + c]);
        double d = sqrt(d2);
        s += d2;
        if (!(d <= *worst)) {
            *worst = d;
            *at = i;
        }
    }
    *rms = sqrt(s / (n > 0 ? n : 1));
}

/* A shared scene on a backend, solved to a relative residual of 1e-6 */
static int scene_on(demo_scene *s, const char *name, tw_backend backend)
{
    demo_options o = demo_default_options();
    o.backend = backend;
    if (demo_scene_build(s, name, &o, "test_gpu_bodies")) return 1;
    return tw_world_set_solver(s->body[0].world, 1e-6, tw_world_get_def(s->body[0].world)->cg_max_iterations, 0) !=
           TW_OK;
}

/* w[0] on the CPU and w[1] on the device stepped `steps` times side by
 * side; drop: the drop's energy, J (the energy tolerance's yardstick) */
static int parity_run(tw_world *w[2], const char *name, int steps, double drop)
{
    CHECK(tw_world_get_def(w[0])->backend == TW_BACKEND_CPU);
    CHECK(tw_world_get_def(w[1])->backend == TW_BACKEND_CUDA);
    double size = world_size(w[0]), worst = 0, rms_worst = 0, e_worst = 0;
    int contacts_off = 0, contacts_bad = 0, worst_step = -1, worst_vertex = -1;
    for (int k = 0; k < steps; k++) {
        tw_step_stats st[2];
        for (int b = 0; b < 2; b++)
            if (tw_world_step(w[b], &st[b]) != TW_OK) {
                printf("step %d on the %s: %s\n", k + 1, b ? "device" : "CPU", tw_last_error());
                return 1;
            }
        double d, rms;
        int at;
        distance(w[0], w[1], &d, &rms, &at);
        if (!(d <= worst)) {
            worst = d;
            worst_step = k + 1;
            worst_vertex = at;
        }
        if (!(rms <= rms_worst)) rms_worst = rms;
        int off = abs(st[0].contacts - st[1].contacts);
        if (off > contacts_off) contacts_off = off;
        if ((double)off > 0.02 * st[0].contacts + 2) {
            printf("  step %d: %d active contacts on the CPU, %d on the device\n", k + 1, st[0].contacts,
                   st[1].contacts);
            contacts_bad = 1;
        }
        double de = fabs(mech_energy(w[0]) - mech_energy(w[1]));
        if (!(de <= e_worst)) e_worst = de;
    }
    printf("%s, %d steps: max |x_cpu - x_gpu| %.3g m = %.3g of the size (step %d, vertex %d), RMS at most %.3g of "
           "the size; active contacts differ by %d at most; energies by %.3g J (drop %.3g J)\n",
           name, steps, worst, worst / size, worst_step, worst_vertex, rms_worst / size, contacts_off, e_worst, drop);
    CHECK(worst <= PARITY_MAX * size);
    CHECK(rms_worst <= PARITY_RMS * size);
    CHECK(!contacts_bad);
    CHECK(e_worst <= 0.01 * drop);
    return 0;
}

/* The shared scene `name` on both backends (parity_run) */
static int bodies_parity(const char *name, int steps, double drop)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    demo_scene s[2];
    CHECK(scene_on(&s[0], name, TW_BACKEND_CPU) == 0);
    CHECK(scene_on(&s[1], name, TW_BACKEND_CUDA) == 0);
    tw_world *w[2] = {s[0].body[0].world, s[1].body[0].world};
    int r = parity_run(w, name, steps, drop);
    for (int b = 0; b < 2; b++) demo_scene_destroy(&s[b]);
    return r;
}

/* The drop's energy of body `body` of a scene's merged mesh falling `h` m */
static double drop_energy(const demo_scene *s, int body, double h)
{
    const tw_world *w = s->body[0].world;
    const tw_mesh *m = s->body[0].mesh;
    double mass = 0;
    for (int i = 0; i < tw_world_vertex_count(w); i++)
        if (body < 0 || tw_mesh_vertex_body(m, i) == body) mass += tw_world_vertex_mass(w)[i];
    return mass * 9.81 * h;
}

/* The stack of three 20 cm cubes, 2 cm apart, for 1 s (60 steps of 1/60 s):
 * the upper cubes land on the lower ones and come to rest on them. */
TW_TEST(stack_of_three_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    demo_scene s;
    CHECK(scene_on(&s, "stack", TW_BACKEND_CPU) == 0);
    /* cube k falls 2 cm (k + 1): the mean fall is 4 cm */
    double drop = drop_energy(&s, -1, 0.04);
    demo_scene_destroy(&s);
    return bodies_parity("stack", 60, drop);
}

/* The bunny dropped 3 cm onto the soft block, for 40 steps of 1/60 s (it
 * lands in the third and dents the block) */
TW_TEST(bunny_on_block_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    demo_scene s;
    CHECK(scene_on(&s, "bunny-block", TW_BACKEND_CPU) == 0);
    double drop = drop_energy(&s, 0, 0.03);
    demo_scene_destroy(&s);
    return bodies_parity("bunny-block", 40, drop);
}

/* The two-cube stack (the lower cube's top 2 cm below the upper one) under
 * BDF2, which restarts with an implicit Euler step after an impact (the
 * device counts the impacts, tw_cuda_contact_impacts): 45 steps of 1/60 s
 * (friction 0.5: without it the soft stack slides off, a motion that
 * amplifies any difference) */
TW_TEST(two_cubes_bdf2_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_stack_mesh(2, 0.2, 4, 0.3, 0, 0.02);
    CHECK(m);
    tw_world *w[2];
    for (int b = 0; b < 2; b++) {
        tw_world_def d = tw_default_world_def();
        d.youngs_modulus = 1e5;
        d.dt = 1.0 / 60;
        d.integrator = TW_BDF2;
        d.backend = b ? TW_BACKEND_CUDA : TW_BACKEND_CPU;
        tw_collider_def floor = tw_default_collider_def();
        floor.friction = 0.5;
        w[b] = demo_bodies_world(m, &d, &floor);
        CHECK(w[b]);
        CHECK_OK(tw_world_set_body_friction(w[b], 0.5));
        CHECK_OK(tw_world_set_solver(w[b], 1e-6, d.cg_max_iterations, 0));
    }
    double mass = 0;
    for (int i = 0; i < tw_world_vertex_count(w[0]); i++) mass += tw_world_vertex_mass(w[0])[i];
    int r = parity_run(w, "two cubes, bdf2", 45, mass / 2 * 9.81 * 0.03); /* falls 2 and 4 cm */
    for (int b = 0; b < 2; b++) tw_world_destroy(w[b]);
    tw_mesh_destroy(m);
    return r;
}

/* What the device's body contact lacks is refused at the first step with
 * the reason, never run silently: the fused PCG asked for, and explicit
 * Newmark at creation (on every backend). */
TW_TEST(device_refuses_what_body_contact_lacks)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    setenv("TW_CUDA_PCG", "fused", 1);
    demo_scene s;
    int built = scene_on(&s, "stack", TW_BACKEND_CUDA);
    unsetenv("TW_CUDA_PCG");
    CHECK(built == 0);
    tw_world *w = s.body[0].world;
    CHECK(tw_world_step(w, NULL) == TW_ERR_UNSUPPORTED);
    printf("fused PCG: %s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "TW_CUDA_PCG=fused") && strstr(tw_last_error(), "body contact"));
    demo_scene_destroy(&s);
    tw_mesh *m = demo_stack_mesh(2, 0.2, 2, 0, 0, 0.02);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CUDA;
    d.integrator = TW_EXPLICIT_NEWMARK;
    CHECK(!tw_world_create(m, &d) && strstr(tw_last_error(), "explicit-newmark"));
    tw_mesh_destroy(m);
    return 0;
}

/* On the CPU: the stack's cubes as one body (the same vertices and tets,
 * no body contact) fall through each other, and after 1 s the two worlds'
 * vertices are far more than the parity tolerance apart: the parity cases
 * above see body contact. */
TW_TEST(stack_depends_on_body_contact_acts_on_cpu)
{
    demo_scene s;
    CHECK(scene_on(&s, "stack", TW_BACKEND_CPU) == 0);
    tw_world *w = s.body[0].world;
    const tw_mesh *m = s.body[0].mesh;
    tw_mesh *one = tw_mesh_create(tw_mesh_positions(m), tw_mesh_vertex_count(m), tw_mesh_tets(m),
                                  tw_mesh_tet_count(m), NULL, NULL, NULL);
    CHECK(one && tw_mesh_body_count(one) == 1);
    tw_world_def d = *tw_world_get_def(w);
    tw_world *free_fall = tw_world_create(one, &d);
    CHECK(free_fall);
    tw_collider_def floor;
    CHECK_OK(tw_world_get_collider(w, 0, &floor));
    CHECK_OK(tw_world_add_collider(free_fall, &floor));
    CHECK_OK(tw_world_set_solver(free_fall, 1e-6, d.cg_max_iterations, 0));
    double size = world_size(w);
    int body_contacts = 0;
    for (int k = 0; k < 60; k++) {
        CHECK_OK(tw_world_step(w, NULL));
        CHECK_OK(tw_world_step(free_fall, NULL));
        body_contacts = tw_world_body_stats(w).contacts > body_contacts ? tw_world_body_stats(w).contacts
                                                                        : body_contacts;
    }
    double worst, rms;
    int at;
    distance(w, free_fall, &worst, &rms, &at);
    printf("stack with body contact against the same mesh as one body after 1 s: max distance %.3g of the size, RMS "
           "%.3g (parity tolerances %.1g, %.1g); at most %d body contacts in a step\n",
           worst / size, rms / size, PARITY_MAX, PARITY_RMS, body_contacts);
    CHECK(body_contacts > 0);
    CHECK(worst >= 20 * PARITY_MAX * size);
    CHECK(rms >= 20 * PARITY_RMS * size);
    tw_world_destroy(free_fall);
    tw_mesh_destroy(one);
    demo_scene_destroy(&s);
    return 0;
}
