/* The world: its lifecycle (defaults, create, destroy), setters and state
 * access. The time step and its integrators are in step.c, rotations, forces
 * and system matrices in forces.c, energies in energy.c, the name tables in
 * names.c; struct tw_world (world.h) is read and written in host/ only.
 *
 * ARCHITECTURE
 * - A new force model (a tw_method) is a per-vertex or per-element body in
 *   hd/step.h (its stress and tangent in hd/element.h), called from the
 *   loops of forces.c and from kernels/cuda_kernels.cu, with its name in
 *   names.c.
 * - A new integrator (a tw_integrator) is a step function in step.c beside
 *   implicit_solve and newmark_step, chosen in tw_world_step, with its
 *   per-vertex arithmetic in hd/integrator.h for kernels/cuda_integrators.cu
 *   too.
 * - A new kernel starts as a TW_HD loop body over a plain view in hd/ (like
 *   hd/step.h's tw_step_view) that a host/ loop calls per item and a
 *   kernels/ kernel calls on one thread; the kernels never see tw_world, the
 *   CUDA world gets plain structs per step (kernels/cuda_world.h). */
#include "world.h"
#include "hd/contact.h" /* TW_CONTACT_NONE */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "bsr_half.h"
#include "contact_bodies.h"
#include "hd/element.h"
#include "error.h"
#include "hd/math3.h"
#include "mesh.h"
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#include "fem_pattern_gpu.h"
#endif

tw_world_def tw_default_world_def(void)
{
    tw_world_def d;
    memset(&d, 0, sizeof d);
    d.method = TW_COROT_ELEMENT;
    d.backend = TW_BACKEND_CPU;
    d.youngs_modulus = 1e6;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    d.damping_mass = 0;
    d.damping_stiffness = 0.01;
    d.cg_tolerance = 1e-4;
    d.cg_max_iterations = 1000;
    d.cg_fixed_iterations = 0;
    d.warm_start = 1;
    d.ghost_force_correction = 1;
    d.warp_system = TW_WARP_SYSTEM_SYMMETRIC;
    d.newton_iterations = 0; /* automatic: tw_world_newton_iterations */
    d.newton_tolerance = 1e-3;
    d.turn_substeps = 0;
    d.threads = 0;
    d.energy_check = 1;
    d.precond = TW_PRECOND_AUTO;
    d.spmv = TW_SPMV_FULL;
    return d;
}

tw_static_def tw_default_static_def(void)
{
    tw_static_def d;
    d.load_steps = 10;
    d.max_newton = 30;
    d.tolerance = sizeof(tw_real) == 8 ? 1e-7 : 2e-4;
    d.cg_tolerance = 1e-10; /* the Newton systems are solved in double */
    d.cg_max_iterations = 20000;
    d.verbose = 0;
    return d;
}

tw_bsr tw_world_bsr(const tw_world *w)
{
    tw_bsr b;
    b.n = w->fem.n;
    b.nnzb = w->fem.nnzb;
    b.row_ptr = w->fem.row_ptr;
    b.col = w->fem.col;
    b.diag = w->fem.diag;
    b.val = w->A;
    b.threads = w->def.threads;
    return b;
}

/* BDF2 keeps the energy of a swinging body where implicit Euler dissipates
 * it, so the error of one linearisation around the last rotations (the
 * system matrix lacks the rotations' derivative) is no longer hidden: with
 * one linearisation an undamped corotated bar gains energy from the first
 * swings on and blows up after ~1000 steps at dt 0.01, while a second
 * Newton iteration keeps it below its start over 1e4 steps (bench/soak.sh).
 * Implicit Euler keeps Müller's single linearisation. The CUDA backend
 * keeps one by default (its step stays one graph launch) and runs more when
 * asked (newton_iterations > 1: host-driven, kernels/cuda_world.cu). */
int tw_world_newton_iterations(const tw_world *w)
{
    /* body contact is solved coupled in the contact passes of one
     * linearisation; a Newton iteration after them (newton_refine's solve)
     * would solve without the body contacts' coupling */
    if (w->bodies) return 1;
    if (w->def.newton_iterations > 0) return w->def.newton_iterations;
    if (w->def.integrator == TW_BDF2 && w->def.method != TW_LINEAR && !w->cuda) return 2;
    return 1;
}

int tw_world_warp_turn_test(const tw_world *w)
{
    /* warp-edge keeps its single linearisation: hd/step.h TW_WARP_TURN */
    return w->def.method == TW_WARP_VERTEX && w->def.newton_iterations == 0 &&
           w->def.integrator != TW_EXPLICIT_NEWMARK && tw_world_newton_iterations(w) == 1 && !w->bodies;
}

int tw_world_threads(const tw_world *w)
{
#ifdef _OPENMP
    return TW_THREADS(w->def.threads);
#else
    (void)w;
    return 1;
#endif
}

tw_step_view tw_world_view(const tw_world *w)
{
    const tw_fem *f = &w->fem;
    tw_step_view s;
    memset(&s, 0, sizeof s);
    s.n = f->n;
    s.nt = f->nt;
    s.tets = f->tets;
    s.row_ptr = f->row_ptr;
    s.col = f->col;
    s.vt_ptr = f->vt_ptr;
    s.vt = f->vt;
    s.edge_nbr = w->edge_nbr;
    s.X = f->X;
    s.g = f->g;
    s.vol = f->vol;
    s.lam = f->lam;
    s.mu = f->mu;
    s.K = f->K;
    s.mass = f->mass;
    s.R = w->R;
    s.S = w->S;
    s.fe = w->fe;
    s.fext = w->fext;
    for (int c = 0; c < 3; c++) {
        s.gravity[c] = w->def.gravity[c];
        s.spring_anchor[c] = w->spring_anchor[c];
    }
    s.spring_vertex = w->spring_vertex;
    s.spring_k = w->spring_k;
    s.cons = w->cons;
    s.target = w->target;
    return s;
}

static tw_status check_def(const tw_world_def *d)
{
    if ((unsigned)d->method >= TW_METHOD_COUNT) return tw_fail(TW_ERR_INVALID, "unknown method %d", (int)d->method);
    if ((unsigned)d->integrator >= TW_INTEGRATOR_COUNT)
        return tw_fail(TW_ERR_INVALID, "unknown integrator %d", (int)d->integrator);
    int auto_dt = d->integrator == TW_EXPLICIT_NEWMARK && d->dt == 0;
    if (!auto_dt && (!(d->dt > 0) || !isfinite(d->dt)))
        return tw_fail(TW_ERR_INVALID, "time step dt = %g s: it must be finite and > 0%s", d->dt,
                       d->integrator == TW_EXPLICIT_NEWMARK ? " (or 0 for the automatic explicit step)" : "");
    if (!(d->damping_mass >= 0) || !(d->damping_stiffness >= 0))
        return tw_fail(TW_ERR_INVALID, "Rayleigh damping (%g, %g) must be finite and >= 0", d->damping_mass, d->damping_stiffness);
    if (!(d->cg_tolerance > 0)) return tw_fail(TW_ERR_INVALID, "CG tolerance %g must be > 0", d->cg_tolerance);
    if (d->contact_passes < 0)
        return tw_fail(TW_ERR_INVALID, "contact passes %d must be >= 0 (0: the default, %d)", d->contact_passes,
                       TW_CONTACT_PASSES);
    if ((unsigned)d->precond > TW_PRECOND_AUTO) return tw_fail(TW_ERR_INVALID, "unknown preconditioner %d", (int)d->precond);
    if ((unsigned)d->spmv > TW_SPMV_HALF) return tw_fail(TW_ERR_INVALID, "unknown SpMV form %d", (int)d->spmv);
    if ((unsigned)d->collider_models > 1)
        return tw_fail(TW_ERR_INVALID, "collider models %d must be 0 (off) or 1", d->collider_models);
    if (!(d->collider_model_tolerance >= 0) || !(d->collider_model_tolerance < 1))
        return tw_fail(TW_ERR_INVALID, "collider model tolerance %g must be in [0, 1) (0: the CG tolerance)",
                       d->collider_model_tolerance);
    if ((unsigned)d->turn_substeps > 1)
        return tw_fail(TW_ERR_INVALID, "turn substeps %d must be 0 (off) or 1", d->turn_substeps);
    if (d->cg_max_iterations < 1) return tw_fail(TW_ERR_INVALID, "CG iteration cap %d must be >= 1", d->cg_max_iterations);
    if (d->newton_iterations < 0 || !(d->newton_tolerance > 0))
        return tw_fail(TW_ERR_INVALID, "Newton iterations %d must be >= 0 (0: automatic) and tolerance %g > 0",
                       d->newton_iterations, d->newton_tolerance);
    for (int c = 0; c < 3; c++)
        if (!isfinite(d->gravity[c])) return tw_fail(TW_ERR_INVALID, "gravity component %d is %g", c, d->gravity[c]);
    if (d->threads < 0 || d->threads > TW_MAX_THREADS)
        return tw_fail(TW_ERR_INVALID, "threads %d: must be from 0 (all processors) to %d", d->threads, TW_MAX_THREADS);
    return TW_OK;
}

/* Linear tetrahedra lock as nu approaches 1/2: the volumetric stiffness
 * lambda grows without bound against the shear modulus mu, the body turns
 * stiffer than the material, and at large steps the linearisation's error
 * grows with lambda (energy rises). Said once per world. */
static void warn_near_incompressible(const tw_world_def *d, int nt)
{
    double nu = d->poisson_ratio;
    if (d->element_poisson)
        for (int e = 0; e < nt; e++)
            if (d->element_poisson[e] > nu) nu = d->element_poisson[e];
    if (nu > 0.45)
        fprintf(stderr,
                "tetwarp: warning: Poisson ratio %g: linear tetrahedra lock near incompressibility (lambda = %.3g "
                "x mu): the body is stiffer than the material and large steps gain energy; nu <= 0.45 is safe\n",
                nu, 2 * nu / (1 - 2 * nu));
}

/* warp-edge: per vertex the first neighbour j and the neighbour k that makes
 * the widest angle with edge (i,j) at rest — fixed once, so the frame is
 * deterministic. */
static void choose_edge_neighbours(tw_world *w)
{
    const tw_fem *f = &w->fem;
    for (int i = 0; i < f->n; i++) {
        int j = -1, k = -1;
        tw_v3 Xi = tw_v3_load(f->X + 3 * (size_t)i), e1 = tw_v3_make(0, 0, 0);
        for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++)
            if (f->col[b] != i) { j = f->col[b]; break; }
        if (j >= 0) {
            e1 = tw_v3_sub(tw_v3_load(f->X + 3 * (size_t)j), Xi);
            e1 = tw_v3_scale(e1, 1 / tw_v3_norm(e1));
            tw_real best = -1;
            for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) {
                int c = f->col[b];
                if (c == i || c == j) continue;
                tw_v3 e2 = tw_v3_sub(tw_v3_load(f->X + 3 * (size_t)c), Xi);
                tw_real s = tw_v3_norm(tw_v3_cross(e1, e2)) / tw_v3_norm(e2);
                if (s > best) { best = s; k = c; }
            }
        }
        if (k < 0) j = -1;
        w->edge_nbr[2 * i] = j;
        w->edge_nbr[2 * i + 1] = k;
    }
}

/* Explicit Newmark: dt = 0 picks half the Courant estimate; a dt above the
 * estimate is refused, since the explicit update would blow up. Half, not
 * 0.9: the estimate is for the undeformed linear material, and Green strain
 * stiffens under stretch and impacts compress elements (measured: a soft green
 * cube diverged at 0.9 and 0.8 of the estimate, ran at 0.6). */
static tw_status check_explicit_dt(const tw_world *w, double *dt)
{
    double limit = w->fem.courant_dt;
    if (*dt == 0) {
        *dt = 0.5 * limit;
        return TW_OK;
    }
    if (*dt > limit)
        return tw_fail(TW_ERR_INVALID,
                       "time step dt = %g s exceeds the explicit Newmark stability limit %g s (Courant: smallest element "
                       "altitude / dilatational wave speed sqrt((lambda + 2 mu) / rho)); use dt <= %g s, dt = 0 for "
                       "the automatic step, or an implicit integrator",
                       *dt, limit, limit);
    return TW_OK;
}

#ifdef TW_HAVE_CUDA
/* The device copy of w (kernels/cuda_world.h): its arrays, read during the call. */
static tw_cuda_world *cuda_world_create(const tw_world *w)
{
    const tw_fem *f = &w->fem;
    tw_cuda_world_init in;
    memset(&in, 0, sizeof in);
    in.n = f->n;
    in.nt = f->nt;
    in.nnzb = f->nnzb;
    in.tets = f->tets; in.row_ptr = f->row_ptr; in.col = f->col; in.diag = f->diag;
    in.contrib_ptr = f->contrib_ptr; in.contrib = f->contrib; in.vt_ptr = f->vt_ptr; in.vt = f->vt;
    in.edge_nbr = w->edge_nbr;
    in.g = f->g; in.vol = f->vol; in.lam = f->lam; in.mu = f->mu; in.K = f->K; in.mass = f->mass; in.X = f->X;
    in.x = w->x; in.v = w->v; in.fext = w->fext; in.target = w->target;
    in.cons = w->cons;
    in.cnormal = w->cnormal; in.cdist = w->cdist; in.cmu = w->cmu; in.cimpulse = w->cimpulse; in.cfric = w->cfric;
    in.colliders = w->colliders;
    in.ncolliders = w->ncolliders;
    in.integrator = w->def.integrator;
    return tw_cuda_world_create(&in);
}
#endif

/* The CPU PCG's product from the symmetric half (host/bsr_half.h) when
 * TW_SPMV=half or def.spmv asks for it, refused where the step's solver is
 * warp_system bicgstab's BiCGStab on the non-symmetric R_i K_ij R_i^T. */
static int spmv_half(const tw_world_def *d)
{
    if (!tw_spmv_half_wanted(d->spmv)) return 0;
    if ((d->method == TW_WARP_VERTEX || d->method == TW_WARP_EDGE) && d->warp_system == TW_WARP_SYSTEM_BICGSTAB) {
        fprintf(stderr, "tetwarp: the symmetric-half SpMV is refused: %s with warp_system bicgstab solves the "
                        "non-symmetric system R_i K_ij R_i^T by BiCGStab, which reads the full matrix\n",
                tw_method_name(d->method));
        return 0;
    }
    return 1;
}

tw_world *tw_world_create(const tw_mesh *mesh, const tw_world_def *def)
{
    tw_clear_error();
    if (!mesh) { tw_fail(TW_ERR_INVALID, "tw_world_create: no mesh"); return NULL; }
    tw_world_def d = def ? *def : tw_default_world_def();
    if (check_def(&d) != TW_OK) return NULL;
    /* body contact runs with the implicit integrators: explicit Newmark is
     * refused with the reason. auto picks the CPU for several bodies: the
     * CUDA backend's body contact (kernels/cuda_bodies.cu) runs only when
     * asked, as it has not been verified on a GPU; what it lacks it refuses
     * at the first step (tw_cuda_bodies_check) */
    if (mesh->nbodies > 1 && d.backend == TW_BACKEND_AUTO) d.backend = TW_BACKEND_CPU;
    if (mesh->nbodies > 1 && d.integrator == TW_EXPLICIT_NEWMARK) {
        tw_fail(TW_ERR_UNSUPPORTED, "a mesh of %d bodies (tw_mesh_merge): body contact runs with the implicit "
                "integrators, not with explicit-newmark (use implicit-euler or bdf2)", mesh->nbodies);
        return NULL;
    }
    /* backend: cuda when asked (an error when it cannot be had), auto picks
     * cuda when a device is usable */
#ifdef TW_HAVE_CUDA
    char why[256] = "";
    int usable = tw_cuda_usable(why, sizeof why);
    if (d.backend == TW_BACKEND_CUDA && !usable) {
        tw_fail(TW_ERR_UNSUPPORTED, "backend cuda: %s (backend 'cpu' or 'auto' runs on the CPU)", why);
        return NULL;
    }
    if (d.backend == TW_BACKEND_AUTO) d.backend = usable ? TW_BACKEND_CUDA : TW_BACKEND_CPU;
#else
    if (d.backend == TW_BACKEND_CUDA) {
        tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend is not available in this build: nvcc was not found when it was "
                                    "configured (backend 'cpu' or 'auto' runs on the CPU)");
        return NULL;
    }
    if (d.backend == TW_BACKEND_AUTO) d.backend = TW_BACKEND_CPU;
#endif
    tw_world *w = tw_calloc(1, sizeof *w, "world");
    if (!w) return NULL;
    w->mesh = mesh;
    w->def = d;
    /* multigrid pays per step from about 1,300 tets on (a compact cube;
     * earlier on bars and on sliver meshes); below, a V-cycle's set-up and
     * cost exceed the block-Jacobi iterations it saves. tw_world_get_def
     * shows the choice. */
    if (w->def.precond == TW_PRECOND_AUTO)
        w->def.precond = tw_mesh_tet_count(mesh) >= TW_PRECOND_MG_MIN_TETS && w->def.backend != TW_BACKEND_CUDA
                             ? TW_PRECOND_MG
                             : TW_PRECOND_JACOBI; /* the device's mg only when asked: not run on a GPU yet */
    w->def.element_youngs = w->def.element_poisson = w->def.element_density = NULL; /* not kept */
    w->spring_vertex = -1;
    tw_fem_pattern_fn pattern = NULL; /* on the CPU */
#ifdef TW_HAVE_CUDA
    if (d.backend == TW_BACKEND_CUDA && mesh->nt >= TW_GPU_PATTERN_MIN_TETS) pattern = tw_fem_pattern_gpu;
#endif
    if (tw_fem_build_using(&w->fem, mesh, d.youngs_modulus, d.poisson_ratio, d.density, d.element_youngs,
                           d.element_poisson, d.element_density, pattern) != TW_OK) {
        free(w);
        return NULL;
    }
    if (d.integrator == TW_EXPLICIT_NEWMARK && check_explicit_dt(w, &w->def.dt) != TW_OK) {
        tw_fem_free(&w->fem);
        free(w);
        return NULL;
    }
    size_t n = (size_t)w->fem.n, nt = (size_t)w->fem.nt, rn = n > nt ? n : nt;
    w->x = tw_malloc(sizeof(tw_real) * 3 * n, "positions");
    w->v = tw_calloc(3 * n, sizeof(tw_real), "velocities");
    w->fext = tw_calloc(3 * n, sizeof(tw_real), "external forces");
    w->target = tw_malloc(sizeof(tw_real) * 3 * n, "kinematic targets");
    w->cons = tw_calloc(n, 1, "constraints");
    w->R = tw_calloc(9 * rn, sizeof(tw_real), "rotations");
    w->S = tw_calloc(TW_GREEN_PACK * nt, sizeof(tw_real), "element packs"); /* the largest pack: hd/element.h */
    w->fe = tw_calloc(12 * nt, sizeof(tw_real), "element forces");
    w->f = tw_calloc(3 * n, sizeof(tw_real), "elastic forces");
    w->rhs = tw_calloc(3 * n, sizeof(tw_real), "right-hand side");
    w->vnew = tw_calloc(3 * n, sizeof(tw_real), "new velocities");
    w->A = tw_calloc(9 * (size_t)w->fem.nnzb, sizeof(tw_real), "system matrix");
    w->edge_nbr = tw_malloc(sizeof(int) * 2 * n, "edge frames");
    w->acc = tw_calloc(3 * n, sizeof(tw_real), "accelerations");
    w->xprev = tw_calloc(3 * n, sizeof(tw_real), "BDF2 history");
    w->vprev = tw_calloc(3 * n, sizeof(tw_real), "BDF2 history");
    w->xbase = tw_calloc(3 * n, sizeof(tw_real), "BDF2 history");
    w->vbase = tw_calloc(3 * n, sizeof(tw_real), "BDF2 history");
    w->fcons = tw_calloc(n, 1, "contact constraints");
    w->cnormal = tw_calloc(3 * n, sizeof(tw_real), "contact normals");
    w->cdist = tw_calloc(n, sizeof(tw_real), "contact distances");
    w->cimpulse = tw_calloc(n, sizeof(tw_real), "contact impulses");
    w->cimpulse_start = tw_calloc(n, sizeof(tw_real), "contact impulses");
    w->cmu = tw_calloc(n, sizeof(tw_real), "contact friction");
    w->cfric = tw_calloc(n, sizeof(tw_real), "contact friction damping");
    w->cfprev = tw_calloc(2 * n, sizeof(tw_real), "contact friction history");
    w->cslip = tw_calloc(3 * n, sizeof(tw_real), "contact slip friction");
    w->ccol = tw_malloc(n, "contact colliders");
    w->cvel = tw_calloc(3 * n, sizeof(tw_real), "contact collider velocities");
    w->energy_step = -1;
    w->energy_above = -1;
    w->cmodel_step = -1;
    w->newton = tw_calloc(4 * 3 * n, sizeof(tw_real), "Newton vectors");
    if (!w->x || !w->v || !w->fext || !w->target || !w->cons || !w->R || !w->S || !w->fe || !w->f || !w->rhs ||
        !w->vnew || !w->A || !w->edge_nbr || !w->acc || !w->xprev || !w->vprev || !w->xbase || !w->vbase ||
        !w->fcons || !w->cnormal || !w->cdist || !w->cimpulse || !w->cimpulse_start || !w->cmu || !w->cfric || !w->cfprev || !w->cslip || !w->ccol || !w->cvel || !w->newton || tw_solver_work_init(&w->work, (int)n) != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    memcpy(w->x, w->fem.X, sizeof(tw_real) * 3 * n);
    memcpy(w->target, w->fem.X, sizeof(tw_real) * 3 * n);
    memset(w->ccol, TW_CONTACT_NONE, n);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (size_t i = 0; i < n; i++) {
        if (mesh->unused && mesh->unused[i]) tw_world_set_cons(w, (int)i, TW_PINNED); /* no mass, no stiffness */
        w->mass_total += w->fem.mass[i]; /* in vertex order */
        for (int c = 0; c < 3; c++) {
            if (mesh->X[3 * i + c] < lo[c]) lo[c] = mesh->X[3 * i + c];
            if (mesh->X[3 * i + c] > hi[c]) hi[c] = mesh->X[3 * i + c];
        }
    }
    w->size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
    choose_edge_neighbours(w);
    if (mesh->nbodies > 1 && !(w->bodies = tw_bodies_create(mesh, w->x, w->fem.mass, w->size))) {
        tw_world_destroy(w);
        return NULL;
    }
#ifdef TW_HAVE_CUDA
    if (w->def.backend == TW_BACKEND_CUDA && !(w->cuda = cuda_world_create(w))) {
        tw_world_destroy(w);
        return NULL;
    }
#endif
    w->host_dirty = 1;
    warn_near_incompressible(&d, tw_mesh_tet_count(mesh));
    w->work.half = spmv_half(&d);
    return w;
}

void tw_world_destroy(tw_world *w)
{
    if (!w) return;
#ifdef TW_HAVE_CUDA
    tw_cuda_world_destroy(w->cuda);
#endif
    tw_fem_free(&w->fem);
    free(w->x); free(w->v); free(w->fext); free(w->target); free(w->cons); free(w->R); free(w->S);
    free(w->fe); free(w->f); free(w->rhs); free(w->vnew); free(w->A); free(w->edge_nbr);
    free(w->acc); free(w->xprev); free(w->vprev); free(w->xbase); free(w->vbase);
    free(w->fcons); free(w->cnormal); free(w->cdist); free(w->cimpulse); free(w->cimpulse_start); free(w->cmu); free(w->cfric); free(w->cfprev); free(w->cslip); free(w->ccol); free(w->cvel); free(w->newton);
    for (int k = 0; k < TW_MAX_COLLIDERS; k++) free(w->cmodel_resp[k]);
    free(w->cmodel_scratch);
    free(w->cmodel_A);
    free(w->cmodel_curv);
    free(w->rot_x);
    free(w->energy_snap);
    free(w->turn_R);
    free(w->xres); free(w->xres_next);
    tw_hanging_free(w);
    tw_bodies_free(w->bodies);
    tw_solver_work_free(&w->work);
    tw_amg_free(w->amg);
    free(w);
}

const tw_world_def *tw_world_get_def(const tw_world *w) { return &w->def; }

tw_status tw_world_set_method(tw_world *w, tw_method m)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if ((unsigned)m >= TW_METHOD_COUNT) return tw_fail(TW_ERR_INVALID, "unknown method %d", (int)m);
    w->def.method = m;
    w->has_acc = w->has_history = 0;
    return TW_OK;
}

tw_status tw_world_set_dt(tw_world *w, double dt)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (w->def.integrator == TW_EXPLICIT_NEWMARK) {
        if (!(dt >= 0) || !isfinite(dt)) return tw_fail(TW_ERR_INVALID, "time step dt = %g s: it must be finite and >= 0", dt);
        if (check_explicit_dt(w, &dt) != TW_OK) return TW_ERR_INVALID;
    } else if (!(dt > 0) || !isfinite(dt)) {
        return tw_fail(TW_ERR_INVALID, "time step dt = %g s: it must be finite and > 0", dt);
    }
    w->def.dt = dt;
    w->has_history = 0; /* BDF2's history assumes a constant step */
    return TW_OK;
}

double tw_world_courant_dt(const tw_world *w) { return w->fem.courant_dt; }
double tw_world_dt(const tw_world *w) { return w->def.dt; }

static tw_status check_vertex(const tw_world *w, int v)
{
    if (v < 0 || v >= w->fem.n) return tw_fail(TW_ERR_INVALID, "vertex %d out of range [0, %d)", v, w->fem.n);
    return TW_OK;
}

tw_status tw_world_set_constraint(tw_world *w, int v, tw_constraint c)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (check_vertex(w, v) != TW_OK) return TW_ERR_INVALID;
    if ((unsigned)c > TW_KINEMATIC) return tw_fail(TW_ERR_INVALID, "unknown constraint %d", (int)c);
    tw_world_set_cons(w, v, (unsigned char)c);
    if (c == TW_KINEMATIC) {
        tw_status s = tw_world_fetch(w, 1, 0); /* the target starts at the current position */
        if (s != TW_OK) return s;
        memcpy(w->target + 3 * (size_t)v, w->x + 3 * (size_t)v, 3 * sizeof(tw_real));
    }
    return TW_OK;
}

double tw_world_total_mass(const tw_world *w) { return w->mass_total; }

/* The total while no vertex is constrained and the mesh is one body. */
double tw_contact_patch_mass(const tw_world *w) { return w->bodies || w->constrained ? 0 : w->mass_total; }

tw_constraint tw_world_get_constraint(const tw_world *w, int v)
{
    return (v >= 0 && v < w->fem.n) ? (tw_constraint)w->cons[v] : TW_FREE;
}

tw_status tw_world_set_target(tw_world *w, int v, const double pos[3])
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (check_vertex(w, v) != TW_OK) return TW_ERR_INVALID;
    for (int c = 0; c < 3; c++) w->target[3 * (size_t)v + c] = (tw_real)pos[c];
    return TW_OK;
}

int tw_world_pin_where(tw_world *w, int axis, int less, double value)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (axis < 0 || axis > 2) return 0;
    int count = 0;
    for (int i = 0; i < w->fem.n; i++) {
        double c = w->mesh->X[3 * (size_t)i + axis];
        if (less ? c < value : c > value) {
            tw_world_set_cons(w, i, TW_PINNED);
            count++;
        }
    }
    return count;
}

tw_status tw_world_set_force(tw_world *w, int v, const double f[3])
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (check_vertex(w, v) != TW_OK) return TW_ERR_INVALID;
    for (int c = 0; c < 3; c++) {
        if (!isfinite(f[c])) return tw_fail(TW_ERR_INVALID, "force on vertex %d has a non-finite component %g", v, f[c]);
        w->fext[3 * (size_t)v + c] = (tw_real)f[c];
    }
    return TW_OK;
}

void tw_world_clear_forces(tw_world *w)
{
    w->host_dirty = 1;
    memset(w->fext, 0, sizeof(tw_real) * 3 * (size_t)w->fem.n);
}

tw_status tw_world_set_spring(tw_world *w, int v, const double anchor[3], double k)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (v < 0) { w->spring_vertex = -1; return TW_OK; }
    if (check_vertex(w, v) != TW_OK) return TW_ERR_INVALID;
    if (!(k >= 0) || !isfinite(k)) return tw_fail(TW_ERR_INVALID, "spring stiffness %g N/m must be finite and >= 0", k);
    w->spring_vertex = v;
    w->spring_k = k;
    for (int c = 0; c < 3; c++) w->spring_anchor[c] = anchor[c];
    return TW_OK;
}


int tw_world_vertex_count(const tw_world *w) { return w->fem.n; }
int tw_world_tet_count(const tw_world *w) { return w->fem.nt; }
long tw_world_step_index(const tw_world *w) { return w->step; }
double tw_world_time(const tw_world *w) { return w->time; }
tw_status tw_world_fetch(const tw_world *w, int positions, int velocities)
{
#ifdef TW_HAVE_CUDA
    tw_world *mw = (tw_world *)w; /* only the host cache of the device state changes */
    int x = positions && w->cuda && w->host_x_stale, v = velocities && w->cuda && w->host_v_stale;
    if (!x && !v) return TW_OK;
    tw_status s = tw_cuda_world_download(w->cuda, x ? mw->x : NULL, v ? mw->v : NULL);
    if (s != TW_OK) {
        fprintf(stderr, "tetwarp: copying the state back from the device failed: %s\n", tw_last_error());
        return s;
    }
    if (x) mw->host_x_stale = 0;
    if (v) mw->host_v_stale = 0;
#else
    (void)w; (void)positions; (void)velocities;
#endif
    return TW_OK;
}

const tw_real *tw_world_positions(const tw_world *w) { return tw_world_fetch(w, 1, 0) == TW_OK ? w->x : NULL; }
const tw_real *tw_world_velocities(const tw_world *w) { return tw_world_fetch(w, 0, 1) == TW_OK ? w->v : NULL; }
const tw_real *tw_world_vertex_mass(const tw_world *w) { return w->fem.mass; }

tw_status tw_world_set_positions(tw_world *w, const tw_real *x)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    int bad = tw_first_nonfinite(x, 3 * (size_t)w->fem.n);
    if (bad >= 0) return tw_fail(TW_ERR_INVALID, "position of vertex %d is not finite", bad);
    memcpy(w->x, x, sizeof(tw_real) * 3 * (size_t)w->fem.n);
    w->host_x_stale = 0; /* the host's copy is the truth again (v may stay on the device) */
    tw_world_restart(w);
    return TW_OK;
}

tw_status tw_world_set_velocities(tw_world *w, const tw_real *v)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    int bad = tw_first_nonfinite(v, 3 * (size_t)w->fem.n);
    if (bad >= 0) return tw_fail(TW_ERR_INVALID, "velocity of vertex %d is not finite", bad);
    memcpy(w->v, v, sizeof(tw_real) * 3 * (size_t)w->fem.n);
    w->host_v_stale = 0;
    tw_world_restart(w);
    return TW_OK;
}

void tw_world_restart(tw_world *w)
{
    w->has_acc = w->has_history = 0;
    memset(w->cimpulse, 0, sizeof(tw_real) * (size_t)w->fem.n);
    w->impulses_zeroed = 1;
    w->cmodel_step = -1; /* the tool models describe the replaced state */
    tw_bodies_reset(w->bodies);
}

void tw_world_reset(tw_world *w)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    size_t n3 = 3 * (size_t)w->fem.n;
    memcpy(w->x, w->fem.X, sizeof(tw_real) * n3);
    memset(w->v, 0, sizeof(tw_real) * n3);
    w->host_x_stale = w->host_v_stale = 0;
    w->step = 0;
    w->time = 0;
    tw_world_restart(w);
}

size_t tw_world_memory_bytes(const tw_world *w)
{
    size_t n = (size_t)w->fem.n, nt = (size_t)w->fem.nt, r = sizeof(tw_real), rn = n > nt ? n : nt;
    return tw_fem_memory_bytes(&w->fem) + n * (3 * 7 * r + 1 + 2 * sizeof(int) + 7 * 3 * r + 9 * r) +
           n * (1 + 3 * r) + /* the contacts' colliders and their velocities */
           n * r + /* the impulses at the step's start */
           n * 3 * r + /* the contacts' slip friction */
           9 * rn * r + (TW_GREEN_PACK + 12) * nt * r + 9 * (size_t)w->fem.nnzb * r + sizeof *w;
}

tw_status tw_world_set_solver(tw_world *w, double tolerance, int max_iterations, int fixed_iterations)
{
    if (!(tolerance > 0) || !isfinite(tolerance))
        return tw_fail(TW_ERR_INVALID, "CG tolerance %g must be finite and > 0", tolerance);
    if (max_iterations < 1) return tw_fail(TW_ERR_INVALID, "CG iteration cap %d must be >= 1", max_iterations);
    if (fixed_iterations < 0) return tw_fail(TW_ERR_INVALID, "CG fixed iteration count %d must be >= 0", fixed_iterations);
    w->def.cg_tolerance = tolerance;
    w->def.cg_max_iterations = max_iterations;
    w->def.cg_fixed_iterations = fixed_iterations;
    return TW_OK; /* the device reads them with each step's numbers */
}

int tw_world_matrix_blocks(const tw_world *w) { return w->fem.nnzb; }

int tw_backend_usable(tw_backend b, char *why, size_t why_size)
{
    if (b == TW_BACKEND_CPU || b == TW_BACKEND_AUTO) return 1;
    if (b != TW_BACKEND_CUDA) {
        if (why) snprintf(why, why_size, "unknown backend %d", (int)b);
        return 0;
    }
#ifdef TW_HAVE_CUDA
    return tw_cuda_usable(why, why_size);
#else
    if (why) snprintf(why, why_size, "the CUDA backend is not available in this build: nvcc was not found when it was configured");
    return 0;
#endif
}

#ifdef TW_HAVE_CUDA
size_t tw_world_device_bytes(const tw_world *w) { return tw_cuda_world_memory_bytes(w->cuda); }
size_t tw_world_device_to_host_bytes(const tw_world *w) { return tw_cuda_world_d2h_bytes(w->cuda); }
void tw_world_set_cuda_graph(tw_world *w, int on) { tw_cuda_world_set_graph(w->cuda, on); }
int tw_world_cuda_graph(const tw_world *w) { return tw_cuda_world_graph(w->cuda); }

const tw_real *tw_world_device_positions(const tw_world *w, void **stream)
{
    if (stream) *stream = NULL;
    /* a setter since the last step and the host's x current: the host's are the truth */
    if (!w->cuda || (w->host_dirty && !w->host_x_stale)) return NULL;
    if (stream) *stream = tw_cuda_world_stream(w->cuda);
    return tw_cuda_world_device_positions(w->cuda);
}
#else
size_t tw_world_device_bytes(const tw_world *w) { (void)w; return 0; }
size_t tw_world_device_to_host_bytes(const tw_world *w) { (void)w; return 0; }
void tw_world_set_cuda_graph(tw_world *w, int on) { (void)w; (void)on; }
int tw_world_cuda_graph(const tw_world *w) { (void)w; return 0; }

const tw_real *tw_world_device_positions(const tw_world *w, void **stream)
{
    (void)w;
    if (stream) *stream = NULL;
    return NULL;
}
#endif
