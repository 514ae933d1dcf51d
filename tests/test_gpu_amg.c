/* The device's multigrid-preconditioned PCG (--precond mg with the CUDA
 * backend, kernels/cuda_amg.cu) against the CPU's (host/amg.c), the
 * oracle: per step the same CG iteration count within one and the same
 * tolerance met, the positions within float's tolerances, on Müller's bar
 * fixed at a wall (the step as a CUDA Graph, host-driven, and with a fixed
 * iteration count), the cube dropped on a floor (contacts: several solves a
 * step, the contact projection of the prolongator) and the shipped sliver
 * bunny in free fall; the device's updates give the same bits on every run.
 * Each case first checks that the device built its hierarchy
 * (tw_cuda_world_mg_levels), so a device that silently ran block-Jacobi
 * fails. The arithmetic's CPU replay is tests/test_amg_emul.c. Every case
 * exits 77 (skipped) in a build without CUDA or on a machine without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"
#ifdef TW_HAVE_CUDA
#include "cuda_amg.h"
#include "cuda_world.h"
#include "world.h" /* w->cuda */
#endif

/* scenes: the bar at a wall, the cube over a floor, the bunny falling */
enum { BAR, CUBE, BUNNY };

#ifdef TW_HAVE_CUDA
static tw_world *world_of(int scene, const tw_mesh *m, tw_backend backend, int fixed, int graph)
{
    tw_world_def d = scene == BAR ? demo_bar_def(TW_COROT_ELEMENT) : tw_default_world_def();
    d.backend = backend;
    d.precond = TW_PRECOND_MG;
    d.cg_fixed_iterations = fixed;
    if (scene == BAR) {
        d.dt = 0.01;
        d.damping_stiffness = 0.02;
    }
    if (scene == CUBE) {
        d.youngs_modulus = 1e5;
        d.dt = 0.005;
        d.damping_stiffness = 0.01;
    }
    tw_collider_def floor = tw_default_collider_def();
    tw_world *w = scene == BAR ? demo_wall_world(m, &d)
                  : scene == CUBE ? demo_drop_cube_world(m, &d, 0.1, &floor)
                                  : tw_world_create(m, &d);
    if (!w) {
        fprintf(stderr, "%s world: %s\n", tw_backend_name(backend), tw_last_error());
        return NULL;
    }
    if (backend == TW_BACKEND_CUDA) tw_cuda_world_set_graph(w->cuda, graph);
    return w;
}

static tw_mesh *mesh_of(int scene)
{
    if (scene == BAR) return demo_bar_mesh();
    if (scene == CUBE) return demo_drop_cube_mesh();
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    return tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet.node"), &ld, NULL);
}

/* max |x_a - x_b| / size */
static double position_error(const tw_world *ref, const tw_world *w, double size, const char *when)
{
    int n = tw_world_vertex_count(ref);
    const tw_real *a = tw_world_positions(ref), *b = tw_world_positions(w);
    double worst = 0;
    for (int i = 0; i < 3 * n; i++) worst = tw_test_max(worst, fabs((double)a[i] - (double)b[i]) / size);
    printf("%s: max |x_device - x_cpu| / size = %.3g\n", when, worst);
    return worst;
}
#endif

/* steps of a scene on the CPU and the device, both with mg: per step the
 * iteration counts within one (fixed: both the count), the tolerance met
 * where the CPU meets it; the graph from the second step when asked (the
 * first sets the hierarchy up host-driven); positions at the end */
static int parity_sweep(int scene, int steps, int fixed, int graph, double size, double tol, int warp)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = mesh_of(scene);
    CHECK(m != NULL);
    tw_world *cpu = world_of(scene, m, TW_BACKEND_CPU, fixed, 0), *gpu = world_of(scene, m, TW_BACKEND_CUDA, fixed, graph);
    CHECK(cpu && gpu);
    tw_world_def d = *tw_world_get_def(gpu);
    int off_by_more = 0, sum_cpu = 0, sum_gpu = 0;
    /* read at the set-up, the first step; unset, the session's value stays */
    if (warp) setenv("TW_CUDA_MG_SWEEP", "warp", 1);
    for (int s = 0; s < steps; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        sum_cpu += sc.cg_iterations;
        sum_gpu += sg.cg_iterations;
        if (s == 0) {
            int levels = tw_cuda_world_mg_levels(gpu->cuda);
            printf("device hierarchy: %d levels, finest sweeps %s\n", levels,
                   tw_cuda_world_mg_warp_sweep(gpu->cuda) ? "by lanes" : "a thread per row");
            if (warp) unsetenv("TW_CUDA_MG_SWEEP");
            CHECK(levels >= 2);
            if (warp) CHECK(tw_cuda_world_mg_warp_sweep(gpu->cuda) == 1); /* else the session's choice */
        }
        if (s == 1 && graph) CHECK(tw_cuda_world_graph(gpu->cuda) == 1);
        int diff = abs(sg.cg_iterations - sc.cg_iterations);
        if (diff > 1 || s < 2 || s == steps - 1)
            printf("  step %d: CG iterations cpu %d gpu %d, residual cpu %.3g gpu %.3g, gpu ms %.3f\n", s + 1,
                   sc.cg_iterations, sg.cg_iterations, sc.residual, sg.residual, sg.ms_total);
        if (fixed) CHECK(sc.cg_iterations == fixed && sg.cg_iterations == fixed);
        else CHECK(!(sg.residual > d.cg_tolerance) || sc.residual > d.cg_tolerance);
        /* a contact pass more or less on one side is a whole solve more or less */
        off_by_more += diff > 1;
    }
    printf("CG iterations over %d steps: cpu %d gpu %d; steps off by more than one: %d\n", steps, sum_cpu, sum_gpu,
           off_by_more);
    CHECK(scene == CUBE ? off_by_more <= steps / 20 : off_by_more == 0);
    CHECK(position_error(cpu, gpu, size, "at the end") <= tol);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
#else
    (void)scene; (void)steps; (void)fixed; (void)graph; (void)size; (void)tol; (void)warp;
#endif
    return 0;
}

static int parity(int scene, int steps, int fixed, int graph, double size, double tol)
{
    return parity_sweep(scene, steps, fixed, graph, size, tol, 0);
}

/* 30 steps: the Galerkin update on the device at the 8th, 16th, 24th solve */
TW_TEST(mg_bar_matches_cpu) { return parity(BAR, 30, 0, 1, DEMO_BAR_LENGTH, 1e-3); }
TW_TEST(mg_bar_host_driven_matches_cpu) { return parity(BAR, 30, 0, 0, DEMO_BAR_LENGTH, 1e-3); }
TW_TEST(mg_bar_fixed_iterations_matches_cpu) { return parity(BAR, 30, 20, 1, DEMO_BAR_LENGTH, 1e-3); }
TW_TEST(mg_cube_on_floor_matches_cpu) { return parity(CUBE, 100, 0, 1, DEMO_DROP_CUBE_EDGE, 2e-3); }
TW_TEST(mg_bunny_matches_cpu) { return parity(BUNNY, 12, 0, 1, 0.1, 1e-3); }
/* the finest sweeps by lanes (TW_CUDA_MG_SWEEP=warp) */
TW_TEST(mg_warp_sweep_bar_matches_cpu) { return parity_sweep(BAR, 30, 0, 1, DEMO_BAR_LENGTH, 1e-3, 1); }
TW_TEST(mg_warp_sweep_cube_on_floor_matches_cpu) { return parity_sweep(CUBE, 100, 0, 1, DEMO_DROP_CUBE_EDGE, 2e-3, 1); }

/* One step, host-driven (the set-up), then one graph step, 20 fixed
 * iterations: the short case compute-sanitizer runs */
TW_TEST(mg_two_steps_matches_cpu) { return parity(BAR, 2, 20, 1, DEMO_BAR_LENGTH, 1e-4); }

/* Two device runs of the bar, 20 steps: the same bits (no float atomics in
 * the update, deterministic reductions) */
TW_TEST(mg_device_deterministic)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = mesh_of(BAR);
    CHECK(m != NULL);
    tw_world *a = world_of(BAR, m, TW_BACKEND_CUDA, 0, 1), *b = world_of(BAR, m, TW_BACKEND_CUDA, 0, 1);
    CHECK(a && b);
    for (int s = 0; s < 20; s++) {
        tw_step_stats sa, sb;
        CHECK_OK(tw_world_step(a, &sa));
        CHECK_OK(tw_world_step(b, &sb));
        CHECK(sa.cg_iterations == sb.cg_iterations);
    }
    int n3 = 3 * tw_world_vertex_count(a);
    CHECK(memcmp(tw_world_positions(a), tw_world_positions(b), sizeof(tw_real) * (size_t)n3) == 0);
    CHECK(memcmp(tw_world_velocities(a), tw_world_velocities(b), sizeof(tw_real) * (size_t)n3) == 0);
    tw_world_destroy(b);
    tw_world_destroy(a);
    tw_mesh_destroy(m);
#endif
    return 0;
}
