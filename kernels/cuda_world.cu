// The CUDA backend's world (see cuda_world.h): the constant FEM data uploaded
// once, the state and scratch on the device, and implicit Euler stepped there
// exactly as host/world.c's implicit_solve does it on the CPU:
//
//   rotations -> elastic force (+ ghost-force correction) -> rhs -> system
//   matrix by gather -> prescribed velocities -> filtered block-Jacobi PCG
//   (cuda_pcg.cu) -> divergence check -> momentum correction -> x += h v
//
// for the methods linear, warp-vertex, warp-edge, corot-element, green and
// hybrid. What the device path does not have yet returns TW_ERR_UNSUPPORTED
// naming it (never a silent fall back to the CPU): the integrators bdf2 and
// explicit-newmark, colliders, hanging vertices, newton_iterations > 1 and
// warp_system bicgstab.
//
// THIS CODE HAS NEVER RUN ON A GPU. It was written and compiled (float and
// double builds, nvcc 13, sm_90) on a machine without one; the parity tests
// in tests/test_gpu_backend.c are what a session with a device runs first.
//
// The CG loop is host-driven (one copy of a few scalars per iteration); the
// whole step as a CUDA Graph with the loop on the device is a later step.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
extern "C" {
#include "world.h"
}

tw_status tw_cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return TW_OK;
    cudaGetLastError(); /* clear a sticky-less error so the next call is not blamed */
    return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorName(e),
                   cudaGetErrorString(e));
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

/* cudaMalloc with the bytes counted; out of memory says how much was asked. */
static tw_status device_alloc(tw_cuda_world *cw, void **p, size_t bytes, const char *what)
{
    if (bytes == 0) bytes = 16; /* a valid pointer for empty arrays */
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        cudaGetLastError();
        *p = NULL;
        return tw_fail(TW_ERR_DEVICE,
                       "out of device memory: cudaMalloc of %zu bytes for %s failed (this world holds %zu bytes; the "
                       "device has %zu of %zu bytes free); use a smaller mesh or --backend cpu",
                       bytes, what, cw->bytes, free_b, total_b);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return tw_cuda_check(e, "cudaMalloc", __FILE__, __LINE__);
    }
    cw->bytes += bytes;
    return TW_OK;
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

static tw_status create_all(tw_cuda_world *cw, const tw_world *w)
{
    const tw_fem *f = &w->fem;
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
    TW_UP(edge_nbr, w->edge_nbr, 2 * n, "edge frames");
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
    TW_UP(d.x, w->x, 3 * n, "positions");
    TW_UP(d.v, w->v, 3 * n, "velocities");
    TW_UP(d.fext, w->fext, 3 * n, "external forces");
    TW_UP(d.target, w->target, 3 * n, "kinematic targets");
    TW_UP(cons, w->cons, n, "constraints");
#undef TW_UP
    /* scratch */
    if ((s = alloc_zero(cw, &d.R, 9 * rn, "rotations")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.S, 18 * nt, "stresses")) != TW_OK) return s;
    if ((s = alloc_zero(cw, &d.fe, 12 * nt, "element forces")) != TW_OK) return s;
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
    /* the const views the kernels read */
    d.tets = cw->tets; d.row_ptr = cw->row_ptr; d.col = cw->col; d.diag = cw->diag;
    d.contrib_ptr = cw->contrib_ptr; d.contrib = cw->contrib; d.vt_ptr = cw->vt_ptr; d.vt = cw->vt;
    d.block_row = cw->block_row; d.edge_nbr = cw->edge_nbr;
    d.g = cw->g; d.vol = cw->vol; d.lam = cw->lam; d.mu = cw->mu; d.K = cw->K; d.mass = cw->mass; d.X = cw->X;
    d.cons = cw->cons;
    double mt = 0; /* the CPU's order (ghost forces, conserve_momentum) */
    for (int i = 0; i < f->n; i++) mt += f->mass[i];
    cw->mass_total = mt;
    for (int k = 0; k < 4; k++) TW_CUDA_TRY(cudaEventCreate(&cw->ev[k]));
    cw->have_events = 1;
    return tw_cuda_pcg_init(cw);
}

extern "C" tw_cuda_world *tw_cuda_world_create(struct tw_world *w)
{
    tw_cuda_world *cw = (tw_cuda_world *)tw_calloc(1, sizeof *cw, "CUDA world");
    if (!cw) return NULL;
    if (create_all(cw, w) != TW_OK) {
        tw_cuda_world_destroy(cw);
        return NULL;
    }
    return cw;
}

extern "C" void tw_cuda_world_destroy(tw_cuda_world *cw)
{
    if (!cw) return;
    tw_cuda_pcg_free(cw);
    if (cw->have_events)
        for (int k = 0; k < 4; k++) cudaEventDestroy(cw->ev[k]);
    void *ptrs[] = {cw->scalars, cw->partial, cw->dinv, cw->q, cw->p, cw->z, cw->r, cw->d.A, cw->d.vnew, cw->d.rhs,
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
extern "C" size_t tw_cuda_world_d2h_bytes(const tw_cuda_world *cw) { return cw ? cw->d2h_bytes : 0; }

/* The state the public setters change, when they did (w->host_dirty). */
static tw_status upload_state(tw_cuda_world *cw, tw_world *w)
{
    size_t n = (size_t)w->fem.n;
    TW_CUDA_TRY(cudaMemcpy(cw->d.x, w->x, sizeof(tw_real) * 3 * n, cudaMemcpyHostToDevice));
    TW_CUDA_TRY(cudaMemcpy(cw->d.v, w->v, sizeof(tw_real) * 3 * n, cudaMemcpyHostToDevice));
    TW_CUDA_TRY(cudaMemcpy(cw->d.fext, w->fext, sizeof(tw_real) * 3 * n, cudaMemcpyHostToDevice));
    TW_CUDA_TRY(cudaMemcpy(cw->d.target, w->target, sizeof(tw_real) * 3 * n, cudaMemcpyHostToDevice));
    TW_CUDA_TRY(cudaMemcpy(cw->cons, w->cons, n, cudaMemcpyHostToDevice));
    cw->any_constrained = 0;
    for (size_t i = 0; i < n; i++)
        if (w->cons[i]) { cw->any_constrained = 1; break; }
    /* spring, method and dt are read from w at every step: nothing to copy */
    w->host_dirty = 0;
    return TW_OK;
}

/* What the device path cannot do yet: TW_ERR_UNSUPPORTED naming it. */
static tw_status check_supported(const tw_world *w)
{
    const tw_world_def *d = &w->def;
    int vertex_method = d->method == TW_WARP_VERTEX || d->method == TW_WARP_EDGE;
    const char *what = NULL;
    char buf[160];
    if (d->integrator != TW_IMPLICIT_EULER) {
        snprintf(buf, sizeof buf, "the integrator %s", tw_integrator_name(d->integrator));
        what = buf;
    } else if (w->ncolliders > 0) {
        snprintf(buf, sizeof buf, "colliders (%d added)", w->ncolliders);
        what = buf;
    } else if (w->nhang > 0) {
        snprintf(buf, sizeof buf, "hanging vertices (%d set)", w->nhang);
        what = buf;
    } else if (d->newton_iterations > 1 && d->method != TW_LINEAR) {
        snprintf(buf, sizeof buf, "newton_iterations = %d (only 1, one linearisation per step)", d->newton_iterations);
        what = buf;
    } else if (vertex_method && d->warp_system == TW_WARP_SYSTEM_BICGSTAB) {
        what = "warp_system bicgstab (BiCGStab on the exact warped system; the symmetric system with PCG runs)";
    } else if ((unsigned)d->method >= TW_METHOD_COUNT) {
        snprintf(buf, sizeof buf, "method %d", (int)d->method);
        what = buf;
    }
    if (!what) return TW_OK;
    return tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend does not support %s yet; use backend 'cpu' for it", what);
}

/* host/world.c check_velocities, on the downloaded v+ (same message). */
static tw_status check_velocities(const tw_world *w, const tw_real *v, double h, const tw_cuda_solve_result *sr)
{
    int n = w->fem.n, bad = -1;
    for (size_t i = 0; i < 3 * (size_t)n; i++)
        if (!isfinite(v[i])) { bad = (int)(i / 3); break; }
    if (bad >= 0 || !isfinite(sr->residual))
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): the solve produced a non-finite velocity at vertex %d (CG: %d iterations, "
                       "residual %g); reduce dt or check the material",
                       w->step + 1, w->time + h, bad, sr->iterations, sr->residual);
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

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return ms;
}

/* implicit_solve (implicit Euler: heff = h, xbase = x, vbase = v) and the
 * rest of tw_world_step, on the device. */
static tw_status step_device(tw_cuda_world *cw, tw_world *w, tw_step_stats *st)
{
    const tw_world_def *def = &w->def;
    size_t n3 = 3 * (size_t)w->fem.n;
    double h = def->dt, heff = h;
    double cm = 1 + heff * def->damping_mass, ck = heff * heff + heff * def->damping_stiffness;
    tw_method m = def->method;
    int vertex_method = m == TW_WARP_VERTEX || m == TW_WARP_EDGE;
    tw_status s;
    if (w->host_dirty && (s = upload_state(cw, w)) != TW_OK) return s;
    TW_CUDA_TRY(cudaEventRecord(cw->ev[0]));
    if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s;
    TW_CUDA_TRY(cudaEventRecord(cw->ev[1]));
    if ((s = tw_cuda_elastic_force(cw, m, vertex_method && def->ghost_force_correction)) != TW_OK) return s;
    if ((s = tw_cuda_rhs(cw, heff, def->gravity, w->spring_vertex, w->spring_anchor, w->spring_k)) != TW_OK) return s;
    if ((s = tw_cuda_assemble(cw, m, def->warp_system == TW_WARP_SYSTEM_BICGSTAB, cm, ck, w->spring_vertex,
                              w->spring_k)) != TW_OK)
        return s;
    TW_CUDA_TRY(cudaEventRecord(cw->ev[2]));
    if ((s = tw_cuda_prescribe(cw, def->warm_start, heff)) != TW_OK) return s;
    tw_cuda_solve_result sr;
    if ((s = tw_cuda_pcg(cw, def->cg_tolerance, def->cg_max_iterations, def->cg_fixed_iterations, &sr)) != TW_OK)
        return s;
    TW_CUDA_TRY(cudaEventRecord(cw->ev[3]));
    /* v+ into the host's scratch for the divergence check (w->x, w->v stay
     * as before the step when it fails) */
    TW_CUDA_TRY(cudaMemcpy(w->vnew, cw->d.vnew, sizeof(tw_real) * n3, cudaMemcpyDeviceToHost));
    cw->d2h_bytes += sizeof(tw_real) * n3;
    st->cg_iterations = sr.iterations;
    st->residual = sr.residual;
    st->newton_iterations = 1;
    st->ms_rotations = elapsed(cw->ev[0], cw->ev[1]);
    st->ms_assembly = elapsed(cw->ev[1], cw->ev[2]);
    st->ms_solve = elapsed(cw->ev[2], cw->ev[3]);
    if ((s = check_velocities(w, w->vnew, h, &sr)) != TW_OK) return s;
    int conserve = vertex_method && def->ghost_force_correction && !cw->any_constrained;
    if (conserve &&
        (s = tw_cuda_conserve_momentum(cw, heff, def->gravity, w->spring_vertex, w->spring_anchor, w->spring_k)) != TW_OK)
        return s;
    if ((s = tw_cuda_integrate(cw, heff)) != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpy(w->x, cw->d.x, sizeof(tw_real) * n3, cudaMemcpyDeviceToHost));
    cw->d2h_bytes += sizeof(tw_real) * n3;
    if (conserve) {
        TW_CUDA_TRY(cudaMemcpy(w->v, cw->d.v, sizeof(tw_real) * n3, cudaMemcpyDeviceToHost));
        cw->d2h_bytes += sizeof(tw_real) * n3;
    } else {
        memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
    }
    return TW_OK;
}

extern "C" tw_status tw_cuda_world_step(tw_cuda_world *cw, struct tw_world *w, tw_step_stats *stats)
{
    tw_step_stats st;
    memset(&st, 0, sizeof st);
    if (!cw || !w) return tw_fail(TW_ERR_INVALID, "tw_cuda_world_step: no CUDA world");
    tw_status s = check_supported(w);
    if (s != TW_OK) return s;
    double t0 = tw_now_ms();
    s = step_device(cw, w, &st);
    if (s == TW_OK) {
        w->step++;
        w->time += w->def.dt;
    } else {
        w->host_dirty = 1; /* the host state is the truth: re-upload it next step */
    }
    st.ms_total = tw_now_ms() - t0;
    st.ms_other = st.ms_total - st.ms_rotations - st.ms_assembly - st.ms_solve;
    if (stats) *stats = st;
    return s;
}
