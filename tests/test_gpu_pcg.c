/* The CUDA backend's switchable paths against the CPU backend (the
 * oracle): the warp-cooperative SpMV (TW_CUDA_SPMV=warp), the fused PCG
 * (TW_CUDA_PCG=fused, kernels/cuda_pcg_fused.cu), the symmetric-half SpMV
 * (TW_CUDA_SPMV=half) and the element methods'
 * rotation and force in one kernel (TW_CUDA_ELEMENT=fused), on Müller's bar
 * (100 steps, to a tolerance and with a fixed count, graph and
 * host-driven), the cube dropped on a floor (contacts: the normal filter,
 * several solves a step) and a BDF2 bar (the SpMV outside the loop); and
 * the fused path's own contracts: its reductions give the same bits on
 * every run, and the graph and the host-driven loop the same iterations.
 * Each case first checks that the switch took (tw_cuda_world_spmv_name,
 * tw_cuda_world_pcg_fused, tw_cuda_world_element_fused), so a switch that
 * is ignored fails instead of testing the default path. Every case exits
 * 77 (skipped) in a build without CUDA or on a machine without a GPU.
 * Tolerances are float's, as tests/test_gpu_backend.c's. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#include "world.h" /* w->cuda */
#endif

/* Which device path a world takes: NULL leaves the variable unset (the default). */
typedef struct variant {
    const char *pcg;     /* TW_CUDA_PCG: "fused" or NULL */
    const char *spmv;    /* TW_CUDA_SPMV: "warp", "half", "own", "cusparse" or NULL */
    int graph;           /* 1: the step as a CUDA Graph, 0: host-driven */
    const char *element; /* TW_CUDA_ELEMENT: "fused" or NULL */
} variant;

static const variant FUSED = {"fused", NULL, 1, NULL};
static const variant FUSED_HOST = {"fused", NULL, 0, NULL};
static const variant FUSED_WARP = {"fused", "warp", 1, NULL};
static const variant WARP = {NULL, "warp", 1, NULL};
static const variant WARP_HOST = {NULL, "warp", 0, NULL};
static const variant HALF = {NULL, "half", 1, NULL};
static const variant HALF_HOST = {NULL, "half", 0, NULL};
static const variant OWN = {NULL, "own", 1, NULL};
static const variant ELEMENT = {NULL, NULL, 1, "fused"};
static const variant ALL_FUSED = {"fused", "warp", 1, "fused"};

/* A world on def d (the bar fixed at x = 0, or the cube over the floor when
 * cube), created with v's environment; NULL after saying why, also when the
 * switch did not take. */
static tw_world *world_of(const tw_mesh *m, const tw_world_def *d, const variant *v, int cube)
{
    /* the variables v sets, unset again after (a variable v leaves alone
     * keeps the value the session gave it, e.g. TW_CUDA_SPMV=own) */
    if (v && v->pcg) setenv("TW_CUDA_PCG", v->pcg, 1);
    if (v && v->spmv) setenv("TW_CUDA_SPMV", v->spmv, 1);
    if (v && v->element) setenv("TW_CUDA_ELEMENT", v->element, 1);
    tw_collider_def floor = tw_default_collider_def();
    tw_world *w = cube ? demo_drop_cube_world(m, d, 0.1, &floor) : demo_wall_world(m, d);
    if (v && v->pcg) unsetenv("TW_CUDA_PCG");
    if (v && v->spmv) unsetenv("TW_CUDA_SPMV");
    if (v && v->element) unsetenv("TW_CUDA_ELEMENT");
    if (!w) {
        fprintf(stderr, "%s world: %s\n", tw_backend_name(d->backend), tw_last_error());
        return NULL;
    }
#ifdef TW_HAVE_CUDA
    if (v && d->backend == TW_BACKEND_CUDA) {
        tw_cuda_world *cw = w->cuda;
        int fused = tw_cuda_world_pcg_fused(cw), element = tw_cuda_world_element_fused(cw);
        const char *spmv = tw_cuda_world_spmv_name(cw);
        printf("device world: PCG %s, SpMV %s, element kernels %s, %s\n", fused ? "fused" : "unfused", spmv,
               element ? "fused" : "separate", v->graph ? "CUDA Graph" : "host-driven");
        if (fused != (v->pcg != NULL) || (v->spmv && strcmp(spmv, v->spmv) != 0) || element != (v->element != NULL)) {
            fprintf(stderr, "the device world ignored TW_CUDA_PCG=%s TW_CUDA_SPMV=%s TW_CUDA_ELEMENT=%s\n",
                    v->pcg ? v->pcg : "(unset)", v->spmv ? v->spmv : "(unset)", v->element ? v->element : "(unset)");
            tw_world_destroy(w);
            return NULL;
        }
        tw_cuda_world_set_graph(cw, v->graph);
    }
#endif
    return w;
}

static tw_world_def bar_def(tw_method method, tw_backend backend, int fixed)
{
    tw_world_def d = tw_test_bar_def(method, backend);
    d.cg_fixed_iterations = fixed;
    return d;
}

/* 100 steps of the bar on the CPU and on the device path v: positions after
 * 1 and 100 steps, the elastic energy after 100, and with a fixed count the
 * same count every step; the graph ran when asked. */
static int bar_parity(tw_method method, const variant *v, int fixed)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def dc = bar_def(method, TW_BACKEND_CPU, fixed), dg = bar_def(method, TW_BACKEND_CUDA, fixed);
    tw_world *cpu = world_of(m, &dc, NULL, 0), *gpu = world_of(m, &dg, v, 0);
    CHECK(cpu && gpu);
    printf("%s, %d vertices, %d tets, %s\n", tw_method_name(method), tw_world_vertex_count(cpu), tw_world_tet_count(cpu),
           fixed ? "fixed CG iterations" : "CG to the tolerance");
    for (int s = 0; s < 100; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        if (s == 0 || s == 99)
            printf("  step %d: CG iterations cpu %d gpu %d, residual cpu %.3g gpu %.3g, gpu ms %.3f\n", s + 1,
                   sc.cg_iterations, sg.cg_iterations, sc.residual, sg.residual, sg.ms_total);
        if (fixed) CHECK(sc.cg_iterations == fixed && sg.cg_iterations == fixed);
        else CHECK(!(sg.residual > dg.cg_tolerance) || sc.residual > dg.cg_tolerance); /* met unless the CPU's missed */
        if (s == 0) {
            CHECK(tw_cuda_world_graph(gpu->cuda) == v->graph);
            CHECK(tw_test_position_error(cpu, gpu, DEMO_BAR_LENGTH, 1e-4, "after 1 step") <= 1e-4);
        }
    }
    CHECK(tw_test_position_error(cpu, gpu, DEMO_BAR_LENGTH, 1e-3, "after 100 steps") <= 1e-3);
    double ec = tw_world_elastic_energy(cpu), eg = tw_world_elastic_energy(gpu);
    printf("elastic energy after 100 steps: cpu %.9g J, gpu %.9g J\n", ec, eg);
    CHECK(ec > 0);
    CHECK_NEAR(eg, ec, 1e-3 * fabs(ec));
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
#else
    (void)method;
    (void)v;
    (void)fixed;
#endif
    return 0;
}

/* One step, 20 fixed iterations: the same count and the same answer (the
 * short cases compute-sanitizer runs, tests/gpu_session.sh). */
static int one_step(const variant *v)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def dc = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CPU, 20);
    tw_world_def dg = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, 20);
    tw_world *cpu = world_of(m, &dc, NULL, 0), *gpu = world_of(m, &dg, v, 0);
    CHECK(cpu && gpu);
    tw_step_stats sc, sg;
    CHECK_OK(tw_world_step(cpu, &sc));
    CHECK_OK(tw_world_step(gpu, &sg));
    printf("iterations cpu %d gpu %d, residual cpu %.6g gpu %.6g\n", sc.cg_iterations, sg.cg_iterations, sc.residual,
           sg.residual);
    CHECK(sg.cg_iterations == 20 && sc.cg_iterations == 20);
    CHECK(tw_test_position_error(cpu, gpu, DEMO_BAR_LENGTH, 1e-5, "after 1 step") <= 1e-5);
    CHECK_NEAR(sg.residual, sc.residual, 1e-2 * sc.residual + 1e-12);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

/* One per line: the CMake scan registers each `TW_TEST(name)` line as a ctest case. */
TW_TEST(fused_one_step_matches_cpu) { return one_step(&FUSED); }
TW_TEST(fused_one_step_host_driven_matches_cpu) { return one_step(&FUSED_HOST); }
TW_TEST(warp_spmv_one_step_host_driven_matches_cpu) { return one_step(&WARP_HOST); }
TW_TEST(warp_spmv_bar_corot_element_matches_cpu) { return bar_parity(TW_COROT_ELEMENT, &WARP, 0); }
TW_TEST(warp_spmv_bar_warp_vertex_host_driven_matches_cpu) { return bar_parity(TW_WARP_VERTEX, &WARP_HOST, 0); }
TW_TEST(fused_bar_corot_element_matches_cpu) { return bar_parity(TW_COROT_ELEMENT, &FUSED, 0); }
TW_TEST(fused_bar_linear_matches_cpu) { return bar_parity(TW_LINEAR, &FUSED, 0); }
TW_TEST(fused_bar_green_matches_cpu) { return bar_parity(TW_GREEN, &FUSED, 0); }
TW_TEST(fused_bar_warp_vertex_host_driven_matches_cpu) { return bar_parity(TW_WARP_VERTEX, &FUSED_HOST, 0); }
TW_TEST(fused_bar_fixed_iterations_matches_cpu) { return bar_parity(TW_COROT_ELEMENT, &FUSED, 20); }
TW_TEST(fused_bar_fixed_iterations_host_driven_matches_cpu) { return bar_parity(TW_HYBRID, &FUSED_HOST, 20); }
TW_TEST(fused_warp_spmv_bar_matches_cpu) { return bar_parity(TW_WARP_EDGE, &FUSED_WARP, 0); }
TW_TEST(fused_element_bar_corot_element_matches_cpu) { return bar_parity(TW_COROT_ELEMENT, &ELEMENT, 0); }
TW_TEST(fused_element_bar_green_matches_cpu) { return bar_parity(TW_GREEN, &ELEMENT, 0); }
TW_TEST(all_fused_bar_hybrid_matches_cpu) { return bar_parity(TW_HYBRID, &ALL_FUSED, 20); }

/* The cube dropped 0.1 m onto the floor, 200 steps: contacts (the normal
 * filter in the fused kernels, several solves in a step, host-driven after
 * the first) as on the CPU, nothing below the floor. */
static int cube_parity(const variant *v)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m != NULL);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 0.005;
    d.damping_stiffness = 0.01;
    tw_world_def dc = d, dg = d;
    dc.backend = TW_BACKEND_CPU;
    dg.backend = TW_BACKEND_CUDA;
    tw_world *cpu = world_of(m, &dc, NULL, 1), *gpu = world_of(m, &dg, v, 1);
    CHECK(cpu && gpu);
    long contacts_cpu = 0, contacts_gpu = 0;
    double lowest = INFINITY;
    for (int s = 0; s < 200; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
        contacts_cpu += sc.contacts;
        contacts_gpu += sg.contacts;
        const tw_real *x = tw_world_positions(gpu);
        for (int i = 0; i < tw_world_vertex_count(gpu); i++) lowest = fmin(lowest, x[3 * i + 2]);
        if (s == 0 || s == 40 || s == 199)
            printf("  step %d: contacts cpu %d gpu %d, CG iterations cpu %d gpu %d\n", s + 1, sc.contacts, sg.contacts,
                   sc.cg_iterations, sg.cg_iterations);
    }
    printf("contact-steps over 200 steps: cpu %ld gpu %ld; lowest device vertex z %.3g m\n", contacts_cpu, contacts_gpu,
           lowest);
    CHECK(contacts_gpu > 0);
    CHECK(labs(contacts_gpu - contacts_cpu) <= contacts_cpu / 50 + 5);
    CHECK(lowest >= -1e-6);
    CHECK(tw_test_position_error(cpu, gpu, DEMO_DROP_CUBE_EDGE, 2e-3, "cube on the floor, 200 steps") <= 2e-3);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(fused_cube_on_floor_matches_cpu) { return cube_parity(&FUSED); }
TW_TEST(warp_spmv_cube_on_floor_matches_cpu) { return cube_parity(&WARP); }

/* TW_CUDA_SPMV=half (the symmetric half, kernels/cuda_pcg.cu; the CPU's
 * default full product is the oracle): the short case for the sanitizers,
 * the bar under the symmetric methods, graph and host-driven, and the cube
 * on the floor (contacts: several solves a step). */
TW_TEST(half_spmv_one_step_host_driven_matches_cpu) { return one_step(&HALF_HOST); }
TW_TEST(half_spmv_bar_corot_element_matches_cpu) { return bar_parity(TW_COROT_ELEMENT, &HALF, 0); }
TW_TEST(half_spmv_bar_green_fixed_iterations_matches_cpu) { return bar_parity(TW_GREEN, &HALF, 20); }
TW_TEST(half_spmv_bar_warp_vertex_host_driven_matches_cpu) { return bar_parity(TW_WARP_VERTEX, &HALF_HOST, 0); }
TW_TEST(half_spmv_cube_on_floor_matches_cpu) { return cube_parity(&HALF); }

/* Two half worlds stepped alike end with the same bits (no atomics in the
 * product), and near the full hand-written kernel's world (printed: the
 * same bits where the device's matrix is stored exactly symmetric). */
TW_TEST(half_spmv_is_deterministic)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def d = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, 0);
    tw_world *a = world_of(m, &d, &HALF, 0), *b = world_of(m, &d, &HALF, 0), *o = world_of(m, &d, &OWN, 0);
    CHECK(a && b && o);
    for (int s = 0; s < 50; s++) {
        CHECK_OK(tw_world_step(a, NULL));
        CHECK_OK(tw_world_step(b, NULL));
        CHECK_OK(tw_world_step(o, NULL));
    }
    size_t bytes = sizeof(tw_real) * 3 * (size_t)tw_world_vertex_count(a);
    int same = memcmp(tw_world_positions(a), tw_world_positions(b), bytes) == 0;
    int same_own = memcmp(tw_world_positions(a), tw_world_positions(o), bytes) == 0;
    printf("two half worlds after 50 steps: %s; against the full kernel: %s\n", same ? "bit-identical" : "DIFFERENT",
           same_own ? "bit-identical" : "other bits");
    CHECK(same);
    CHECK(tw_test_position_error(o, a, DEMO_BAR_LENGTH, 1e-3, "half vs own") <= 1e-3);
    tw_world_destroy(o);
    tw_world_destroy(b);
    tw_world_destroy(a);
    tw_mesh_destroy(m);
    return 0;
}

/* warp_system bicgstab under BDF2 with TW_CUDA_SPMV=half: the BDF2 terms'
 * product outside the solver (tw_cuda_spmv_pq) must read the full,
 * non-symmetric matrix, not its upper half; 30 steps against the CPU. */
TW_TEST(half_spmv_leaves_bicgstab_bdf2_full)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def dc = bar_def(TW_WARP_VERTEX, TW_BACKEND_CPU, 0), dg = bar_def(TW_WARP_VERTEX, TW_BACKEND_CUDA, 0);
    dc.integrator = dg.integrator = TW_BDF2;
    dc.warp_system = dg.warp_system = TW_WARP_SYSTEM_BICGSTAB;
    tw_world *cpu = world_of(m, &dc, NULL, 0), *gpu = world_of(m, &dg, &HALF_HOST, 0);
    CHECK(cpu && gpu);
    for (int s = 0; s < 30; s++) {
        CHECK_OK(tw_world_step(cpu, NULL));
        CHECK_OK(tw_world_step(gpu, NULL));
    }
    CHECK(tw_test_position_error(cpu, gpu, DEMO_BAR_LENGTH, 1e-3, "bicgstab, BDF2, 30 steps") <= 1e-3);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

/* BDF2 (its base terms use the step's SpMV outside the loop, on the PCG's
 * p and q, which the fused path alternates): 50 steps against the CPU. */
TW_TEST(fused_bdf2_bar_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def dc = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CPU, 0), dg = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, 0);
    dc.integrator = dg.integrator = TW_BDF2;
    tw_world *cpu = world_of(m, &dc, NULL, 0), *gpu = world_of(m, &dg, &FUSED, 0);
    CHECK(cpu && gpu);
    for (int s = 0; s < 50; s++) {
        tw_step_stats sc, sg;
        CHECK_OK(tw_world_step(cpu, &sc));
        CHECK_OK(tw_world_step(gpu, &sg));
    }
    CHECK(tw_test_position_error(cpu, gpu, DEMO_BAR_LENGTH, 1e-3, "BDF2, 50 steps") <= 1e-3);
    tw_world_destroy(gpu);
    tw_world_destroy(cpu);
    tw_mesh_destroy(m);
    return 0;
}

/* Two fused worlds stepped alike end bit for bit alike (the reductions'
 * order is fixed: no float atomics), and the graph gives the host-driven
 * loop's iteration count every step. */
TW_TEST(fused_is_deterministic)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world_def d = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, 0);
    tw_world *a = world_of(m, &d, &FUSED, 0), *b = world_of(m, &d, &FUSED, 0), *h = world_of(m, &d, &FUSED_HOST, 0);
    CHECK(a && b && h);
    int differ = 0;
    for (int s = 0; s < 50; s++) {
        tw_step_stats sa, sb, sh;
        CHECK_OK(tw_world_step(a, &sa));
        CHECK_OK(tw_world_step(b, &sb));
        CHECK_OK(tw_world_step(h, &sh));
        if ((sa.cg_iterations != sb.cg_iterations || sa.cg_iterations != sh.cg_iterations) && differ++ < 5)
            printf("  step %d: CG iterations graph %d, graph again %d, host-driven %d\n", s + 1, sa.cg_iterations,
                   sb.cg_iterations, sh.cg_iterations);
    }
    size_t bytes = sizeof(tw_real) * 3 * (size_t)tw_world_vertex_count(a);
    int same = memcmp(tw_world_positions(a), tw_world_positions(b), bytes) == 0;
    printf("two graph worlds after 50 steps: %s; steps with another iteration count: %d\n",
           same ? "bit-identical" : "DIFFERENT", differ);
    CHECK(tw_test_position_error(a, b, DEMO_BAR_LENGTH, 0, "graph vs graph") <= 0);
    CHECK(same);
    CHECK(differ == 0);
    CHECK(tw_test_position_error(h, a, DEMO_BAR_LENGTH, 1e-6, "graph vs host-driven") <= 1e-6);
    tw_world_destroy(h);
    tw_world_destroy(b);
    tw_world_destroy(a);
    tw_mesh_destroy(m);
    return 0;
}

/* max |x_w - x_ref| / max |x_ref - x0| (x0: the positions before the steps) */
static double displacement_error(const tw_real *x0, const tw_world *ref, const tw_world *w, const char *what)
{
    int n = tw_world_vertex_count(ref);
    const tw_real *a = tw_world_positions(ref), *b = tw_world_positions(w);
    double worst = 0, moved = 0;
    for (int i = 0; i < 3 * n; i++) {
        worst = tw_test_max(worst, fabs((double)a[i] - (double)b[i]));
        moved = tw_test_max(moved, fabs((double)a[i] - (double)x0[i]));
    }
    printf("%s: max |x - x_unfused| / max displacement = %.3g (largest displacement %.3g m)\n", what, worst / moved,
           moved);
    return moved > 0 ? worst / moved : INFINITY;
}

/* The bar of 120 x 12 x 12 cells (20 449 vertices, 103 680 tets): the row
 * kernel's grid is capped (1279 groups of 16 rows over 1024 blocks, so some
 * blocks take a second pass) and the update kernel has 80 blocks, so both
 * last-block reductions sum many partials (on the 189-vertex bar above the
 * update kernel has one block). Against the unfused device PCG on the same
 * device, where only the sums' order differs: two steps of 10 fixed
 * iterations (the residual is then near 5e-3 |b|; near 2e-6 |b|, after 20,
 * float's rounding of r alone moves it by about 1 %), the displacement and
 * the residual, the graph and the host-driven loop alike (a race on the
 * partials would part them), everything fused (warp SpMV, element kernels)
 * too; then one step to the tolerance, the iteration count within one. */
TW_TEST(fused_mid_bar_many_blocks_matches_unfused)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    static const variant UNFUSED = {NULL, NULL, 1, NULL};
    tw_mesh *m = tw_mesh_bar(DEMO_BAR_LENGTH, 0.1, 0.1, 120, 12, 12);
    CHECK(m != NULL);
    int n = tw_mesh_vertex_count(m);
    printf("%d vertices, %d tets: row kernel %ld groups of %d rows (cap %d blocks), update kernel %d blocks\n", n,
           tw_mesh_tet_count(m), ((long)n + 15) / 16, 16, 1024, (n + 255) / 256);
    CHECK(n > 16 * 1024 && (n + 255) / 256 > 1);
    for (int fixed = 10; fixed >= 0; fixed -= 10) {
        tw_world_def d = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, fixed);
        tw_world *ref = world_of(m, &d, &UNFUSED, 0);
        tw_world *w[3] = {world_of(m, &d, &FUSED, 0), world_of(m, &d, &FUSED_HOST, 0), world_of(m, &d, &ALL_FUSED, 0)};
        static const char *names[3] = {"fused (graph)", "fused (host-driven)", "all fused (warp SpMV, element)"};
        int count = fixed ? 3 : 1, steps = fixed ? 2 : 1;
        CHECK(ref && w[0] && w[1] && w[2]);
        size_t bytes = sizeof(tw_real) * 3 * (size_t)n;
        tw_real *x0 = malloc(bytes);
        CHECK(x0 != NULL);
        memcpy(x0, tw_world_positions(ref), bytes);
        for (int s = 0; s < steps; s++) {
            tw_step_stats sr, sw[3];
            CHECK_OK(tw_world_step(ref, &sr));
            for (int k = 0; k < count; k++) CHECK_OK(tw_world_step(w[k], &sw[k]));
            for (int k = 0; k < count; k++) {
                printf("  %s, step %d: CG iterations unfused %d %s %d, residual %.6g vs %.6g\n",
                       fixed ? "fixed 10" : "to the tolerance", s + 1, sr.cg_iterations, names[k], sw[k].cg_iterations,
                       sr.residual, sw[k].residual);
                if (fixed) {
                    CHECK(sr.cg_iterations == fixed && sw[k].cg_iterations == fixed);
                    CHECK_NEAR(sw[k].residual, sr.residual, 1e-3 * sr.residual + 1e-12);
                } else {
                    CHECK(abs(sw[k].cg_iterations - sr.cg_iterations) <= 1);
                    CHECK(!(sw[k].residual > d.cg_tolerance) && !(sr.residual > d.cg_tolerance));
                }
            }
        }
        /* float sums in another order; to the tolerance one iteration more or less */
        for (int k = 0; k < count; k++) CHECK(displacement_error(x0, ref, w[k], names[k]) <= (fixed ? 1e-3 : 1e-2));
        if (fixed) CHECK(displacement_error(x0, w[0], w[1], "host-driven vs graph") <= 1e-6);
        free(x0);
        for (int k = 0; k < 3; k++) tw_world_destroy(w[k]);
        tw_world_destroy(ref);
    }
    tw_mesh_destroy(m);
    return 0;
}

/* The SpMV chosen by size (kernels/cuda_pcg.cu, TW_OWN_SPMV_MIN_VERTICES =
 * 50 000): with TW_CUDA_SPMV unset a world of 53 429 vertices (the bar of
 * 100 x 22 x 22 cells) takes the hand-written kernel, and TW_CUDA_SPMV=cusparse
 * still forces cuSPARSE there. Only world creation: the kernels themselves
 * are the other cases'. The session's TW_CUDA_SPMV is put back after. */
TW_TEST(spmv_default_by_size)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    char saved[64] = "";
    const char *e = getenv("TW_CUDA_SPMV");
    int had = e != NULL;
    if (had) snprintf(saved, sizeof saved, "%s", e);
    tw_mesh *m = tw_mesh_bar(DEMO_BAR_LENGTH, 0.1, 0.1, 100, 22, 22);
    CHECK(m != NULL);
    CHECK(tw_mesh_vertex_count(m) >= 50000);
    tw_world_def d = bar_def(TW_COROT_ELEMENT, TW_BACKEND_CUDA, 0);
    const char *names[2] = {"?", "?"};
    for (int k = 0; k < 2; k++) {
        if (k == 0) unsetenv("TW_CUDA_SPMV");
        else setenv("TW_CUDA_SPMV", "cusparse", 1);
        tw_world *w = world_of(m, &d, NULL, 0);
        CHECK(w != NULL);
        names[k] = tw_cuda_world_spmv_name(w->cuda); /* a string literal */
        tw_world_destroy(w);
    }
    if (had) setenv("TW_CUDA_SPMV", saved, 1);
    else unsetenv("TW_CUDA_SPMV");
    printf("%d vertices: SpMV %s with TW_CUDA_SPMV unset, %s with TW_CUDA_SPMV=cusparse\n", tw_mesh_vertex_count(m),
           names[0], names[1]);
    CHECK(strcmp(names[0], "own") == 0);
    CHECK(strcmp(names[1], "cusparse") == 0);
    tw_mesh_destroy(m);
#endif
    return 0;
}
