// BDF2 and explicit Newmark on the device: host/step.c's tw_world_step and
// newmark_step, one thread per vertex or component, calling the per-vertex
// arithmetic its loops call (host/hd/integrator.h).
//
// BDF2 is implicit Euler's step (cuda_kernels.cu, cuda_pcg.cu) on other
// base terms: every implicit kernel steps from d.xbase / d.vbase, which are
// d.x / d.v themselves in an implicit Euler world and, in a BDF2 world, the
// arrays bdf2_base writes first thing in each step, (4 x_n - x_n-1) / 3 and
// (4 v_n - v_n-1) / 3, with heff = 2h/3 (the step parameters say which:
// tw_cuda_params.history); after the assembly bdf2_rhs subtracts
// heff K' (xbase - x) from the right-hand side (an SpMV with the step's A);
// integrate keeps x, v in xprev, vprev before it writes the new state. On
// the first step (no history, or a setter reset it) xbase, vbase are copies
// of x, v, heff = h and the correction is exactly zero: the CPU's fall back
// to implicit Euler, in the same graph.
//
// Explicit Newmark has no solve: predict (xstart = x, x = the predicted
// positions, so the rotation and force kernels evaluate at x as they always
// do), [contact projection], rotations, elastic forces, update (vnew, anew),
// [contact projection of vnew, anew], the divergence check, commit (v, acc
// on success, x restored from xstart on failure). The acceleration at the
// start comes from newmark_start, outside the graph, on the world's first
// step and after a setter reset it (tw_cuda_step_in.has_acc).
//
// NEVER RUN ON A GPU: written and compiled (float and double builds, nvcc 13,
// sm_90) on a machine without one; tests/test_gpu_backend.c's bdf2 and
// explicit cases against the CPU are what a session with a device runs
// first.
#include "cuda_internal.h"
#include "hd/integrator.h"

namespace {

/* ---- BDF2 ---- */

__global__ void bdf2_base_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    if (d.P->history) {
        d.xb[k] = tw_bdf2_base(d.x[k], d.xprev[k]);
        d.vb[k] = tw_bdf2_base(d.v[k], d.vprev[k]);
    } else { /* the first step: implicit Euler */
        d.xb[k] = d.x[k];
        d.vb[k] = d.v[k];
    }
}

/* p = xbase - x, the displacement the correction applies K' to */
__global__ void bdf2_displacement_kernel(tw_cuda_data d, tw_real *p)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    p[k] = d.xbase[k] - d.x[k];
}

/* rhs -= heff (A p - cm M p) / ck, with q = A p */
__global__ void bdf2_rhs_kernel(tw_cuda_data d, const tw_real *p, const tw_real *q)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    const tw_cuda_params *P = d.P;
    d.rhs[k] = tw_bdf2_rhs_corrected(d.rhs[k], q[k], p[k], d.mass[k / 3], P->heff, P->cm, P->ck);
}

/* ---- explicit Newmark ---- */

/* a = M^-1 (f + f_ext) - alpha v at x (f from the force kernels) */
__global__ void newmark_start_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    int moving = d.mass[i] > 0 && !d.cons[i];
    tw_step_view s = tw_cuda_step_view(d);
    tw_real ext[3];
    tw_external_force_vertex(&s, d.x, i, ext); /* tw_external_force's body */
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        d.acc[k] = tw_newmark_start_acc(d.f[k] + ext[c], d.mass[i], d.v[k], d.P->alpha, moving);
    }
}

/* what the host reads of a step without a solve (host/step.c: 0 iterations,
 * residual 0); the divergence check then fills the rest */
__global__ void explicit_status_kernel(tw_cuda_status *st)
{
    st->active = 0;
    st->iterations = 0;
    st->negative_curvature = 0;
    st->bnorm = 1;
    st->rn = 0;
    st->residual = 0;
}

__global__ void newmark_predict_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    tw_real x = d.x[k];
    d.xstart[k] = x;
    d.x[k] = tw_newmark_position(d.cons[k / 3], x, d.v[k], d.acc[k], d.target[k], d.P->h);
}

/* vnew, anew from f at the predicted x (newmark_step's last loop) */
__global__ void newmark_update_kernel(tw_cuda_data d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    double h = d.P->h, alpha = d.P->alpha;
    tw_step_view s = tw_cuda_step_view(d);
    tw_real ext[3];
    tw_external_force_vertex(&s, d.x, i, ext); /* tw_external_force's body */
    for (int c = 0; c < 3; c++) {
        size_t k = 3 * (size_t)i + c;
        if (d.cons[i]) {
            d.vnew[k] = tw_newmark_constrained_velocity(d.x[k], d.xstart[k], h);
            d.anew[k] = 0;
            continue;
        }
        tw_newmark_velocity(d.f[k] + ext[c], d.mass[i], d.v[k], d.acc[k], h, alpha, &d.vnew[k],
                            &d.anew[k]);
    }
}

__global__ void newmark_commit_kernel(tw_cuda_data d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 3 * d.n) return;
    if (d.st->ok) {
        d.v[k] = d.vnew[k];
        d.acc[k] = d.anew[k];
    } else {
        d.x[k] = d.xstart[k]; /* a failed check leaves the state as it was */
    }
}

} // namespace

tw_status tw_cuda_bdf2_base(tw_cuda_world *cw)
{
    bdf2_base_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_bdf2_rhs(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    unsigned grid = tw_cuda_grid(3 * (long)d.n);
    bdf2_displacement_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->p);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_spmv_pq(cw); /* q = A p: the PCG's vectors are free until pcg_begin */
    if (s != TW_OK) return s;
    bdf2_rhs_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(d, cw->p, cw->q);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_start(tw_cuda_world *cw, tw_method m, int ghost_correction)
{
    tw_status s;
    if ((s = tw_cuda_rotations(cw, m)) != TW_OK) return s;
    if ((s = tw_cuda_elastic_force(cw, m, ghost_correction)) != TW_OK) return s;
    newmark_start_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_predict(tw_cuda_world *cw)
{
    explicit_status_kernel<<<1, 1, 0, cw->stream>>>(cw->d.st);
    TW_CUDA_LAUNCHED();
    newmark_predict_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_update(tw_cuda_world *cw)
{
    newmark_update_kernel<<<tw_cuda_grid(cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_newmark_commit(tw_cuda_world *cw)
{
    newmark_commit_kernel<<<tw_cuda_grid(3 * (long)cw->d.n), TW_CUDA_THREADS, 0, cw->stream>>>(cw->d);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
