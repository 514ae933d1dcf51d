/* tw_state_hash: prints one FNV-1a hash of the state per (scene, method,
 * integrator, variant) after a short deterministic run, for checking that a
 * refactor keeps the CPU results bit-identical:
 *
 *   ./build/tests/tw_state_hash > before.txt   (on the old tree)
 *   ./build/tests/tw_state_hash > after.txt    (on the new tree)
 *   diff before.txt after.txt
 *
 * The world's rows come first (positions and velocities): pinned and free
 * bodies, point forces, the mouse spring, colliders with friction, kinematic
 * vertices and the solver variants. The subsystems' rows follow, each
 * hashing what the subsystem owns: the tetra front (state, active set and
 * the assembled system), the multiresolution (every level's state, active
 * set and the tool's force), the hierarchical basis, the multigrid
 * preconditioner and the symmetric half product, the graded lattice's
 * hanging vertices, contact between bodies and a moving tool (state and the
 * force on the tool). A subsystem row whose run did not do what it is there
 * for (split and merge, touch) says so in place of "ok".
 *
 * --threads N runs every row on N threads (default 1); --only PART the
 * rows of one part: world, front, multires, hier, mg, graded, bodies, tool.
 * On 2 threads every row but multigrid ones gives the same hashes (bar-24
 * mg, front-box v1 and graded-sphere mg differ): the multigrid's half
 * sweeps split their rows by thread, so their sums' order depends on the
 * count (it claims no bit-identity across counts). The multiresolution's
 * threaded kick runs here and gives the same bits, as it claims; the
 * world's loops stay serial on meshes this small (hd.h, TW_PAR). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hier_basis.h"
#include "multires.h"
#include "scenes.h"
#include "tetwarp.h"
#include "tool_press.h"
#include "tw_test_scenes.h"

#define FNV_START 1469598103934665603ull

/* threads of every row's world or subsystem (--threads) */
static int g_threads = 1;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

typedef enum { BAR_PINNED, CUBE_FLOOR, TUBE_SPRING, BAR_KINEMATIC, SCENE_COUNT } scene;
static const char *scene_names[] = {"bar-pinned", "cube-floor", "tube-spring", "bar-kinematic"};

static tw_mesh *scene_mesh(scene s)
{
    switch (s) {
    case BAR_PINNED: return tw_mesh_bar(1.0, 0.1, 0.1, 12, 2, 2);
    case CUBE_FLOOR: return tw_mesh_bar(0.2, 0.2, 0.2, 3, 3, 3);
    case TUBE_SPRING: return tw_mesh_tube(0.05, 0.1, 0.6, 1, 8, 6);
    case BAR_KINEMATIC: return tw_mesh_bar(0.5, 0.1, 0.1, 6, 2, 2);
    default: return NULL;
    }
}

static void scene_setup(scene s, tw_world *w, const tw_mesh *m)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    if (s == BAR_PINNED) {
        tw_world_pin_where(w, 0, 1, 1e-6);
        double f[3] = {0, 3.0, -5.0};
        tw_world_set_force(w, n - 1, f);
    } else if (s == CUBE_FLOOR) {
        /* drop from 5 cm, rotated a little by an initial spin */
        tw_real *x = (tw_real *)malloc(sizeof(tw_real) * 3 * (size_t)n);
        tw_real *v = (tw_real *)malloc(sizeof(tw_real) * 3 * (size_t)n);
        for (int i = 0; i < n; i++) {
            x[3 * i] = (tw_real)X[3 * i];
            x[3 * i + 1] = (tw_real)X[3 * i + 1];
            x[3 * i + 2] = (tw_real)(X[3 * i + 2] + 0.05);
            v[3 * i] = (tw_real)(-2.0 * (X[3 * i + 1] - 0.1));
            v[3 * i + 1] = (tw_real)(2.0 * (X[3 * i] - 0.1));
            v[3 * i + 2] = (tw_real)-0.5;
        }
        tw_world_set_positions(w, x);
        tw_world_set_velocities(w, v);
        free(x);
        free(v);
        tw_collider_def c = tw_default_collider_def();
        tw_world_add_collider(w, &c);
        tw_collider_def sph = tw_default_collider_def();
        sph.kind = TW_COLLIDER_SPHERE;
        sph.center[0] = 0.3;
        sph.center[1] = 0.1;
        sph.center[2] = 0.1;
        sph.radius = 0.12;
        sph.friction = 0.2;
        tw_world_add_collider(w, &sph);
    } else if (s == TUBE_SPRING) {
        tw_world_pin_where(w, 2, 1, 1e-6);
        double anchor[3] = {0.2, 0.1, 0.7};
        tw_world_set_spring(w, n - 1, anchor, 50.0);
    } else if (s == BAR_KINEMATIC) {
        for (int i = 0; i < n; i++)
            if (X[3 * i] < 1e-6) tw_world_set_constraint(w, i, TW_KINEMATIC);
        for (int i = 0; i < n; i++)
            if (X[3 * i] < 1e-6) {
                double p[3] = {X[3 * i], X[3 * i + 1] + 0.01, X[3 * i + 2] + 0.02};
                tw_world_set_target(w, i, p);
            }
    }
}


/* One row: the columns of the world's rows, the variant as text. */
static void row(const char *scene, const char *method, const char *integ, const char *variant, uint64_t h,
                const char *status)
{
    printf("%-13s %-14s %-16s %s  %016llx %s\n", scene, method, integ, variant, (unsigned long long)h, status);
}

/* The row of a run whose world or subsystem could not be made. */
static void row_failed(const char *scene, const char *method, const char *integ, const char *variant)
{
    printf("%-13s %-14s %-16s %s  create failed: %s\n", scene, method, integ, variant, tw_last_error());
}

/* x and v of a world. */
static uint64_t world_hash(const tw_world *w)
{
    int n = tw_world_vertex_count(w);
    uint64_t h = FNV_START;
    h = fnv(h, tw_world_positions(w), sizeof(tw_real) * 3 * (size_t)n);
    return fnv(h, tw_world_velocities(w), sizeof(tw_real) * 3 * (size_t)n);
}

static const char *step_status(tw_status st) { return st == TW_OK ? "ok" : tw_status_name(st); }

/* The world's rows: scene x method x integrator x variant. */
static int world_rows(void)
{
    for (int s = 0; s < SCENE_COUNT; s++) {
        tw_mesh *m = scene_mesh((scene)s);
        if (!m) {
            fprintf(stderr, "tw_state_hash: %s: %s\n", scene_names[s], tw_last_error());
            return 1;
        }
        for (int method = 0; method < TW_METHOD_COUNT; method++) {
            for (int integ = 0; integ < TW_INTEGRATOR_COUNT; integ++) {
                for (int variant = 0; variant < 3; variant++) {
                    tw_world_def d = tw_default_world_def();
                    d.backend = TW_BACKEND_CPU;
                    d.method = (tw_method)method;
                    d.integrator = (tw_integrator)integ;
                    d.threads = g_threads;
                    d.dt = integ == TW_EXPLICIT_NEWMARK ? 0.0 : 0.01;
                    if (variant == 1) {
                        /* fixed iterations, Rayleigh stiffness damping, no warm start */
                        d.cg_fixed_iterations = 20;
                        d.damping_stiffness = 0.01;
                        d.warm_start = 0;
                    } else if (variant == 2) {
                        if (integ == TW_EXPLICIT_NEWMARK) continue;
                        d.newton_iterations = 3;
                        d.warp_system = TW_WARP_SYSTEM_BICGSTAB;
                        d.ghost_force_correction = 0;
                    }
                    char v[8];
                    snprintf(v, sizeof v, "v%d", variant);
                    tw_world *w = tw_world_create(m, &d);
                    if (!w) {
                        row_failed(scene_names[s], tw_method_name((tw_method)method),
                                   tw_integrator_name((tw_integrator)integ), v);
                        continue;
                    }
                    scene_setup((scene)s, w, m);
                    int steps = integ == TW_EXPLICIT_NEWMARK ? 60 : 15;
                    tw_status st = TW_OK;
                    for (int k = 0; k < steps && st == TW_OK; k++) st = tw_world_step(w, NULL);
                    row(scene_names[s], tw_method_name((tw_method)method), tw_integrator_name((tw_integrator)integ),
                        v, world_hash(w), step_status(st));
                    tw_world_destroy(w);
                }
            }
        }
        tw_mesh_destroy(m);
    }
    return 0;
}

/* ---- the tetra front (host/tetra_front.c, tetra_tree.c) */

/* The box of the front tests (tw_test_box_front_create: 3 levels, T2 low
 * enough to switch), without gravity, mass damping FRONT_DAMPING, its free
 * end pulled down by FRONT_LOAD N for 30 steps (it refines to the finest
 * level), then let go (it coarsens, refining again where it swings back),
 * FRONT_STEPS steps in all, ending on a front of mixed levels: v0
 * block-Jacobi, v1 the multigrid kept across switches. The state row hashes
 * x, v and the active set; the system row the element pass and assembly at
 * the final state (A's pattern and values, the right-hand side and the
 * PCG's start). */
#define FRONT_LOAD 20.0
#define FRONT_DAMPING 5.0
#define FRONT_STEPS 50
static int front_rows(void)
{
    for (int variant = 0; variant < 2; variant++) {
        tw_front_def d = tw_default_front_def();
        d.threads = g_threads;
        d.precond = variant == 1 ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
        d.gravity[2] = 0;
        d.damping_mass = FRONT_DAMPING;
        tw_test_box_front b;
        char v[8];
        snprintf(v, sizeof v, "v%d", variant);
        if (!tw_test_box_front_create(&b, &d)) {
            row_failed("front-box", "tree-corot", "implicit-euler", v);
            tw_test_box_front_free(&b);
            continue;
        }
        const tw_mesh *fine = b.t->h->level[b.t->levels - 1];
        const int nv = tw_mesh_vertex_count(fine);
        double *force = calloc(3 * (size_t)nv, sizeof *force);
        int at_end = 0;
        for (int i = 0; i < nv; i++) at_end += tw_mesh_positions(fine)[3 * i] > 0.3 - 1e-9;
        for (int i = 0; i < nv && at_end && force; i++)
            if (tw_mesh_positions(fine)[3 * i] > 0.3 - 1e-9) force[3 * i + 2] = -FRONT_LOAD / at_end;
        int refined = 0, coarsened = 0;
        tw_status st = force ? tw_front_set_forces(b.f, force) : TW_ERR_NOMEM;
        for (int k = 0; k < FRONT_STEPS && st == TW_OK; k++) {
            tw_front_stats fs;
            if (k == 30 && (st = tw_front_set_forces(b.f, NULL)) != TW_OK) break;
            if ((st = tw_front_step(b.f, &fs)) != TW_OK) break;
            refined += fs.refined;
            coarsened += fs.coarsened;
        }
        free(force);
        uint64_t h = fnv(FNV_START, tw_front_x(b.f), sizeof(double) * 3 * (size_t)nv);
        h = fnv(h, tw_front_v(b.f), sizeof(double) * 3 * (size_t)nv);
        for (int id = 0; id < b.t->nt; id++) {
            unsigned char a = (unsigned char)tw_front_is_active(b.f, id);
            h = fnv(h, &a, 1);
        }
        const char *status = st != TW_OK ? tw_status_name(st) : !refined ? "no-refine"
                             : !coarsened                       ? "no-coarsen"
                                                                : "ok";
        row("front-box", "tree-corot", "implicit-euler", v, h, status);
        uint64_t hs = FNV_START;
        if (st == TW_OK) st = tw_front_assemble(b.f);
        if (st == TW_OK) {
            int n, nnzb;
            const int *rp, *col, *diag;
            const tw_real *val, *rhs, *vr;
            const double *fq;
            tw_front_pattern(b.f, &n, &nnzb, &rp, &col, &diag);
            tw_front_system(b.f, &val, &rhs, &vr, &fq);
            hs = fnv(hs, rp, sizeof(int) * ((size_t)n + 1));
            hs = fnv(hs, col, sizeof(int) * (size_t)nnzb);
            hs = fnv(hs, val, sizeof(tw_real) * 9 * (size_t)nnzb);
            hs = fnv(hs, rhs, sizeof(tw_real) * 3 * (size_t)n);
            hs = fnv(hs, vr, sizeof(tw_real) * 3 * (size_t)n);
        }
        row("front-box-sys", "tree-corot", "implicit-euler", v, hs, step_status(st));
        tw_test_box_front_free(&b);
    }
    return 0;
}

/* ---- the multiresolution (host/multires.c) */

/* Three cube levels as the multiresolution tests make them
 * (tw_test_mr_cubes: 0.1 m, 2^3, a jittered 3^3 and 6^3; the finest
 * level's 1296 tets take a substep's kicks past the threaded kick's
 * threshold on --threads 2), clamped at x = 0, sagging under gravity and
 * split and merged by gamma (1e-4, 3e-4 m), the sphere tool pressed into the
 * top and lifted again, MR_FRAMES frames: v0 Green strain, v1 Cauchy strain
 * with the semi-implicit filter and a work budget. The row hashes the
 * tool's force of every frame, then every level's positions, velocities,
 * node states and step levels. */
#define MR_FRAMES 30
static int multires_rows(void)
{
    for (int variant = 0; variant < 2; variant++) {
        const int cells[3] = {2, 3, 6};
        const double amount[3] = {0, 0.2, 0.3};
        tw_hierarchy *hier = tw_test_mr_cubes(cells, amount);
        tw_multires_def d = tw_default_multires_def();
        d.youngs = 2e4;
        d.gamma_min = 1e-4;
        d.gamma_max = 3e-4;
        d.threads = g_threads;
        if (variant == 1) {
            d.strain = TW_MR_CAUCHY;
            d.semi_implicit = 1;
            d.work_budget = 30000; /* tet evaluations a frame: some splits refused, some merges forced */
        }
        char v[8];
        snprintf(v, sizeof v, "v%d", variant);
        const char *method = variant == 1 ? "cauchy" : "green";
        tw_multires *s = hier ? tw_multires_create(hier, &d) : NULL;
        if (!s) {
            row_failed("multires-cube", method, "explicit-substep", v);
            if (!hier) return 1;
            tw_hier_free(hier);
            continue;
        }
        tw_multires_fix(s, 0, 1, 1e-9);
        const tw_mr_tool tool = tw_test_mr_tool(0.03, 0.07, 0.05, 0.004, -0.01, 0.2);
        tw_multires_set_tool(s, &tool);
        uint64_t h = FNV_START;
        int splits = 0, merges = 0, touched = 0;
        tw_status st = TW_OK;
        for (int f = 0; f < MR_FRAMES && st == TW_OK; f++) {
            tw_mr_frame_stats fs;
            st = tw_multires_frame(s, &fs);
            if (st != TW_OK) break;
            splits += fs.splits;
            merges += fs.merges + fs.forced_merges;
            touched += fs.tool_held > 0;
            h = fnv(h, fs.tool_force, sizeof fs.tool_force);
            h = fnv(h, fs.tool_force_last, sizeof fs.tool_force_last);
        }
        for (int l = 0; l < tw_multires_levels(s); l++) {
            const size_t nv = (size_t)tw_mesh_vertex_count(tw_multires_mesh(s, l));
            h = fnv(h, tw_multires_positions(s, l), sizeof(double) * 3 * nv);
            h = fnv(h, tw_multires_velocities(s, l), sizeof(double) * 3 * nv);
            h = fnv(h, tw_multires_states(s, l), nv);
            h = fnv(h, tw_multires_dt_levels(s, l), nv);
        }
        const char *status = st != TW_OK ? tw_status_name(st) : !splits ? "no-split" : !merges ? "no-merge"
                             : !touched ? "no-touch" : "ok";
        row("multires-cube", method, "explicit-substep", v, h, status);
        tw_multires_destroy(s);
    }
    return 0;
}

/* ---- the hierarchical basis (host/hier_basis.c) */

/* The bar of the hierarchical-basis tests (1 x 0.2 x 0.2 m, 5 x 1 x 1 cells)
 * on 3 nested levels, clamped at x = 0, sagging, a point force on its last
 * vertex, HB_STEPS steps: v0 the hierarchical-basis preconditioner, v1
 * two-level, v2 block-Jacobi, v3 corotated on the coarsest level too, v4
 * three Newton iterations a step with the bar turning about z. */
#define HB_STEPS 20
static int hier_rows(void)
{
    tw_mesh *bar = tw_mesh_bar(1, 0.2, 0.2, 5, 1, 1);
    tw_hierarchy *hier = bar ? tw_hier_nested(bar, 3) : NULL;
    tw_mesh_destroy(bar);
    if (!hier) {
        fprintf(stderr, "tw_state_hash: hier-bar: %s\n", tw_last_error());
        return 1;
    }
    static const char *names[] = {"hierarchical", "two-level", "jacobi", "corot-coarse", "newton-3"};
    for (int variant = 0; variant < 5; variant++) {
        tw_hb_def d = tw_default_hb_def();
        d.youngs_modulus = 1e5;
        d.gravity[2] = -9.81;
        d.cg_tolerance = 1e-6;
        d.precond = variant == 0 ? TW_HB_PRECOND_HIERARCHICAL : variant == 2 ? TW_HB_PRECOND_JACOBI
                                                                             : TW_HB_PRECOND_TWO_LEVEL;
        if (variant == 3) d.coarse_green = 0;
        if (variant == 4) d.newton_iterations = 3;
        char v[8];
        snprintf(v, sizeof v, "v%d", variant);
        tw_hb *hb = tw_hb_create(hier, &d);
        if (!hb) {
            row_failed("hier-bar", names[variant], "implicit-euler", v);
            continue;
        }
        tw_hb_pin_where(hb, 0, 1, 1e-6);
        const int n = tw_hb_vertex_count(hb);
        const double f[3] = {0, 2.0, -3.0};
        tw_status st = tw_hb_set_force(hb, n - 1, f);
        if (variant == 4) {
            const double *X = tw_mesh_positions(hier->level[hier->n_levels - 1]);
            double *vel = tw_hb_v(hb);
            for (int i = 0; i < n; i++)
                if (X[3 * i] > 1e-6) {
                    vel[3 * i] = -2 * (X[3 * i + 1] - 0.1);
                    vel[3 * i + 1] = 2 * X[3 * i];
                }
        }
        for (int k = 0; k < HB_STEPS && st == TW_OK; k++) st = tw_hb_step(hb, NULL);
        uint64_t h = fnv(FNV_START, tw_hb_x(hb), sizeof(double) * 3 * (size_t)n);
        h = fnv(h, tw_hb_v(hb), sizeof(double) * 3 * (size_t)n);
        row("hier-bar", names[variant], "implicit-euler", v, h, step_status(st));
        tw_hb_destroy(hb);
    }
    tw_hier_free(hier);
    return 0;
}

/* ---- the multigrid preconditioner (host/amg.c) and the half product */

/* A finer bar than the world rows' (1 x 0.1 x 0.1 m of 24 x 3 x 3 cells,
 * 1296 tets: the multigrid has levels below the finest, where the world
 * rows' meshes fit its dense coarsest level), clamped at x = 0 with a point
 * force at the other end, 15 steps of each method and implicit integrator:
 * v "mg" the multigrid-preconditioned PCG, "half" block-Jacobi with the
 * symmetric half product (tw_world_def.spmv). */
static int mg_rows(void)
{
    tw_mesh *m = tw_mesh_bar(1.0, 0.1, 0.1, 24, 3, 3);
    if (!m) {
        fprintf(stderr, "tw_state_hash: bar-24: %s\n", tw_last_error());
        return 1;
    }
    const int n = tw_mesh_vertex_count(m);
    for (int variant = 0; variant < 2; variant++)
        for (int method = 0; method < TW_METHOD_COUNT; method++)
            for (int integ = 0; integ < TW_EXPLICIT_NEWMARK; integ++) {
                tw_world_def d = tw_default_world_def();
                d.backend = TW_BACKEND_CPU;
                d.method = (tw_method)method;
                d.integrator = (tw_integrator)integ;
                d.threads = g_threads;
                d.dt = 0.01;
                d.precond = variant == 0 ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
                d.spmv = variant == 1 ? TW_SPMV_HALF : TW_SPMV_FULL;
                const char *v = variant == 0 ? "mg" : "half";
                tw_world *w = tw_world_create(m, &d);
                if (!w) {
                    row_failed("bar-24", tw_method_name((tw_method)method),
                               tw_integrator_name((tw_integrator)integ), v);
                    continue;
                }
                tw_world_pin_where(w, 0, 1, 1e-6);
                const double f[3] = {0, 3.0, -5.0};
                tw_status st = tw_world_set_force(w, n - 1, f);
                for (int k = 0; k < 15 && st == TW_OK; k++) st = tw_world_step(w, NULL);
                row("bar-24", tw_method_name((tw_method)method), tw_integrator_name((tw_integrator)integ), v,
                    world_hash(w), step_status(st));
                tw_world_destroy(w);
            }
    tw_mesh_destroy(m);
    return 0;
}

/* ---- the graded lattice and its hanging vertices (host/graded.c, hanging.c) */

/* The graded sphere of the graded-lattice tests (tw_test_graded_sphere: a
 * unit sphere at 0.1 m on 4 levels) dropped onto a floor (friction 0.5)
 * 2 cm below its lowest vertex, the hanging vertices set: the implicit
 * paths of the graded tests' reduced-system case (corot-element with
 * block-Jacobi and multigrid, BDF2, green with two Newton iterations,
 * warp-vertex by BiCGStab), GRADED_STEPS steps of 0.01 s (it lands), and
 * explicit Newmark (the hanging vertices moved kinematically), 60 steps. */
#define GRADED_STEPS 15
static int graded_rows(void)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    if (!g) return 1;
    double lowest = INFINITY;
    for (int i = 0; i < tw_mesh_vertex_count(g->mesh); i++)
        if (tw_mesh_positions(g->mesh)[3 * i + 2] < lowest) lowest = tw_mesh_positions(g->mesh)[3 * i + 2];
    /* the graded tests' implicit paths, then explicit Newmark */
    for (int r = 0; r <= TW_TEST_GRADED_PATHS; r++) {
        const tw_test_graded_path newmark = {TW_COROT_ELEMENT, TW_EXPLICIT_NEWMARK, 0, TW_PRECOND_JACOBI};
        const tw_test_graded_path *p = r < TW_TEST_GRADED_PATHS ? &tw_test_graded_paths[r] : &newmark;
        tw_world_def d = tw_test_graded_drop_def(p);
        d.backend = TW_BACKEND_CPU;
        const int explicit_ = p->integrator == TW_EXPLICIT_NEWMARK;
        if (explicit_) d.dt = 0.0;
        d.threads = g_threads;
        const char *v = p->precond == TW_PRECOND_MG ? "mg" : "v0";
        const char *method = tw_method_name(p->method), *integ = tw_integrator_name(p->integrator);
        tw_world *w = tw_world_create(g->mesh, &d);
        if (!w) {
            row_failed("graded-sphere", method, integ, v);
            continue;
        }
        tw_collider_def floor = tw_default_collider_def();
        floor.point[2] = lowest - 0.02;
        tw_status st = tw_world_add_collider(w, &floor);
        if (st == TW_OK)
            st = tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                      g->hanging_weights);
        const int steps = explicit_ ? 60 : GRADED_STEPS;
        int touched = 0;
        for (int k = 0; k < steps && st == TW_OK; k++) {
            tw_step_stats ss;
            st = tw_world_step(w, &ss);
            touched += ss.contacts > 0;
        }
        /* the explicit run's 60 short steps end before the sphere lands */
        row("graded-sphere", method, integ, v, world_hash(w),
            st != TW_OK ? tw_status_name(st) : touched || explicit_ ? "ok" : "no-touch");
        tw_world_destroy(w);
    }
    tw_graded_mesh_destroy(g);
    return 0;
}

/* ---- contact between bodies (host/contact_bodies.c) */

/* Two cubes of the body-contact tests (demo_stack_mesh: 0.2 m, 3^3 cells,
 * the upper one turned 0.3 rad, 1 mm gaps), E 1e5 Pa, on the floor,
 * friction 0.5 between the bodies and on the floor, 30 steps of 1/60 s,
 * implicit Euler and BDF2. The row hashes x and v and the body contacts at
 * the end. */
static int bodies_rows(void)
{
    tw_mesh *m = demo_stack_mesh(2, 0.2, 3, 0.3, 0, 0.001);
    if (!m) {
        fprintf(stderr, "tw_state_hash: bodies-stack: %s\n", tw_last_error());
        return 1;
    }
    for (int integ = 0; integ < TW_EXPLICIT_NEWMARK; integ++) {
        tw_world_def d = tw_default_world_def();
        d.backend = TW_BACKEND_CPU;
        d.youngs_modulus = 1e5;
        d.dt = 1.0 / 60;
        d.integrator = (tw_integrator)integ;
        d.threads = g_threads;
        tw_collider_def floor = tw_default_collider_def();
        const char *method = tw_method_name(d.method), *in = tw_integrator_name(d.integrator);
        tw_world *w = demo_bodies_world(m, &d, &floor);
        if (!w) {
            row_failed("bodies-stack", method, in, "v0");
            continue;
        }
        tw_status st = tw_world_set_body_friction(w, 0.5);
        int touched = 0;
        for (int k = 0; k < 30 && st == TW_OK; k++) {
            st = tw_world_step(w, NULL);
            touched += tw_world_body_stats(w).contacts > 0;
        }
        const int contacts = tw_world_body_stats(w).contacts;
        uint64_t h = fnv(world_hash(w), &contacts, sizeof contacts);
        row("bodies-stack", method, in, "v0", h, st != TW_OK ? tw_status_name(st) : touched ? "ok" : "no-touch");
        tw_world_destroy(w);
    }
    tw_mesh_destroy(m);
    return 0;
}

/* ---- a moving tool (a kinematic collider) */

/* The tool scene (demo_tool_block_mesh(6): a 0.2 m block, free on the floor
 * with friction 0.5) with the sphere tool (4 cm, friction 0.5) driven along
 * a path (tw_world_move_collider): 3 mm into the top over 0.1 s, then along
 * x at 0.2 m/s, dragging the block, TOOL_STEPS steps of 0.01 s: v0 implicit
 * Euler, v1 BDF2, v2 a capsule turning as it goes, v3 the multigrid
 * preconditioner, v4 explicit Newmark (60 steps of its Courant step). The
 * row hashes x, v, the force on the tool and the tool's state. */
#define TOOL_STEPS 30
static void tool_path(double t, const double c0[3], double c[3])
{
    c[0] = c0[0] + (t > 0.1 ? 0.2 * (t - 0.1) : 0);
    c[1] = c0[1];
    c[2] = c0[2] - 0.003 * (t < 0.1 ? t / 0.1 : 1);
}

static int tool_rows(void)
{
    tw_mesh *m = demo_tool_block_mesh(6);
    if (!m) {
        fprintf(stderr, "tw_state_hash: tool-drag: %s\n", tw_last_error());
        return 1;
    }
    for (int variant = 0; variant < 5; variant++) {
        tw_world_def d = tw_default_world_def();
        d.backend = TW_BACKEND_CPU;
        d.youngs_modulus = 1e5;
        d.dt = variant == 4 ? 0.0 : 0.01;
        d.integrator = variant == 1 ? TW_BDF2 : variant == 4 ? TW_EXPLICIT_NEWMARK : TW_IMPLICIT_EULER;
        d.precond = variant == 3 ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
        d.threads = g_threads;
        char v[8];
        snprintf(v, sizeof v, "v%d", variant);
        const char *method = tw_method_name(d.method), *in = tw_integrator_name(d.integrator);
        tw_world *w = demo_tool_block_world(m, &d, 0);
        if (!w) {
            row_failed("tool-drag", method, in, v);
            continue;
        }
        tw_collider_def tool = demo_tool_sphere(0.04, 0, 0.5);
        if (variant == 2) {
            tool.kind = TW_COLLIDER_CAPSULE;
            tool.center[0] -= 0.05;
            tool.end[0] += 0.05;
        }
        tw_collider_def floor = tw_default_collider_def();
        tw_status st = tw_world_add_collider(w, &tool);
        if (st == TW_OK) st = tw_world_add_collider(w, &floor);
        const double dt = tw_world_dt(w);
        const int steps = variant == 4 ? 60 : TOOL_STEPS;
        uint64_t h = FNV_START;
        int touched = 0;
        for (int k = 0; k < steps && st == TW_OK; k++) {
            double c[3], e[3];
            tool_path((k + 1) * dt, tool.center, c);
            tool_path((k + 1) * dt, tool.end, e);
            if (variant == 2) e[1] += 0.1 * (k + 1) * dt; /* the capsule turns */
            st = tw_world_move_collider(w, 0, c, variant == 2 ? e : NULL);
            if (st == TW_OK) st = tw_world_step(w, NULL);
            double f[3] = {0, 0, 0};
            if (st == TW_OK) st = tw_world_collider_force(w, 0, f);
            touched += f[0] != 0 || f[1] != 0 || f[2] != 0;
            h = fnv(h, f, sizeof f);
        }
        tw_collider_def now;
        if (st == TW_OK) st = tw_world_get_collider(w, 0, &now);
        h = fnv(h, &now.center, sizeof now.center);
        h = fnv(h, &now.end, sizeof now.end);
        h = fnv(h, &now.velocity, sizeof now.velocity);
        const uint64_t hw = world_hash(w);
        h = fnv(h, &hw, sizeof hw);
        row("tool-drag", method, in, v, h, st != TW_OK ? tw_status_name(st) : touched ? "ok" : "no-touch");
        tw_world_destroy(w);
    }
    tw_mesh_destroy(m);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*run)(void); } parts[] = {
        {"world", world_rows}, {"front", front_rows}, {"multires", multires_rows},
        {"hier", hier_rows}, {"mg", mg_rows}, {"graded", graded_rows}, {"bodies", bodies_rows},
        {"tool", tool_rows},
    };
    const size_t nparts = sizeof parts / sizeof parts[0];
    const char *only = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            g_threads = atoi(argv[++a]);
        else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc)
            only = argv[++a];
        else
            only = "";
    }
    int known = !only;
    for (size_t p = 0; p < nparts; p++) known |= only && strcmp(only, parts[p].name) == 0;
    if (!known || g_threads < 1 || g_threads > TW_MAX_THREADS) {
        fprintf(stderr, "usage: tw_state_hash [--threads N (1 .. %d)] [--only PART]; PART one of", TW_MAX_THREADS);
        for (size_t p = 0; p < nparts; p++) fprintf(stderr, " %s", parts[p].name);
        fprintf(stderr, "\n");
        return 2;
    }
    for (size_t p = 0; p < nparts; p++)
        if ((!only || strcmp(only, parts[p].name) == 0) && parts[p].run())
            return 1;
    return 0;
}
