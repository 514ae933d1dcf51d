// The CUDA backend's world (its C interface: the header of this name): the
// constant FEM data uploaded once, the state and scratch on the device, and
// the step run there exactly as host/step.c runs it on the CPU. The
// implicit integrators, implicit Euler and BDF2 (the same step from its base
// terms, cuda_integrators.cu), as implicit_solve does:
//
//   [energy at the start] -> [BDF2 base terms] -> rotations -> elastic
//   force (+ ghost-force correction) -> rhs -> system matrix by gather ->
//   [BDF2 rhs correction] -> prescribed velocities -> [contacts marked] ->
//   filtered block-Jacobi PCG (cuda_pcg.cu) -> [contact impulses] ->
//   divergence check -> momentum correction -> x = xbase + heff v ->
//   [projection] -> [energy projection] -> [energy at the end]
//
// (the energy terms: warp-vertex under BDF2 when nothing does work on the
// body, tw_world_step's bdf2_energy_projection, cuda_integrators.cu; and
// the energy check when nothing does work on the body: the six energies
// are read back with the status and host/step.c applies its rule; when it
// fails the step, tw_cuda_world_restore puts back the state keep_state
// copied at the step's start, a copy made only at a step that can fail)
//
// and explicit Newmark as newmark_step does (no solve): [energy at the
// start] -> predict -> [projection] -> rotations -> elastic force -> new
// v, a -> [projection] -> divergence check -> commit -> [energy at the
// end]; for the methods linear, warp-vertex,
// warp-edge, corot-element, green and hybrid, with colliders (the contact
// steps, cuda_contact.cu, when there are any). What the device path does
// not have yet returns TW_ERR_UNSUPPORTED naming it (never a silent fall
// back to the CPU): with body contact, the solver variants
// tw_cuda_bodies_check lists (cuda_bodies.cu). (With TW_CUDA_PCG=fused, a
// step with hanging vertices runs the unfused PCG iteration, said once on
// stderr: cuda_pcg.cu.) BiCGStab on a vertex method's exact warped system
// (warp_system bicgstab) runs host-driven (cuda_bicgstab.cu: its scalars
// read back every iteration; no graph), with hanging vertices on P^T A P
// as the PCG. Newton iterations after the
// first solve (newton_iterations > 1, non-linear methods) run host-driven:
// the first solve as always, then newton_refine's loop with each residual
// norm read back and the CPU's decisions taken on the host (no graph for
// such a step). warp-vertex's turn test (host/step.c warp_turn_iterations:
// implicit, the Newton count automatic) is host-driven too: the count of
// turned vertices is read back after the first solve, so such a world's
// steps run without the graph.
// Hanging vertices (host/hanging.c) otherwise run as on the CPU: their
// targets first, the reduced system P^T A P in the solver (cuda_pcg.cu),
// their velocities expanded after each solve, their averages after the step. Explicit Newmark's Courant
// limit is host/world.c's check for both backends (tw_world_create,
// tw_world_set_dt: the same message).
//
// ARCHITECTURE
// - A new force model's per-item bodies are host/hd/step.h's, shared with the
//   CPU, launched from cuda_kernels.cu (tw_cuda_rotations,
//   tw_cuda_elastic_force, tw_cuda_assemble) and, when it changes which
//   kernels run, named in tw_cuda_shape.
// - A new integrator's kernels go in cuda_integrators.cu (arithmetic from
//   host/hd/integrator.h), enqueued from this file's enqueue_* functions,
//   with its per-step numbers in tw_cuda_params (cuda_internal.h).
// - A new kernel is a __global__ that runs an hd/ loop body on one thread
//   over tw_cuda_step_view(d), launched on cw->stream by a tw_cuda_*
//   function declared in cuda_internal.h, reading per-step numbers from d.P,
//   never from its arguments (a captured graph keeps those).
// This file never sees struct tw_world: host/step.c fills a tw_cuda_step_in
// and applies the tw_cuda_step_out (both declared in the header).
//
// BDF2's previous state (xprev, vprev) and Newmark's acceleration live only
// on the device. The host's flags say whether a step may use them
// (tw_cuda_step_in has_history, has_acc), and the setters that invalidate them clear
// them, as on the CPU: a BDF2 step without history is the CPU's first step
// (implicit Euler, heff = h, keeping its state as the history), a Newmark
// step without an acceleration computes it first (at the re-uploaded x, v).
//
// THIS CODE HAS NEVER RUN ON A GPU. It was written and compiled (float and
// double builds, nvcc 13, sm_90) on a machine without one; the parity tests
// in tests/test_gpu_backend.c are what a session with a device runs first.
//
// The step as one CUDA Graph
// --------------------------
// Everything launches on one non-blocking stream (cw->stream; cuSPARSE is
// bound to it). On the first step the whole step is captured into a graph:
//
//   [ev0] rotations [ev1] forces, rhs, assembly [ev2] prescribe, PCG start
//   -> WHILE (condition set on the device) { one PCG iteration, decide }
//   -> [ev3] divergence check, momentum correction, integrate
//
// and every step after is one params copy, one cudaGraphLaunch and one read
// of tw_cuda_status (a few scalars, after a stream sync): no iteration waits
// for the host. With colliders the contact kernels (cuda_contact.cu) sit
// before the PCG start and after the loop and integrate, in the same graph.
// The ev* are event record nodes, so tw_step_stats still splits rotations /
// assembly / solve. An explicit Newmark step is one graph without the loop
// (no conditional node); the acceleration it starts from, when there is
// none yet, is launched before it, outside the graph.
//
// Where the numbers live: every per-step number (dt, heff, damping cm/ck,
// gravity, the spring's vertex/anchor/k, warm start, CG tolerance, the
// iteration cap, fixed or not, the divergence yardstick) is in a small
// device struct, tw_cuda_params, written by one cudaMemcpyAsync before each
// launch; kernels read it, no captured argument holds one. Device pointers
// never change for a world's life. What changes which kernels run (method,
// ghost-force correction, momentum conservation, exact warp, colliders, the
// integrator) is the graph's shape (tw_cuda_shape): a step whose shape
// differs from the captured one captures and instantiates a new graph (a
// method switch, pinning the first vertex, the first collider). That is the
// whole update rule: no cudaGraphExecUpdate. (BDF2's first step and the rest
// share a shape: what differs, heff and where xbase comes from, is in the
// params.)
//
// How the CG loop ends: pcg_start / pcg_decide (cuda_pcg.cu), one thread
// each, apply the CPU's stopping rules (tolerance unless fixed, rz > 0,
// p.Ap > 0, the cap) to device scalars, keep the count and |r| in
// tw_cuda_status, and set the while node's condition with
// cudaGraphSetConditional. Needs CUDA >= 12.4 (toolkit and driver).
//
// Fallback: TW_CUDA_GRAPH=0 in the environment (or
// tw_cuda_world_set_graph(cw, 0)) runs the same launches directly with the
// host loop of cuda_pcg.cu; so does a world whose graph could not be built
// (old driver: no conditional nodes; a library call that cannot be
// captured), after one line on stderr saying why. If cuSPARSE's SpMV is what
// cannot be captured, the hand-written BSR SpMV is tried in the graph first.
//
// No vertex data comes back per step: the divergence check (host/step.c's
// rule) is a device reduction read back as scalars in tw_cuda_step_out,
// integrate runs only when it passed (so a failed step leaves x and v as
// they were), and the host's copies of x and v are refreshed lazily
// (tw_cuda_world_download, called by host/world.c's accessors when they are
// stale); every byte of vertex data that does come back is counted in
// d2h_bytes.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_amg.h"
#include "cuda_internal.h"
#include "hd/contact.h" /* TW_CONTACT_PASSES, TW_CONTACT_GTOL, TW_CONTACT_TOUCH */
#include "hd/element.h" /* TW_GREEN_PACK */
#include "hd/integrator.h" /* newton_refine's decisions */
#include "hd/step_hanging.h" /* tw_hanging_device_rows */

tw_status tw_cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return TW_OK;
    cudaGetLastError(); /* clear a sticky-less error so the next call is not blamed */
    return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

tw_status tw_cuda_malloc(void **p, size_t bytes, const char *what, const char *hint, const char *file, int line)
{
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) return TW_OK;
    *p = NULL;
    if (e != cudaErrorMemoryAllocation) return tw_cuda_check(e, "cudaMalloc", file, line);
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaError_t info = cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    if (info != cudaSuccess)
        return tw_fail(TW_ERR_DEVICE,
                       "%s:%d: out of device memory: cudaMalloc of %zu bytes for %s failed (free memory unknown: "
                       "cudaMemGetInfo failed: %s); %s",
                       file, line, bytes, what, cudaGetErrorString(info), hint);
    return tw_fail(TW_ERR_DEVICE,
                   "%s:%d: out of device memory: cudaMalloc of %zu bytes for %s failed (the device has %zu of %zu "
                   "bytes free); %s",
                   file, line, bytes, what, free_b, total_b, hint);
}

tw_status tw_cusparse_check(cusparseStatus_t e, const char *call, const char *file, int line)
{
    if (e == CUSPARSE_STATUS_SUCCESS) return TW_OK;
    return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s", file, line, call, cusparseGetErrorString(e));
}

extern "C" int tw_cuda_usable(char *why, size_t why_size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) snprintf(why, why_size, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        cudaGetLastError();
        return 0;
    }
    return 1;
}

/* tw_cuda_malloc with the bytes counted in cw->bytes. */
static tw_status device_alloc(tw_cuda_world *cw, void **p, size_t bytes, const char *what)
{
    if (bytes == 0) bytes = 16; /* a valid pointer for empty arrays */
    char hint[160];
    snprintf(hint, sizeof hint, "this CUDA world already uses %zu bytes; use a smaller mesh or --backend cpu", cw->bytes);
    tw_status s = tw_cuda_malloc(p, bytes, what, hint, __FILE__, __LINE__);
    if (s == TW_OK) cw->bytes += bytes;
    return s;
}

/* Allocates *p on the device and copies count elements of host from host. */
template <typename T> static tw_status upload_new(tw_cuda_world *cw, T **p, const T *host, size_t count, const char *what)
{
    tw_status s = device_alloc(cw, (void **)p, sizeof(T) * count, what);
    if (s != TW_OK) return s;
    if (count && host) TW_CUDA_TRY(cudaMemcpy(*p, host, sizeof(T) * count, cudaMemcpyHostToDevice));
    return TW_OK;
}

template <typename T> static tw_status alloc_zero(tw_cuda_world *cw, T **p, size_t count, const char *what)
{
    tw_status s = device_alloc(cw, (void **)p, sizeof(T) * count, what);
    if (s != TW_OK) return s;
    TW_CUDA_TRY(cudaMemset(*p, 0, sizeof(T) * (count ? count : 1)));
    return TW_OK;
}

static tw_status create_all(tw_cuda_world *cw, const tw_cuda_world_init *f)
{
    size_t n = (size_t)f->n, nt = (size_t)f->nt, nnzb = (size_t)f->nnzb, rn = n > nt ? n : nt;
    tw_cuda_data &d = cw->d;
    d.n = f->n;
    d.nt = f->nt;
    d.nnzb = f->nnzb;
    tw_status s;
#define TW_UP(field, src, count, what) \
    if ((s = upload_new(cw, &cw->field, src, count, what)) != TW_OK) return s
    TW_UP(tets, f->tets, 4 * nt, "element indices");
    TW_UP(g, f->g, 12 * nt, "shape gradients");
    TW_UP(vol, f->vol, nt, "volumes");
    TW_UP(lam, f->lam, nt, "Lame lambda");
    TW_UP(mu, f->mu, nt, "Lame mu");
    TW_UP(row_ptr, f->row_ptr, n + 1, "BSR row offsets");
    TW_UP(col, f->col, nnzb, "BSR columns");
    TW_UP(diag, f->diag, n, "BSR diagonal");
    TW_UP(contrib_ptr, f->contrib_ptr, nnzb + 1, "gather offsets");
    TW_UP(contrib, f->contrib, 16 * nt, "gather lists");
    TW_UP(vt_ptr, f->vt_ptr, n + 1, "vertex-element offsets");
    TW_UP(vt, f->vt, 4 * nt, "vertex-element lists");
    TW_UP(K, f->K, 9 * nnzb, "stiffness matrix");
    TW_UP(mass, f->mass, n, "vertex masses");
    TW_UP(X, f->X, 3 * n, "rest positions");
    TW_UP(edge_nbr, f->edge_nbr, 2 * n, "edge frames");
    {
        int *rows = (int *)tw_malloc(sizeof(int) * (nnzb ? nnzb : 1), "BSR block rows");
        if (!rows) return TW_ERR_NOMEM;
        for (int i = 0; i < f->n; i++)
            for (int b = f->row_ptr[i]; b < f->row_ptr[i + 1]; b++) rows[b] = i;
        s = upload_new(cw, &cw->block_row, rows, nnzb, "BSR block rows");
        free(rows);
        if (s != TW_OK) return s;
    }
    /* state */
    TW_UP(d.x, f->x, 3 * n, "positions");
    TW_UP(d.v, f->v, 3 * n, "velocities");
    TW_UP(d.fext, f->fext, 3 * n, "external forces");
    TW_UP(d.target, f->target, 3 * n, "kinematic targets");
    TW_UP(cons, f->cons, n, "constraints");
    TW_UP(colliders, f->colliders, (size_t)TW_MAX_COLLIDERS, "colliders");
    TW_UP(colliders_end, f->colliders, (size_t)TW_MAX_COLLIDERS, "colliders");
    TW_UP(d.fcons, f->cons, n, "contact filter");
    TW_UP(d.cnormal, f->cnormal, 3 * n, "contact normals");
    TW_UP(d.cdist, f->cdist, n, "contact distances");
    TW_UP(d.cmu, f->cmu, n, "contact friction");
    TW_UP(d.cimpulse, f->cimpulse, n, "contact impulses");
    TW_UP(d.cfric, f->cfric, n, "contact friction damping");
#undef TW_UP
    cw->ncolliders_up = f->ncolliders;
    /* scratch */
    if ((s = alloc_zero(cw, &d.R, 9 * rn, "rotations")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.S, TW_GREEN_PACK * nt, "element packs")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.fe, 12 * nt, "element forces")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.cfprev, 2 * n, "contact friction history")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.cslip, 3 * n, "contact slip friction")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.f, 3 * n, "elastic forces")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.rhs, 3 * n, "right-hand side")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.vnew, 3 * n, "new velocities")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.A, 9 * nnzb, "system matrix")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->r, 3 * n, "PCG vectors")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->z, 3 * n, "PCG vectors")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->p, 3 * n, "PCG vectors")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->q, 3 * n, "PCG vectors")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->dinv, 9 * n, "block-Jacobi preconditioner")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->partial, (size_t)TW_CUDA_REDUCE_VALUES * TW_CUDA_REDUCE_BLOCKS, "reduction partials")) != TW_OK)
        return s;
    if ((s = alloc_zero(cw, &cw->scalars, (size_t)TW_S_COUNT, "solver scalars")) != TW_OK) return s;
    {
        /* the fused PCG (cuda_pcg_fused.cu): its second direction buffer and
         * last-block tickets, allocated only when it is chosen */
        const char *pcg = getenv("TW_CUDA_PCG");
        cw->fused_pcg = pcg && strcmp(pcg, "fused") == 0;
        if (pcg && !cw->fused_pcg && strcmp(pcg, "unfused") != 0)
            fprintf(stderr, "tetwarp: TW_CUDA_PCG=%s is neither fused nor unfused; the PCG runs unfused\n", pcg);
        if (cw->fused_pcg) {
            if ((s = alloc_zero(cw, &cw->p2, 3 * n, "PCG vectors")) != TW_OK) return s;
            if ((s = alloc_zero(cw, &cw->ticket, 2, "PCG reduction tickets")) != TW_OK) return s;
        }
        /* the element methods' rotation and force in one kernel (cuda_kernels.cu) */
        const char *el = getenv("TW_CUDA_ELEMENT");
        cw->fused_element = el && strcmp(el, "fused") == 0;
        if (el && !cw->fused_element && strcmp(el, "separate") != 0)
            fprintf(stderr, "tetwarp: TW_CUDA_ELEMENT=%s is neither fused nor separate; the element kernels run "
                            "separate\n", el);
    }
    /* moving colliders and the force on them */
    if ((s = alloc_zero(cw, &d.ccol, n, "contact colliders")) != TW_OK) return s;
    TW_CUDA_TRY(cudaMemset(d.ccol, TW_CONTACT_NONE, n ? n : 1));
    if ((s = alloc_zero(cw, &d.cvel, 3 * n, "contact collider velocities")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.cpush, 3 * n, "contact forces")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->shift, 3 * n, "contact shift")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &cw->shift_rhs, 3 * n, "contact shift")) != TW_OK) return s;
    /* the integrator's state (cuda_integrators.cu): only its own arrays */
    d.xbase = d.x;
    d.vbase = d.v;
    if (f->integrator == TW_BDF2) {
        if ((s = alloc_zero(cw, &d.xb, 3 * n, "BDF2 base terms")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.vb, 3 * n, "BDF2 base terms")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.xprev, 3 * n, "BDF2 history")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.vprev, 3 * n, "BDF2 history")) != TW_OK) return s;
        d.xbase = d.xb;
        d.vbase = d.vb;
    } else if (f->integrator == TW_EXPLICIT_NEWMARK) {
        if ((s = alloc_zero(cw, &d.acc, 3 * n, "Newmark accelerations")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.anew, 3 * n, "Newmark accelerations")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.xstart, 3 * n, "Newmark start positions")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.xres, 3 * n, "Newmark position roundings")) != TW_OK) return s;
        if ((s = alloc_zero(cw, &d.xres_next, 3 * n, "Newmark position roundings")) != TW_OK) return s;
    }
    /* the const views the kernels read */
    d.tets = cw->tets; d.row_ptr = cw->row_ptr; d.col = cw->col; d.diag = cw->diag;
    d.contrib_ptr = cw->contrib_ptr; d.contrib = cw->contrib; d.vt_ptr = cw->vt_ptr; d.vt = cw->vt;
    d.block_row = cw->block_row; d.edge_nbr = cw->edge_nbr;
    d.g = cw->g; d.vol = cw->vol; d.lam = cw->lam; d.mu = cw->mu; d.K = cw->K; d.mass = cw->mass; d.X = cw->X;
    d.cons = cw->cons;
    d.colliders = cw->colliders;
    d.colliders_end = cw->colliders_end;
    cw->pcg_filter = cw->cons;
    double mt = 0; /* the CPU's order (ghost forces, conserve_momentum) */
    for (int i = 0; i < f->n; i++) mt += f->mass[i];
    cw->mass_total = mt;
    {
        tw_cuda_params *pp = NULL;
        tw_cuda_status *sp = NULL;
        if ((s = alloc_zero(cw, &pp, 1, "step parameters")) != TW_OK) return s;
        cw->params = pp;
        if ((s = alloc_zero(cw, &sp, 1, "step status")) != TW_OK) return s;
        cw->status = sp;
        d.P = pp;
        d.st = sp;
    }
    TW_CUDA_TRY(cudaStreamCreateWithFlags(&cw->stream, cudaStreamNonBlocking));
    cw->have_stream = 1;
    for (int k = 0; k < 4; k++) TW_CUDA_TRY(cudaEventCreate(&cw->ev[k]));
    cw->have_events = 1;
    TW_CUDA_TRY(cudaDeviceSynchronize()); /* the memsets above ran on the legacy stream, the steps run on cw->stream */
    const char *graph = getenv("TW_CUDA_GRAPH");
    cw->use_graph = !(graph && strcmp(graph, "0") == 0);
    return tw_cuda_pcg_init(cw);
}

extern "C" tw_cuda_world *tw_cuda_world_create(const tw_cuda_world_init *init)
{
    tw_cuda_world *cw = (tw_cuda_world *)tw_calloc(1, sizeof *cw, "CUDA world");
    if (!cw) return NULL;
    if (create_all(cw, init) != TW_OK) {
        tw_cuda_world_destroy(cw);
        return NULL;
    }
    return cw;
}

static void hang_free(tw_cuda_world *cw);

extern "C" void tw_cuda_world_destroy(tw_cuda_world *cw)
{
    if (!cw) return;
    if (cw->have_stream) cudaStreamSynchronize(cw->stream);
    if (cw->exec) cudaGraphExecDestroy(cw->exec);
    hang_free(cw);
    tw_cuda_bodies_free(cw);
    {
        void *nb[] = {cw->newton_x, cw->newton_v, cw->newton_dv, cw->newton_g, cw->newton_rhs, cw->turn_R, cw->turn_x,
                      cw->bicg_p, cw->bicg_v, cw->bicg_s, cw->bicg_t, cw->bicg_rhat, cw->snap};
        for (size_t k = 0; k < sizeof nb / sizeof nb[0]; k++)
            if (nb[k]) cudaFree(nb[k]);
    }
    if (cw->hang_u) cudaFree(cw->hang_u);
    if (cw->hang_b) cudaFree(cw->hang_b);
    tw_cuda_amg_free(cw);
    tw_cuda_pcg_free(cw);
    if (cw->have_events)
        for (int k = 0; k < 4; k++) cudaEventDestroy(cw->ev[k]);
    if (cw->have_stream) cudaStreamDestroy(cw->stream);
    void *ptrs[] = {cw->d.xres_next, cw->d.xres,
                    cw->d.xstart, cw->d.anew, cw->d.acc, cw->d.vprev, cw->d.xprev, cw->d.vb, cw->d.xb,
                    cw->d.cimpulse, cw->d.cmu, cw->d.cdist, cw->d.cnormal, cw->d.cfric, cw->d.cfprev, cw->d.cslip, cw->d.fcons, cw->colliders,
                    cw->colliders_end, cw->d.ccol, cw->d.cvel, cw->d.cpush, cw->shift, cw->shift_rhs,
                    cw->ticket, cw->p2, cw->status, cw->params, cw->scalars, cw->partial, cw->dinv, cw->q, cw->p, cw->z, cw->r, cw->d.A, cw->d.vnew, cw->d.rhs,
                    cw->d.f, cw->d.fe, cw->d.S, cw->d.R, cw->cons, cw->d.target, cw->d.fext, cw->d.v, cw->d.x,
                    cw->block_row, cw->edge_nbr, cw->X, cw->mass, cw->K, cw->vt, cw->vt_ptr, cw->contrib,
                    cw->contrib_ptr, cw->diag, cw->col, cw->row_ptr, cw->mu, cw->lam, cw->vol, cw->g, cw->tets};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        if (ptrs[k]) cudaFree(ptrs[k]);
    cudaGetLastError(); /* destroy reports nothing */
    free(cw);
}

extern "C" size_t tw_cuda_world_memory_bytes(const tw_cuda_world *cw) { return cw ? cw->bytes : 0; }
extern "C" const tw_real *tw_cuda_world_device_positions(const tw_cuda_world *cw) { return cw ? cw->d.x : NULL; }
extern "C" void *tw_cuda_world_stream(const tw_cuda_world *cw) { return cw ? (void *)cw->stream : NULL; }
extern "C" size_t tw_cuda_world_d2h_bytes(const tw_cuda_world *cw) { return cw ? cw->d2h_bytes : 0; }


extern "C" void tw_cuda_world_set_graph(tw_cuda_world *cw, int on)
{
    if (!cw) return;
    cw->use_graph = on != 0;
    cw->graph_failed = 0; /* asked again: try again */
}

extern "C" const char *tw_cuda_world_spmv_name(const tw_cuda_world *cw)
{
    return !cw ? "none" : !cw->own_spmv ? "cusparse" : cw->warp_spmv ? "warp" : cw->half_spmv ? "half" : "own";
}

extern "C" int tw_cuda_world_pcg_fused(const tw_cuda_world *cw) { return cw && cw->fused_pcg ? 1 : 0; }

extern "C" int tw_cuda_world_element_fused(const tw_cuda_world *cw) { return cw && cw->fused_element ? 1 : 0; }

extern "C" int tw_cuda_world_graph(const tw_cuda_world *cw)
{
    return cw && cw->use_graph && !cw->graph_failed && cw->exec ? 1 : 0;
}

extern "C" tw_status tw_cuda_world_download(tw_cuda_world *cw, tw_real *x, tw_real *v)
{
    size_t bytes = sizeof(tw_real) * 3 * (size_t)cw->d.n;
    if (x) TW_CUDA_TRY(cudaMemcpyAsync(x, cw->d.x, bytes, cudaMemcpyDeviceToHost, cw->stream));
    if (v) TW_CUDA_TRY(cudaMemcpyAsync(v, cw->d.v, bytes, cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    cw->d2h_bytes += (x ? bytes : 0) + (v ? bytes : 0);
    return TW_OK;
}

/* The hanging vertices' device arrays, freed (nhang 0 after). */
static void hang_free(tw_cuda_world *cw)
{
    void *ptrs[] = {cw->hang_vertex, cw->hp_ptr, cw->hp_idx, cw->hp_wt, cw->ht_ptr, cw->ht_idx, cw->ht_wt};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        if (ptrs[k]) cudaFree(ptrs[k]);
    cw->hang_vertex = cw->hp_ptr = cw->hp_idx = cw->ht_ptr = cw->ht_idx = NULL;
    cw->hp_wt = cw->ht_wt = NULL;
    cw->bytes -= cw->hang_bytes;
    cw->hang_bytes = 0;
    cw->nhang = 0;
    free(cw->hang_lists);
    free(cw->hang_wlist);
    cw->hang_lists = NULL;
    cw->hang_wlist = NULL;
}

/* Are in's hanging lists the ones on the device? */
static int hang_same(const tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    int nh = in->nhang > 0 ? in->nhang : 0;
    if (nh != cw->nhang) return 0;
    if (!nh) return 1;
    const int *l = cw->hang_lists;
    int nnz = in->hang_ptr[nh];
    return l[0] == nh && memcmp(l + 1, in->hang_vertex, sizeof(int) * (size_t)nh) == 0 &&
           memcmp(l + 1 + nh, in->hang_ptr, sizeof(int) * ((size_t)nh + 1)) == 0 && l[2 + 2 * nh] == nnz &&
           memcmp(l + 3 + 2 * nh, in->hang_idx, sizeof(int) * (size_t)nnz) == 0 &&
           memcmp(cw->hang_wlist, in->hang_w, sizeof(double) * (size_t)nnz) == 0;
}

/* The hanging vertices (tw_world_set_hanging's lists) on the device, when
 * they changed: P and P^T in vertex numbering (hd/step_hanging.h), and the
 * PCG's two vectors. The captured graph goes with the old arrays. */
static tw_status upload_hanging(tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    if (hang_same(cw, in)) return TW_OK;
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream)); /* nothing queued reads the arrays freed next */
    hang_free(cw);
    if (cw->exec) { /* its kernels hold the old arrays */
        cudaGraphExecDestroy(cw->exec);
        cw->exec = NULL;
    }
    int nh = in->nhang, n = cw->d.n;
    if (nh <= 0) return TW_OK;
    int *pp = NULL, *pi = NULL, *tp = NULL, *ti = NULL, nnz = 0, nl = in->hang_ptr[nh];
    double *pw = NULL, *tw = NULL;
    if (tw_hanging_device_rows(n, nh, in->hang_vertex, in->hang_ptr, in->hang_idx, in->hang_w, &pp, &pi, &pw, &tp,
                               &ti, &tw, &nnz) != 0)
        return tw_fail(TW_ERR_NOMEM, "out of host memory for the hanging vertices' rows (%d vertices)", n);
    size_t before = cw->bytes;
    tw_status s = TW_OK;
    if (s == TW_OK) s = upload_new(cw, &cw->hang_vertex, in->hang_vertex, (size_t)nh, "hanging vertices");
    if (s == TW_OK) s = upload_new(cw, &cw->hp_ptr, pp, (size_t)n + 1, "hanging vertices' P");
    if (s == TW_OK) s = upload_new(cw, &cw->hp_idx, pi, (size_t)nnz, "hanging vertices' P");
    if (s == TW_OK) s = upload_new(cw, &cw->hp_wt, pw, (size_t)nnz, "hanging vertices' P");
    if (s == TW_OK) s = upload_new(cw, &cw->ht_ptr, tp, (size_t)n + 1, "hanging vertices' P^T");
    if (s == TW_OK) s = upload_new(cw, &cw->ht_idx, ti, (size_t)nnz, "hanging vertices' P^T");
    if (s == TW_OK) s = upload_new(cw, &cw->ht_wt, tw, (size_t)nnz, "hanging vertices' P^T");
    cw->hang_bytes = cw->bytes - before;
    free(pp); free(pi); free(pw); free(tp); free(ti); free(tw);
    if (s == TW_OK && !cw->hang_u) s = alloc_zero(cw, &cw->hang_u, 3 * (size_t)n, "hanging vertices' PCG vectors");
    if (s == TW_OK && !cw->hang_b) s = alloc_zero(cw, &cw->hang_b, 3 * (size_t)n, "hanging vertices' PCG vectors");
    if (s == TW_OK && cw->sparse && !cw->vec_hang_u)
        s = tw_cusparse_check(cusparseCreateDnVec(&cw->vec_hang_u, 3 * (int64_t)n, cw->hang_u,
                                                  sizeof(tw_real) == 8 ? CUDA_R_64F : CUDA_R_32F),
                              "cusparseCreateDnVec", __FILE__, __LINE__);
    if (s == TW_OK) {
        cw->hang_lists = (int *)malloc(sizeof(int) * (3 + 2 * (size_t)nh + (size_t)nl));
        cw->hang_wlist = (double *)malloc(sizeof(double) * ((size_t)nl + 1));
        if (!cw->hang_lists || !cw->hang_wlist) s = tw_fail(TW_ERR_NOMEM, "out of host memory for the hanging lists");
    }
    if (s != TW_OK) {
        hang_free(cw);
        return s;
    }
    int *l = cw->hang_lists;
    l[0] = nh;
    memcpy(l + 1, in->hang_vertex, sizeof(int) * (size_t)nh);
    memcpy(l + 1 + nh, in->hang_ptr, sizeof(int) * ((size_t)nh + 1));
    l[2 + 2 * nh] = nl;
    memcpy(l + 3 + 2 * nh, in->hang_idx, sizeof(int) * (size_t)nl);
    memcpy(cw->hang_wlist, in->hang_w, sizeof(double) * (size_t)nl);
    cw->nhang = nh;
    /* the uploads and memsets above ran on the legacy stream (cudaMemcpy of
     * pageable memory may return before its DMA is done), the steps run on
     * cw->stream, which does not wait for it */
    TW_CUDA_TRY(cudaDeviceSynchronize());
    return TW_OK;
}

/* The state the public setters change, when they did (in->dirty). x and v
 * go up only where the host's copy is current (in->x, in->v not NULL): when
 * the device's is newer no setter has touched it (setters that read or
 * partly write x or v download first, host/world.c tw_world_fetch). */
static tw_status upload_state(tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    size_t n = (size_t)cw->d.n, bytes = sizeof(tw_real) * 3 * n;
    cudaStream_t st = cw->stream;
    if (in->x) TW_CUDA_TRY(cudaMemcpyAsync(cw->d.x, in->x, bytes, cudaMemcpyHostToDevice, st));
    if (in->v) TW_CUDA_TRY(cudaMemcpyAsync(cw->d.v, in->v, bytes, cudaMemcpyHostToDevice, st));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->d.fext, in->fext, bytes, cudaMemcpyHostToDevice, st));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->d.target, in->target, bytes, cudaMemcpyHostToDevice, st));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->cons, in->cons, n, cudaMemcpyHostToDevice, st));
    cw->any_constrained = 0;
    for (size_t i = 0; i < n; i++)
        if (in->cons[i]) { cw->any_constrained = 1; break; }
    cw->ncolliders_up = in->ncolliders; /* the colliders go up every step (upload_colliders) */
    if (in->zero_impulses) /* the device alone holds them after a step: the host's are not current */
        TW_CUDA_TRY(cudaMemsetAsync(cw->d.cimpulse, 0, sizeof(tw_real) * n, st));
    /* the numbers (spring, method, dt, ...) go up with the params every step */
    return upload_hanging(cw, in);
}

/* The colliders where the step starts and where it leaves them, every step
 * with colliders (a few hundred bytes: a moving one changes every step). */
static tw_status upload_colliders(tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    size_t bytes = sizeof(tw_collider_def) * (size_t)in->ncolliders;
    if (!bytes) return TW_OK;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->colliders, in->colliders, bytes, cudaMemcpyHostToDevice, cw->stream));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->colliders_end, in->colliders_end ? in->colliders_end : in->colliders, bytes,
                                cudaMemcpyHostToDevice, cw->stream));
    return TW_OK;
}

/* What the device path cannot do yet: TW_ERR_UNSUPPORTED naming it. */
static tw_status check_supported(const tw_cuda_step_in *in)
{
    const tw_world_def *d = in->def;
    const char *what = NULL;
    char buf[160];
    if ((unsigned)d->integrator >= TW_INTEGRATOR_COUNT) {
        snprintf(buf, sizeof buf, "the integrator %d", (int)d->integrator);
        what = buf;
    } else if ((unsigned)d->method >= TW_METHOD_COUNT) {
        snprintf(buf, sizeof buf, "method %d", (int)d->method);
        what = buf;
    }
    if (!what) return TW_OK;
    return tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend does not support %s yet; use backend 'cpu' for it", what);
}

/* implicit_solve's numbers (heff = h: implicit Euler and BDF2's first step;
 * 2h/3: BDF2 with its history, as tw_world_step) and newmark_step's */
static void fill_params(const tw_cuda_step_in *in, tw_cuda_params *p)
{
    const tw_world_def *def = in->def;
    memset(p, 0, sizeof *p);
    p->history = def->integrator == TW_BDF2 && in->has_history;
    p->h = def->dt;
    p->heff = p->history ? 2 * def->dt / 3 : def->dt;
    p->alpha = def->damping_mass;
    p->beta = def->damping_stiffness;
    p->cm = 1 + p->heff * def->damping_mass;
    p->ck = p->heff * p->heff + p->heff * def->damping_stiffness;
    for (int c = 0; c < 3; c++) {
        p->gravity[c] = def->gravity[c];
        p->anchor[c] = in->spring_anchor[c];
    }
    p->spring_k = in->spring_k;
    p->spring_vertex = in->spring_vertex;
    p->warm_start = def->warm_start;
    p->fixed = def->cg_fixed_iterations > 0;
    p->limit = p->fixed ? def->cg_fixed_iterations : def->cg_max_iterations;
    p->tol = def->cg_tolerance;
    p->max_move = 10 * in->size;
    p->ncolliders = in->ncolliders;
    p->touch = TW_CONTACT_TOUCH * in->size;               /* tw_contact_detect */
    p->vt_min = TW_CONTACT_TOUCH * in->size / p->heff;    /* tw_contact_friction_implicit */
    p->gtol = TW_CONTACT_GTOL * in->size;     /* tw_contact_update */
    p->energy_skip_start = in->energy_start_known && !in->energy_projection; /* host/step.c's cache */
    p->patch_mass = in->patch_mass;           /* tw_contact_patch */
}

static tw_cuda_shape step_shape(const tw_cuda_world *cw, const tw_cuda_step_in *in)
{
    const tw_world_def *def = in->def;
    tw_cuda_shape sh;
    memset(&sh, 0, sizeof sh);
    int implicit = def->integrator != TW_EXPLICIT_NEWMARK;
    sh.method = (int)def->method;
    sh.ghost = (def->method == TW_WARP_VERTEX || def->method == TW_WARP_EDGE) && def->ghost_force_correction;
    sh.conserve = implicit && sh.ghost && !cw->any_constrained; /* newmark_step does not conserve */
    sh.exact_warp = implicit && def->warp_system == TW_WARP_SYSTEM_BICGSTAB;
    sh.colliders = in->ncolliders > 0;
    sh.integrator = (int)def->integrator;
    sh.energy_projection = implicit && in->energy_projection;
    sh.hanging = cw->nhang > 0;
    sh.bodies = in->bodies != NULL;
    sh.energy_check = in->energy_check;
    return sh;
}

static int same_shape(const tw_cuda_shape *a, const tw_cuda_shape *b)
{
    return a->method == b->method && a->ghost == b->ghost && a->conserve == b->conserve &&
           a->exact_warp == b->exact_warp && a->colliders == b->colliders && a->integrator == b->integrator &&
           a->energy_projection == b->energy_projection && a->hanging == b->hanging && a->bodies == b->bodies &&
           a->energy_check == b->energy_check;
}

/* An event on the stream: an event record node while capturing. */
static tw_status record(tw_cuda_world *cw, int k)
{
    if (cw->capturing) TW_CUDA_TRY(cudaEventRecordWithFlags(cw->ev[k], cw->stream, cudaEventRecordExternal));
    else TW_CUDA_TRY(cudaEventRecord(cw->ev[k], cw->stream));
    return TW_OK;
}

/* implicit_solve up to the CG loop */
static tw_status enqueue_before_loop(tw_cuda_world *cw, const tw_cuda_shape *sh)
{
    tw_method m = (tw_method)sh->method;
    int bdf2 = sh->integrator == TW_BDF2;
    tw_status s;
    if ((sh->energy_projection || sh->energy_check) && (s = tw_cuda_energy_start(cw, m)) != TW_OK)
        return s; /* at x, v before the step */
    if (sh->hanging && (s = tw_cuda_hanging_targets(cw)) != TW_OK) return s; /* tw_hanging_before_step */
    if (bdf2 && (s = tw_cuda_bdf2_base(cw)) != TW_OK) return s; /* tw_world_step, before implicit_solve */
    if ((s = record(cw, 0)) != TW_OK) return s;
    if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s;
    if ((s = record(cw, 1)) != TW_OK) return s;
    if ((s = tw_cuda_elastic_force(cw, m, sh->ghost)) != TW_OK) return s;
    if ((s = tw_cuda_rhs(cw)) != TW_OK) return s;
    if ((s = tw_cuda_assemble(cw, m, sh->exact_warp)) != TW_OK) return s;
    if (bdf2 && (s = tw_cuda_bdf2_rhs(cw)) != TW_OK) return s;
    if ((s = record(cw, 2)) != TW_OK) return s;
    if ((s = tw_cuda_prescribe(cw)) != TW_OK) return s;
    if (sh->bodies) return TW_OK; /* the host detects, tw_cuda_bodies_passes solves */
    if (sh->colliders && (s = tw_cuda_contact_mark(cw)) != TW_OK) return s;
    if (sh->colliders && cw->colliders_moving && (s = tw_cuda_contact_shift_begin(cw)) != TW_OK) return s;
    return cw->use_bicgstab ? TW_OK : tw_cuda_pcg_begin(cw); /* BiCGStab begins in its own call */
}

/* One host-driven solve of A vnew = rhs from vnew: BiCGStab for the exact
 * warped system, else the PCG (begin, host loop) */
static tw_status solve_host(tw_cuda_world *cw, const tw_cuda_params *hp, int begun)
{
    if (cw->use_bicgstab) return tw_cuda_bicgstab(cw, hp);
    tw_status s;
    if (!begun && (s = tw_cuda_pcg_begin(cw)) != TW_OK) return s;
    return tw_cuda_pcg_host_loop(cw, hp);
}

/* after the loop: the check, then (when it passed) the new state;
 * expand: the hanging vertices' vnew from the last solve's (the host-driven
 * step expands after each of its solves itself) */
static tw_status enqueue_after_loop(tw_cuda_world *cw, const tw_cuda_shape *sh, int expand)
{
    tw_status s;
    if (expand && sh->hanging && (s = tw_cuda_hanging_expand(cw)) != TW_OK) return s;
    if ((s = record(cw, 3)) != TW_OK) return s;
    /* with colliders, the contact passes (contact_passes) left the impulses */
    if ((s = tw_cuda_check_divergence(cw)) != TW_OK) return s;
    /* vnew only: harmless on failure; nothing with a contact (st->contacts) */
    if (sh->conserve && (s = tw_cuda_conserve_momentum(cw)) != TW_OK) return s;
    if ((s = tw_cuda_integrate(cw)) != TW_OK) return s;
    if (sh->colliders && (s = tw_cuda_contact_project(cw)) != TW_OK) return s;
    if (sh->hanging && (s = tw_cuda_hanging_average(cw)) != TW_OK) return s; /* tw_hanging_after_step */
    /* tw_world_step's last word on a committed step (nothing when it failed) */
    if (sh->energy_projection && (s = tw_cuda_energy_projection(cw, (tw_method)sh->method)) != TW_OK) return s;
    /* the check's; a world of bodies takes it after their projection (step_device), as the CPU does */
    return sh->energy_check && !sh->bodies ? tw_cuda_energy_end(cw, (tw_method)sh->method) : TW_OK;
}

/* explicit Newmark (newmark_step), from the acceleration in d.acc: the
 * events split rotations / forces and update as the CPU splits them */
static tw_status enqueue_explicit(tw_cuda_world *cw, const tw_cuda_shape *sh)
{
    tw_method m = (tw_method)sh->method;
    tw_status s;
    if (sh->energy_check && (s = tw_cuda_energy_start(cw, m)) != TW_OK) return s; /* before predict moves x */
    if (sh->hanging && (s = tw_cuda_hanging_targets(cw)) != TW_OK) return s; /* moved as kinematic vertices */
    if ((s = tw_cuda_newmark_predict(cw)) != TW_OK) return s;
    if (sh->colliders && (s = tw_cuda_contact_project_predicted(cw)) != TW_OK) return s;
    if ((s = record(cw, 0)) != TW_OK) return s;
    if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s;
    if ((s = record(cw, 1)) != TW_OK) return s;
    if ((s = tw_cuda_elastic_force(cw, m, sh->ghost)) != TW_OK) return s;
    if ((s = tw_cuda_newmark_update(cw)) != TW_OK) return s;
    if (sh->colliders && (s = tw_cuda_contact_project_newmark(cw)) != TW_OK) return s;
    if ((s = record(cw, 2)) != TW_OK) return s;
    if ((s = record(cw, 3)) != TW_OK) return s; /* no solve */
    if ((s = tw_cuda_check_divergence(cw)) != TW_OK) return s;
    if ((s = tw_cuda_newmark_commit(cw)) != TW_OK) return s;
    if (sh->hanging && (s = tw_cuda_hanging_average(cw)) != TW_OK) return s;
    return sh->energy_check ? tw_cuda_energy_end(cw, m) : TW_OK;
}

#if CUDART_VERSION >= 12040
/* CUDA 13 added edge data to these three (12.3-12.9 spell it _v2 / _v3) */
#if CUDART_VERSION >= 13000
#define TW_CAPTURE_INFO(st, cs, g, deps, n) cudaStreamGetCaptureInfo(st, cs, NULL, g, deps, NULL, n)
#define TW_SET_CAPTURE_DEPS(st, nodes, n) cudaStreamUpdateCaptureDependencies(st, nodes, NULL, n, cudaStreamSetCaptureDependencies)
#define TW_ADD_NODE(node, g, deps, n, params) cudaGraphAddNode(node, g, deps, NULL, n, params)
#else
#define TW_CAPTURE_INFO(st, cs, g, deps, n) cudaStreamGetCaptureInfo(st, cs, NULL, g, deps, n)
#define TW_SET_CAPTURE_DEPS(st, nodes, n) cudaStreamUpdateCaptureDependencies(st, nodes, n, cudaStreamSetCaptureDependencies)
#define TW_ADD_NODE(node, g, deps, n, params) cudaGraphAddNode(node, g, deps, n, params)
#endif

/* Captures the step of shape sh into *out (see the top of the file).
 * *in_body: 1 once the main graph is done and the loop body is being captured
 * (a failure then leaves the body's capture open; the body belongs to *out). */
static tw_status capture_step(tw_cuda_world *cw, const tw_cuda_shape *sh, cudaGraph_t *out, int *in_body)
{
    cudaStream_t st = cw->stream;
    cudaGraph_t g = NULL;
    cudaStreamCaptureStatus cs;
    const cudaGraphNode_t *deps = NULL;
    size_t ndeps = 0;
    tw_status s;
    if (sh->integrator == TW_EXPLICIT_NEWMARK) { /* no solve: no loop, no conditional node */
        TW_CUDA_TRY(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        cw->capturing = 1;
        if ((s = enqueue_explicit(cw, sh)) != TW_OK) return s;
        cw->capturing = 0;
        TW_CUDA_TRY(cudaStreamEndCapture(st, &g));
        *out = g;
        return TW_OK;
    }
    TW_CUDA_TRY(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    cw->capturing = 1;
    TW_CUDA_TRY(TW_CAPTURE_INFO(st, &cs, &g, NULL, NULL));
    TW_CUDA_TRY(cudaGraphConditionalHandleCreate(&cw->cond, g, 0, 0));
    cw->use_cond = 1;
    if ((s = enqueue_before_loop(cw, sh)) != TW_OK) return s;
    TW_CUDA_TRY(TW_CAPTURE_INFO(st, &cs, NULL, &deps, &ndeps));
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional}; /* the rest zero (the union has no default constructor) */
    cp.conditional.handle = cw->cond;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    cudaGraphNode_t loop;
    TW_CUDA_TRY(TW_ADD_NODE(&loop, g, deps, ndeps, &cp));
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    TW_CUDA_TRY(TW_SET_CAPTURE_DEPS(st, &loop, 1));
    if ((s = enqueue_after_loop(cw, sh, 1)) != TW_OK) return s;
    cw->capturing = 0;
    TW_CUDA_TRY(cudaStreamEndCapture(st, &g));
    *out = g; /* the caller owns it from here (destroyed on every path) */
    *in_body = 1;
    /* the loop body: one iteration, ending with the decision */
    TW_CUDA_TRY(cudaStreamBeginCaptureToGraph(st, body, NULL, NULL, 0, cudaStreamCaptureModeThreadLocal));
    cw->capturing = 1;
    if ((s = tw_cuda_pcg_iteration(cw)) != TW_OK) return s;
    cw->capturing = 0;
    cudaGraph_t body_out = NULL; /* the body again: owned by the node */
    TW_CUDA_TRY(cudaStreamEndCapture(st, &body_out));
    return TW_OK;
}
#endif

/* Captures and instantiates the step of shape sh into cw->exec. On failure
 * nothing is left capturing or allocated, and tw_last_error says why. */
static tw_status build_graph(tw_cuda_world *cw, const tw_cuda_shape *sh)
{
#if CUDART_VERSION >= 12040
    int driver = 0;
    TW_CUDA_TRY(cudaDriverGetVersion(&driver));
    if (driver < 12040)
        return tw_fail(TW_ERR_UNSUPPORTED, "the CUDA driver is version %d.%d; conditional graph nodes need 12.4",
                       driver / 1000, driver % 1000 / 10);
    if (cw->exec) {
        cudaGraphExecDestroy(cw->exec);
        cw->exec = NULL;
    }
    cudaGraph_t g = NULL;
    int in_body = 0;
    tw_status s = capture_step(cw, sh, &g, &in_body);
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(cw->stream, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone) {
        cudaGraph_t partial = NULL; /* a capture that stopped half way */
        cudaStreamEndCapture(cw->stream, &partial);
        if (partial && !in_body) cudaGraphDestroy(partial); /* a body is destroyed with g */
    }
    cw->capturing = 0;
    cw->use_cond = 0;
    if (s == TW_OK) s = tw_cuda_check(cudaGraphInstantiate(&cw->exec, g, 0), "cudaGraphInstantiate", __FILE__, __LINE__);
    if (g) cudaGraphDestroy(g);
    if (s != TW_OK) {
        cw->exec = NULL;
        cudaGetLastError();
        return s;
    }
    cw->shape = *sh;
    return TW_OK;
#else
    return tw_fail(TW_ERR_UNSUPPORTED, "built with CUDA %d; conditional graph nodes need 12.4", CUDART_VERSION);
#endif
}

/* cw->exec for shape sh, built when missing or of another shape; 0 when the
 * step must run host-driven (graph off, or it could not be built: said once
 * on stderr). */
static int graph_ready(tw_cuda_world *cw, const tw_cuda_shape *sh)
{
    if (!cw->use_graph || cw->graph_failed) return 0;
    if (cw->exec && same_shape(&cw->shape, sh)) return 1;
    if (build_graph(cw, sh) == TW_OK) return 1;
    if (!cw->own_spmv) {
        char why[512];
        snprintf(why, sizeof why, "%s", tw_last_error());
        cw->own_spmv = 1; /* cuSPARSE may be what cannot be captured */
        if (build_graph(cw, sh) == TW_OK) {
            fprintf(stderr, "tetwarp: the CUDA Graph could not capture cuSPARSE's SpMV (%s); the step's graph uses "
                            "the hand-written BSR SpMV\n", why);
            return 1;
        }
        cw->own_spmv = 0;
    }
    fprintf(stderr, "tetwarp: the step as a CUDA Graph is off (%s); stepping with the host-driven CG loop\n",
            tw_last_error());
    cw->graph_failed = 1;
    return 0;
}

/* Milliseconds between two of the step's events. A failed query reads 0,
 * and says so once per world on stderr: a 0 in tw_step_stats is then no
 * measurement, not a fast stage. */
static float elapsed(tw_cuda_world *cw, int from, int to)
{
    float ms = 0;
    cudaError_t e = cudaEventElapsedTime(&ms, cw->ev[from], cw->ev[to]);
    if (e == cudaSuccess) return ms;
    cudaGetLastError();
    if (!cw->timing_failed) {
        fprintf(stderr, "tetwarp: timing the CUDA step failed (cudaEventElapsedTime between events %d and %d: %s); "
                        "the step's ms_rotations, ms_assembly and ms_solve read 0 when it fails\n",
                from, to, cudaGetErrorString(e));
        cw->timing_failed = 1;
    }
    return 0;
}

/* Did the solve just read stop at the cap above the tolerance? */
static int capped(const tw_cuda_status *hs, const tw_cuda_params *hp)
{
    return !hp->fixed && hs->iterations >= hp->limit && !(hs->residual <= hp->tol);
}

/* host/step.c's contact passes after the first solve (host-driven: each
 * update's counts are read back): the active-set update, and another solve
 * while it changed the normal set, or for friction alone while it is off
 * Coulomb's, at most TW_CONTACT_FRICTION_PASSES times. */
static tw_status contact_passes(tw_cuda_world *cw, const tw_cuda_params *hp, tw_step_stats *st)
{
    tw_status s;
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    int iterations = cw->hstatus.iterations, cap = capped(&cw->hstatus, hp);
    int changed = 0, friction = 0, friction_passes = 0;
    st->contact_passes = 1;
    for (;;) {
        if ((s = tw_cuda_contact_update(cw, &changed, &friction)) != TW_OK) return s;
        if (!tw_contact_solve_again(changed, friction, friction_passes, st->contact_passes, cw->contact_passes))
            break;
        friction_passes += !changed;
        if (cw->colliders_moving && (s = tw_cuda_contact_shift_begin(cw)) != TW_OK) return s;
        if ((s = solve_host(cw, hp, 0)) != TW_OK) return s;
        if ((s = tw_cuda_hanging_expand(cw)) != TW_OK) return s; /* solve_system's expand, before the shift */
        if (cw->colliders_moving && (s = tw_cuda_contact_shift_end(cw)) != TW_OK) return s;
        if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
        iterations += cw->hstatus.iterations;
        cap |= capped(&cw->hstatus, hp);
        st->contact_passes++;
        changed = 0;
    }
    st->contacts_unresolved = changed;
    st->cg_iterations = iterations;
    st->cg_capped = cap;
    return tw_cuda_contact_impulses(cw);
}

/* |S G| of the step's residual at v (host/step.c step_residual): A v with
 * the A assembled last (into q; v may be p), the iterate's positions into
 * x, rotations and forces there, G; the sum read back (host-driven). */
static tw_status newton_residual(tw_cuda_world *cw, const tw_cuda_shape *sh, const tw_real *xb, const tw_real *v,
                                 double *g)
{
    tw_status s;
    size_t bytes = sizeof(tw_real) * 3 * (size_t)cw->d.n;
    if (v != cw->p) TW_CUDA_TRY(cudaMemcpyAsync(cw->p, v, bytes, cudaMemcpyDeviceToDevice, cw->stream));
    if ((s = tw_cuda_spmv_pq(cw)) != TW_OK) return s; /* the full A, as tw_bsr_spmv (no hanging P) */
    if ((s = tw_cuda_newton_positions(cw, xb, v)) != TW_OK) return s;
    if ((s = tw_cuda_rotations(cw, (tw_method)sh->method)) != TW_OK) return s;
    if ((s = tw_cuda_elastic_force(cw, (tw_method)sh->method, sh->ghost)) != TW_OK) return s;
    if ((s = tw_cuda_newton_residual(cw, v, cw->q, cw->newton_g)) != TW_OK) return s;
    double g2 = 0;
    TW_CUDA_TRY(cudaMemcpyAsync(&g2, cw->scalars + TW_S_G, sizeof g2, cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    *g = sqrt(g2);
    return TW_OK;
}

/* host/step.c newton_refine on the device, after the first solve (and its
 * contact passes) passed the divergence check: iterations 2 .. nit, each
 * A and G at the iterate, A dv = -G by the step's PCG (the filter, hanging
 * vertices and all; dv solved in vnew, which is saved and put back), a
 * backtracking line search on |S G|. HOST-DRIVEN: every residual norm is
 * read back and the host takes the CPU's decisions (stopping test, line
 * search) on it; the kernels are the graph's, launched one by one. x holds
 * the iterate's positions meanwhile and is restored, as is rhs. Adds the
 * solves' CG iterations and the Newton count to *st. */
static tw_status newton_refine(tw_cuda_world *cw, const tw_cuda_shape *sh, const tw_cuda_params *hp, int nit,
                               double tol, tw_step_stats *st)
{
    tw_cuda_data &d = cw->d;
    size_t n3 = 3 * (size_t)d.n, bytes = sizeof(tw_real) * n3;
    tw_status s;
    tw_real **bufs[] = {&cw->newton_x, &cw->newton_v, &cw->newton_dv, &cw->newton_g, &cw->newton_rhs};
    int fresh = 0;
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        if (!*bufs[k]) {
            if ((s = alloc_zero(cw, bufs[k], n3, "Newton vectors")) != TW_OK) return s;
            fresh = 1;
        }
    /* alloc_zero's memsets ran on the legacy stream, which cw->stream does
     * not wait for: one of them landing after the copies below would zero x's copy */
    if (fresh) TW_CUDA_TRY(cudaDeviceSynchronize());
    cudaStream_t str = cw->stream;
    /* x (implicit Euler's xbase too) and rhs kept; BDF2's xbase is xb */
    TW_CUDA_TRY(cudaMemcpyAsync(cw->newton_x, d.x, bytes, cudaMemcpyDeviceToDevice, str));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->newton_rhs, d.rhs, bytes, cudaMemcpyDeviceToDevice, str));
    const tw_real *xb = d.xprev ? d.xb : cw->newton_x;
    tw_method m = (tw_method)sh->method;
    double g0 = -1, g = 0;
    /* the contacts with friction held whole: the Newton steps keep the passes' friction */
    if (sh->colliders && (s = tw_cuda_contact_newton_hold(cw, 1)) != TW_OK) return s;
    for (int it = 1; it < nit; it++) {
        /* A at the current iterate, then G there */
        if ((s = tw_cuda_newton_positions(cw, xb, d.vnew)) != TW_OK) return s;
        if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s; /* and the packs the assembly reads */
        if ((s = tw_cuda_assemble(cw, m, sh->exact_warp)) != TW_OK) return s;
        if ((s = newton_residual(cw, sh, xb, d.vnew, &g)) != TW_OK) return s;
        g0 = tw_newton_reference(g0, g); /* the CPU's decisions: hd/integrator.h */
        if (tw_newton_converged(g, g0, tol, it)) break;
        /* A dv = -G from dv = 0, in vnew */
        if ((s = tw_cuda_newton_negate(cw, cw->newton_g, d.rhs)) != TW_OK) return s;
        TW_CUDA_TRY(cudaMemcpyAsync(cw->newton_v, d.vnew, bytes, cudaMemcpyDeviceToDevice, str));
        TW_CUDA_TRY(cudaMemsetAsync(d.vnew, 0, bytes, str));
        if ((s = solve_host(cw, hp, 0)) != TW_OK) return s;
        if ((s = tw_cuda_hanging_expand(cw)) != TW_OK) return s; /* solve_system's expand */
        if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
        st->cg_iterations += cw->hstatus.iterations;
        st->newton_iterations++;
        TW_CUDA_TRY(cudaMemcpyAsync(cw->newton_dv, d.vnew, bytes, cudaMemcpyDeviceToDevice, str));
        TW_CUDA_TRY(cudaMemcpyAsync(d.vnew, cw->newton_v, bytes, cudaMemcpyDeviceToDevice, str));
        double a = 1, best = INFINITY, best_a = 0;
        for (int ls = 0; ls < TW_NEWTON_LINE_STEPS; ls++, a *= 0.5) {
            if ((s = tw_cuda_newton_axpy(cw, d.vnew, cw->newton_dv, a, cw->p)) != TW_OK) return s;
            double gt = 0;
            if ((s = newton_residual(cw, sh, xb, cw->p, &gt)) != TW_OK) return s;
            if (gt < best) {
                best = gt;
                best_a = a;
            }
            if (tw_newton_accepts(gt, g, a)) break;
        }
        if (!(best < g)) break; /* no progress: keep the iterate */
        if ((s = tw_cuda_newton_axpy(cw, d.vnew, cw->newton_dv, best_a, d.vnew)) != TW_OK) return s;
        g = best;
    }
    if (sh->colliders && (s = tw_cuda_contact_newton_hold(cw, 0)) != TW_OK) return s;
    st->newton_residual = tw_newton_ratio(g, g0);
    TW_CUDA_TRY(cudaMemcpyAsync(d.x, cw->newton_x, bytes, cudaMemcpyDeviceToDevice, str));
    TW_CUDA_TRY(cudaMemcpyAsync(d.rhs, cw->newton_rhs, bytes, cudaMemcpyDeviceToDevice, str));
    return TW_OK;
}

/* host/step.c warp_turn_iterations on the device, after the first solve
 * (and its contact passes): the vertex rotations at the positions
 * xbase + heff v+ against the start's, which d.R holds since the step's
 * rotation pass; *nit = 2 when one turned by more than TW_WARP_TURN
 * (hd/step.h), else 1. HOST-DRIVEN: the count is read back. x and R are
 * put back (the CPU keeps the new R cached for the next step; the device
 * computes them there again). v+ is before the momentum correction, which
 * shifts it uniformly and turns no rotation. */
static tw_status warp_turn_iterations(tw_cuda_world *cw, const tw_cuda_shape *sh, int *nit)
{
    tw_cuda_data &d = cw->d;
    size_t n3 = 3 * (size_t)d.n, n9 = 9 * (size_t)d.n;
    tw_status s;
    *nit = 1;
    if (!cw->turn_R && (s = device_alloc(cw, (void **)&cw->turn_R, sizeof(tw_real) * n9, "the turn test's rotations")) != TW_OK)
        return s;
    if (!cw->turn_x && (s = device_alloc(cw, (void **)&cw->turn_x, sizeof(tw_real) * n3, "the turn test's positions")) != TW_OK)
        return s;
    cudaStream_t str = cw->stream;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->turn_R, d.R, sizeof(tw_real) * n9, cudaMemcpyDeviceToDevice, str));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->turn_x, d.x, sizeof(tw_real) * n3, cudaMemcpyDeviceToDevice, str));
    const tw_real *xb = d.xprev ? d.xb : cw->turn_x; /* newton_refine's xbase */
    if ((s = tw_cuda_newton_positions(cw, xb, d.vnew)) != TW_OK) return s;
    if ((s = tw_cuda_rotations(cw, (tw_method)sh->method)) != TW_OK) return s;
    if ((s = tw_cuda_warp_turn(cw, cw->turn_R)) != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpyAsync(d.x, cw->turn_x, sizeof(tw_real) * n3, cudaMemcpyDeviceToDevice, str));
    TW_CUDA_TRY(cudaMemcpyAsync(d.R, cw->turn_R, sizeof(tw_real) * n9, cudaMemcpyDeviceToDevice, str));
    double turned = 0;
    TW_CUDA_TRY(cudaMemcpyAsync(&turned, cw->scalars + TW_S_TURN, sizeof turned, cudaMemcpyDeviceToHost, str));
    TW_CUDA_TRY(cudaStreamSynchronize(str));
    *nit = turned > 0 ? 2 : 1;
    return TW_OK;
}

/* Where tw_world_step tests the turn: after implicit_solve passed its
 * divergence check (a failed first solve: no test, the step fails in
 * enqueue_after_loop's check as on the CPU, which recomputes the verdict). */
static tw_status turn_test_step(tw_cuda_world *cw, const tw_cuda_shape *sh, int *nit)
{
    tw_status s;
    *nit = 1;
    if ((s = tw_cuda_check_divergence(cw)) != TW_OK) return s;
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    if (!cw->hstatus.ok) return TW_OK;
    return warp_turn_iterations(cw, sh, nit);
}

/* What tw_world_step does between implicit_solve and the commit when
 * Newton iterations follow: implicit_solve's own divergence check on the
 * first solve's vnew (a failed one: no Newton, the step fails as on the
 * CPU), its momentum correction, newton_refine; then the first solve's
 * status is put back (its CG count and residual are the step's, as on the
 * CPU, and the final check reads its residual, finite by then) with the
 * check's verdict cleared. The contact passes counted their own iterations. */
static tw_status newton_step(tw_cuda_world *cw, const tw_cuda_shape *sh, const tw_cuda_params *hp,
                             const tw_cuda_step_in *in, int nit, tw_step_stats *st)
{
    tw_status s;
    if ((s = tw_cuda_check_divergence(cw)) != TW_OK) return s;
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    if (!cw->hstatus.ok) return TW_OK; /* enqueue_after_loop's check fails the same way */
    if (sh->conserve && (s = tw_cuda_conserve_momentum(cw)) != TW_OK) return s;
    tw_cuda_status first = cw->hstatus;
    tw_step_stats ns;
    memset(&ns, 0, sizeof ns);
    if ((s = newton_refine(cw, sh, hp, nit, in->def->newton_tolerance, &ns)) != TW_OK) return s;
    first.ok = 0;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->status, &first, sizeof first, cudaMemcpyHostToDevice, cw->stream));
    /* passes: st->cg_iterations holds the passes' sum; else step_device adds the first solve's */
    st->cg_iterations += ns.cg_iterations;
    st->newton_iterations += ns.newton_iterations;
    st->newton_residual = ns.newton_residual;
    return TW_OK;
}

/* The energy check's copy of the state at a step's start (host/step.c
 * energy_snapshot): x, v and the integrator's arrays that exist (BDF2's
 * xprev, vprev; Newmark's acc and carried rounding xres, which takes
 * vprev's place: a world has one integrator), for tw_cuda_world_restore;
 * after them (n values) the contact impulses, which the step's contact
 * passes update and the next step starts from (host/step.c puts them back
 * after any failed step). */
static void snapshot_arrays(tw_cuda_world *cw, tw_real *arrays[5])
{
    tw_cuda_data &d = cw->d;
    arrays[0] = d.x;
    arrays[1] = d.v;
    arrays[2] = d.xprev;
    arrays[3] = d.vprev ? d.vprev : d.xres;
    arrays[4] = d.acc;
}

static tw_status keep_state(tw_cuda_world *cw)
{
    size_t n3 = 3 * (size_t)cw->d.n, bytes = sizeof(tw_real) * n3;
    tw_status s;
    size_t nbytes = sizeof(tw_real) * (size_t)cw->d.n;
    if (!cw->snap &&
        (s = device_alloc(cw, (void **)&cw->snap, 5 * bytes + nbytes, "the energy check's state")) != TW_OK)
        return s;
    tw_real *a[5];
    snapshot_arrays(cw, a);
    for (int k = 0; k < 5; k++)
        if (a[k]) TW_CUDA_TRY(cudaMemcpyAsync(cw->snap + k * n3, a[k], bytes, cudaMemcpyDeviceToDevice, cw->stream));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->snap + 5 * n3, cw->d.cimpulse, nbytes, cudaMemcpyDeviceToDevice, cw->stream));
    cw->snap_kept = 1;
    return TW_OK;
}

extern "C" tw_status tw_cuda_world_restore(tw_cuda_world *cw)
{
    if (!cw || !cw->snap_kept)
        return tw_fail(TW_ERR_INVALID, "tw_cuda_world_restore: the last step kept no state (energy_snapshot unset)");
    size_t n3 = 3 * (size_t)cw->d.n, bytes = sizeof(tw_real) * n3;
    tw_real *a[5];
    snapshot_arrays(cw, a);
    for (int k = 0; k < 5; k++)
        if (a[k]) TW_CUDA_TRY(cudaMemcpyAsync(a[k], cw->snap + k * n3, bytes, cudaMemcpyDeviceToDevice, cw->stream));
    TW_CUDA_TRY(cudaMemcpyAsync(cw->d.cimpulse, cw->snap + 5 * n3, sizeof(tw_real) * (size_t)cw->d.n,
                                cudaMemcpyDeviceToDevice, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    cw->snap_kept = 0;
    return TW_OK;
}

/* The step on the device: implicit_solve and what follows it (implicit
 * Euler, BDF2), or newmark_step (host/step.c). */
static tw_status step_device(tw_cuda_world *cw, const tw_cuda_step_in *in, tw_cuda_step_out *out)
{
    tw_status s;
    if (in->dirty || in->ncolliders != cw->ncolliders_up) {
        if ((s = upload_state(cw, in)) != TW_OK) return s;
        out->uploaded = 1;
    }
    if ((s = upload_colliders(cw, in)) != TW_OK) return s;
    cw->snap_kept = 0;
    if (in->energy_snapshot && (s = keep_state(cw)) != TW_OK) return s; /* after the upload: the state now */
    cw->colliders_moving = in->colliders_moving;
    cw->contact_passes = in->def->contact_passes > 0 ? in->def->contact_passes : TW_CONTACT_PASSES;
    tw_cuda_params hp;
    fill_params(in, &hp);
    hp.energy_held = cw->any_constrained; /* bdf2_energy_projection's held */
    TW_CUDA_TRY(cudaMemcpyAsync(cw->params, &hp, sizeof hp, cudaMemcpyHostToDevice, cw->stream));
    tw_cuda_shape sh = step_shape(cw, in);
    int explicit_step = sh.integrator == TW_EXPLICIT_NEWMARK, bdf2 = sh.integrator == TW_BDF2;
    cw->pcg_filter = sh.colliders || sh.bodies ? cw->d.fcons : cw->cons; /* before any capture or launch */
    if (sh.colliders) {
        cw->contact_live = 1;
    } else if (cw->contact_live && !sh.bodies) {
        /* the CPU zeroes the impulses every step without colliders, and
         * counts no contact: so the device, once, when they are gone (with
         * body contact the host's detection zeroes them, keeping the body
         * contacts' own, and the contact update counts) */
        TW_CUDA_TRY(cudaMemsetAsync(cw->d.cimpulse, 0, sizeof(tw_real) * (size_t)cw->d.n, cw->stream));
        TW_CUDA_TRY(cudaMemsetAsync(&cw->status->contacts, 0, sizeof(int), cw->stream));
        cw->contact_live = 0;
    }
    /* host-driven: the contact passes read counts back */
    int passes = (sh.colliders || sh.bodies) && !explicit_step;
    /* Newton iterations after the first solve: host-driven (newton_refine);
     * warp-vertex's turn test, host-driven too, may ask for them */
    int newton = !explicit_step && in->newton_iterations > 1 && sh.method != TW_LINEAR;
    int turn_test = !explicit_step && !newton && in->warp_turn_test && sh.method == TW_WARP_VERTEX;
    /* solve_on's choice: BiCGStab on the exact warped system of a vertex method (host-driven) */
    cw->use_bicgstab = sh.exact_warp && (sh.method == TW_WARP_VERTEX || sh.method == TW_WARP_EDGE);
    cw->bicg_max = in->def->cg_max_iterations;
    int mg_setup = 0; /* the multigrid's set-up reads this step's matrix back (cuda_amg.cu): host-driven */
    if ((s = tw_cuda_amg_prepare(cw, in, &mg_setup)) != TW_OK) return s;
    int graph = !passes && !newton && !turn_test && !cw->use_bicgstab && !mg_setup && graph_ready(cw, &sh);
    if (explicit_step && !in->has_acc) { /* newmark_step's acceleration at the start, outside the graph */
        if ((s = tw_cuda_newmark_start(cw, (tw_method)sh.method, sh.ghost)) != TW_OK) return s;
        out->acc_computed = 1; /* as on the CPU, whether the step then passes or not */
    }
    if (graph) {
        TW_CUDA_TRY(cudaGraphLaunch(cw->exec, cw->stream));
    } else if (explicit_step) {
        if ((s = enqueue_explicit(cw, &sh)) != TW_OK) return s;
    } else {
        if ((s = enqueue_before_loop(cw, &sh)) != TW_OK) return s;
        if (sh.bodies && (s = tw_cuda_bodies_passes(cw, &hp, in->bodies, &out->stats)) != TW_OK) return s;
        if (!sh.bodies && (s = solve_host(cw, &hp, 1)) != TW_OK) return s;
        if ((s = tw_cuda_hanging_expand(cw)) != TW_OK) return s; /* nothing without hanging vertices */
        if (!sh.bodies && passes && cw->colliders_moving && (s = tw_cuda_contact_shift_end(cw)) != TW_OK) return s;
        if (!sh.bodies && passes && (s = contact_passes(cw, &hp, &out->stats)) != TW_OK) return s;
        /* BDF2's restart after an impact; before the commit: reads the step's start velocity */
        if (passes && bdf2 && (s = tw_cuda_contact_impacts(cw)) != TW_OK) return s;
        int nit = newton ? in->newton_iterations : 1;
        if (turn_test && (s = turn_test_step(cw, &sh, &nit)) != TW_OK) return s;
        if (nit > 1 && (s = newton_step(cw, &sh, &hp, in, nit, &out->stats)) != TW_OK) return s;
        if ((s = enqueue_after_loop(cw, &sh, 0)) != TW_OK) return s;
        if (sh.bodies && (s = tw_cuda_bodies_project(cw, in->bodies, &out->stats.contacts_unresolved)) != TW_OK)
            return s;
        if (sh.bodies && sh.energy_check && (s = tw_cuda_energy_end(cw, (tw_method)sh.method)) != TW_OK) return s;
    }
    if (in->energy_check) { /* the check's six scalars, waited for with the status */
        TW_CUDA_TRY(cudaMemcpyAsync(out->energy0, cw->scalars + TW_S_E0, sizeof out->energy0, cudaMemcpyDeviceToHost,
                                    cw->stream));
        TW_CUDA_TRY(cudaMemcpyAsync(out->energy1, cw->scalars + TW_S_E1, sizeof out->energy1, cudaMemcpyDeviceToHost,
                                    cw->stream));
    }
    if ((s = tw_cuda_read_status(cw)) != TW_OK) return s;
    if (sh.colliders && (s = tw_cuda_contact_forces(cw, in->ncolliders, out->collider_force)) != TW_OK) return s;
    const tw_cuda_status *hs = &cw->hstatus;
    tw_step_stats *st = &out->stats;
    if (!passes) {
        st->cg_iterations += hs->iterations; /* the first solve's (newton_step added the rest) */
        st->cg_capped = capped(hs, &hp);
    }
    st->residual = hs->residual;
    st->newton_iterations += explicit_step ? 0 : 1; /* newton_step counted the rest */
    st->contacts = sh.colliders || sh.bodies ? hs->contacts : 0;
    out->impacts = passes && bdf2 ? hs->impacts : 0;
    st->ms_rotations = elapsed(cw, 0, 1);
    st->ms_assembly = elapsed(cw, 1, 2);
    st->ms_solve = elapsed(cw, 2, 3);
    tw_divergence dv;
    dv.nonfinite_vertex = out->nonfinite_vertex = hs->nonfinite_vertex;
    dv.vmax = out->vmax = hs->vmax;
    dv.vmax_vertex = out->vmax_vertex = hs->vmax_vertex;
    out->committed = hs->ok;
    /* the device's verdict is the CPU's rule (hd/step.h): one that failed
     * where the rule passes is a bug here, not a divergence */
    if (!hs->ok && tw_divergence_ok(&dv, hs->residual, hp.h, hp.max_move))
        return tw_fail(TW_ERR_DEVICE, "step %ld: the device's divergence check failed with no cause recorded "
                                      "(vmax %g m/s at vertex %d): a bug in kernels/cuda_kernels.cu",
                       in->step + 1, hs->vmax, hs->vmax_vertex);
    return TW_OK;
}

extern "C" tw_status tw_cuda_world_step(tw_cuda_world *cw, const tw_cuda_step_in *in, tw_cuda_step_out *out)
{
    memset(out, 0, sizeof *out);
    out->nonfinite_vertex = -1;
    if (!cw || !in || !in->def) return tw_fail(TW_ERR_INVALID, "tw_cuda_world_step: no CUDA world or no input");
    tw_status s = check_supported(in);
    if (s == TW_OK && in->bodies) s = tw_cuda_bodies_check(cw, in);
    if (s != TW_OK) return s;
    if (in->nhang > 0 && cw->fused_pcg && in->def->integrator != TW_EXPLICIT_NEWMARK && !cw->fused_hang_noted) {
        fprintf(stderr, "tetwarp: hanging vertices (%d set) with TW_CUDA_PCG=fused: the steps with them run the "
                        "unfused PCG iteration (P^T A P as P, A, P^T; the fused kernels apply A alone)\n",
                in->nhang);
        cw->fused_hang_noted = 1;
    }
    out->started = 1;
    return step_device(cw, in, out);
}

/* ---- diagnostics for the parity tests (tw_cuda_array) ---- */

/* The device array `which` and its length in tw_real (the sizes create_all
 * allocated); NULL for an unknown one. */
static const tw_real *device_array(const tw_cuda_world *cw, tw_cuda_array which, size_t *count)
{
    const tw_cuda_data &d = cw->d;
    size_t n = (size_t)d.n, nt = (size_t)d.nt;
    switch (which) {
    case TW_CUDA_ARRAY_R: *count = 9 * (n > nt ? n : nt); return d.R;
    case TW_CUDA_ARRAY_S: *count = TW_GREEN_PACK * nt; return d.S;
    case TW_CUDA_ARRAY_F: *count = 3 * n; return d.f;
    case TW_CUDA_ARRAY_RHS: *count = 3 * n; return d.rhs;
    case TW_CUDA_ARRAY_A: *count = 9 * (size_t)d.nnzb; return d.A;
    case TW_CUDA_ARRAY_VNEW: *count = 3 * n; return d.vnew;
    default: *count = 0; return NULL;
    }
}

extern "C" size_t tw_cuda_world_array_count(const tw_cuda_world *cw, tw_cuda_array which)
{
    size_t count = 0;
    if (cw) device_array(cw, which, &count);
    return count;
}

extern "C" tw_status tw_cuda_world_download_array(tw_cuda_world *cw, tw_cuda_array which, tw_real *host, size_t count)
{
    if (!cw || (!host && count)) return tw_fail(TW_ERR_INVALID, "tw_cuda_world_download_array: no CUDA world or no host buffer");
    size_t have = 0;
    const tw_real *src = device_array(cw, which, &have);
    if (!src) return tw_fail(TW_ERR_INVALID, "tw_cuda_world_download_array: unknown array %d", (int)which);
    if (count > have)
        return tw_fail(TW_ERR_INVALID, "tw_cuda_world_download_array: %zu values asked of array %d, which holds %zu",
                       count, (int)which, have);
    size_t bytes = sizeof(tw_real) * count;
    if (bytes) TW_CUDA_TRY(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream)); /* the step's work, and this copy, done */
    cw->d2h_bytes += bytes;
    return TW_OK;
}

extern "C" tw_status tw_cuda_world_spmv(tw_cuda_world *cw, const tw_real *x, tw_real *y)
{
    if (!cw || !x || !y) return tw_fail(TW_ERR_INVALID, "tw_cuda_world_spmv: no CUDA world or no vector");
    size_t bytes = sizeof(tw_real) * 3 * (size_t)cw->d.n;
    tw_status s;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->p, x, bytes, cudaMemcpyHostToDevice, cw->stream));
    if ((s = tw_cuda_spmv_pq(cw)) != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpyAsync(y, cw->q, bytes, cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    cw->d2h_bytes += bytes;
    return TW_OK;
}
