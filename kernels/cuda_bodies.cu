// Body contact on the device (a world of several bodies, tw_mesh_merge;
// the design is at the top of host/contact_bodies.c), the simplest
// correct way: the host keeps detection and the body part of the active set,
// running contact.c's and contact_bodies.c's functions as they are on the
// world's own arrays (host/step.c's hooks, cuda_world.h's
// tw_cuda_body_hooks); the device runs the rest of the step and every
// contact pass's solve, the coupled one (tw_bodies_solve) on the device
// from the host's lists. implicit_solve's order, host-driven:
//
//   [device] rotations, forces, assembly, prescribe
//   -> xbase, v, cimpulse down; [host] tw_contact_detect, tw_bodies_detect;
//      the contact arrays up; [device] landing, first-pass friction
//   -> pass: fcons down; [host] tw_bodies_coupled; fcons, cdist up
//      ([device] a vertex it took out of the active set loses its friction
//      damping and impulse, as tw_bodies_coupled does on the CPU); the lists
//      up; [device] the coupled solve (below), or the step's PCG
//   -> vnew down; [host] tw_bodies_pass; cdist up; [device]
//      tw_contact_update's kernel (counts read back); again while it
//      changed something (host/step.c's rule)
//   -> [device] divergence check, integrate, collider projection
//   -> x, v down; [host] tw_bodies_project; x, v up.
//
// What crosses per step, float (tw_real 4 bytes), n vertices, P contact
// passes, C active body contacts and S springs: down 28n (xbase, v,
// cimpulse) + P x 13n (fcons, vnew) + 24n (x, v) bytes; up 42n (fcons,
// ccol, cnormal, cdist, cmu, cimpulse, cfric, cvel) + P x (9n + 16n +
// 44(C + S)) (the filter and cdist twice; the lists: per vertex its contact
// and spring index and two CSR offsets, per contact or spring 5 ints and 4
// reals) + 24n bytes: about 118n + 38nP + 44P(C + S) bytes, 2.7 MB a step
// at 10k vertices and 4 passes. All of it over whole arrays: the surface
// vertices alone would do (a later step), and detection itself could run
// on the device (hd/bodies.h's tw_body_nearest is TW_HD).
//
// The coupled solve is tw_bodies_solve line by line: PCG on
// S P^T A' P S y = S P^T (b' - A' P s0), v = P (y + s0), with P's levels,
// P^T's levels, the friction and spring terms of A', the preconditioner's
// blocks and the springs' right-hand side b' from hd/body_solve.h, one
// thread per contact, spring or vertex (the gather form: no atomics), and
// the step's SpMV (cuSPARSE's or the hand-written one) for A. Its scalars
// are read back each iteration (alpha, beta decided on the host, as the
// CPU decides them), and the count and residual go into the step's status
// as the PCG's do. Whatever def.precond says the solve is block-Jacobi, as
// on the CPU. The fused PCG, the multigrid, BiCGStab, hanging vertices and
// warp-vertex's BDF2 energy projection are refused with body contact
// (tw_cuda_bodies_check): each is another path through the step that no
// body case covers.
//
// NEVER RUN ON A GPU: written and compiled (nvcc, sm_90) on a machine
// without one; tests/test_gpu_bodies.c's parity cases are what a session
// with a device runs first (bench/results/nvidia-h100-80gb-hbm3/
// REVIEW-unrun-kernels.md says what to watch).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_bodies.h" /* TW_BODY_SPRING, TW_BODY_CHAIN */
#include "cuda_internal.h"
#include "cuda_reduce.cuh"
#include "hd/body_solve.h"
#include "hd/contact.h"

#include "hd/bsr_row_real.h" /* the CPU solvers' row bodies and block-Jacobi preconditioner */

/* The coupled solve's device arrays, sized for the worst case once (every
 * vertex a contact and a spring: the lists never need a new allocation). */
struct tw_cuda_bodies {
    int *act, *tri, *cidx, *inc_ptr, *inc, *pen, *ptri, *pidx, *pinc_ptr, *pinc;
    tw_real *cw, *cd, *pw, *pd;
    double *t, *s, *an, *fr, *pk, *su;
    tw_real *y, *s0, *rb, *dir;      /* 3n: the free part, the prescribed part, b', the direction */
    unsigned char *fnew;             /* n: the host's filter after tw_bodies_coupled */
    size_t bytes;
};

namespace {

/* ---- the host's hooks' side effects on the device's contact state ---- */

/* After the host's detection (the contact arrays uploaded): no earlier
 * solve this step, and every active vertex's landing and first-pass
 * friction (implicit_solve's tw_contact_land_all, tw_contact_friction_implicit) */
__global__ void bodies_begin_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    d.cfprev[2 * (size_t)i + 1] = -1;
    size_t k = 3 * (size_t)i;
    d.cslip[k] = d.cslip[k + 1] = d.cslip[k + 2] = 0; /* rhs is new */
    if (d.fcons[i] != TW_FILTER_NORMAL) return;
    const tw_cuda_params *P = d.P;
    const tw_real *nrm = d.cnormal + k;
    tw_contact_land(d.vnew + k, nrm, d.cdist[i], P->heff, tw_contact_reach(d.cvel + k, nrm, P->h));
    if (d.ccol[i] < P->ncolliders && d.cmu[i] > 0 &&
        tw_contact_starts_stuck(d.v + k, d.cvel + k, nrm, d.cmu[i], d.cimpulse[i], P->vt_min)) {
        /* a collider's contact that ended the last step stuck (cuda_contact.cu's mark kernel) */
        d.fcons[i] = TW_CONTACT_STICK;
        tw_contact_stick_velocity_at(d.vnew + k, nrm, d.cvel + k, d.x + k, P->history ? d.xbase + k : NULL,
                                     d.cdist[i], P->heff, P->h);
        return;
    }
    tw_contact_friction_block(d.A + 9 * (size_t)d.diag[i], d.rhs + k, nrm, d.v + k, d.cvel + k, d.cmu[i],
                              d.cimpulse[i], P->vt_min, &d.cfric[i]);
}

/* tw_bodies_coupled's release, for each vertex it took out of the active
 * set (active on the device, not in the host's new filter): its friction
 * damping off A's block and the rhs, its impulse 0; then the new filter */
__global__ void bodies_release_kernel(tw_cuda_data d, const unsigned char *fnew)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    if (d.fcons[i] == TW_FILTER_NORMAL && fnew[i] != TW_FILTER_NORMAL) {
        size_t k = 3 * (size_t)i;
        tw_contact_set_damping(d.A + 9 * (size_t)d.diag[i], d.rhs + k, d.cnormal + k, d.cvel + k, &d.cfric[i], 0);
        tw_contact_set_slip(d.rhs + k, d.cslip + k, NULL);
        d.cimpulse[i] = 0;
    }
    d.fcons[i] = fnew[i];
}

/* ---- the coupled solve: hd/body_solve.h's items, one thread each ---- */

__global__ void ops_first_kernel(tw_body_ops o, const tw_real *y)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < o.nact) tw_body_ops_first(&o, c, y);
}

__global__ void ops_chain_kernel(tw_body_ops o, int r)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < o.nact) tw_body_ops_chain(&o, r, c);
}

__global__ void ops_expand_kernel(tw_body_ops o, const tw_real *y, tw_real *v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < o.n) tw_body_ops_expand(&o, i, y, v);
}

__global__ void ops_normal_residual_kernel(tw_body_ops o, const tw_real *r)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < o.nact) tw_body_ops_normal_residual(&o, c, r);
}

__global__ void ops_restrict_kernel(tw_body_ops o, int q, tw_real *r)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.n) tw_body_ops_restrict(&o, q, k, r);
}

__global__ void ops_restrict_chain_kernel(tw_body_ops o, int q)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.nact) tw_body_ops_restrict_chain(&o, q, k);
}

__global__ void ops_filter_kernel(tw_body_ops o, tw_real *v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < o.n) tw_body_ops_filter(&o, i, v);
}

__global__ void ops_terms_kernel(tw_body_ops o, const tw_real *v)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.nact) tw_body_ops_friction(&o, k, v);
    if (k < o.npen) tw_body_ops_spring(&o, k, v);
}

__global__ void ops_apply_kernel(tw_body_ops o, tw_real *Av)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.n) tw_body_ops_apply(&o, k, Av);
}

__global__ void ops_diag_kernel(tw_body_ops o, const int *diag, const tw_real *val, double spring)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.nact) tw_body_ops_contact_diag(&o, k, diag, val);
    if (k < o.npen) tw_body_ops_spring_stiffness(&o, k, diag, val, spring);
}

__global__ void ops_precond_kernel(tw_body_ops o, const int *diag, const tw_real *val, tw_real *dinv)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= o.n) return;
    tw_real D[9];
    tw_body_ops_precond_block(&o, k, diag, val, D);
    tw_block_jacobi_inverse(D, dinv + 9 * (size_t)k);
}

__global__ void ops_rhs_kernel(tw_body_ops o, const tw_real *b, tw_real *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < o.n) tw_body_ops_rhs(&o, k, b, out);
}

__global__ void ops_split_kernel(tw_body_ops o, const tw_real *v, tw_real *y, tw_real *s0)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < o.n) tw_body_ops_split(&o, i, v, y, s0);
}

/* out = a + b (3n) */
__global__ void add_kernel(int n3, const tw_real *a, const tw_real *b, tw_real *out)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n3) out[j] = a[j] + b[j];
}

/* out = a - b (3n) */
__global__ void sub_kernel(int n3, const tw_real *a, const tw_real *b, tw_real *out)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n3) out[j] = a[j] - b[j];
}

/* z = S Dinv r (tw_block_precondition with the step's filter) */
__global__ void ops_precondition_kernel(tw_body_ops o, const tw_real *dinv, const tw_real *r, tw_real *z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= o.n) return;
    tw_block_jacobi_vertex(dinv, r, i, o.fcons[i], o.cnormal, z + 3 * (size_t)i);
}

/* y += alpha p, r -= alpha q (alpha rounded to tw_real first, as the CPU's loop) */
__global__ void ops_update_kernel(int n3, tw_real alpha, const tw_real *p, const tw_real *q, tw_real *y, tw_real *r)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n3) return;
    y[j] += alpha * p[j];
    r[j] -= alpha * q[j];
}

/* p = z + beta p */
__global__ void ops_direction_kernel(int n3, tw_real beta, const tw_real *z, tw_real *p)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n3) p[j] = z[j] + beta * p[j];
}

/* a.b and c.d in double (deterministic partial sums; c NULL: one dot) */
__global__ void dots_kernel(int n3, const tw_real *a, const tw_real *b, const tw_real *c, const tw_real *e,
                            double *partial)
{
    double s[2] = {0, 0};
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n3; j += gridDim.x * blockDim.x) {
        s[0] += (double)a[j] * b[j];
        if (c) s[1] += (double)c[j] * e[j];
    }
    tw_block_partials<2>(s, partial);
}

/* the coupled solve's count and residual into the step's status, as the PCG leaves them */
__global__ void ops_status_kernel(tw_cuda_status *st, int iterations, double rn, double bnorm, int negative)
{
    st->active = 0;
    st->iterations = iterations;
    st->negative_curvature = negative;
    st->rn = rn;
    st->bnorm = bnorm;
    st->residual = rn / bnorm;
}

} // namespace

/* ---- host side ---- */

static tw_status bodies_alloc(tw_cuda_world *cw)
{
    if (cw->bodies) return TW_OK;
    tw_cuda_bodies *b = (tw_cuda_bodies *)calloc(1, sizeof *b);
    if (!b) return tw_fail(TW_ERR_NOMEM, "out of host memory for the CUDA world's body contact");
    cw->bodies = b;
    size_t n = (size_t)cw->d.n, ni = sizeof(int), nr = sizeof(tw_real), nd = sizeof(double);
    struct {
        void **p;
        size_t bytes;
    } a[] = {{(void **)&b->act, n * ni},        {(void **)&b->tri, 3 * n * ni},    {(void **)&b->cidx, n * ni},
             {(void **)&b->inc_ptr, (n + 1) * ni}, {(void **)&b->inc, 3 * n * ni}, {(void **)&b->pen, n * ni},
             {(void **)&b->ptri, 3 * n * ni},   {(void **)&b->pidx, n * ni},       {(void **)&b->pinc_ptr, (n + 1) * ni},
             {(void **)&b->pinc, 3 * n * ni},   {(void **)&b->cw, 3 * n * nr},     {(void **)&b->cd, n * nr},
             {(void **)&b->pw, 3 * n * nr},     {(void **)&b->pd, n * nr},
             {(void **)&b->t, TW_BODY_CHAIN * n * nd}, {(void **)&b->s, TW_BODY_CHAIN * n * nd},
             {(void **)&b->an, n * nd},         {(void **)&b->fr, 6 * n * nd},     {(void **)&b->pk, n * nd},
             {(void **)&b->su, n * nd},         {(void **)&b->y, 3 * n * nr},      {(void **)&b->s0, 3 * n * nr},
             {(void **)&b->rb, 3 * n * nr},     {(void **)&b->dir, 3 * n * nr},    {(void **)&b->fnew, n}};
    char hint[160];
    snprintf(hint, sizeof hint, "this world already holds %zu bytes on the device; use a smaller mesh or --backend cpu",
             cw->bytes);
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++) {
        tw_status s = tw_cuda_malloc(a[k].p, a[k].bytes, "body contact's coupled solve", hint, __FILE__, __LINE__);
        if (s != TW_OK) {
            tw_cuda_bodies_free(cw); /* the next step tries again */
            return s;
        }
        b->bytes += a[k].bytes;
        cw->bytes += a[k].bytes;
    }
    return TW_OK;
}

void tw_cuda_bodies_free(tw_cuda_world *cw)
{
    tw_cuda_bodies *b = cw->bodies;
    if (!b) return;
    void *p[] = {b->act, b->tri,  b->cidx, b->inc_ptr, b->inc, b->pen, b->ptri, b->pidx, b->pinc_ptr,
                 b->pinc, b->cw,  b->cd,   b->pw,      b->pd,  b->t,   b->s,    b->an,   b->fr,
                 b->pk,  b->su,   b->y,    b->s0,      b->rb,  b->dir, b->fnew};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
        if (p[k]) cudaFree(p[k]);
    cw->bytes -= b->bytes;
    free(b);
    cw->bodies = NULL;
}

tw_status tw_cuda_bodies_check(const tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    const tw_world_def *d = in->def;
    const char *what = NULL;
    if (d->integrator == TW_EXPLICIT_NEWMARK) what = "explicit-newmark (no body contact on any backend)";
    else if (cw->fused_pcg) what = "TW_CUDA_PCG=fused (unset it: the body steps run the unfused PCG)";
    else if (d->precond == TW_PRECOND_MG) what = "precond mg (the coupled solve is block-Jacobi; use jacobi)";
    else if ((d->method == TW_WARP_VERTEX || d->method == TW_WARP_EDGE) && d->warp_system == TW_WARP_SYSTEM_BICGSTAB)
        what = "warp_system bicgstab";
    else if (in->nhang > 0) what = "hanging vertices";
    else if (d->method == TW_WARP_VERTEX && d->integrator == TW_BDF2)
        what = "warp-vertex under bdf2 (its energy projection would run before the bodies' projection)";
    if (!what) return TW_OK;
    return tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend does not run body contact (several bodies) with %s yet; use "
                                       "backend 'cpu' for it",
                   what);
}

/* the device's view of the coupled solve with the lists uploaded */
static tw_body_ops ops_view(const tw_cuda_world *cw, int nact, int npen, int depth, double heff, double slack)
{
    const tw_cuda_bodies *b = cw->bodies;
    tw_body_ops o;
    o.n = cw->d.n;
    o.nact = nact;
    o.npen = npen;
    o.depth = depth;
    o.act = b->act; o.tri = b->tri; o.cidx = b->cidx; o.inc_ptr = b->inc_ptr; o.inc = b->inc;
    o.cw = b->cw; o.cd = b->cd;
    o.pen = b->pen; o.ptri = b->ptri; o.pidx = b->pidx; o.pinc_ptr = b->pinc_ptr; o.pinc = b->pinc;
    o.pw = b->pw; o.pd = b->pd;
    o.cnormal = cw->d.cnormal;
    o.cfric = cw->d.cfric;
    o.fcons = cw->d.fcons;
    o.t = b->t; o.s = b->s; o.an = b->an; o.fr = b->fr; o.pk = b->pk; o.su = b->su;
    o.heff = heff;
    o.slack = slack;
    return o;
}

template <typename T> static tw_status up(tw_cuda_world *cw, T *dst, const T *src, size_t count)
{
    if (count) TW_CUDA_TRY(cudaMemcpyAsync(dst, src, sizeof(T) * count, cudaMemcpyHostToDevice, cw->stream));
    return TW_OK;
}

template <typename T> static tw_status down(tw_cuda_world *cw, T *dst, const T *src, size_t count)
{
    if (count) TW_CUDA_TRY(cudaMemcpyAsync(dst, src, sizeof(T) * count, cudaMemcpyDeviceToHost, cw->stream));
    cw->d2h_bytes += sizeof(T) * count;
    return TW_OK;
}

/* The lists up (they are host memory the copies read: the stream is
 * waited for before they are freed) */
static tw_status upload_lists(tw_cuda_world *cw, const tw_body_lists *l)
{
    tw_cuda_bodies *b = cw->bodies;
    size_t n = (size_t)cw->d.n, a = (size_t)l->nact, p = (size_t)l->npen;
    tw_status s = TW_OK;
    if (s == TW_OK) s = up(cw, b->act, l->act, a);
    if (s == TW_OK) s = up(cw, b->tri, l->tri, 3 * a);
    if (s == TW_OK) s = up(cw, b->cidx, l->cidx, n);
    if (s == TW_OK) s = up(cw, b->inc_ptr, l->inc_ptr, n + 1);
    if (s == TW_OK) s = up(cw, b->inc, l->inc, 3 * a);
    if (s == TW_OK) s = up(cw, b->cw, l->cw, 3 * a);
    if (s == TW_OK) s = up(cw, b->cd, l->cd, a);
    if (s == TW_OK) s = up(cw, b->pen, l->pen, p);
    if (s == TW_OK) s = up(cw, b->ptri, l->ptri, 3 * p);
    if (s == TW_OK) s = up(cw, b->pidx, l->pidx, n);
    if (s == TW_OK) s = up(cw, b->pinc_ptr, l->pinc_ptr, n + 1);
    if (s == TW_OK) s = up(cw, b->pinc, l->pinc, 3 * p);
    if (s == TW_OK) s = up(cw, b->pw, l->pw, 3 * p);
    if (s == TW_OK) s = up(cw, b->pd, l->pd, p);
    if (s == TW_OK) s = tw_cuda_check(cudaStreamSynchronize(cw->stream), "cudaStreamSynchronize", __FILE__, __LINE__);
    return s;
}

#define TW_LAUNCH(kernel, count, ...)                                                                             \
    do {                                                                                                          \
        if ((count) > 0) {                                                                                        \
            kernel<<<tw_cuda_grid(count), TW_CUDA_THREADS, 0, cw->stream>>>(__VA_ARGS__);                         \
            TW_CUDA_LAUNCHED();                                                                                   \
        }                                                                                                         \
    } while (0)

/* v = P y (couple in contact_bodies.c): the levels, then each vertex */
static tw_status ops_expand(tw_cuda_world *cw, const tw_body_ops &o, const tw_real *y, tw_real *v)
{
    TW_LAUNCH(ops_first_kernel, o.nact, o, y);
    for (int r = 1; r < o.depth; r++) TW_LAUNCH(ops_chain_kernel, o.nact, o, r);
    TW_LAUNCH(ops_expand_kernel, o.n, o, y, v);
    return TW_OK;
}

/* r = S P^T r (couple_t): the held residuals, each level's gather, the filter */
static tw_status ops_restrict(tw_cuda_world *cw, const tw_body_ops &o, tw_real *r)
{
    TW_LAUNCH(ops_normal_residual_kernel, o.nact, o, r);
    for (int q = 0; q < o.depth; q++) {
        TW_LAUNCH(ops_restrict_kernel, o.n, o, q, r);
        if (q + 1 < o.depth) TW_LAUNCH(ops_restrict_chain_kernel, o.nact, o, q);
    }
    TW_LAUNCH(ops_filter_kernel, o.n, o, r);
    return TW_OK;
}

/* cw->q = A' cw->p (apply): the step's SpMV, then the friction and springs' terms */
static tw_status ops_apply(tw_cuda_world *cw, const tw_body_ops &o)
{
    tw_status s = tw_cuda_spmv_pq(cw);
    if (s != TW_OK) return s;
    int m = o.nact > o.npen ? o.nact : o.npen;
    TW_LAUNCH(ops_terms_kernel, m, o, cw->p);
    TW_LAUNCH(ops_apply_kernel, o.n, o, cw->q);
    return TW_OK;
}

/* a.b (and c.e) read back */
static tw_status dots(tw_cuda_world *cw, const tw_real *a, const tw_real *b, const tw_real *c, const tw_real *e,
                      double out[2])
{
    int n3 = 3 * cw->d.n;
    unsigned nb = tw_cuda_reduce_grid(n3);
    dots_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n3, a, b, c, e, cw->partial);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_reduce_finish(cw, 2, (int)nb, TW_S_RZ); /* the PCG's slots: it is not running */
    if (s != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpyAsync(out, cw->scalars + TW_S_RZ, 2 * sizeof(double), cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    return TW_OK;
}

/* tw_bodies_solve on the device: A' v = rhs with the active body contacts
 * eliminated, from the warm start in vnew, the solution into vnew; the
 * count and residual into the status. */
static tw_status coupled_solve(tw_cuda_world *cw, const tw_cuda_params *hp, const tw_body_lists *l, int depth,
                               double slack)
{
    tw_cuda_data &d = cw->d;
    tw_cuda_bodies *b = cw->bodies;
    int n = d.n, n3 = 3 * n;
    tw_status s = upload_lists(cw, l);
    if (s != TW_OK) return s;
    tw_body_ops o = ops_view(cw, l->nact, l->npen, depth, hp->heff, slack);
    /* s0 = v - S v with the held vertices' -d/heff, y = S v */
    TW_LAUNCH(ops_split_kernel, n, o, d.vnew, b->y, b->s0);
    /* the preconditioner: P^T A' P's diagonal blocks, inverted; b' */
    int m = o.nact > o.npen ? o.nact : o.npen;
    TW_LAUNCH(ops_diag_kernel, m, o, d.diag, d.A, (double)TW_BODY_SPRING);
    TW_LAUNCH(ops_precond_kernel, n, o, d.diag, d.A, cw->dinv);
    const tw_real *rb = d.rhs;
    if (o.npen) {
        TW_LAUNCH(ops_rhs_kernel, n, o, d.rhs, b->rb);
        rb = b->rb;
    }
    /* r = S P^T (b' - A' P (y + s0)), |S P^T b'| */
    TW_LAUNCH(add_kernel, n3, n3, b->y, b->s0, cw->z);
    if ((s = ops_expand(cw, o, cw->z, cw->p)) != TW_OK) return s;
    if ((s = ops_apply(cw, o)) != TW_OK) return s;
    TW_LAUNCH(sub_kernel, n3, n3, rb, cw->q, cw->r);
    if ((s = ops_restrict(cw, o, cw->r)) != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->z, rb, sizeof(tw_real) * (size_t)n3, cudaMemcpyDeviceToDevice, cw->stream));
    if ((s = ops_restrict(cw, o, cw->z)) != TW_OK) return s;
    double sc[2];
    if ((s = dots(cw, cw->z, cw->z, NULL, NULL, sc)) != TW_OK) return s;
    double bnorm = sqrt(sc[0]);
    if (bnorm < 1e-300) bnorm = 1;
    TW_LAUNCH(ops_precondition_kernel, n, o, cw->dinv, cw->r, cw->z);
    TW_CUDA_TRY(cudaMemcpyAsync(b->dir, cw->z, sizeof(tw_real) * (size_t)n3, cudaMemcpyDeviceToDevice, cw->stream));
    if ((s = dots(cw, cw->r, cw->z, cw->r, cw->r, sc)) != TW_OK) return s;
    double rz = sc[0], rnorm = sqrt(sc[1]);
    int it = 0, negative = 0;
    while (it < hp->limit) {
        if (!hp->fixed && rnorm <= hp->tol * bnorm) break;
        if (!(rz > 0)) break;
        if ((s = ops_expand(cw, o, b->dir, cw->p)) != TW_OK) return s;
        if ((s = ops_apply(cw, o)) != TW_OK) return s;
        if ((s = ops_restrict(cw, o, cw->q)) != TW_OK) return s;
        if ((s = dots(cw, b->dir, cw->q, NULL, NULL, sc)) != TW_OK) return s;
        double pq = sc[0];
        if (!(pq > 0)) {
            negative = 1;
            break;
        }
        double alpha = rz / pq;
        TW_LAUNCH(ops_update_kernel, n3, n3, (tw_real)alpha, b->dir, cw->q, b->y, cw->r);
        TW_LAUNCH(ops_precondition_kernel, n, o, cw->dinv, cw->r, cw->z);
        if ((s = dots(cw, cw->r, cw->z, cw->r, cw->r, sc)) != TW_OK) return s;
        double beta = sc[0] / rz;
        rz = sc[0];
        TW_LAUNCH(ops_direction_kernel, n3, n3, (tw_real)beta, cw->z, b->dir);
        rnorm = sqrt(sc[1]);
        it++;
    }
    /* v = P (y + s0) */
    TW_LAUNCH(add_kernel, n3, n3, b->y, b->s0, cw->z);
    if ((s = ops_expand(cw, o, cw->z, d.vnew)) != TW_OK) return s;
    ops_status_kernel<<<1, 1, 0, cw->stream>>>(d.st, it, rnorm, bnorm, negative);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

/* One contact pass's solve (host/step.c solve_contacts): fcons down, the
 * host's tw_bodies_coupled, its release and filter up; the coupled solve
 * when it returned rows, else the step's PCG (shifted on moving colliders).
 * Leaves the solve's count and residual in cw->hstatus. */
static tw_status pass_solve(tw_cuda_world *cw, const tw_cuda_params *hp, const tw_cuda_body_hooks *h, double slack)
{
    tw_cuda_data &d = cw->d;
    size_t n = (size_t)d.n;
    tw_status s;
    if ((s = down(cw, h->fcons, d.fcons, n)) != TW_OK) return s;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    tw_body_lists l;
    memset(&l, 0, sizeof l);
    int depth = 0, rows = h->coupled(h->ctx, &l, &depth);
    if (rows < 0) return TW_ERR_NOMEM; /* tw_bodies_lists said why */
    s = up(cw, cw->bodies->fnew, h->fcons, n);
    if (s == TW_OK) s = up(cw, d.cdist, h->cdist, n);
    if (s == TW_OK) {
        bodies_release_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->bodies->fnew);
        s = tw_cuda_check(cudaGetLastError(), "bodies_release_kernel", __FILE__, __LINE__);
    }
    if (s == TW_OK && rows > 0) s = coupled_solve(cw, hp, &l, depth, slack);
    if (rows > 0) {
        /* the uploads read l: done before it is freed (coupled_solve waited
         * for them; on a failure before that, wait here) */
        cudaStreamSynchronize(cw->stream);
        tw_body_lists_free(&l);
    }
    if (s != TW_OK) return s;
    if (rows == 0) {
        if (cw->colliders_moving && (s = tw_cuda_contact_shift_begin(cw)) != TW_OK) return s;
        if ((s = tw_cuda_pcg_begin(cw)) != TW_OK) return s;
        if ((s = tw_cuda_pcg_host_loop(cw, hp)) != TW_OK) return s;
        if (cw->colliders_moving && (s = tw_cuda_contact_shift_end(cw)) != TW_OK) return s;
    }
    return tw_cuda_read_status(cw);
}

/* After a solve: vnew down, the host's tw_bodies_pass, cdist up; the
 * springs that changed */
static tw_status pass_update(tw_cuda_world *cw, const tw_cuda_params *hp, const tw_cuda_body_hooks *h, int *springs)
{
    tw_cuda_data &d = cw->d;
    size_t n = (size_t)d.n;
    tw_status s;
    if ((s = down(cw, h->vnew, d.vnew, 3 * n)) != TW_OK) return s;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    *springs = h->pass(h->ctx, hp->heff);
    return up(cw, d.cdist, h->cdist, n);
}

static int solve_capped(const tw_cuda_status *hs, const tw_cuda_params *hp)
{
    return !hp->fixed && hs->iterations >= hp->limit && !(hs->residual <= hp->tol);
}

tw_status tw_cuda_bodies_passes(tw_cuda_world *cw, const tw_cuda_params *hp, const tw_cuda_body_hooks *h,
                                tw_step_stats *st)
{
    tw_cuda_data &d = cw->d;
    size_t n = (size_t)d.n;
    tw_status s;
    if ((s = bodies_alloc(cw)) != TW_OK) return s;
    /* the host's detection from xbase and the start velocity, with the
     * impulses the last step's updates left */
    if ((s = down(cw, h->xbase, d.xbase, 3 * n)) != TW_OK) return s;
    if ((s = down(cw, h->v, (const tw_real *)d.v, 3 * n)) != TW_OK) return s;
    if ((s = down(cw, h->cimpulse, (const tw_real *)d.cimpulse, n)) != TW_OK) return s;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    h->detect(h->ctx, hp->heff);
    if ((s = up(cw, d.fcons, h->fcons, n)) != TW_OK) return s;
    if ((s = up(cw, d.ccol, h->ccol, n)) != TW_OK) return s;
    if ((s = up(cw, d.cnormal, h->cnormal, 3 * n)) != TW_OK) return s;
    if ((s = up(cw, d.cdist, h->cdist, n)) != TW_OK) return s;
    if ((s = up(cw, d.cmu, h->cmu, n)) != TW_OK) return s;
    if ((s = up(cw, d.cimpulse, h->cimpulse, n)) != TW_OK) return s;
    if ((s = up(cw, d.cfric, h->cfric, n)) != TW_OK) return s;
    if ((s = up(cw, d.cvel, h->cvel, 3 * n)) != TW_OK) return s;
    TW_LAUNCH(bodies_begin_kernel, d.n, d);
    /* implicit_solve's passes (host/step.c) */
    double slack = h->slack;
    if ((s = pass_solve(cw, hp, h, slack)) != TW_OK) return s;
    int iterations = cw->hstatus.iterations, cap = solve_capped(&cw->hstatus, hp);
    int changed = 0, friction = 0, friction_passes = 0;
    st->contact_passes = 1;
    for (;;) {
        int springs = 0;
        if ((s = pass_update(cw, hp, h, &springs)) != TW_OK) return s;
        if ((s = tw_cuda_contact_update(cw, &changed, &friction)) != TW_OK) return s;
        changed += springs;
        if (!tw_contact_solve_again(changed, friction, friction_passes, st->contact_passes, cw->contact_passes))
            break;
        friction_passes += !changed;
        if ((s = pass_solve(cw, hp, h, slack)) != TW_OK) return s;
        iterations += cw->hstatus.iterations;
        cap |= solve_capped(&cw->hstatus, hp);
        st->contact_passes++;
        changed = 0;
    }
    st->contacts_unresolved = changed;
    st->cg_iterations = iterations;
    st->cg_capped = cap;
    return tw_cuda_contact_impulses(cw);
}

tw_status tw_cuda_bodies_project(tw_cuda_world *cw, const tw_cuda_body_hooks *h, int *unresolved)
{
    tw_cuda_data &d = cw->d;
    size_t n3 = 3 * (size_t)d.n;
    tw_status s;
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    if (!cw->hstatus.ok) return TW_OK; /* the step failed: the state stays */
    if ((s = down(cw, h->x, (const tw_real *)d.x, n3)) != TW_OK) return s;
    if ((s = down(cw, h->v, (const tw_real *)d.v, n3)) != TW_OK) return s;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    *unresolved += h->project(h->ctx);
    if ((s = up(cw, d.x, (const tw_real *)h->x, n3)) != TW_OK) return s;
    if ((s = up(cw, d.v, (const tw_real *)h->v, n3)) != TW_OK) return s;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream)); /* h->x, h->v are the world's, which the host may change */
    return TW_OK;
}
