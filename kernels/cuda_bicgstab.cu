// BiCGStab with block-Jacobi on the device (host/solver_impl.h
// tw_bicgstab), for warp-vertex's and warp-edge's exact warped system
// (warp_system bicgstab: R_i K_ij R_j^T, not symmetric), solving
// A vnew = rhs from vnew with the step's filter (cw->pcg_filter).
//
// HOST-DRIVEN: each iteration reads its scalars back (rho, r.v, |s|, t.t
// and t.s, |r|: five waits per iteration) and the host runs the CPU's
// recurrences and stopping rules on them, in double: host/hd/bicgstab.h's
// functions, which tw_bicgstab calls too; the vectors stay on the device.
// So a step with it never runs as a graph (cuda_world.cu). The products go
// through the PCG's p and q (its operator, tw_cuda_operator_pq), the
// preconditioned vectors in its z, the residual in its r. Dots are the deterministic two-pass reductions of
// cuda_reduce.cuh, in double as on the CPU (the CPU sums serially: the last
// bits differ). With hanging vertices it solves the reduced system
// P^T A P v = P^T rhs as host/step.c solve_system does, in vertex numbering:
// the PCG's block-Jacobi of P^T A P, P^T rhs and its operator P, A, P^T
// (cuda_pcg.cu tw_cuda_solve_prepare, tw_cuda_operator_pq); the hanging
// vertices are kinematic, so the filter zeroes their rows, and their vnew
// is expanded after the solve by the caller (tw_cuda_hanging_expand).
//
// NEVER RUN ON A GPU: written and compiled (nvcc 13, sm_90) on a machine
// without one; tests/test_gpu_parity.c's bicgstab cases (hanging_bicgstab_*
// with hanging vertices) are its checks.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_reduce.cuh"
#include "hd/bicgstab.h"

#include "hd/bsr_row_real.h" /* the CPU solvers' row bodies and block-Jacobi preconditioner */

namespace {

/* v = S v (tw_filter_apply) */
__global__ void bicg_filter_kernel(int n, const unsigned char *cons, const tw_real *nrm, tw_real *v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tw_filter_block(cons[i], nrm, i, v + 3 * (size_t)i);
}

/* z = S Dinv r (tw_block_precondition) */
__global__ void bicg_precondition_kernel(int n, const tw_real *dinv, const tw_real *r, tw_real *z,
                                         const unsigned char *cons, const tw_real *nrm)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tw_block_jacobi_vertex(dinv, r, i, cons[i], nrm, z + 3 * (size_t)i);
}

/* r = S(b - q) (q = A x); per block |S b|^2 (initial_residual's bnorm) */
__global__ void bicg_initial_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *b,
                                    const tw_real *q, tw_real *r, double *partial)
{
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            r[k] = b[k] - q[k];
        }
        tw_filter_block(cons[i], nrm, i, r + 3 * (size_t)i);
        const tw_real *bp = b + 3 * (size_t)i;
        double bi[3] = {bp[0], bp[1], bp[2]};
        s[0] += tw_filter_sb2(cons[i], nrm, i, bi); /* host/solver_impl.h initial_residual's |S b| */
    }
    tw_block_partials<1>(s, partial);
}

/* per block a.b, and c.d when c is not NULL (two rows) */
__global__ void bicg_dot_kernel(int n3, const tw_real *a, const tw_real *b, const tw_real *c, const tw_real *d,
                                double *partial)
{
    double s[2] = {0, 0};
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n3; k += gridDim.x * blockDim.x) {
        s[0] += (double)a[k] * (double)b[k];
        if (c) s[1] += (double)c[k] * (double)d[k];
    }
    tw_block_partials<2>(s, partial);
}

/* p = r + beta (p - omega v) */
__global__ void bicg_direction_kernel(int n3, const tw_real *r, const tw_real *v, tw_real beta, tw_real omega,
                                      tw_real *p)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n3) return;
    p[k] = r[k] + beta * (p[k] - omega * v[k]);
}

/* x += a y; out = in - a w (out may be in) */
__global__ void bicg_update_kernel(int n3, tw_real a, const tw_real *y, const tw_real *in, const tw_real *w,
                                   tw_real *x, tw_real *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n3) return;
    x[k] += a * y[k];
    out[k] = in[k] - a * w[k];
}

/* what the rest of the step reads of the solve (pcg_start / pcg_decide's fields) */
__global__ void bicg_status_kernel(tw_cuda_status *st, int iterations, double bnorm, double rn, double residual)
{
    st->active = 0;
    st->iterations = iterations;
    st->negative_curvature = 0;
    st->bnorm = bnorm;
    st->rn = rn;
    st->residual = residual;
    st->ok = 0;
}

} // namespace

/* sums of the dot kernel (one or two) read back */
static tw_status dots(tw_cuda_world *cw, const tw_real *a, const tw_real *b, const tw_real *c, const tw_real *d,
                      double *out)
{
    int n3 = 3 * cw->d.n;
    unsigned nb = tw_cuda_reduce_grid(n3);
    bicg_dot_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n3, a, b, c, d, cw->partial);
    TW_CUDA_LAUNCHED();
    tw_status s = tw_cuda_reduce_finish(cw, 2, (int)nb, TW_S_BICG);
    if (s != TW_OK) return s;
    TW_CUDA_TRY(cudaMemcpyAsync(out, cw->scalars + TW_S_BICG, sizeof(double) * (c ? 2 : 1), cudaMemcpyDeviceToHost,
                                cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    return TW_OK;
}

/* out = S A y, or S P^T A P y with hanging vertices (through the PCG's p
 * and q: tw_cuda_operator_pq) */
static tw_status product(tw_cuda_world *cw, const tw_real *y, tw_real *out)
{
    const tw_cuda_data &d = cw->d;
    size_t bytes = sizeof(tw_real) * 3 * (size_t)d.n;
    TW_CUDA_TRY(cudaMemcpyAsync(cw->p, y, bytes, cudaMemcpyDeviceToDevice, cw->stream));
    tw_status s = tw_cuda_operator_pq(cw);
    if (s != TW_OK) return s;
    bicg_filter_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, tw_cuda_pcg_filter(cw), d.cnormal,
                                                                            cw->q);
    TW_CUDA_LAUNCHED();
    TW_CUDA_TRY(cudaMemcpyAsync(out, cw->q, bytes, cudaMemcpyDeviceToDevice, cw->stream));
    return TW_OK;
}

tw_status tw_cuda_bicgstab(tw_cuda_world *cw, const tw_cuda_params *hp)
{
    tw_cuda_data &d = cw->d;
    int n = d.n, n3 = 3 * n;
    size_t bytes = sizeof(tw_real) * (size_t)n3;
    tw_status s;
    tw_real **bufs[] = {&cw->bicg_p, &cw->bicg_v, &cw->bicg_s, &cw->bicg_t, &cw->bicg_rhat};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        if (!*bufs[k]) {
            char hint[160];
            snprintf(hint, sizeof hint, "this CUDA world already uses %zu bytes; use a smaller mesh or --backend cpu",
                     cw->bytes);
            if ((s = tw_cuda_malloc((void **)bufs[k], bytes, "BiCGStab vectors", hint, __FILE__, __LINE__)) != TW_OK)
                return s;
            cw->bytes += bytes;
        }
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    cudaStream_t st = cw->stream;
    unsigned g = tw_cuda_grid(n), g3 = tw_cuda_grid(n3);
    tw_real *x = d.vnew, *r = cw->r, *y = cw->z, *p = cw->bicg_p, *v = cw->bicg_v, *sv = cw->bicg_s;
    tw_real *t = cw->bicg_t, *rhat = cw->bicg_rhat;
    /* block-Jacobi and b: of A and rhs, or of P^T A P and P^T rhs */
    const tw_real *b;
    if ((s = tw_cuda_solve_prepare(cw, &b)) != TW_OK) return s;
    /* r = S(b - A x), |S b| */
    TW_CUDA_TRY(cudaMemcpyAsync(cw->p, x, bytes, cudaMemcpyDeviceToDevice, st));
    if ((s = tw_cuda_operator_pq(cw)) != TW_OK) return s;
    unsigned nb = tw_cuda_reduce_grid(n);
    bicg_initial_kernel<<<nb, TW_CUDA_THREADS, 0, st>>>(n, cons, d.cnormal, b, cw->q, r, cw->partial);
    TW_CUDA_LAUNCHED();
    if ((s = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_BICG)) != TW_OK) return s;
    double bb = 0;
    TW_CUDA_TRY(cudaMemcpyAsync(&bb, cw->scalars + TW_S_BICG, sizeof bb, cudaMemcpyDeviceToHost, st));
    TW_CUDA_TRY(cudaStreamSynchronize(st));
    tw_bicg bs = tw_bicg_start(sqrt(bb), hp->tol); /* the scalars and every decision: hd/bicgstab.h */
    TW_CUDA_TRY(cudaMemcpyAsync(rhat, r, bytes, cudaMemcpyDeviceToDevice, st));
    TW_CUDA_TRY(cudaMemsetAsync(p, 0, bytes, st));
    TW_CUDA_TRY(cudaMemsetAsync(v, 0, bytes, st));
    double two[2];
    if ((s = dots(cw, r, r, NULL, NULL, two)) != TW_OK) return s;
    double rn = sqrt(two[0]);
    int it = 0, max_iterations = cw->bicg_max;
    while (tw_bicg_more(&bs, it, max_iterations, rn)) {
        if ((s = dots(cw, rhat, r, NULL, NULL, two)) != TW_OK) return s;
        double beta;
        if (!tw_bicg_beta(&bs, two[0], &beta)) break;
        bicg_direction_kernel<<<g3, TW_CUDA_THREADS, 0, st>>>(n3, r, v, (tw_real)beta, (tw_real)bs.omega, p);
        TW_CUDA_LAUNCHED();
        bicg_precondition_kernel<<<g, TW_CUDA_THREADS, 0, st>>>(n, cw->dinv, p, y, cons, d.cnormal);
        TW_CUDA_LAUNCHED();
        if ((s = product(cw, y, v)) != TW_OK) return s;
        if ((s = dots(cw, rhat, v, NULL, NULL, two)) != TW_OK) return s;
        if (!tw_bicg_alpha(&bs, two[0])) break;
        bicg_update_kernel<<<g3, TW_CUDA_THREADS, 0, st>>>(n3, (tw_real)bs.alpha, y, r, v, x, sv);
        TW_CUDA_LAUNCHED();
        it++;
        if ((s = dots(cw, sv, sv, NULL, NULL, two)) != TW_OK) return s;
        double sn = sqrt(two[0]);
        if (tw_bicg_converged(&bs, sn)) {
            TW_CUDA_TRY(cudaMemcpyAsync(r, sv, bytes, cudaMemcpyDeviceToDevice, st));
            rn = sn;
            break;
        }
        bicg_precondition_kernel<<<g, TW_CUDA_THREADS, 0, st>>>(n, cw->dinv, sv, y, cons, d.cnormal);
        TW_CUDA_LAUNCHED();
        if ((s = product(cw, y, t)) != TW_OK) return s;
        if ((s = dots(cw, t, t, t, sv, two)) != TW_OK) return s;
        double omega = tw_bicg_omega(&bs, two[0], two[1]);
        bicg_update_kernel<<<g3, TW_CUDA_THREADS, 0, st>>>(n3, (tw_real)omega, y, sv, t, x, r);
        TW_CUDA_LAUNCHED();
        if ((s = dots(cw, r, r, NULL, NULL, two)) != TW_OK) return s;
        rn = sqrt(two[0]);
        if (omega == 0) break;
    }
    bicg_status_kernel<<<1, 1, 0, st>>>(d.st, it, bs.bnorm, rn, tw_bicg_residual(&bs, rn));
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
