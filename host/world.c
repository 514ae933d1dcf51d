/* The world API and the time step. Implicit Euler (velocity form,
 * Baraff-Witkin), the default; BDF2 and explicit Newmark below:
 *
 *   (M + h C + h^2 K') v+ = M v + h (f_el(x) + f_ext),   C = alpha M + beta K'
 *   x+ = x + h v+
 *
 * K' is the method's system stiffness at x (constant K, warped K, corotated K,
 * or the StVK tangent — one Newton step per time step). Pinned and kinematic
 * vertices get their velocity prescribed and are filtered out of the solve. */
#include "world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "hd/contact.h"
#include "hd/element.h"
#include "error.h"
#include "hd/integrator.h"
#include "hd/math3.h"
#include "mesh.h"
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#endif

static const char *const method_names[TW_METHOD_COUNT] = {"linear",        "warp-vertex", "warp-edge",
                                                          "corot-element", "green",       "hybrid"};

const char *tw_method_name(tw_method m) { return (unsigned)m < TW_METHOD_COUNT ? method_names[m] : "unknown"; }

int tw_method_parse(const char *name)
{
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        if (name && strcmp(name, method_names[m]) == 0) return m;
    return -1;
}

static const char *const integrator_names[TW_INTEGRATOR_COUNT] = {"implicit-euler", "bdf2", "explicit-newmark"};

const char *tw_integrator_name(tw_integrator i)
{
    return (unsigned)i < TW_INTEGRATOR_COUNT ? integrator_names[i] : "unknown";
}

int tw_integrator_parse(const char *name)
{
    for (int i = 0; i < TW_INTEGRATOR_COUNT; i++)
        if (name && strcmp(name, integrator_names[i]) == 0) return i;
    return -1;
}

const char *tw_backend_name(tw_backend b)
{
    return b == TW_BACKEND_CPU ? "cpu" : b == TW_BACKEND_CUDA ? "cuda" : b == TW_BACKEND_AUTO ? "auto" : "unknown";
}

int tw_backend_parse(const char *name)
{
    if (!name) return -1;
    if (strcmp(name, "cpu") == 0) return TW_BACKEND_CPU;
    if (strcmp(name, "cuda") == 0) return TW_BACKEND_CUDA;
    if (strcmp(name, "auto") == 0) return TW_BACKEND_AUTO;
    return -1;
}

double tw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

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
    d.newton_iterations = 1;
    d.newton_tolerance = 1e-3;
    d.threads = 0;
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
    return b;
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
    if (d->cg_max_iterations < 1) return tw_fail(TW_ERR_INVALID, "CG iteration cap %d must be >= 1", d->cg_max_iterations);
    if (d->newton_iterations < 1 || !(d->newton_tolerance > 0))
        return tw_fail(TW_ERR_INVALID, "Newton iterations %d must be >= 1 and tolerance %g > 0", d->newton_iterations,
                       d->newton_tolerance);
    for (int c = 0; c < 3; c++)
        if (!isfinite(d->gravity[c])) return tw_fail(TW_ERR_INVALID, "gravity component %d is %g", c, d->gravity[c]);
    return TW_OK;
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

tw_world *tw_world_create(const tw_mesh *mesh, const tw_world_def *def)
{
    tw_clear_error();
    if (!mesh) { tw_fail(TW_ERR_INVALID, "tw_world_create: no mesh"); return NULL; }
    tw_world_def d = def ? *def : tw_default_world_def();
    if (check_def(&d) != TW_OK) return NULL;
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
#ifdef _OPENMP
    if (d.threads > 0) omp_set_num_threads(d.threads);
#endif
    tw_world *w = tw_calloc(1, sizeof *w, "world");
    if (!w) return NULL;
    w->mesh = mesh;
    w->def = d;
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
    w->released = tw_calloc(n, 1, "contact constraints");
    w->cnormal = tw_calloc(3 * n, sizeof(tw_real), "contact normals");
    w->cdist = tw_calloc(n, sizeof(tw_real), "contact distances");
    w->cimpulse = tw_calloc(n, sizeof(tw_real), "contact impulses");
    w->cmu = tw_calloc(n, sizeof(tw_real), "contact friction");
    w->newton = tw_calloc(4 * 3 * n, sizeof(tw_real), "Newton vectors");
    if (!w->x || !w->v || !w->fext || !w->target || !w->cons || !w->R || !w->S || !w->fe || !w->f || !w->rhs ||
        !w->vnew || !w->A || !w->edge_nbr || !w->acc || !w->xprev || !w->vprev || !w->xbase || !w->vbase ||
        !w->fcons || !w->released || !w->cnormal || !w->cdist || !w->cimpulse || !w->cmu || !w->newton || tw_solver_work_init(&w->work, (int)n) != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    memcpy(w->x, w->fem.X, sizeof(tw_real) * 3 * n);
    memcpy(w->target, w->fem.X, sizeof(tw_real) * 3 * n);
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (size_t i = 0; i < n; i++) {
        if (mesh->unused && mesh->unused[i]) w->cons[i] = TW_PINNED; /* no mass, no stiffness */
        for (int c = 0; c < 3; c++) {
            if (mesh->X[3 * i + c] < lo[c]) lo[c] = mesh->X[3 * i + c];
            if (mesh->X[3 * i + c] > hi[c]) hi[c] = mesh->X[3 * i + c];
        }
    }
    w->size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
    choose_edge_neighbours(w);
#ifdef TW_HAVE_CUDA
    if (w->def.backend == TW_BACKEND_CUDA && !(w->cuda = tw_cuda_world_create(w))) {
        tw_world_destroy(w);
        return NULL;
    }
#endif
    w->host_dirty = 1;
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
    free(w->fcons); free(w->released); free(w->cnormal); free(w->cdist); free(w->cimpulse); free(w->cmu); free(w->newton);
    tw_hanging_free(w);
    tw_solver_work_free(&w->work);
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
    w->cons[v] = (unsigned char)c;
    if (c == TW_KINEMATIC) {
        tw_status s = tw_world_fetch(w, 1, 0); /* the target starts at the current position */
        if (s != TW_OK) return s;
        memcpy(w->target + 3 * (size_t)v, w->x + 3 * (size_t)v, 3 * sizeof(tw_real));
    }
    return TW_OK;
}

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
            w->cons[i] = TW_PINNED;
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

void tw_external_force(const tw_world *w, const tw_real *x, tw_real *out)
{
    const tw_fem *f = &w->fem;
#pragma omp parallel for if (TW_PAR(f->n)) schedule(static)
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) out[3 * i + c] = f->mass[i] * (tw_real)w->def.gravity[c] + w->fext[3 * i + c];
    if (w->spring_vertex >= 0)
        for (int c = 0; c < 3; c++)
            out[3 * w->spring_vertex + c] +=
                (tw_real)(w->spring_k * (w->spring_anchor[c] - x[3 * w->spring_vertex + c]));
}

static int first_nonfinite(const tw_real *a, size_t n3)
{
    for (size_t i = 0; i < n3; i++)
        if (!isfinite(a[i])) return (int)(i / 3);
    return -1;
}

/* Ghost forces, second half: the warped system matrix (R_i K_ij R_j^T) has
 * no zero column sums, so even with the net elastic force removed the implicit
 * term moves a free body's centre of mass. When nothing can push back (no
 * pinned, kinematic or contact vertex this step), set the momentum of v+ to
 * exactly M vbase + heff sum f_ext(x+) by a uniform velocity shift
 * (x+ = xbase + heff v+; implicit Euler: vbase = v, heff = h). */
static void conserve_momentum(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase)
{
    const tw_fem *f = &w->fem;
    double p[3] = {0, 0, 0}, mt = 0;
    for (int i = 0; i < f->n; i++)
        if (w->fcons[i]) return;
    for (int i = 0; i < f->n; i++) {
        for (int c = 0; c < 3; c++) {
            p[c] += f->mass[i] * ((double)w->vnew[3 * i + c] - vbase[3 * i + c]) -
                    heff * (f->mass[i] * w->def.gravity[c] + w->fext[3 * i + c]);
        }
        mt += f->mass[i];
    }
    if (w->spring_vertex >= 0) {
        size_t k = 3 * (size_t)w->spring_vertex;
        for (int c = 0; c < 3; c++)
            p[c] -= heff * w->spring_k * (w->spring_anchor[c] - xbase[k + c] - heff * w->vnew[k + c]);
    }
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) w->vnew[3 * i + c] -= (tw_real)(p[c] / mt);
}

/* Prescribed velocities of the constrained vertices for positions
 * x+ = xbase + heff v+: pinned 0, kinematic onto their targets. */
static void prescribe_constrained(tw_world *w, const tw_real *xbase, double heff, tw_real *v)
{
    for (int i = 0; i < w->fem.n; i++) {
        if (w->cons[i] == TW_PINNED)
            for (int c = 0; c < 3; c++) v[3 * i + c] = 0;
        else if (w->cons[i] == TW_KINEMATIC)
            for (int c = 0; c < 3; c++) v[3 * i + c] = (tw_real)((w->target[3 * i + c] - xbase[3 * i + c]) / heff);
    }
}

/* w->A x = b on the filtered directions: PCG, or BiCGStab for warp-vertex's
 * exact non-symmetric system when the world def asks for it. */
static tw_solve_result solve_system(tw_world *w, const tw_real *b, tw_real *x, const tw_filter *filter)
{
    tw_bsr A = tw_world_bsr(w);
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    if (vertex_method && w->def.warp_system == TW_WARP_SYSTEM_BICGSTAB)
        return tw_bicgstab(&A, b, x, filter, w->def.cg_tolerance, w->def.cg_max_iterations, &w->work);
    return tw_pcg(&A, b, x, filter, w->def.cg_tolerance, w->def.cg_max_iterations, w->def.cg_fixed_iterations,
                  &w->work);
}

/* NaN or a blow-up in the new velocities: the message says which step and why. */
static tw_status check_velocities(const tw_world *w, const tw_real *v, double h, const tw_solve_result *sr)
{
    int n = w->fem.n;
    int bad = first_nonfinite(v, 3 * (size_t)n);
    if (bad >= 0 || !isfinite(sr->residual))
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): the %s produced a non-finite velocity at vertex %d (CG: %d iterations, "
                       "residual %g); reduce dt or check the material",
                       w->step + 1, w->time + h, w->def.integrator == TW_EXPLICIT_NEWMARK ? "explicit update" : "solve",
                       bad, sr->iterations, sr->residual);
    double vmax = 0;
    int vmax_i = 0;
    for (int i = 0; i < n; i++) {
        double s = sqrt((double)v[3 * i] * v[3 * i] + (double)v[3 * i + 1] * v[3 * i + 1] +
                        (double)v[3 * i + 2] * v[3 * i + 2]);
        if (s > vmax) { vmax = s; vmax_i = i; }
    }
    if (vmax * h > 10 * w->size)
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): vertex %d would move %g m in one step, %g times the object's size; the "
                       "simulation is unstable — reduce dt, add damping or check the material",
                       w->step + 1, w->time + h, vmax_i, vmax * h, vmax * h / w->size);
    return TW_OK;
}

/* One linearised implicit solve, shared by implicit Euler and BDF2:
 *
 *   x+ = xbase + heff v+,   f(x+) ~ f(x) - K'(x+ - x)
 *   (M (1 + heff alpha) + (heff^2 + heff beta) K') v+
 *        = M vbase + heff (f(x) + f_ext) - heff K' (xbase - x)
 *
 * Implicit Euler: heff = h, xbase = x, vbase = v. BDF2: heff = 2h/3,
 * xbase = (4 x_n - x_n-1)/3, vbase = (4 v_n - v_n-1)/3. Leaves v+ in w->vnew. */
static tw_status implicit_solve(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, double h,
                                tw_step_stats *st)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    double alpha = w->def.damping_mass, beta = w->def.damping_stiffness;
    double cm = 1 + heff * alpha, ck = heff * heff + heff * beta;
    double t0 = tw_now_ms();
    tw_compute_rotations(w, w->x);
    double t1 = tw_now_ms();
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    tw_compute_elastic_force(w, w->x, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, w->x, w->rhs);
#pragma omp parallel for if (TW_PAR(n)) schedule(static)
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            w->rhs[3 * i + c] = f->mass[i] * vbase[3 * i + c] + (tw_real)heff * (w->f[3 * i + c] + w->rhs[3 * i + c]);
    tw_assemble_system(w, cm, ck);
    tw_bsr A = tw_world_bsr(w);
    if (xbase != w->x) {
        /* - heff K' d with d = xbase - x, K' d = (A d - cm M d) / ck */
        tw_real *d = w->work.s, *Ad = w->work.t;
        for (size_t i = 0; i < n3; i++) d[i] = xbase[i] - w->x[i];
        tw_bsr_spmv(&A, d, Ad);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                size_t k = 3 * (size_t)i + c;
                w->rhs[k] = tw_bdf2_rhs_corrected(w->rhs[k], Ad[k], d[k], f->mass[i], heff, cm, ck);
            }
    }
    double t2 = tw_now_ms();
    if (w->def.warm_start) memcpy(w->vnew, w->v, sizeof(tw_real) * n3);
    else memset(w->vnew, 0, sizeof(tw_real) * n3);
    prescribe_constrained(w, xbase, heff, w->vnew);
    /* contacts: the normal velocity is prescribed (onto the surface, or out
     * of a penetration, in this step) and the filter keeps it */
    st->contacts = tw_contact_detect(w, xbase, heff);
    if (st->contacts)
        for (int i = 0; i < n; i++) /* land on the surface, or leave it */
            if (w->fcons[i] == TW_FILTER_NORMAL)
                tw_contact_land(w->vnew + 3 * (size_t)i, w->cnormal + 3 * (size_t)i, w->cdist[i], heff);
    if (st->contacts) tw_contact_friction_implicit(w, heff);
    tw_filter filter = {w->fcons, w->cnormal};
    tw_solve_result sr = solve_system(w, w->rhs, w->vnew, &filter);
    tw_contact_impulses(w, w->rhs, w->vnew);
    double t3 = tw_now_ms();
    st->cg_iterations = sr.iterations;
    st->residual = sr.residual;
    st->ms_rotations = t1 - t0;
    st->ms_assembly = t2 - t1;
    st->ms_solve = t3 - t2;
    tw_status s = check_velocities(w, w->vnew, h, &sr);
    if (s == TW_OK && vertex_method && w->def.ghost_force_correction) conserve_momentum(w, heff, xbase, vbase);
    return s;
}

/* The step's residual at velocity v (positions xk = xbase + heff v):
 *   G = M (v - vbase) + heff alpha M v + heff beta K' v - heff (f(xk) + f_ext(xk))
 * with K' v = (A v - cm M v) / ck from the A assembled last. Returns |S G|. */
static double step_residual(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, const tw_real *v,
                            double cm, double ck, tw_real *xk, tw_real *G, tw_real *Av)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_spmv(&A, v, Av);
    for (size_t i = 0; i < n3; i++) xk[i] = xbase[i] + (tw_real)heff * v[i];
    tw_compute_rotations(w, xk);
    tw_compute_elastic_force(w, xk, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, xk, G);
    double alpha = w->def.damping_mass, beta = w->def.damping_stiffness, g2 = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            double mv = f->mass[i] * (double)v[k];
            double Kv = (Av[k] - cm * mv) / ck;
            G[k] = (tw_real)(mv - f->mass[i] * (double)vbase[k] + heff * alpha * mv + heff * beta * Kv -
                             heff * ((double)w->f[k] + G[k]));
        }
    for (int i = 0; i < n; i++) { /* S G */
        tw_real *gi = G + 3 * (size_t)i;
        if (w->fcons[i] == TW_FILTER_NORMAL) {
            const tw_real *nn = w->cnormal + 3 * (size_t)i;
            tw_real d = gi[0] * nn[0] + gi[1] * nn[1] + gi[2] * nn[2];
            for (int c = 0; c < 3; c++) gi[c] -= d * nn[c];
        } else if (w->fcons[i]) {
            gi[0] = gi[1] = gi[2] = 0;
        }
        g2 += (double)gi[0] * gi[0] + (double)gi[1] * gi[1] + (double)gi[2] * gi[2];
    }
    return sqrt(g2);
}

/* Newton iterations after the first linearised solve (non-linear methods,
 * def.newton_iterations > 1): A(xk) dv = -G(v), then a backtracking line
 * search on |G| (K' of the damping term held at xk). Refines w->vnew. */
static tw_status newton_refine(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, tw_step_stats *st)
{
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    double cm = 1 + heff * w->def.damping_mass, ck = heff * heff + heff * w->def.damping_stiffness;
    tw_real *xk = w->newton, *G = w->newton + n3, *dv = w->newton + 2 * n3, *vt = w->newton + 3 * n3;
    tw_real *scratch = w->work.rhat; /* free outside BiCGStab */
    tw_filter filter = {w->fcons, w->cnormal};
    double g0 = -1, g = 0;
    for (int it = 1; it < w->def.newton_iterations; it++) {
        /* A at the current iterate, then G there */
        for (size_t i = 0; i < n3; i++) xk[i] = xbase[i] + (tw_real)heff * w->vnew[i];
        tw_compute_rotations(w, xk);
        tw_assemble_system(w, cm, ck);
        g = step_residual(w, heff, xbase, vbase, w->vnew, cm, ck, xk, G, scratch);
        if (g0 < 0) g0 = g > 0 ? g : 1;
        if (g <= w->def.newton_tolerance * g0 && it > 1) break;
        for (size_t i = 0; i < n3; i++) G[i] = -G[i];
        memset(dv, 0, sizeof(tw_real) * n3);
        tw_solve_result sr = solve_system(w, G, dv, &filter);
        st->cg_iterations += sr.iterations;
        st->newton_iterations++;
        double a = 1, best = INFINITY, best_a = 0;
        for (int ls = 0; ls < 8; ls++, a *= 0.5) {
            for (size_t i = 0; i < n3; i++) vt[i] = w->vnew[i] + (tw_real)a * dv[i];
            double gt = step_residual(w, heff, xbase, vbase, vt, cm, ck, xk, G, scratch);
            if (gt < best) { best = gt; best_a = a; }
            if (gt <= (1 - 1e-4 * a) * g) break;
        }
        if (!(best < g)) break; /* no progress: keep the iterate */
        for (size_t i = 0; i < n3; i++) w->vnew[i] += (tw_real)best_a * dv[i];
        g = best;
    }
    st->newton_residual = g0 > 0 ? g / g0 : 0;
    tw_solve_result none = {0, 0, 0};
    return check_velocities(w, w->vnew, w->def.dt, &none);
}

/* Explicit Newmark (Zhuang & Canny eq. 7-10; beta = 0, gamma = 1/2) with
 * lumped mass and mass-proportional damping alpha:
 *   x+ = x + h v + h^2/2 a
 *   v+ = (v + h/2 a + h/2 M^-1 F(x+)) / (1 + h alpha / 2),  a+ = M^-1 F(x+) - alpha v+
 * F = f_el + f_ext. Stiffness-proportional damping is not used here. */
static tw_status newmark_step(tw_world *w, double h, tw_step_stats *st)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    double alpha = w->def.damping_mass;
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    double t0 = tw_now_ms();
    if (!w->has_acc) { /* a at the start: from the current state */
        tw_compute_rotations(w, w->x);
        tw_compute_elastic_force(w, w->x, w->f, vertex_method && w->def.ghost_force_correction);
        tw_external_force(w, w->x, w->rhs);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                size_t k = 3 * (size_t)i + c;
                w->acc[k] = tw_newmark_start_acc(w->f[k] + w->rhs[k], f->mass[i], w->v[k], alpha,
                                                 f->mass[i] > 0 && !w->cons[i]);
            }
        w->has_acc = 1;
    }
    /* positions: free vertices by Taylor, constrained ones prescribed */
    tw_real *xnew = w->work.s;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            xnew[k] = tw_newmark_position(w->cons[i], w->x[k], w->v[k], w->acc[k], w->target[k], h);
        }
    /* contact: project the predicted positions first, so the forces below
     * are those of the configuration the step ends in */
    st->contacts = tw_contact_project_positions(w, xnew);
    double t1 = tw_now_ms();
    tw_compute_rotations(w, xnew);
    double t2 = tw_now_ms();
    tw_compute_elastic_force(w, xnew, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, xnew, w->rhs);
    tw_real *anew = w->work.t;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            if (w->cons[i]) {
                w->vnew[k] = tw_newmark_constrained_velocity(xnew[k], w->x[k], h);
                anew[k] = 0;
                continue;
            }
            tw_newmark_velocity(w->f[k] + w->rhs[k], f->mass[i], w->v[k], w->acc[k], h, alpha, &w->vnew[k], &anew[k]);
        }
    if (st->contacts) tw_contact_project_velocities(w, w->vnew, anew);
    double t3 = tw_now_ms();
    st->ms_rotations = t2 - t1;
    st->ms_assembly = t3 - t2 + (t1 - t0);
    tw_solve_result none = {0, 0, 0};
    tw_status s = check_velocities(w, w->vnew, h, &none);
    if (s != TW_OK) return s;
    memcpy(w->x, xnew, sizeof(tw_real) * n3);
    memcpy(w->acc, anew, sizeof(tw_real) * n3);
    return TW_OK;
}

tw_status tw_world_step(tw_world *w, tw_step_stats *stats)
{
#ifdef TW_HAVE_CUDA
    if (w->cuda) return tw_cuda_world_step(w->cuda, w, stats);
#endif
    tw_step_stats st;
    memset(&st, 0, sizeof st);
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    double h = w->def.dt;
    double t0 = tw_now_ms();
    tw_status s;
    tw_hanging_before_step(w, h);
    if (w->def.integrator == TW_EXPLICIT_NEWMARK) {
        s = newmark_step(w, h, &st);
        if (s == TW_OK) memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
    } else {
        int bdf2 = w->def.integrator == TW_BDF2 && w->has_history;
        tw_real *xbase = w->x, *vbase = w->v;
        double heff = h;
        if (bdf2) { /* (4 x_n - x_n-1)/3, (4 v_n - v_n-1)/3 */
            xbase = w->xbase;
            vbase = w->vbase;
            for (size_t i = 0; i < n3; i++) {
                xbase[i] = tw_bdf2_base(w->x[i], w->xprev[i]);
                vbase[i] = tw_bdf2_base(w->v[i], w->vprev[i]);
            }
            heff = 2 * h / 3;
        }
        s = implicit_solve(w, heff, xbase, vbase, h, &st);
        st.newton_iterations = 1;
        if (s == TW_OK && w->def.newton_iterations > 1 && w->def.method != TW_LINEAR)
            s = newton_refine(w, heff, xbase, vbase, &st);
        if (s == TW_OK) {
            if (w->def.integrator == TW_BDF2) {
                memcpy(w->xprev, w->x, sizeof(tw_real) * n3);
                memcpy(w->vprev, w->v, sizeof(tw_real) * n3);
                w->has_history = 1;
            }
            memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
#pragma omp parallel for if (TW_PAR(n3)) schedule(static)
            for (size_t i = 0; i < n3; i++) w->x[i] = xbase[i] + (tw_real)heff * w->v[i];
            tw_contact_project(w, w->x, w->v);
        }
    }
    if (s == TW_OK) {
        tw_hanging_after_step(w);
        w->step++;
        w->time += h;
    }
    st.ms_total = tw_now_ms() - t0;
    st.ms_other = st.ms_total - st.ms_rotations - st.ms_assembly - st.ms_solve;
    if (stats) *stats = st;
    return s;
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
    int bad = first_nonfinite(x, 3 * (size_t)w->fem.n);
    if (bad >= 0) return tw_fail(TW_ERR_INVALID, "position of vertex %d is not finite", bad);
    memcpy(w->x, x, sizeof(tw_real) * 3 * (size_t)w->fem.n);
    w->host_x_stale = 0; /* the host's copy is the truth again (v may stay on the device) */
    w->has_acc = w->has_history = 0;
    return TW_OK;
}

tw_status tw_world_set_velocities(tw_world *w, const tw_real *v)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    int bad = first_nonfinite(v, 3 * (size_t)w->fem.n);
    if (bad >= 0) return tw_fail(TW_ERR_INVALID, "velocity of vertex %d is not finite", bad);
    memcpy(w->v, v, sizeof(tw_real) * 3 * (size_t)w->fem.n);
    w->host_v_stale = 0;
    w->has_acc = w->has_history = 0;
    return TW_OK;
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
    w->has_acc = w->has_history = 0;
}

double tw_world_volume(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    const tw_fem *f = &w->fem;
    double vol = 0;
#pragma omp parallel for if (TW_PAR(f->nt)) reduction(+ : vol) schedule(static)
    for (int e = 0; e < f->nt; e++) {
        const int *t = f->tets + 4 * (size_t)e;
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) {
            double o = w->x[3 * t[0] + k];
            a[k] = w->x[3 * t[1] + k] - o;
            b[k] = w->x[3 * t[2] + k] - o;
            c[k] = w->x[3 * t[3] + k] - o;
        }
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    }
    return vol;
}

double tw_world_kinetic_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 0, 1) != TW_OK) return NAN;
    double k = 0;
    for (int i = 0; i < w->fem.n; i++)
        for (int c = 0; c < 3; c++) k += 0.5 * w->fem.mass[i] * (double)w->v[3 * i + c] * w->v[3 * i + c];
    return k;
}

double tw_world_elastic_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    return tw_compute_elastic_energy((tw_world *)w, w->x);
}

double tw_world_gravity_energy(const tw_world *w)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) return NAN;
    double e = 0;
    for (int i = 0; i < w->fem.n; i++)
        for (int c = 0; c < 3; c++)
            e -= w->fem.mass[i] * w->def.gravity[c] * ((double)w->x[3 * i + c] - w->fem.X[3 * i + c]);
    return e;
}

size_t tw_world_memory_bytes(const tw_world *w)
{
    size_t n = (size_t)w->fem.n, nt = (size_t)w->fem.nt, r = sizeof(tw_real), rn = n > nt ? n : nt;
    return tw_fem_memory_bytes(&w->fem) + n * (3 * 7 * r + 1 + 2 * sizeof(int) + 7 * 3 * r + 9 * r) +
           9 * rn * r + (TW_GREEN_PACK + 12) * nt * r + 9 * (size_t)w->fem.nnzb * r + sizeof *w;
}

void tw_world_elastic_force(tw_world *w, tw_real *f)
{
    if (tw_world_fetch(w, 1, 0) != TW_OK) { /* no silent answer from a stale state */
        for (size_t i = 0; i < 3 * (size_t)w->fem.n; i++) f[i] = (tw_real)NAN;
        return;
    }
    tw_compute_rotations(w, w->x);
    tw_compute_elastic_force(w, w->x, f, 0);
}
