/* The CUDA step against the CPU step (the oracle), stage by stage: after ONE
 * implicit Euler step from the same deformed state, the arrays each stage
 * left behind: the rotations (warp-vertex: per-vertex R; warp-edge: the
 * edge frames' R; corot-element, hybrid: per-element R; green: per-element
 * F), the elastic force, the right-hand side, the system matrix's BSR values
 * (green: its tangent blocks), and one SpMV of the device on the device's
 * system matrix (cuSPARSE's, and the hand-written kernels); the element
 * stages again with TW_CUDA_ELEMENT=fused (rotation and force in one
 * kernel). The end-to-end
 * cases (100 steps of the bar, a PCG with a fixed count) are in
 * test_gpu_backend.c; the SVD / polar decomposition in test_gpu_svd.c.
 *
 * The state is deformed on purpose: the bar (fixed at x = 0) bent about z
 * from x = 0.3 m (1.5 rad/m, up to about 1 rad at the tip), twisted about
 * its axis (0.6 rad/m), each vertex then moved at random by up to 2 % of a
 * cell, with random velocities, a point force and a spring: every R is far
 * from I and every force term non-zero (each case also asserts that of the
 * CPU's values, so a pass cannot come from R = I or f = 0). The elements
 * stay well shaped (strains under about 10 %), so the polar decomposition is
 * unique and both backends must find the same R.
 *
 * Comparison (llm.c's validate_result): |gpu - cpu| <= tol (max|cpu| +
 * |cpu_i|), tol 1e-4 in the float build (the GPU contracts to FMA, the CPU
 * need not), 1e-10 in the double build; the first mismatches and the max
 * error are printed. Every case but system_matrix_warp_vertex_acts_on_cpu
 * (the CPU alone) exits 77 (skipped) in a build without CUDA or on a
 * machine without a GPU. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv */
#endif
#include <stdlib.h>
#include <string.h>

#include "scenes.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#include "hd/step.h" /* tw_vertex_system_block */
#include "world.h" /* the CPU world's stage arrays: w->R, w->f, w->rhs, w->A; w->cuda */
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#endif

#ifdef TW_DOUBLE
#define STAGE_TOL 1e-10
#define SPMV_TOL 1e-12
#else
#define STAGE_TOL 1e-4
#define SPMV_TOL 1e-5
#endif


#define BAR_LENGTH DEMO_BAR_LENGTH
#define BAR_SIDE 0.1

/* A deterministic uniform number in [-1, 1). */
static double rand_pm1(unsigned *state)
{
    return 2 * tw_test_uniform(state) - 1;
}

/* The deformed position of rest point X (see the top of the file): twisted
 * about the bar's axis, then bent about z from x = 0.3 m. */
static void deform(const double X[3], double out[3])
{
    const double yc = 0.5 * BAR_SIDE, zc = 0.5 * BAR_SIDE, tau = 0.6, kappa = 1.5, x0 = 0.3;
    double a = tau * X[0], dy = X[1] - yc, dz = X[2] - zc;
    double ty = cos(a) * dy - sin(a) * dz, tz = sin(a) * dy + cos(a) * dz; /* twisted cross-section */
    double s = X[0] - x0;
    if (s <= 0) {
        out[0] = X[0];
        out[1] = yc + ty;
    } else { /* the centre line on an arc of radius 1/kappa, the section turned with it */
        double phi = kappa * s;
        out[0] = x0 + sin(phi) / kappa - ty * sin(phi);
        out[1] = yc + (1 - cos(phi)) / kappa + ty * cos(phi);
    }
    out[2] = zc + tz;
}

/* Sets the deformed state on w: positions, velocities (random, 0.05 m/s),
 * a point force at the middle vertex and a spring at the last. The same
 * numbers on every world (the seed is fixed). */
static int set_deformed_state(tw_world *w, const tw_mesh *m)
{
    int n = tw_world_vertex_count(w);
    const double *X = tw_mesh_positions(m);
    tw_real *x = malloc(sizeof(tw_real) * 3 * (size_t)n), *v = malloc(sizeof(tw_real) * 3 * (size_t)n);
    if (!x || !v) return 1;
    unsigned seed = 12345u;
    const double jitter = 0.02 * BAR_LENGTH / 20; /* 2 % of a cell */
    for (int i = 0; i < n; i++) {
        double p[3];
        deform(X + 3 * (size_t)i, p);
        for (int c = 0; c < 3; c++) {
            x[3 * i + c] = (tw_real)(p[c] + jitter * rand_pm1(&seed));
            v[3 * i + c] = (tw_real)(0.05 * rand_pm1(&seed));
        }
    }
    const double force[3] = {0.5, -1, 2}, anchor[3] = {1.2, 0.4, 0.3};
    tw_status s = tw_world_set_positions(w, x);
    if (s == TW_OK) s = tw_world_set_velocities(w, v);
    if (s == TW_OK) s = tw_world_set_force(w, n / 2, force);
    if (s == TW_OK) s = tw_world_set_spring(w, n - 1, anchor, 200);
    free(x);
    free(v);
    if (s != TW_OK) fprintf(stderr, "deformed state: %s\n", tw_last_error());
    return s != TW_OK;
}

static tw_world *deformed_world(const tw_mesh *m, tw_method method, tw_backend backend)
{
    tw_world_def d = tw_test_bar_def(method, backend);
    tw_world *w = demo_wall_world(m, &d);
    if (!w) {
        fprintf(stderr, "%s world: %s\n", tw_backend_name(backend), tw_last_error());
        return NULL;
    }
    if (set_deformed_state(w, m)) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

static double max_abs(const tw_real *a, size_t count)
{
    double m = 0;
    for (size_t i = 0; i < count; i++)
        if (!(fabs((double)a[i]) <= m)) m = fabs((double)a[i]); /* NaN wins */
    return m;
}

#ifdef TW_HAVE_CUDA

typedef enum stage {
    STAGE_ROTATIONS, /* w->R */
    STAGE_FORCES,    /* w->f */
    STAGE_RHS,       /* w->rhs */
    STAGE_MATRIX     /* w->A */
} stage;

static const char *stage_name(stage s)
{
    static const char *names[] = {"rotations", "elastic force", "right-hand side", "system matrix"};
    return names[s];
}

/* The bar on both backends from the same deformed state, one step each:
 * after it, the CPU world's scratch (w->R, w->f, w->rhs, w->A) and the
 * device's (tw_cuda_world_download_array) hold that step's stages. */
typedef struct stage_pair {
    tw_mesh *m;
    tw_world *cpu, *gpu;
} stage_pair;

static void stage_pair_destroy(stage_pair *p)
{
    tw_world_destroy(p->gpu);
    tw_world_destroy(p->cpu);
    tw_mesh_destroy(p->m);
}

/* 0 when both worlds exist and stepped once; else 1, having said why. */
static int stage_pair_create(stage_pair *p, tw_method method)
{
    memset(p, 0, sizeof *p);
    p->m = demo_bar_mesh();
    if (!p->m) {
        fprintf(stderr, "mesh: %s\n", tw_last_error());
        return 1;
    }
    p->cpu = deformed_world(p->m, method, TW_BACKEND_CPU);
    p->gpu = deformed_world(p->m, method, TW_BACKEND_CUDA);
    if (!p->cpu || !p->gpu || !p->gpu->cuda) return 1;
    tw_step_stats sc, sg;
    tw_status s = tw_world_step(p->cpu, &sc);
    if (s == TW_OK) s = tw_world_step(p->gpu, &sg);
    if (s != TW_OK) {
        fprintf(stderr, "step: %s: %s\n", tw_status_name(s), tw_last_error());
        return 1;
    }
    printf("%s, %d vertices, %d tets; one step: CG iterations cpu %d gpu %d\n", tw_method_name(method),
           tw_world_vertex_count(p->cpu), tw_world_tet_count(p->cpu), sc.cg_iterations, sg.cg_iterations);
    return 0;
}

static int is_vertex_method(tw_method m) { return m == TW_WARP_VERTEX || m == TW_WARP_EDGE; }

/* The CPU's array of stage s and its length; the device's name for it. */
static const tw_real *cpu_stage(const tw_world *w, stage s, size_t *count, tw_cuda_array *which)
{
    size_t n = (size_t)w->fem.n;
    switch (s) {
    case STAGE_ROTATIONS:
        *count = 9 * (is_vertex_method(w->def.method) ? n : (size_t)w->fem.nt);
        *which = TW_CUDA_ARRAY_R;
        return w->R;
    case STAGE_FORCES: *count = 3 * n; *which = TW_CUDA_ARRAY_F; return w->f;
    case STAGE_RHS: *count = 3 * n; *which = TW_CUDA_ARRAY_RHS; return w->rhs;
    default: *count = 9 * (size_t)w->fem.nnzb; *which = TW_CUDA_ARRAY_A; return w->A;
    }
}

/* llm.c's validate_result: how many values break |got - ref| <= tol (max|ref|
 * + |ref_i|); prints the first five of them and the max error relative to
 * max|ref|. group: values per item (9 for a 3x3 block, 3 for a vertex). */
static size_t validate(const char *what, const tw_real *ref, const tw_real *got, size_t count, int group, double tol)
{
    double scale = max_abs(ref, count), worst = 0;
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        double r = (double)ref[i], g = (double)got[i], e = fabs(g - r);
        if (!(e <= tol * (scale + fabs(r)))) {
            if (bad < 5)
                printf("  %s mismatch: item %zu entry %zu: cpu %.9g gpu %.9g (diff %.3g)\n", what, i / (size_t)group,
                       i % (size_t)group, r, g, e);
            bad++;
        }
        if (!(e <= worst)) worst = e;
    }
    printf("%s: %zu values, max|cpu| %.6g, max|gpu - cpu| %.3g = %.3g of max|cpu| (tolerance %.1g); %zu mismatches\n",
           what, count, scale, worst, scale > 0 ? worst / scale : worst, tol, bad);
    return bad;
}

/* max over the 3x3 blocks of max |R - I| entry */
static double max_from_identity(const tw_real *R, size_t count)
{
    double m = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs((double)R[i] - (i % 9 % 4 == 0 ? 1.0 : 0.0));
        m = tw_test_max(m, e);
    }
    return m;
}

/* max |A - (cm M + ck K)| over max|A|: how much of the CPU's system matrix
 * comes from the deformed state (rotations, the StVK tangent) and the spring
 * rather than the rest stiffness */
static double deformed_part_of_matrix(const tw_world *w)
{
    const tw_fem *f = &w->fem;
    double h = w->def.dt, cm = 1 + h * w->def.damping_mass, ck = h * h + h * w->def.damping_stiffness, d = 0;
    for (int i = 0; i < f->n; i++)
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++)
            for (int k = 0; k < 9; k++) {
                double rest = ck * f->K[9 * (size_t)b + k] + (b == f->diag[i] && k % 4 == 0 ? cm * f->mass[i] : 0);
                double e = fabs((double)w->A[9 * (size_t)b + k] - rest);
                d = tw_test_max(d, e);
            }
    return d / max_abs(w->A, 9 * (size_t)f->nnzb);
}

/* The CPU's stage s is far from trivial (see the top of the file). */
static int nontrivial(const tw_world *w, stage s, const tw_real *ref, size_t count)
{
    switch (s) {
    case STAGE_ROTATIONS: {
        double d = max_from_identity(ref, count);
        printf("cpu %s: max |R - I| entry %.3g (must be > 0.1)\n", w->def.method == TW_GREEN ? "F" : "R", d);
        return d > 0.1;
    }
    case STAGE_FORCES: printf("cpu max |f| %.6g N (must be > 1)\n", max_abs(ref, count)); return max_abs(ref, count) > 1;
    case STAGE_RHS:
        printf("cpu max |rhs| %.6g N s (must be > 1e-2)\n", max_abs(ref, count));
        return max_abs(ref, count) > 1e-2;
    default: {
        if (w->def.method == TW_LINEAR) return 1; /* its A is the rest A by design */
        double d = deformed_part_of_matrix(w);
        printf("cpu system matrix: max |A - (cm M + ck K)| / max|A| = %.3g (must be > 1e-2)\n", d);
        return d > 1e-2;
    }
    }
}

#endif /* TW_HAVE_CUDA */

/* One stage of one method: the device's array equals the CPU's. */
/* fused_element: the device world made with TW_CUDA_ELEMENT=fused (the
 * element methods' rotation and force in one kernel), checked to have taken */
static int stage_parity_with(tw_method method, int s_, int fused_element)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    stage s = (stage)s_;
    stage_pair p;
    if (fused_element) setenv("TW_CUDA_ELEMENT", "fused", 1);
    int failed = stage_pair_create(&p, method);
    if (fused_element) unsetenv("TW_CUDA_ELEMENT");
    CHECK(failed == 0);
    printf("element kernels: %s\n", tw_cuda_world_element_fused(p.gpu->cuda) ? "fused" : "separate");
    CHECK(tw_cuda_world_element_fused(p.gpu->cuda) == fused_element);
    size_t count = 0;
    tw_cuda_array which;
    const tw_real *ref = cpu_stage(p.cpu, s, &count, &which);
    CHECK(count > 0 && count <= tw_cuda_world_array_count(p.gpu->cuda, which));
    tw_real *got = malloc(sizeof(tw_real) * count);
    CHECK(got != NULL);
    CHECK_OK(tw_cuda_world_download_array(p.gpu->cuda, which, got, count));
    CHECK(nontrivial(p.cpu, s, ref, count));
    CHECK(validate(stage_name(s), ref, got, count, s == STAGE_ROTATIONS || s == STAGE_MATRIX ? 9 : 3, STAGE_TOL) == 0);
    free(got);
    stage_pair_destroy(&p);
#else
    (void)method;
    (void)s_;
    (void)fused_element;
#endif
    return 0;
}

static int stage_parity(tw_method method, int s_) { return stage_parity_with(method, s_, 0); }

/* One per line: the CMake scan registers each `TW_TEST(name)` line as a ctest case. */
TW_TEST(stage_rotations_warp_vertex) { return stage_parity(TW_WARP_VERTEX, 0); }
TW_TEST(stage_rotations_warp_edge) { return stage_parity(TW_WARP_EDGE, 0); }
TW_TEST(stage_rotations_corot_element) { return stage_parity(TW_COROT_ELEMENT, 0); }
TW_TEST(stage_rotations_hybrid) { return stage_parity(TW_HYBRID, 0); }
TW_TEST(stage_rotations_green) { return stage_parity(TW_GREEN, 0); } /* F, the deformation gradient */

TW_TEST(stage_forces_linear) { return stage_parity(TW_LINEAR, 1); }
TW_TEST(stage_forces_warp_vertex) { return stage_parity(TW_WARP_VERTEX, 1); }
TW_TEST(stage_forces_warp_edge) { return stage_parity(TW_WARP_EDGE, 1); }
TW_TEST(stage_forces_corot_element) { return stage_parity(TW_COROT_ELEMENT, 1); }
TW_TEST(stage_forces_hybrid) { return stage_parity(TW_HYBRID, 1); }
TW_TEST(stage_forces_green) { return stage_parity(TW_GREEN, 1); }

TW_TEST(stage_rhs_linear) { return stage_parity(TW_LINEAR, 2); }
TW_TEST(stage_rhs_warp_vertex) { return stage_parity(TW_WARP_VERTEX, 2); }
TW_TEST(stage_rhs_warp_edge) { return stage_parity(TW_WARP_EDGE, 2); }
TW_TEST(stage_rhs_corot_element) { return stage_parity(TW_COROT_ELEMENT, 2); }
TW_TEST(stage_rhs_hybrid) { return stage_parity(TW_HYBRID, 2); }
TW_TEST(stage_rhs_green) { return stage_parity(TW_GREEN, 2); }

TW_TEST(stage_system_matrix_linear) { return stage_parity(TW_LINEAR, 3); }
TW_TEST(stage_system_matrix_warp_vertex) { return stage_parity(TW_WARP_VERTEX, 3); }
TW_TEST(stage_system_matrix_warp_edge) { return stage_parity(TW_WARP_EDGE, 3); }
TW_TEST(stage_system_matrix_corot_element) { return stage_parity(TW_COROT_ELEMENT, 3); }
TW_TEST(stage_system_matrix_hybrid) { return stage_parity(TW_HYBRID, 3); } /* the tangent blocks */
TW_TEST(stage_system_matrix_green) { return stage_parity(TW_GREEN, 3); }

/* warp-vertex's symmetric system is sum_e R_e K_e R_e^T (hd/step.h
 * tw_warp_vertex_element_pack, on the device warp_vertex_pack_kernel, then
 * the corot gather). On the CPU: a device that still assembled the blocks
 * R_i K_ij R_j^T (warp-edge's) would fail stage_system_matrix_warp_vertex
 * by more than ten times its tolerance on this state. Measured over the
 * off-diagonal blocks, where the system is ck K' alone (mass and spring sit
 * on the diagonal), with stage_parity's rule (validate). */
TW_TEST(system_matrix_warp_vertex_acts_on_cpu)
{
    tw_mesh *m = demo_bar_mesh();
    CHECK(m != NULL);
    tw_world *w = deformed_world(m, TW_WARP_VERTEX, TW_BACKEND_CPU);
    CHECK(w != NULL);
    CHECK(w->def.warp_system == TW_WARP_SYSTEM_SYMMETRIC);
    CHECK_OK(tw_world_step(w, NULL)); /* w->R and w->A: this step's */
    const tw_fem *f = &w->fem;
    const tw_step_view s = tw_world_view(w);
    double ck = w->def.dt * w->def.dt + w->def.dt * w->def.damping_stiffness;
    double scale = max_abs(w->A, 9 * (size_t)f->nnzb), worst = 0;
    size_t over = 0, offdiag = 0;
    for (int i = 0; i < f->n; i++) {
        tw_m3 Ri = tw_m3_load(w->R + 9 * (size_t)i);
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) {
            if (b == f->diag[i]) continue;
            offdiag++;
            tw_m3 Kb = tw_vertex_system_block(&s, b, f->col[b], &Ri, 0); /* R_i K_ij R_j^T */
            for (int k = 0; k < 9; k++) {
                double a = w->A[9 * (size_t)b + k], e = fabs(ck * Kb.m[k] - a) / (scale + fabs(a));
                over += !(e <= 10 * STAGE_TOL);
                worst = tw_test_max(worst, e);
            }
        }
    }
    printf("warp-vertex, %zu off-diagonal blocks: R_i K_ij R_j^T against the system assembled, largest difference "
           "%.3g (stage tolerance %.1g), %zu entries over ten times it\n",
           offdiag, worst, STAGE_TOL, over);
    CHECK(offdiag > 0);
    CHECK(worst > 10 * STAGE_TOL);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* TW_CUDA_ELEMENT=fused: R, the packs (through the system matrix) and the forces */
TW_TEST(stage_rotations_corot_element_fused) { return stage_parity_with(TW_COROT_ELEMENT, 0, 1); }
TW_TEST(stage_rotations_green_fused) { return stage_parity_with(TW_GREEN, 0, 1); }
TW_TEST(stage_forces_corot_element_fused) { return stage_parity_with(TW_COROT_ELEMENT, 1, 1); }
TW_TEST(stage_forces_hybrid_fused) { return stage_parity_with(TW_HYBRID, 1, 1); }
TW_TEST(stage_forces_green_fused) { return stage_parity_with(TW_GREEN, 1, 1); }
TW_TEST(stage_system_matrix_corot_element_fused) { return stage_parity_with(TW_COROT_ELEMENT, 3, 1); }
TW_TEST(stage_system_matrix_green_fused) { return stage_parity_with(TW_GREEN, 3, 1); }

/* One SpMV: y = A x for a random x, the device's product (the SpMV the PCG
 * uses) against host/solver_impl.h's tw_bsr_spmv on the same A (the
 * device's, downloaded): only the product differs. kernel: NULL for the
 * default (cuSPARSE at this size), "own" (the hand-written kernel, a thread
 * per block row) or "warp" (lanes of a warp per block row), set as
 * TW_CUDA_SPMV while the CUDA world is created (and checked to have taken). */
static int spmv_parity(const char *kernel)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    if (kernel) setenv("TW_CUDA_SPMV", kernel, 1);
    stage_pair p;
    int failed = stage_pair_create(&p, TW_COROT_ELEMENT);
    if (kernel) unsetenv("TW_CUDA_SPMV");
    CHECK(failed == 0);
    tw_cuda_world *cw = p.gpu->cuda;
    const char *name = tw_cuda_world_spmv_name(cw);
    printf("SpMV in use: %s\n", name);
    CHECK(!kernel || strcmp(name, kernel) == 0);
    size_t nv = 9 * (size_t)p.gpu->fem.nnzb, n3 = 3 * (size_t)p.gpu->fem.n;
    tw_real *A = malloc(sizeof(tw_real) * nv), *x = malloc(sizeof(tw_real) * n3);
    tw_real *y = malloc(sizeof(tw_real) * n3), *yref = malloc(sizeof(tw_real) * n3);
    CHECK(A && x && y && yref);
    CHECK_OK(tw_cuda_world_download_array(cw, TW_CUDA_ARRAY_A, A, nv));
    unsigned seed = 777u;
    for (size_t i = 0; i < n3; i++) x[i] = (tw_real)rand_pm1(&seed);
    CHECK_OK(tw_cuda_world_spmv(cw, x, y));
    tw_bsr bsr = tw_world_bsr(p.gpu); /* the pattern; the values the device's */
    bsr.val = A;
    tw_bsr_spmv(&bsr, x, yref);
    printf("max |A x| %.6g (must be > 0)\n", max_abs(yref, n3));
    CHECK(max_abs(yref, n3) > 0);
    CHECK(validate(name, yref, y, n3, 3, SPMV_TOL) == 0);
    free(yref);
    free(y);
    free(x);
    free(A);
    stage_pair_destroy(&p);
#else
    (void)kernel;
#endif
    return 0;
}

TW_TEST(stage_spmv) { return spmv_parity(NULL); }
TW_TEST(stage_spmv_own_kernel) { return spmv_parity("own"); }
TW_TEST(stage_spmv_warp_kernel) { return spmv_parity("warp"); }
