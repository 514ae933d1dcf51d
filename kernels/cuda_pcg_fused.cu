// The warp-cooperative block-row SpMV (TW_CUDA_SPMV=warp) and the fused PCG
// iteration (TW_CUDA_PCG=fused): host/hd/pcg_fused.h has the design and
// the arithmetic; tests/test_pcg_fused.c replays it on the CPU.
//
// SpMV: TW_ROW_LANES lanes of a warp share a 3x3 block row, each lane a
// block at a time, so a row's lanes read one contiguous span of its blocks
// (TW_ROW_LANES x 36 bytes in float) instead of each thread walking its own
// row 540 bytes from its neighbour's; the lanes' three sums meet by a
// __shfl_xor_sync butterfly. Rows and groups are aligned to the warp
// (TW_CUDA_THREADS and TW_ROW_LANES divide 32 x k), and no lane leaves before
// the butterfly: every shuffle has all 32 lanes of its warp, so the full mask
// is right.
//
// Fused PCG: an iteration is two kernels instead of seven nodes (SpMV,
// filter + p.q, its finish, update, its finish, direction, decide):
//   fused_row_kernel     q = S A (z + beta p) with p' = z + beta p written
//                        for the own row; p'.q; the last block: pq, alpha
//                        (or the stop on pq <= 0)
//   fused_update_kernel  x += alpha p', r -= alpha q, z = S Dinv r; r.z, r.r;
//                        the last block: beta, the decision, the condition
// Reductions: a block's tree, one partial per block, and the last block
// (an atomicInc ticket, which wraps back to 0 by itself) sums the partials
// in index order: no float atomics, the same bits on every run. p and p'
// alternate between cw->p and cw->p2 by the parity of st->iterations, which
// only the update kernel's last block changes, after every block read it.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include <stdio.h>

#include "hd/pcg_fused.h"
#include "cuda_internal.h"

static_assert(TW_RED_THREADS == TW_CUDA_THREADS, "the fused reductions use the engine's block size");
static_assert(TW_RED_BLOCKS <= TW_CUDA_REDUCE_BLOCKS && 2 <= TW_CUDA_REDUCE_VALUES, "cw->partial holds the partials");
static_assert(32 % TW_ROW_LANES == 0 && TW_CUDA_THREADS % 32 == 0, "a row's lanes lie in one warp");

namespace {

/* The lanes' butterfly: every lane of a row ends with the row's sums (the
 * order of tw_row_butterfly). Called by all 32 lanes of the warp. */
__device__ __forceinline__ void row_butterfly(tw_real *y)
{
#pragma unroll
    for (int off = TW_ROW_LANES / 2; off > 0; off >>= 1)
#pragma unroll
        for (int c = 0; c < 3; c++) y[c] += __shfl_xor_sync(0xffffffffu, y[c], off);
}

/* y = A x, TW_ROW_LANES lanes per block row, one row per group of lanes */
__global__ void __launch_bounds__(TW_CUDA_THREADS)
    bsr_spmv_warp_kernel(int n, const int *__restrict__ row_ptr, const int *__restrict__ col,
                         const tw_real *__restrict__ val, const tw_real *__restrict__ x, tw_real *__restrict__ y,
                         const tw_cuda_status *st)
{
    if (st && !st->active) return; /* uniform across the grid */
    long i = ((long)blockIdx.x * TW_CUDA_THREADS + threadIdx.x) / TW_ROW_LANES;
    int lane = threadIdx.x % TW_ROW_LANES;
    tw_real v[3] = {0, 0, 0};
    if (i < n) tw_row_lane_product(row_ptr, col, val, x, (int)i, lane, v);
    row_butterfly(v);
    if (i < n && lane < 3) y[3 * i + lane] = lane == 0 ? v[0] : lane == 1 ? v[1] : v[2];
}

/* A block's NV sums (every thread's v) into partial[k * gridDim.x +
 * blockIdx.x]; in the last block to finish, total[k] = the sum over the
 * blocks (every thread of that block gets it) and the return is 1; the
 * others return 0. Every thread of the block calls it. */
template <int NV>
__device__ __forceinline__ int block_sum_last(const double (&v)[NV], double *partial, unsigned *ticket,
                                              double (&total)[NV])
{
    __shared__ double sh[NV][TW_RED_THREADS];
    __shared__ int last;
    int t = threadIdx.x;
    for (int k = 0; k < NV; k++) sh[k][t] = v[k];
    __syncthreads();
    for (int s = TW_RED_THREADS / 2; s > 0; s >>= 1) {
        for (int k = 0; k < NV; k++) tw_tree_step(sh[k], t, s);
        __syncthreads();
    }
    if (t == 0) {
        for (int k = 0; k < NV; k++) partial[k * gridDim.x + blockIdx.x] = sh[k][0];
        __threadfence(); /* the partials before the ticket */
        last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return 0; /* uniform across the block (shared, read after the barrier) */
    __threadfence(); /* the other blocks' partials after their tickets */
    for (int k = 0; k < NV; k++) sh[k][t] = tw_red_finish_part(partial + k * gridDim.x, gridDim.x, t);
    __syncthreads();
    for (int s = TW_RED_THREADS / 2; s > 0; s >>= 1) {
        for (int k = 0; k < NV; k++) tw_tree_step(sh[k], t, s);
        __syncthreads();
    }
    for (int k = 0; k < NV; k++) total[k] = sh[k][0];
    return 1;
}

/* q = S A (z + beta p), p' = z + beta p (p, p': p0 / p1 by the parity of
 * st->iterations); pq = p'.q; the last block: scalars PQ and ALPHA, or on
 * pq <= 0 the stop (negative curvature, as pcg_decide_kernel) */
__global__ void __launch_bounds__(TW_CUDA_THREADS)
    fused_row_kernel(int n, const int *__restrict__ row_ptr, const int *__restrict__ col,
                     const tw_real *__restrict__ val, const tw_real *__restrict__ z, tw_real *p0, tw_real *p1,
                     tw_real *__restrict__ q, const unsigned char *__restrict__ cons, const tw_real *__restrict__ nrm,
                     double *scalars, double *partial, unsigned *ticket, tw_cuda_status *st, tw_cuda_cond h,
                     int use_cond)
{
    if (!st->active) return; /* uniform: only a last block writes it, after every block read it */
    int odd = st->iterations & 1;
    const tw_real *p = odd ? p1 : p0;
    tw_real *pn = odd ? p0 : p1;
    tw_real beta = (tw_real)scalars[TW_S_BETA];
    int t = threadIdx.x, lane = t % TW_ROW_LANES, g = t / TW_ROW_LANES;
    double s[1] = {0};
    /* r0: the block's first row of the pass, uniform across the block, so
     * every lane reaches every butterfly */
    for (long r0 = (long)blockIdx.x * TW_ROW_GROUPS; r0 < n; r0 += (long)gridDim.x * TW_ROW_GROUPS) {
        long i = r0 + g;
        tw_real y[3] = {0, 0, 0};
        if (i < n) tw_row_lane_sum(row_ptr, col, val, z, p, beta, (int)i, lane, y);
        row_butterfly(y);
        if (i < n && lane == 0) s[0] += tw_row_finish((int)i, y, beta, z, p, pn, q, cons, nrm);
    }
    double tot[1];
    if (!block_sum_last<1>(s, partial, ticket, tot)) return;
    if (t == 0) {
        double pq = tot[0];
        scalars[TW_S_PQ] = pq;
        if (pq > 0) {
            scalars[TW_S_ALPHA] = tw_pcg_alpha(scalars[TW_S_RZ], pq);
        } else { /* also NaN */
            st->negative_curvature = 1;
            st->active = 0;
            tw_cuda_set_condition(h, use_cond, 0);
        }
    }
}

/* x += alpha p', r -= alpha q, z = S Dinv r; the last block: RZ_PREV, RZ,
 * RR, BETA and the decision (pcg_decide_kernel's) */
__global__ void __launch_bounds__(TW_CUDA_THREADS)
    fused_update_kernel(int n, const unsigned char *__restrict__ cons, const tw_real *__restrict__ nrm,
                        const tw_real *__restrict__ dinv, const tw_real *p0, const tw_real *p1,
                        const tw_real *__restrict__ q, tw_real *__restrict__ x, tw_real *__restrict__ r,
                        tw_real *__restrict__ z, double *scalars, double *partial, unsigned *ticket,
                        const tw_cuda_params *P, tw_cuda_status *st, tw_cuda_cond h, int use_cond)
{
    if (!st->active) return; /* uniform (the row kernel's stop included) */
    const tw_real *pn = st->iterations & 1 ? p0 : p1; /* what the row kernel wrote */
    tw_real alpha = (tw_real)scalars[TW_S_ALPHA];
    double s[2];
    tw_update_thread(blockIdx.x, threadIdx.x, gridDim.x, n, alpha, pn, q, dinv, cons, nrm, x, r, z, s);
    double tot[2];
    if (!block_sum_last<2>(s, partial, ticket, tot)) return;
    if (threadIdx.x == 0) {
        double rz_prev = scalars[TW_S_RZ], rn = 0;
        scalars[TW_S_RZ_PREV] = rz_prev;
        scalars[TW_S_RZ] = tot[0];
        scalars[TW_S_RR] = tot[1];
        scalars[TW_S_BETA] = tw_pcg_beta(tot[0], rz_prev); /* rz_prev > 0: the loop ran */
        int it = st->iterations;
        int go = tw_pcg_decide(&it, &rn, tot[1], tot[0], st->bnorm, P->limit, P->fixed, P->tol);
        st->iterations = it;
        st->rn = rn;
        st->residual = rn / st->bnorm;
        st->active = go;
        tw_cuda_set_condition(h, use_cond, go);
    }
}

} // namespace

tw_status tw_cuda_spmv_warp(tw_cuda_world *cw, const tw_real *x, tw_real *y, const tw_cuda_status *st)
{
    const tw_cuda_data &d = cw->d;
    bsr_spmv_warp_kernel<<<tw_cuda_grid((long)d.n * TW_ROW_LANES), TW_CUDA_THREADS, 0, cw->stream>>>(
        d.n, d.row_ptr, d.col, d.A, x, y, st);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_pcg_fused_iteration(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    if (!cw->p2 || !cw->ticket)
        return tw_fail(TW_ERR_INVALID, "%s:%d: the fused PCG's buffers were not allocated (TW_CUDA_PCG=fused is read "
                       "when the world is created)", __FILE__, __LINE__);
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    tw_cuda_cond h = tw_cuda_condition(cw);
    int nb_row = tw_red_blocks(n, TW_ROW_GROUPS), nb_vertex = tw_red_blocks(n, TW_RED_THREADS);
    fused_row_kernel<<<nb_row, TW_CUDA_THREADS, 0, cw->stream>>>(n, d.row_ptr, d.col, d.A, cw->z, cw->p, cw->p2, cw->q,
                                                                 cons, d.cnormal, cw->scalars, cw->partial, cw->ticket,
                                                                 d.st, h, cw->use_cond);
    TW_CUDA_LAUNCHED();
    fused_update_kernel<<<nb_vertex, TW_CUDA_THREADS, 0, cw->stream>>>(
        n, cons, d.cnormal, cw->dinv, cw->p, cw->p2, cw->q, d.vnew, cw->r, cw->z, cw->scalars, cw->partial,
        cw->ticket + 1, d.P, d.st, h, cw->use_cond);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}
