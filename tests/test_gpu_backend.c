/* The CUDA backend against the CPU backend (the oracle), end to end: the
 * bar of Müller fig. 6 for each method, a PCG solve with a fixed iteration
 * count and one to a tolerance, pinned vertices, contact with colliders (a
 * cube dropped on a floor, a bar draped over a sphere), the integrators
 * BDF2 (its history across setters too) and explicit Newmark (the bar; the cube on the floor, by projection); and
 * the device step's own contracts: the step as a CUDA Graph against the
 * host-driven step, per-step numbers changed under a captured
 * graph, no vertex data copied back unless read, a diverged step leaving the
 * state as it was. Every case exits 77 (skipped) in a build without CUDA or
 * on a machine without a GPU. Tolerances are float's (the double build
 * passes them with room). */
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#include "tw_test_fem.h"
#include "world.h" /* w->cuda: the device world behind a tw_world; has_history */
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#include "fem_pattern_gpu.h"
#endif

#define BAR_LENGTH DEMO_BAR_LENGTH

/* The bar fixed at x = 0 under gravity, on the given backend. */
static tw_world *bar_world(const tw_mesh *m, const tw_world_def *d)
{
    tw_world *w = demo_wall_world(m, d);
    if (!w) fprintf(stderr, "%s world: %s\n", tw_backend_name(d->backend), tw_last_error());
    return w;
}

/* A mesh with one world per backend from tw_test_bar_def(method, ...), each fixed at
 * x = 0 (bar_world); the CUDA world's def differs from def in its backend only. */
typedef struct bar_pair {
    tw_mesh *m;
    tw_world_def def; /* the CPU world's */
    tw_world *cpu, *gpu;
} bar_pair;

/* The pair on m (owned from here on; NULL is a failure), cg_fixed_iterations
 * set on both defs; 0, or 1 after saying on stderr what failed. */
static int bar_pair_create(bar_pair *b, tw_mesh *m, tw_method method, int cg_fixed_iterations)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    if (!m) {
        fprintf(stderr, "mesh: %s\n", tw_last_error());
        return 1;
    }
    tw_world_def dg = tw_test_bar_def(method, TW_BACKEND_CUDA);
    b->def = tw_test_bar_def(method, TW_BACKEND_CPU);
    b->def.cg_fixed_iterations = dg.cg_fixed_iterations = cg_fixed_iterations;
    b->cpu = bar_world(m, &b->def);
    b->gpu = bar_world(m, &dg);
    return b->cpu && b->gpu ? 0 : 1;
}

static void bar_pair_destroy(bar_pair *b)
{
    tw_world_destroy(b->gpu);
    tw_world_destroy(b->cpu);
    tw_mesh_destroy(b->m);
}

/* The bar the pair tests share: 20 x 2 x 2 cells. */
static tw_mesh *small_bar(void) { return demo_bar_mesh(); }

/* the bar's tw_test_position_error */
static double position_error(const tw_world *cpu, const tw_world *gpu, double tol, const char *when)
{
    return tw_test_position_error(cpu, gpu, BAR_LENGTH, tol, when);
}

static int step_both(tw_world *cpu, tw_world *gpu, int steps)
{
    for (int s = 0; s < steps; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        if (s == 0 || s == steps - 1)
            printf("  step %ld: CG iterations cpu %d gpu %d, residual cpu %.3g gpu %.3g, gpu ms %.3f\n",
                   tw_world_step_index(gpu), sc.cg_iterations, sg.cg_iterations, sc.residual, sg.residual, sg.ms_total);
    }
    return 0;
}

/* 100 steps of the bar on both backends: positions after 1 and 100 steps,
 * elastic energy after 100. */
static int bar_parity(tw_method method)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(bar_pair_create(&b, small_bar(), method, 0) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    printf("%s, %d vertices, %d tets\n", tw_method_name(method), tw_world_vertex_count(cpu), tw_world_tet_count(cpu));
    if (step_both(cpu, gpu, 1)) return 1;
    CHECK(position_error(cpu, gpu, 1e-4, "after 1 step") <= 1e-4);
    if (step_both(cpu, gpu, 99)) return 1;
    CHECK(tw_world_step_index(gpu) == 100);
    CHECK(position_error(cpu, gpu, 1e-3, "after 100 steps") <= 1e-3);
    double ec = tw_world_elastic_energy(cpu), eg = tw_world_elastic_energy(gpu);
    printf("elastic energy after 100 steps: cpu %.9g J, gpu %.9g J\n", ec, eg);
    CHECK(ec > 0);
    CHECK_NEAR(eg, ec, 1e-3 * fabs(ec));
    bar_pair_destroy(&b);
    return 0;
}

TW_TEST(bar_linear_matches_cpu) { return bar_parity(TW_LINEAR); }
TW_TEST(bar_warp_vertex_matches_cpu) { return bar_parity(TW_WARP_VERTEX); }
TW_TEST(bar_warp_edge_matches_cpu) { return bar_parity(TW_WARP_EDGE); }
TW_TEST(bar_corot_element_matches_cpu) { return bar_parity(TW_COROT_ELEMENT); }
TW_TEST(bar_green_matches_cpu) { return bar_parity(TW_GREEN); }
TW_TEST(bar_hybrid_matches_cpu) { return bar_parity(TW_HYBRID); }

/* The same PCG: a fixed count of 20 iterations, one step, the same answer. */
TW_TEST(pcg_fixed_iterations_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(bar_pair_create(&b, small_bar(), TW_COROT_ELEMENT, 20) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    tw_step_stats sc, sg;
    CHECK_OK(tw_world_step(cpu, &sc));
    CHECK_OK(tw_world_step(gpu, &sg));
    printf("iterations cpu %d gpu %d, residual cpu %.6g gpu %.6g\n", sc.cg_iterations, sg.cg_iterations, sc.residual,
           sg.residual);
    CHECK(sg.cg_iterations == 20 && sc.cg_iterations == 20);
    CHECK(position_error(cpu, gpu, 1e-5, "after 1 step") <= 1e-5);
    CHECK_NEAR(sg.residual, sc.residual, 1e-2 * sc.residual + 1e-12);
    bar_pair_destroy(&b);
    return 0;
}

/* Pinned vertices do not move at all (bit for bit) over 100 steps. */
TW_TEST(pinned_vertices_exactly_fixed)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = small_bar();
    CHECK(m != NULL);
    tw_world_def d = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA);
    tw_world *w = bar_world(m, &d);
    CHECK(w != NULL);
    for (int s = 0; s < 100; s++) CHECK_OK(tw_world_step(w, NULL));
    int n = tw_world_vertex_count(w), pinned = 0;
    const tw_real *x = tw_world_positions(w);
    const double *X = tw_mesh_positions(m);
    for (int i = 0; i < n; i++) {
        if (tw_world_get_constraint(w, i) != TW_PINNED) continue;
        pinned++;
        for (int c = 0; c < 3; c++) CHECK(x[3 * i + c] == (tw_real)X[3 * i + c]);
    }
    printf("%d pinned vertices unchanged after 100 steps\n", pinned);
    CHECK(pinned > 0);
    CHECK(x[3 * (n - 1) + 2] < X[3 * (n - 1) + 2] - 0.01); /* and the tip did fall */
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* ---- contact: colliders on the device (kernels/cuda_contact.cu) ---- */

#define CUBE_EDGE DEMO_DROP_CUBE_EDGE

/* The drop cube (demos/scenes.h: 0.2 m, 4x4x4 cells), its bottom at z0, over
 * the floor z = 0 (friction 0.5; none when !floor): tests/test_contact.c's
 * scene, on the given backend. */
static tw_world *cube_world_with(const tw_mesh *m, const tw_world_def *d, double z0, int with_floor)
{
    tw_collider_def floor = tw_default_collider_def();
    tw_world *w = demo_drop_cube_world(m, d, z0, with_floor ? &floor : NULL);
    if (!w) fprintf(stderr, "%s cube world: %s\n", tw_backend_name(d->backend), tw_last_error());
    return w;
}

static tw_world_def cube_def(tw_backend backend)
{
    tw_world_def d = tw_default_world_def();
    d.backend = backend;
    d.youngs_modulus = 1e5;
    d.dt = 0.005;
    d.damping_stiffness = 0.01;
    return d;
}

static tw_world *cube_world(const tw_mesh *m, tw_backend backend, double z0, int with_floor)
{
    tw_world_def d = cube_def(backend);
    return cube_world_with(m, &d, z0, with_floor);
}

static double lowest_z(const tw_world *w)
{
    const tw_real *x = tw_world_positions(w);
    double z = INFINITY;
    for (int i = 0; i < tw_world_vertex_count(w); i++) z = fmin(z, x[3 * i + 2]);
    return z;
}

/* The cube dropped 0.1 m onto the floor, 200 steps (it lands after ~30 and
 * rests): device and CPU positions agree to float tolerance relative to the
 * cube's edge, the device marks contacts as the CPU does, and no vertex is
 * ever below the floor on the device. */
TW_TEST(cube_on_floor_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m != NULL);
    tw_world *cpu = cube_world(m, TW_BACKEND_CPU, 0.1, 1), *gpu = cube_world(m, TW_BACKEND_CUDA, 0.1, 1);
    CHECK(cpu && gpu);
    double lowest = INFINITY;
    long contacts_cpu = 0, contacts_gpu = 0;
    for (int s = 0; s < 200; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        contacts_cpu += sc.contacts;
        contacts_gpu += sg.contacts;
        lowest = fmin(lowest, lowest_z(gpu));
        if (s == 0 || s == 40 || s == 199)
            printf("  step %d: contacts cpu %d gpu %d, CG iterations cpu %d gpu %d\n", s + 1, sc.contacts, sg.contacts,
                   sc.cg_iterations, sg.cg_iterations);
    }
    printf("contact-steps over 200 steps: cpu %ld gpu %ld; lowest device vertex z %.3g m\n", contacts_cpu, contacts_gpu,
           lowest);
    CHECK(contacts_gpu > 0);
    CHECK(labs(contacts_gpu - contacts_cpu) <= contacts_cpu / 50 + 5);
    CHECK(lowest >= -1e-6);
    CHECK(tw_test_position_error(cpu, gpu, CUBE_EDGE, 2e-3, "cube on the floor, 200 steps") <= 2e-3);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

/* BDF2 with the cube dropped on the floor at a real-time step (1/30 s): the
 * step after an impact is implicit Euler on both backends (host/step.c's
 * restart; on the device tw_cuda_contact_impacts counts the impacts), so the
 * trajectories through the landing agree as the implicit Euler ones do. A
 * device that kept BDF2 through the impact would carry the approach velocity
 * into its base and bounce off higher than the CPU, but only by 3.3e-3 of
 * the edge at its worst (step 10, measured on the CPU by forcing the history
 * back on), so the restarts themselves are compared too: after each step the
 * device world keeps BDF2's history exactly when the CPU's does (the impact
 * at ~1.4 m/s is far above the threshold |g| h = 0.33 m/s). */
TW_TEST(bdf2_cube_on_floor_restarts_like_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m != NULL);
    tw_world_def dc = cube_def(TW_BACKEND_CPU), dg = cube_def(TW_BACKEND_CUDA);
    dc.integrator = dg.integrator = TW_BDF2;
    dc.dt = dg.dt = 1.0 / 30;
    tw_world *cpu = cube_world_with(m, &dc, 0.1, 1), *gpu = cube_world_with(m, &dg, 0.1, 1);
    CHECK(cpu && gpu);
    double lowest = INFINITY, worst = 0;
    int restarts = 0, differ = 0;
    for (int s = 0; s < 45; s++) {
        CHECK_OK(tw_world_step(cpu, NULL));
        CHECK_OK(tw_world_step(gpu, NULL));
        lowest = fmin(lowest, lowest_z(gpu));
        restarts += !cpu->has_history;
        if (cpu->has_history != gpu->has_history && differ++ < 5)
            printf("  after step %d: BDF2 history cpu %d gpu %d (0: the next step restarts)\n", s + 1,
                   cpu->has_history, gpu->has_history);
        if (s % 5 == 4) {
            double e = tw_test_position_error(cpu, gpu, CUBE_EDGE, 2e-3, "bdf2, cube on the floor");
            worst = e > worst || e != e ? e : worst;
        }
    }
    printf("bdf2 cube on the floor at 1/30 s, 45 steps: worst position error %.3g of the edge, lowest device z %.3g m\n",
           worst, lowest);
    printf("restarts on the cpu: %d; steps after which the device's history differs: %d\n", restarts, differ);
    CHECK(restarts > 0);
    CHECK(differ == 0);
    CHECK(worst <= 2e-3);
    CHECK(lowest >= -5e-4);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

#ifdef TW_HAVE_CUDA
static tw_cuda_world *cuda_of(tw_world *w) { return w->cuda; }
#endif

/* The contact kernels inside the step's graph against the same kernels
 * driven from the host; the floor is added after 10 steps, so the graph
 * captured without colliders is replaced by one with them. */
TW_TEST(cube_on_floor_graph_matches_host_driven)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m != NULL);
    tw_world *gw = cube_world(m, TW_BACKEND_CUDA, 0.1, 0), *hw = cube_world(m, TW_BACKEND_CUDA, 0.1, 0);
    CHECK(gw && hw);
    tw_cuda_world_set_graph(cuda_of(gw), 1);
    tw_cuda_world_set_graph(cuda_of(hw), 0);
    int differ = 0;
    for (int s = 0; s < 200; s++) {
        if (s == 10) {
            tw_collider_def floor = tw_default_collider_def();
            CHECK_OK(tw_world_add_collider(gw, &floor));
            CHECK_OK(tw_world_add_collider(hw, &floor));
        }
        tw_step_stats sg, sh;
        CHECK_OK(tw_world_step(gw, &sg));
        CHECK_OK(tw_world_step(hw, &sh));
        if (s == 10) CHECK(tw_cuda_world_graph(cuda_of(gw)) == 1); /* re-captured with the colliders */
        if ((sg.contacts != sh.contacts || sg.cg_iterations != sh.cg_iterations) && differ++ < 5)
            printf("  step %d: contacts graph %d host %d, CG iterations graph %d host %d\n", s + 1, sg.contacts,
                   sh.contacts, sg.cg_iterations, sh.cg_iterations);
    }
    CHECK(differ == 0);
    CHECK(tw_test_position_error(hw, gw, CUBE_EDGE, 1e-6, "graph vs host-driven, cube on the floor") <= 1e-6);
    tw_world_destroy(hw);
    tw_world_destroy(gw);
    tw_mesh_destroy(m);
#endif
    return 0;
}

/* tests/test_contact.c's bar falling onto a sphere, on the device: no vertex
 * ends a step inside the sphere, and the bar did fall onto it. */
TW_TEST(bar_on_sphere_no_penetration)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = small_bar();
    CHECK(m != NULL);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CUDA;
    d.dt = 0.005;
    tw_world *w = tw_world_create(m, &d);
    CHECK(w != NULL);
    tw_collider_def sph = tw_default_collider_def();
    sph.kind = TW_COLLIDER_SPHERE;
    sph.center[0] = 0.5; sph.center[1] = 0.05; sph.center[2] = -0.3;
    sph.radius = 0.25;
    CHECK_OK(tw_world_add_collider(w, &sph));
    double worst = INFINITY, nn[3];
    int n = tw_world_vertex_count(w);
    for (int k = 0; k < 300; k++) {
        CHECK_OK(tw_world_step(w, NULL));
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < n; i++) {
            double p[3] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
            worst = fmin(worst, tw_collider_distance(&sph, p, nn));
        }
    }
    double tip = tw_world_positions(w)[3 * (n - 1) + 2];
    printf("deepest device vertex %.3g m from the sphere; tip z %.3f m\n", worst, tip);
    CHECK(worst >= -1e-5);
    CHECK(tip < 0); /* it fell onto the sphere (top at z = 0.05) and the free end hangs lower */
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The step as one CUDA Graph (CG loop in a conditional while node) against
 * the same kernels driven from the host: the same CG iteration count every
 * step and the same positions after 100 steps. */
TW_TEST(graph_matches_host_driven)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = small_bar();
    CHECK(m != NULL);
    tw_world_def d = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA);
    tw_world *gw = bar_world(m, &d), *hw = bar_world(m, &d);
    CHECK(gw && hw);
    tw_cuda_world_set_graph(cuda_of(gw), 1);
    tw_cuda_world_set_graph(cuda_of(hw), 0);
    int differ = 0;
    for (int s = 0; s < 100; s++) {
        tw_step_stats sg, sh;
        CHECK_OK(tw_world_step(gw, &sg));
        CHECK_OK(tw_world_step(hw, &sh));
        if (s == 0) {
            printf("graph world runs as a graph: %d, host-driven world: %d\n", tw_cuda_world_graph(cuda_of(gw)),
                   tw_cuda_world_graph(cuda_of(hw)));
            CHECK(tw_cuda_world_graph(cuda_of(gw)) == 1);
            CHECK(tw_cuda_world_graph(cuda_of(hw)) == 0);
        }
        if (sg.cg_iterations != sh.cg_iterations && differ++ < 5)
            printf("  step %d: CG iterations graph %d host %d\n", s + 1, sg.cg_iterations, sh.cg_iterations);
        if (s == 0 || s == 99)
            printf("  step %d: %d CG iterations, residual graph %.3g host %.3g, ms graph %.3f host %.3f\n", s + 1,
                   sg.cg_iterations, sg.residual, sh.residual, sg.ms_total, sh.ms_total);
    }
    CHECK(differ == 0);
    CHECK(position_error(hw, gw, 1e-6, "graph vs host-driven, 100 steps") <= 1e-6);
    tw_world_destroy(hw);
    tw_world_destroy(gw);
    tw_mesh_destroy(m);
#endif
    return 0;
}

/* The numbers a captured graph must not bake: dt, gravity, the spring and
 * the CG settings change between steps, the method too (a new graph), and
 * the device follows the CPU. */
TW_TEST(graph_follows_parameter_changes)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(bar_pair_create(&b, small_bar(), TW_COROT_ELEMENT, 0) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    if (step_both(cpu, gpu, 10)) return 1;
    int tip = tw_world_vertex_count(cpu) - 1;
    double anchor[3] = {1.0, 0.05, 0.3};
    tw_world *both[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++) {
        CHECK_OK(tw_world_set_dt(both[k], 0.005));
        CHECK_OK(tw_world_set_spring(both[k], tip, anchor, 50));
    }
    if (step_both(cpu, gpu, 10)) return 1;
    CHECK(position_error(cpu, gpu, 1e-3, "after dt and spring changes") <= 1e-3);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(tw_world_set_spring(both[k], -1, anchor, 0));
        CHECK_OK(tw_world_set_method(both[k], TW_WARP_VERTEX));
    }
    if (step_both(cpu, gpu, 10)) return 1;
    CHECK(position_error(cpu, gpu, 1e-3, "after a method change") <= 1e-3);
    bar_pair_destroy(&b);
    return 0;
}

/* Stepping copies no vertex data to the host; reading the positions once
 * copies exactly them (3n reals), reading them again nothing more. */
TW_TEST(state_downloads_only_when_read)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = small_bar();
    CHECK(m != NULL);
    tw_world_def d = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA);
    tw_world *w = bar_world(m, &d);
    CHECK(w != NULL);
    tw_cuda_world *cw = cuda_of(w);
    size_t n3 = 3 * (size_t)tw_world_vertex_count(w), before = tw_cuda_world_d2h_bytes(cw);
    for (int s = 0; s < 50; s++) CHECK_OK(tw_world_step(w, NULL));
    size_t stepped = tw_cuda_world_d2h_bytes(cw);
    printf("d2h bytes: %zu before, %zu after 50 steps\n", before, stepped);
    CHECK(stepped == before);
    const tw_real *x = tw_world_positions(w);
    CHECK(x != NULL);
    size_t read = tw_cuda_world_d2h_bytes(cw);
    printf("after reading the positions: %zu (3n reals = %zu bytes)\n", read, n3 * sizeof(tw_real));
    CHECK(read == stepped + n3 * sizeof(tw_real));
    CHECK(tw_world_positions(w) == x && tw_cuda_world_d2h_bytes(cw) == read); /* cached */
    CHECK(x[n3 - 1] < tw_mesh_positions(m)[n3 - 1] - 0.01); /* the fresh state: the tip fell */
    CHECK(tw_world_velocities(w) != NULL);
    CHECK(tw_cuda_world_d2h_bytes(cw) == read + n3 * sizeof(tw_real));
    tw_world_destroy(w);
    tw_mesh_destroy(m);
#endif
    return 0;
}

/* PCG to a tolerance: the device decides when to stop with the CPU's rules,
 * so the iteration counts agree up to float rounding near the threshold. */
TW_TEST(pcg_tolerance_iterations_match_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(bar_pair_create(&b, small_bar(), TW_COROT_ELEMENT, 0) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    int worst = 0;
    for (int s = 0; s < 10; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        int diff = abs(sc.cg_iterations - sg.cg_iterations);
        printf("  step %d: CG iterations cpu %d gpu %d (tolerance %g), residual cpu %.3g gpu %.3g\n", s + 1,
               sc.cg_iterations, sg.cg_iterations, b.def.cg_tolerance, sc.residual, sg.residual);
        CHECK(sc.cg_iterations > 1 && sc.cg_iterations < b.def.cg_max_iterations); /* the tolerance stopped it */
        CHECK(sg.residual <= b.def.cg_tolerance);
        worst = tw_test_max(worst, diff);
    }
    CHECK(worst <= 2);
    bar_pair_destroy(&b);
    return 0;
}

/* A step that diverges on the device reports it and leaves the state as it
 * was before that step (host/world.c's contract; the check runs on the
 * device before x and v change). */
TW_TEST(diverged_step_leaves_state)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 4, 1, 1);
    CHECK(m != NULL);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CUDA;
    d.method = TW_GREEN;
    d.gravity[2] = -1e9;
    d.dt = 1;
    tw_world *w = bar_world(m, &d);
    CHECK(w != NULL);
    int n3 = 3 * tw_world_vertex_count(w);
    tw_real *saved = malloc(sizeof(tw_real) * (size_t)n3);
    CHECK(saved != NULL);
    tw_status s = TW_OK;
    long steps = 0;
    for (int k = 0; k < 50 && s == TW_OK; k++) {
        memcpy(saved, tw_world_positions(w), sizeof(tw_real) * (size_t)n3);
        steps = tw_world_step_index(w);
        s = tw_world_step(w, NULL);
    }
    printf("%s after %ld good steps: %s\n", tw_status_name(s), steps, tw_last_error());
    CHECK(s == TW_ERR_DIVERGED);
    CHECK(strstr(tw_last_error(), "step ") != NULL);
    CHECK(tw_world_step_index(w) == steps);
#ifdef TW_HAVE_CUDA
    /* the device's copy itself (the host's cache was read before the step) */
    tw_real *dev = malloc(sizeof(tw_real) * (size_t)n3);
    CHECK(dev != NULL);
    CHECK_OK(tw_cuda_world_download(cuda_of(w), dev, NULL));
    CHECK(memcmp(dev, saved, sizeof(tw_real) * (size_t)n3) == 0);
    free(dev);
#endif
    free(saved);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* ---- the integrators: BDF2 and explicit Newmark (kernels/cuda_integrators.cu) ---- */

/* bar_pair_create's pair with the integrator and dt set on both defs (dt 0:
 * explicit Newmark's automatic step, half the Courant limit); damping_mass
 * too (explicit Newmark's only damping). */
static int integrator_pair_create(bar_pair *b, tw_integrator integrator, double dt, double damping_mass)
{
    memset(b, 0, sizeof *b);
    b->m = small_bar();
    if (!b->m) {
        fprintf(stderr, "mesh: %s\n", tw_last_error());
        return 1;
    }
    tw_world_def dg = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA);
    b->def = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CPU);
    b->def.integrator = dg.integrator = integrator;
    b->def.dt = dg.dt = dt;
    b->def.damping_mass = dg.damping_mass = damping_mass;
    /* the device runs one linearisation per step: compare that on both */
    b->def.newton_iterations = dg.newton_iterations = 1;
    b->cpu = bar_world(b->m, &b->def);
    b->gpu = bar_world(b->m, &dg);
    return b->cpu && b->gpu ? 0 : 1;
}

/* BDF2, 100 steps of the bar: the first is implicit Euler's (no history), the
 * rest use the previous step kept on the device; positions as bar_parity's. */
TW_TEST(bdf2_bar_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(integrator_pair_create(&b, TW_BDF2, 0.01, 0) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    if (step_both(cpu, gpu, 1)) return 1;
    CHECK(position_error(cpu, gpu, 1e-4, "bdf2, after 1 step") <= 1e-4);
    if (step_both(cpu, gpu, 1)) return 1;
    CHECK(position_error(cpu, gpu, 1e-4, "bdf2, after 2 steps (the first with history)") <= 1e-4);
    if (step_both(cpu, gpu, 98)) return 1;
    CHECK(tw_world_step_index(gpu) == 100);
    CHECK(position_error(cpu, gpu, 1e-3, "bdf2, after 100 steps") <= 1e-3);
    double ec = tw_world_elastic_energy(cpu), eg = tw_world_elastic_energy(gpu);
    printf("elastic energy after 100 steps: cpu %.9g J, gpu %.9g J\n", ec, eg);
    CHECK(ec > 0);
    CHECK_NEAR(eg, ec, 1e-3 * fabs(ec));
    bar_pair_destroy(&b);
    return 0;
}

/* BDF2's history after the setters that end it (host/world.c clears
 * has_history): velocities set mid-run, then a reset; the device starts
 * over from the re-uploaded state as the CPU does. */
TW_TEST(bdf2_history_follows_setters)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(integrator_pair_create(&b, TW_BDF2, 0.01, 0) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu, *both[2] = {cpu, gpu};
    if (step_both(cpu, gpu, 20)) return 1;
    int n3 = 3 * tw_world_vertex_count(cpu);
    tw_real *v = malloc(sizeof(tw_real) * (size_t)n3);
    CHECK(v != NULL);
    memcpy(v, tw_world_velocities(cpu), sizeof(tw_real) * (size_t)n3);
    for (int i = 2; i < n3; i += 3) v[i] = -v[i]; /* the bar thrown back up */
    for (int k = 0; k < 2; k++) CHECK_OK(tw_world_set_velocities(both[k], v));
    free(v);
    if (step_both(cpu, gpu, 20)) return 1;
    CHECK(position_error(cpu, gpu, 1e-3, "bdf2, 20 steps after the velocities were set") <= 1e-3);
    for (int k = 0; k < 2; k++) tw_world_reset(both[k]);
    if (step_both(cpu, gpu, 20)) return 1;
    CHECK(position_error(cpu, gpu, 1e-3, "bdf2, 20 steps after a reset") <= 1e-3);
    bar_pair_destroy(&b);
    return 0;
}

/* Explicit Newmark on the bar at the automatic step (half the Courant
 * limit: 0.48 ms here), 0.3 s: many small steps, no solve, so the positions
 * agree closely (float against double on the CPU: 7e-7 of the length). */
TW_TEST(explicit_bar_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    bar_pair b;
    CHECK(integrator_pair_create(&b, TW_EXPLICIT_NEWMARK, 0, 2) == 0);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    double dt = tw_world_dt(cpu);
    printf("Courant limit %.3g s, dt %.3g s (cpu) %.3g s (gpu)\n", tw_world_courant_dt(cpu), dt, tw_world_dt(gpu));
    CHECK(dt > 0 && dt == tw_world_dt(gpu));
    tw_step_stats sg;
    CHECK_OK(tw_world_step(cpu, NULL));
    CHECK_OK(tw_world_step(gpu, &sg));
    CHECK(sg.cg_iterations == 0 && sg.newton_iterations == 0);
    CHECK(position_error(cpu, gpu, 1e-6, "explicit, after 1 step") <= 1e-6);
    int steps = (int)(0.3 / dt);
    if (step_both(cpu, gpu, steps - 1)) return 1;
    CHECK(position_error(cpu, gpu, 1e-4, "explicit, after 0.3 s") <= 1e-4);
    int tip = tw_world_vertex_count(cpu) - 1;
    CHECK(tw_world_positions(gpu)[3 * tip + 2] < tw_mesh_positions(b.m)[3 * tip + 2] - 0.1); /* it sagged */
    bar_pair_destroy(&b);
    return 0;
}

/* Explicit Newmark refuses a dt above the Courant limit on the device too,
 * with the CPU's message (the check is host/world.c's, for both backends). */
TW_TEST(explicit_dt_above_courant_refused_on_device)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = small_bar();
    CHECK(m != NULL);
    tw_world_def d = tw_test_bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA);
    d.integrator = TW_EXPLICIT_NEWMARK;
    d.dt = 0.01; /* about 10 times the limit */
    CHECK(tw_world_create(m, &d) == NULL);
    printf("message: %s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "Courant") != NULL);
    tw_mesh_destroy(m);
    return 0;
}

/* The cube dropped 0.1 m onto the floor with explicit Newmark (contact by
 * projection), 0.5 s at the automatic step: it lands, and no device vertex
 * ends a step below the floor. */
TW_TEST(explicit_cube_on_floor_no_penetration)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m != NULL);
    tw_world_def d = cube_def(TW_BACKEND_CUDA);
    d.integrator = TW_EXPLICIT_NEWMARK;
    d.dt = 0;
    d.damping_mass = 2;
    tw_world *w = cube_world_with(m, &d, 0.1, 1);
    CHECK(w != NULL);
    int steps = (int)(0.5 / tw_world_dt(w));
    long contacts = 0;
    double lowest = INFINITY;
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        CHECK_OK(tw_world_step(w, &st));
        contacts += st.contacts;
        lowest = fmin(lowest, lowest_z(w));
    }
    double final_low = lowest_z(w);
    printf("%d explicit steps of %.3g s: contact-steps %ld, lowest device vertex z %.3g m, at the end %.3g m\n", steps,
           tw_world_dt(w), contacts, lowest, final_low);
    CHECK(contacts > 0);
    CHECK(lowest >= -1e-6);
    CHECK(final_low < 0.01); /* it landed */
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* ------------------------------------------- the FEM pattern on the GPU */

#ifdef TW_HAVE_CUDA
/* tw_fem_build_using with tw_fem_pattern_gpu against tw_fem_build. */
static int gpu_pattern_parity(const tw_mesh *m)
{
    tw_fem cpu, gpu;
    CHECK_OK(tw_fem_build(&cpu, m, 1e6, 0.3, 1000, NULL, NULL, NULL));
    CHECK_OK(tw_fem_build_using(&gpu, m, 1e6, 0.3, 1000, NULL, NULL, NULL, tw_fem_pattern_gpu));
    printf("%d tets, %d vertices, %d blocks: built on the %s\n", gpu.nt, gpu.n, gpu.nnzb,
           gpu.pattern_builder_used ? "GPU" : "CPU (the GPU build failed)");
    CHECK(gpu.pattern_builder_used == 1);
    CHECK(tw_test_fem_same(&gpu, &cpu, 0));
    tw_fem_free(&gpu);
    tw_fem_free(&cpu);
    return 0;
}
#endif

/* The GPU-built pattern equals host/fem.c's, array for array: a bar, and two
 * tets beside a vertex no element uses (its lone diagonal block). */
TW_TEST(gpu_pattern_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *bar = tw_mesh_bar(BAR_LENGTH, 0.1, 0.1, 20, 3, 4);
    CHECK(bar != NULL);
    CHECK(gpu_pattern_parity(bar) == 0);
    tw_mesh_destroy(bar);
    const double X[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 5, 5, 5, 1, 1, 1};
    const int tets[] = {0, 1, 2, 3, 1, 5, 2, 3}; /* vertex 4 unused */
    tw_mesh *m = tw_mesh_create(X, 6, tets, 2, NULL, NULL, NULL);
    CHECK(m != NULL);
    CHECK(gpu_pattern_parity(m) == 0);
    tw_mesh_destroy(m);
#endif
    return 0;
}

/* A CUDA world of TW_GPU_PATTERN_MIN_TETS elements or more builds its
 * pattern on the GPU; the result equals the CPU world's, and it steps. */
TW_TEST(large_cuda_world_pattern_built_on_gpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    bar_pair b;
    CHECK(bar_pair_create(&b, tw_mesh_bar(BAR_LENGTH, 0.1, 0.1, 200, 20, 21), TW_COROT_ELEMENT, 0) == 0); /* 504 000 tets */
    CHECK(tw_mesh_tet_count(b.m) >= TW_GPU_PATTERN_MIN_TETS);
    tw_world *cpu = b.cpu, *gpu = b.gpu;
    CHECK(cpu->fem.pattern_builder_used == 0);
    CHECK(gpu->fem.pattern_builder_used == 1);
    CHECK(tw_test_fem_same(&gpu->fem, &cpu->fem, 0));
    CHECK_OK(tw_world_step(gpu, NULL));
    bar_pair_destroy(&b);
#endif
    return 0;
}
