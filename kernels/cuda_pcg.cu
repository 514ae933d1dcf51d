// The filtered block-Jacobi PCG of host/solver_impl.h (Baraff-Witkin
// "modified PCG") on the device, for A vnew = rhs with A the BSR system
// matrix. SpMV by cuSPARSE's generic API on a BSR descriptor (block 3,
// row-major blocks, CUSPARSE_SPMV_BSR_ALG1), or the hand-written one thread
// per block row kernel below: from TW_OWN_SPMV_MIN_VERTICES vertices on,
// with TW_CUDA_SPMV=own in the environment (TW_CUDA_SPMV=cusparse: cuSPARSE
// at every size), or when cuSPARSE fails at init for any reason but memory,
// or its product on a random matrix and vector differs from the kernel's
// (tw_cuda_pcg_init); TW_CUDA_SPMV=warp: the warp-cooperative kernel of
// cuda_pcg_fused.cu (lanes of a warp per block row); TW_CUDA_SPMV=half: the
// symmetric half (host/hd/bsr_half.h: each block row reads its diagonal and
// upper blocks, and the blocks above it in its column transposed through a
// gather index, so the lower blocks are never read; one thread per row, no
// atomics), not while warp_system bicgstab's non-symmetric matrix is in
// use, and not inside the fused PCG's row kernel. TW_CUDA_PCG=fused (read
// by cuda_world.cu at creation) replaces the iteration below by
// cuda_pcg_fused.cu's two kernels, except while hanging vertices are set
// (its row kernel cannot apply P and P^T: they tie rows other blocks
// compute); the begin, the stopping rules' state and the host loop stay
// these.
// Vector updates, the preconditioner,
// the filter and the dot products are fused kernels; dots accumulate in
// double, as on the CPU, with deterministic two-pass reductions.
//
// The stopping rules are the CPU's (host/solver_impl.h), decided on the
// device: pcg_start after the initial residual and pcg_decide at the end of
// each iteration keep the loop's state in tw_cuda_status (active, iteration
// count, |r|, negative curvature); every per-iteration kernel returns at once
// when active is 0. Two drivers share these kernels:
//  - the graph (cuda_world.cu): the iteration is the body of a conditional
//    WHILE node and pcg_start / pcg_decide set its condition
//    (cudaGraphSetConditional, CUDA >= 12.4): no host round trip at all;
//  - the host loop (tw_cuda_pcg_host_loop, TW_CUDA_GRAPH=0 or no conditional
//    nodes): one read of the status per iteration with a tolerance, none with
//    a fixed iteration count (a budget launched at once; the device stops
//    early on rz <= 0 or negative curvature by making the rest no-ops).
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hd/step_hanging.h"
#include "cuda_amg.h"
#include "cuda_internal.h"
#include "cuda_reduce.cuh"

#include "hd/bsr_row_real.h" /* the CPU solvers' row bodies and block-Jacobi preconditioner */

namespace {

/* y = A x, one thread per block row (host/solver_impl.h tw_bsr_spmv) */
__global__ void bsr_spmv_kernel(int n, const int *row_ptr, const int *col, const tw_real *val, const tw_real *x,
                                tw_real *y, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || (st && !st->active)) return;
    tw_bsr_row_product(row_ptr, col, val, x, y, i);
}

/* y = A x from A's symmetric half, in place in the full BSR arrays
 * (host/solver_impl.h tw_bsr_half_spmv; host/hd/bsr_half.h) */
__global__ void bsr_half_spmv_kernel(int n, tw_bsr_half_index h, const tw_real *__restrict__ val,
                                     const tw_real *__restrict__ x, tw_real *__restrict__ y,
                                     const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || (st && !st->active)) return;
    tw_bsr_half_row_product(&h, val, x, y, i);
}

/* the half's gather index: each row links its upper blocks to their lower
 * positions (tw_bsr_half_link_row, which the CPU's index runs too); *missing
 * counts upper blocks without a partner */
__global__ void bsr_half_link_kernel(int n, const int *row_ptr, const int *col, const int *diag, int *lo_blk,
                                     int *missing)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    int m = tw_bsr_half_link_row(row_ptr, col, diag, lo_blk, j);
    if (m) atomicAdd(missing, m); /* a count: its order does not matter */
}

/* ---- hanging vertices: P^T A P as P, A, P^T (hd/step_hanging.h) ---- */

/* u = P x: every vertex's row (a non-hanging vertex copies itself, a
 * hanging one averages its constrainers: x's own hanging entries unread) */
__global__ void hang_expand_kernel(int n, const int *ptr, const int *idx, const double *wt, const tw_real *x,
                                   tw_real *u, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || (st && !st->active)) return;
    tw_hanging_row_expand(ptr, idx, wt, x, i, u + 3 * (size_t)i);
}

/* y = P^T b at the non-hanging vertices (y may be b: row J reads b at J and
 * at hanging vertices, which no thread writes); the hanging ones (empty
 * rows) keep what y held, which the filter zeroes */
__global__ void hang_restrict_kernel(int n, const int *ptr, const int *idx, const double *wt, const tw_real *b,
                                     tw_real *y, const tw_cuda_status *st)
{
    int J = blockIdx.x * blockDim.x + threadIdx.x;
    if (J >= n || (st && !st->active) || ptr[J] == ptr[J + 1]) return;
    tw_real out[3];
    tw_hanging_row_restrict(ptr, idx, wt, b, J, out);
    for (int c = 0; c < 3; c++) y[3 * (size_t)J + c] = out[c];
}

/* block-Jacobi of P^T A P: its diagonal block at a non-hanging vertex, A's
 * own at a hanging one (filtered anyway) */
__global__ void hang_block_jacobi_kernel(int n, const int *row_ptr, const int *col, const int *diag,
                                         const tw_real *val, const int *pt_ptr, const int *pt_idx,
                                         const double *pt_wt, tw_real *dinv)
{
    int J = blockIdx.x * blockDim.x + threadIdx.x;
    if (J >= n) return;
    if (pt_ptr[J] == pt_ptr[J + 1]) {
        tw_block_jacobi_inverse(val + 9 * (size_t)diag[J], dinv + 9 * (size_t)J);
        return;
    }
    tw_real D[9];
    tw_hanging_diag_block(row_ptr, col, val, pt_ptr, pt_idx, pt_wt, J, D);
    tw_block_jacobi_inverse(D, dinv + 9 * (size_t)J);
}

/* host/solver_impl.h tw_bsr_block_jacobi */
__global__ void block_jacobi_kernel(int n, const int *diag, const tw_real *val, tw_real *dinv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tw_block_jacobi_inverse(val + 9 * (size_t)diag[i], dinv + 9 * (size_t)i);
}

/* r = S(b - r) (r holds A x), z = S Dinv r, p = z; sums r.z, r.r, |S b|^2
 * (S b in double for a contact, as host/solver_impl.h initial_residual) */
__global__ void initial_residual_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *dinv,
                                        const tw_real *b, tw_real *r, tw_real *z, tw_real *p, double *partial)
{
    double s[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            r[k] = b[k] - r[k];
        }
        tw_filter_block(cons[i], nrm, i, r + 3 * (size_t)i);
        tw_block_jacobi_vertex(dinv, r, i, cons[i], nrm, z + 3 * (size_t)i);
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            p[k] = z[k];
            s[0] += (double)r[k] * (double)z[k];
            s[1] += (double)r[k] * (double)r[k];
        }
        const tw_real *bp = b + 3 * (size_t)i;
        double bi[3] = {bp[0], bp[1], bp[2]};
        s[2] += tw_filter_sb2(cons[i], nrm, i, bi); /* host/solver_impl.h initial_residual's |S b| */
    }
    tw_block_partials<3>(s, partial);
}

/* q = S q; sum p.q */
__global__ void filter_dot_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *p, tw_real *q,
                                  double *partial, const tw_cuda_status *st)
{
    if (!st->active) return; /* uniform across the grid */
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        tw_filter_block(cons[i], nrm, i, q + 3 * (size_t)i);
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            s[0] += (double)p[k] * (double)q[k];
        }
    }
    tw_block_partials<1>(s, partial);
}

/* alpha = rz / pq: x += alpha p, r -= alpha q, z = S Dinv r; sums r.z, r.r.
 * Does nothing when pq <= 0 (pcg_decide stops: negative curvature). */
__global__ void update_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *dinv,
                              const tw_real *p, const tw_real *q, tw_real *x, tw_real *r, tw_real *z, double *scalars,
                              double *partial, const tw_cuda_status *st)
{
    double pq = scalars[TW_S_PQ], rz = scalars[TW_S_RZ];
    if (!st->active || !(pq > 0)) return; /* uniform across the grid: no thread reaches tw_block_partials */
    tw_real alpha = (tw_real)(rz / pq);
    double s[2] = {0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
        }
        tw_block_jacobi_vertex(dinv, r, i, cons[i], nrm, z + 3 * (size_t)i);
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            s[0] += (double)r[k] * (double)z[k];
            s[1] += (double)r[k] * (double)r[k];
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) scalars[TW_S_RZ_PREV] = rz; /* nobody reads RZ_PREV here */
    tw_block_partials<2>(s, partial);
}

/* beta = rz_new / rz_prev: p = z + beta p */
__global__ void direction_kernel(int n3, const double *scalars, const tw_real *z, tw_real *p, const tw_cuda_status *st)
{
    if (!st->active || !(scalars[TW_S_PQ] > 0)) return;
    tw_real beta = (tw_real)(scalars[TW_S_RZ] / scalars[TW_S_RZ_PREV]);
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n3) return;
    p[k] = z[k] + beta * p[k];
}

/* host/solver_impl.h's loop test: go on while it < limit, the tolerance is
 * not met (unless fixed) and rz > 0 */
__device__ __forceinline__ int pcg_go_on(const tw_cuda_params *P, int it, double rn, double bnorm, double rz)
{
    return it < P->limit && (P->fixed || !(rn <= P->tol * bnorm)) && rz > 0;
}

/* after the initial residual (one thread); the fused PCG's first beta is 0 */
__global__ void pcg_start_kernel(const tw_cuda_params *P, tw_cuda_status *st, double *scalars, tw_cuda_cond h,
                                 int use_cond)
{
    scalars[TW_S_BETA] = 0;
    double bnorm = sqrt(scalars[TW_S_BB]);
    if (bnorm < 1e-300) bnorm = 1;
    double rn = sqrt(scalars[TW_S_RR]);
    st->iterations = 0;
    st->negative_curvature = 0;
    st->bnorm = bnorm;
    st->rn = rn;
    st->residual = rn / bnorm;
    st->ok = 0;
    st->active = pcg_go_on(P, 0, rn, bnorm, scalars[TW_S_RZ]);
    tw_cuda_set_condition(h, use_cond, st->active);
}

/* at the end of an iteration (one thread): pq <= 0 stops with |r| as it was */
__global__ void pcg_decide_kernel(const tw_cuda_params *P, tw_cuda_status *st, const double *scalars, tw_cuda_cond h,
                                  int use_cond)
{
    if (st->active) {
        if (!(scalars[TW_S_PQ] > 0)) {
            st->negative_curvature = 1;
            st->active = 0;
        } else {
            int it = ++st->iterations;
            double rn = sqrt(scalars[TW_S_RR]);
            st->rn = rn;
            st->residual = rn / st->bnorm;
            st->active = pcg_go_on(P, it, rn, st->bnorm, scalars[TW_S_RZ]);
        }
    }
    tw_cuda_set_condition(h, use_cond, st->active);
}

/* The multigrid-preconditioned PCG (TW_PRECOND_MG, cuda_amg.cu): the same
 * loop with z = S V r, the V-cycle V, instead of S Dinv r, so the
 * preconditioner leaves the initial-residual and update kernels. */

/* r = S(b - r) (r holds A x); sums r.r, |S b|^2 (into RR, BB) */
__global__ void mg_residual_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *b, tw_real *r,
                                   double *partial)
{
    double s[2] = {0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            r[k] = b[k] - r[k];
        }
        tw_filter_block(cons[i], nrm, i, r + 3 * (size_t)i);
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            s[0] += (double)r[k] * (double)r[k];
        }
        const tw_real *bp = b + 3 * (size_t)i;
        double bi[3] = {bp[0], bp[1], bp[2]};
        s[1] += tw_filter_sb2(cons[i], nrm, i, bi);
    }
    tw_block_partials<2>(s, partial);
}

/* z = S z (the V-cycle's output), p = z when p is set; sum r.z */
__global__ void mg_precond_dot_kernel(int n, const unsigned char *cons, const tw_real *nrm, const tw_real *r,
                                      tw_real *z, tw_real *p, double *partial, const tw_cuda_status *st)
{
    if (st && !st->active) return; /* uniform across the grid */
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        tw_filter_block(cons[i], nrm, i, z + 3 * (size_t)i);
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            if (p) p[k] = z[k];
            s[0] += (double)r[k] * (double)z[k];
        }
    }
    tw_block_partials<1>(s, partial);
}

/* alpha = rz / pq: x += alpha p, r -= alpha q; sum r.r. Nothing when pq <= 0. */
__global__ void mg_update_kernel(int n, const tw_real *p, const tw_real *q, tw_real *x, tw_real *r, double *scalars,
                                 double *partial, const tw_cuda_status *st)
{
    double pq = scalars[TW_S_PQ], rz = scalars[TW_S_RZ];
    if (!st->active || !(pq > 0)) return; /* uniform across the grid */
    tw_real alpha = (tw_real)(rz / pq);
    double s[1] = {0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
            s[0] += (double)r[k] * (double)r[k];
        }
    if (blockIdx.x == 0 && threadIdx.x == 0) scalars[TW_S_RZ_PREV] = rz;
    tw_block_partials<1>(s, partial);
}

/* scalars[first + k] = sum of partial[k * nb ..] over nb, k < nv (one block) */
__global__ void reduce_finish_kernel(const double *partial, int nb, int nv, double *scalars, int first)
{
    __shared__ double sh[TW_CUDA_THREADS];
    int t = threadIdx.x;
    for (int k = 0; k < nv; k++) {
        double s = 0;
        for (int j = t; j < nb; j += TW_CUDA_THREADS) s += partial[k * nb + j];
        sh[t] = s;
        __syncthreads();
        for (int h = TW_CUDA_THREADS / 2; h > 0; h >>= 1) {
            if (t < h) sh[t] += sh[t + h];
            __syncthreads();
        }
        if (t == 0) scalars[first + k] = sh[0];
        __syncthreads();
    }
}

} // namespace

tw_status tw_cuda_reduce_finish(tw_cuda_world *cw, int nv, int nb, int first)
{
    reduce_finish_kernel<<<1, TW_CUDA_THREADS, 0, cw->stream>>>(cw->partial, nb, nv, cw->scalars, first);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

#ifdef TW_DOUBLE
#define TW_CUDA_REAL CUDA_R_64F
#else
#define TW_CUDA_REAL CUDA_R_32F
#endif

/* A deterministic uniform number in [-1, 1). */
static tw_real spmv_check_random(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (tw_real)((double)(*state >> 8) / (double)(1u << 23) - 1);
}

/* The SpMV an init check tests against bsr_spmv_kernel (spmv_check). */
typedef enum spmv_check_kind {
    SPMV_CHECK_CUSPARSE, /* cuSPARSE's, on the world's descriptors of A, p and q */
    SPMV_CHECK_HALF      /* bsr_half_spmv_kernel, over cw->half_lo_blk */
} spmv_check_kind;

/* Fills the check's matrix hA (9 nnzb) and vector hp (3n) on the host. */
typedef void (*spmv_check_fill)(const tw_cuda_world *cw, const void *ctx, tw_real *hA, tw_real *hp);

/* Any matrix: every entry random (the blocks not symmetric, so a transposed
 * block or a column-major reading changes the product by O(1)). */
static void spmv_fill_random(const tw_cuda_world *cw, const void *ctx, tw_real *hA, tw_real *hp)
{
    (void)ctx;
    unsigned seed = 12345u;
    for (size_t k = 0; k < 9 * (size_t)cw->d.nnzb; k++) hA[k] = spmv_check_random(&seed);
    for (size_t k = 0; k < 3 * (size_t)cw->d.n; k++) hp[k] = spmv_check_random(&seed);
}

/* One check of tw_cuda_pcg_init: fill gives A and p on the host; they go up,
 * q = A p by the SpMV under test (cuSPARSE's status in *sst), r = A p by
 * bsr_spmv_kernel; q and r come down, and A, p, q and r are zeroed again
 * (each step assembles A; nothing may see the check's numbers). *agree:
 * max |q - r| <= tol (1 + max |r|), NaN disagreeing (tol: sums of tens of
 * products of numbers in [-1, 1) in two orders, or one order contracted
 * differently; a block-order mix-up differs by O(1)); *worst and *scale
 * those two maxima. A CUDA error or no host memory is the returned failure;
 * what a disagreement or a cuSPARSE status means is the caller's. */
static tw_status spmv_check(tw_cuda_world *cw, spmv_check_kind kind, spmv_check_fill fill, const void *ctx,
                            cusparseStatus_t *sst, int *agree, double *worst, double *scale)
{
    const tw_cuda_data &d = cw->d;
    size_t n3 = 3 * (size_t)d.n, na = 9 * (size_t)d.nnzb;
    *agree = 0;
    *worst = *scale = 0;
    if (sst) *sst = CUSPARSE_STATUS_SUCCESS;
    tw_real *h = (tw_real *)malloc(sizeof(tw_real) * (na + 3 * n3 + 1));
    if (!h) return tw_fail(TW_ERR_NOMEM, "%s:%d: out of host memory for the SpMV check (%zu values)", __FILE__,
                           __LINE__, na + 3 * n3);
    tw_real *hA = h, *hp = h + na, *hq = hp + n3, *hr = hq + n3;
    fill(cw, ctx, hA, hp);
    tw_status ts = TW_OK;
#define TW_CHECK_TRY(call)                                                                 \
    do {                                                                                   \
        if (ts == TW_OK) ts = tw_cuda_check((call), #call, __FILE__, __LINE__);            \
    } while (0)
    TW_CHECK_TRY(cudaMemcpyAsync(d.A, hA, sizeof(tw_real) * na, cudaMemcpyHostToDevice, cw->stream));
    TW_CHECK_TRY(cudaMemcpyAsync(cw->p, hp, sizeof(tw_real) * n3, cudaMemcpyHostToDevice, cw->stream));
    if (ts == TW_OK && kind == SPMV_CHECK_CUSPARSE) {
        tw_real one = 1, zero = 0;
        *sst = cusparseSpMV(cw->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cw->matA, cw->vec_p, &zero, cw->vec_q,
                            TW_CUDA_REAL, CUSPARSE_SPMV_BSR_ALG1, cw->spmv_buffer);
    }
    if (ts == TW_OK && d.n > 0) { /* (a grid of 0 blocks is an invalid launch) */
        if (kind == SPMV_CHECK_HALF) {
            tw_bsr_half_index hx = tw_bsr_half_in_place(d.row_ptr, d.col, d.diag, cw->half_lo_blk);
            bsr_half_spmv_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, hx, d.A, cw->p, cw->q,
                                                                                         NULL);
            TW_CHECK_TRY(cudaGetLastError());
        }
        bsr_spmv_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, d.row_ptr, d.col, d.A, cw->p,
                                                                                cw->r, NULL);
        TW_CHECK_TRY(cudaGetLastError());
    }
    TW_CHECK_TRY(cudaMemcpyAsync(hq, cw->q, sizeof(tw_real) * n3, cudaMemcpyDeviceToHost, cw->stream));
    TW_CHECK_TRY(cudaMemcpyAsync(hr, cw->r, sizeof(tw_real) * n3, cudaMemcpyDeviceToHost, cw->stream));
    TW_CHECK_TRY(cudaMemsetAsync(d.A, 0, sizeof(tw_real) * na, cw->stream));
    TW_CHECK_TRY(cudaMemsetAsync(cw->p, 0, sizeof(tw_real) * n3, cw->stream));
    TW_CHECK_TRY(cudaMemsetAsync(cw->q, 0, sizeof(tw_real) * n3, cw->stream));
    TW_CHECK_TRY(cudaMemsetAsync(cw->r, 0, sizeof(tw_real) * n3, cw->stream));
    TW_CHECK_TRY(cudaStreamSynchronize(cw->stream));
#undef TW_CHECK_TRY
    for (size_t k = 0; ts == TW_OK && k < n3; k++) {
        double e = fabs((double)hq[k] - (double)hr[k]);
        if (!(e <= *worst)) *worst = e; /* NaN wins */
        if (fabs((double)hr[k]) > *scale) *scale = fabs((double)hr[k]);
    }
#ifdef TW_DOUBLE
    const double tol = 1e-10;
#else
    const double tol = 1e-4;
#endif
    *agree = ts == TW_OK && *worst <= tol * (1 + *scale);
    free(h);
    return ts;
}

/* The half's check matrix: symmetric (each lower block the transpose of its
 * upper partner, through the index hlo), its blocks not (a forgotten
 * transpose changes the product by O(1)). ctx: the host's row_ptr, diag and
 * index, in that order (int *[3]). */
static void spmv_fill_symmetric(const tw_cuda_world *cw, const void *ctx, tw_real *hA, tw_real *hp)
{
    const int *const *arr = (const int *const *)ctx;
    const int *hrow = arr[0], *hdiag = arr[1], *hlo = arr[2];
    unsigned seed = 54321u;
    for (int i = 0; i < cw->d.n; i++)
        for (int k = hdiag[i]; k < hrow[i + 1]; k++)
            for (int e = 0; e < 9; e++) hA[9 * (size_t)k + e] = spmv_check_random(&seed);
    for (int i = 0; i < cw->d.n; i++)
        for (int k = hrow[i]; k < hdiag[i]; k++)
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) hA[9 * (size_t)k + 3 * r + c] = hA[9 * (size_t)hlo[k] + 3 * c + r];
    for (size_t k = 0; k < 3 * (size_t)cw->d.n; k++) hp[k] = spmv_check_random(&seed);
}

/* The half's index on the device (TW_CUDA_SPMV=half) and a check of it
 * before any step: the pattern downloaded, the index built on the host by
 * the same row function and compared; then the half kernel's product of a
 * random symmetric matrix against the full kernel's (spmv_check: the same
 * order and expressions, equal to rounding at most). A difference, or a
 * pattern the index cannot cover, turns the half off (said on stderr); the
 * world then uses the full hand-written kernel. Out of memory or a CUDA
 * error fails. */
static tw_status half_init(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    size_t nb = (size_t)d.nnzb;
    char hint[160];
    snprintf(hint, sizeof hint, "this world already holds %zu bytes on the device; unset TW_CUDA_SPMV=half, use a "
             "smaller mesh or --backend cpu", cw->bytes);
    tw_status ms = tw_cuda_malloc((void **)&cw->half_lo_blk, sizeof(int) * (nb + 1) + sizeof(int),
                                  "the symmetric half's gather index", hint, __FILE__, __LINE__);
    if (ms != TW_OK) return ms;
    cw->bytes += sizeof(int) * (nb + 2);
    int *dmissing = cw->half_lo_blk + nb + 1;
    int *hi = (int *)malloc(sizeof(int) * (2 * nb + 2 * (size_t)d.n + 2));
    if (!hi)
        return tw_fail(TW_ERR_NOMEM, "%s:%d: out of host memory for the symmetric half's check (%zu blocks)",
                       __FILE__, __LINE__, nb);
    int *hrow = hi, *hcol = hrow + d.n + 1, *hdiag = hcol + nb, *hlo = hdiag + d.n;
    const char *why = NULL;
    int missing = 0;
    tw_status ts = TW_OK;
#define TW_HALF_TRY(call)                                                                  \
    do {                                                                                   \
        if (ts == TW_OK) ts = tw_cuda_check((call), #call, __FILE__, __LINE__);            \
    } while (0)
    TW_HALF_TRY(cudaMemsetAsync(cw->half_lo_blk, 0xff, sizeof(int) * (nb + 2), cw->stream));
    TW_HALF_TRY(cudaMemsetAsync(dmissing, 0, sizeof(int), cw->stream));
    if (ts == TW_OK && d.n > 0) {
        bsr_half_link_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, d.row_ptr, d.col, d.diag,
                                                                                     cw->half_lo_blk, dmissing);
        TW_HALF_TRY(cudaGetLastError());
    }
    TW_HALF_TRY(cudaMemcpyAsync(hrow, d.row_ptr, sizeof(int) * (d.n + 1), cudaMemcpyDeviceToHost, cw->stream));
    TW_HALF_TRY(cudaMemcpyAsync(hcol, d.col, sizeof(int) * nb, cudaMemcpyDeviceToHost, cw->stream));
    TW_HALF_TRY(cudaMemcpyAsync(hdiag, d.diag, sizeof(int) * d.n, cudaMemcpyDeviceToHost, cw->stream));
    TW_HALF_TRY(cudaMemcpyAsync(hlo, cw->half_lo_blk, sizeof(int) * nb, cudaMemcpyDeviceToHost, cw->stream));
    TW_HALF_TRY(cudaMemcpyAsync(&missing, dmissing, sizeof(int), cudaMemcpyDeviceToHost, cw->stream));
    TW_HALF_TRY(cudaStreamSynchronize(cw->stream));
#undef TW_HALF_TRY
    if (ts == TW_OK && missing) why = "the pattern is not structurally symmetric";
    /* the host's index by the same function, compared entry by entry */
    if (ts == TW_OK && !why) {
        int *mine = (int *)malloc(sizeof(int) * (nb + 1));
        if (!mine) why = "no host memory for the index check";
        for (size_t k = 0; mine && k < nb; k++) mine[k] = -1;
        for (int j = 0; mine && j < d.n; j++) missing += tw_bsr_half_link_row(hrow, hcol, hdiag, mine, j);
        for (int i = 0; mine && !why && i < d.n; i++)
            for (int k = hrow[i]; k < hdiag[i]; k++)
                if (hlo[k] != mine[k] || hlo[k] < 0) { why = "the device's gather index differs from the host's"; break; }
        free(mine);
    }
    /* a random symmetric matrix with unsymmetric blocks, both kernels */
    if (ts == TW_OK && !why) {
        const int *arr[3] = {hrow, hdiag, hlo};
        int agree = 0;
        double worst = 0, scale = 0;
        ts = spmv_check(cw, SPMV_CHECK_HALF, spmv_fill_symmetric, arr, NULL, &agree, &worst, &scale);
        if (ts == TW_OK && !agree) {
            fprintf(stderr, "tetwarp: the symmetric-half SpMV differs from the full kernel's on a random symmetric "
                            "matrix (max |difference| %.3g, largest |entry| %.3g)\n", worst, scale);
            why = "its product differs from the full kernel's";
        }
    }
    free(hi);
    if (ts != TW_OK) return ts;
    if (why) {
        fprintf(stderr, "tetwarp: TW_CUDA_SPMV=half is off (%s); using the hand-written full BSR SpMV kernel\n", why);
        cudaFree(cw->half_lo_blk);
        cw->bytes -= sizeof(int) * (nb + 2);
        cw->half_lo_blk = NULL;
        cw->half_spmv = 0;
    }
    return TW_OK;
}

/* A cuSPARSE call's status: on success nothing; out of memory a failure of
 * world creation; anything else falls back to the hand-written kernel. */
#define TW_SPMV_TRY(call)                                                                  \
    do {                                                                                   \
        st = (call);                                                                       \
        if (st == CUSPARSE_STATUS_ALLOC_FAILED) return tw_cusparse_check(st, #call, __FILE__, __LINE__); \
        if (st != CUSPARSE_STATUS_SUCCESS) {                                               \
            failed = #call;                                                                \
            goto fall_back;                                                                \
        }                                                                                  \
    } while (0)

/* The hand-written SpMV by default from this many vertices on. Measured on
 * an H100 (bench/results/nvidia-h100-80gb-hbm3/backends_targets.txt, ms of
 * the solve phase per CG iteration): at the 1M-tet bar, bunny and dog
 * (151k-175k vertices) and the 5M bar it is 1.30-1.60x faster than
 * cuSPARSE's BSR SpMV; at 10k tets 0.77-0.79x; at 100k tets (15k-25k
 * vertices) between 0.93x and 1.11x, so cuSPARSE stays below. */
#define TW_OWN_SPMV_MIN_VERTICES 50000

tw_status tw_cuda_pcg_init(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    size_t n3 = 3 * (size_t)d.n;
    const char *choice = getenv("TW_CUDA_SPMV");
    cw->warp_spmv = cw->half_spmv = 0;
    if (choice && strcmp(choice, "warp") == 0) cw->own_spmv = cw->warp_spmv = 1;
    else if (choice && strcmp(choice, "half") == 0) cw->own_spmv = cw->half_spmv = 1;
    else if (choice && strcmp(choice, "own") == 0) cw->own_spmv = 1;
    else if (choice && strcmp(choice, "cusparse") == 0) cw->own_spmv = 0;
    else cw->own_spmv = d.n >= TW_OWN_SPMV_MIN_VERTICES;
    if (choice && *choice && !cw->warp_spmv && !cw->half_spmv && strcmp(choice, "own") != 0 &&
        strcmp(choice, "cusparse") != 0)
        fprintf(stderr, "tetwarp: TW_CUDA_SPMV=%s is none of own, warp, half, cusparse; the SpMV is chosen by size "
                        "(%s)\n", choice, cw->own_spmv ? "own" : "cusparse");
    if (cw->half_spmv) return half_init(cw);
    if (cw->own_spmv) return TW_OK;
    cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
    const char *failed = NULL;
    tw_real one = 1, zero = 0;
    size_t bytes = 0;
    double worst = 0, scale = 0;
    int agree = 0;
    TW_SPMV_TRY(cusparseCreate(&cw->sparse));
    TW_SPMV_TRY(cusparseSetStream(cw->sparse, cw->stream));
    /* cuSPARSE 12.x (CUDA 13.0): block sizes come before the arrays */
    TW_SPMV_TRY(cusparseCreateBsr(&cw->matA, d.n, d.n, d.nnzb, 3, 3, cw->row_ptr, cw->col, d.A, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, TW_CUDA_REAL, CUSPARSE_ORDER_ROW));
    TW_SPMV_TRY(cusparseCreateDnVec(&cw->vec_vnew, (int64_t)n3, d.vnew, TW_CUDA_REAL));
    TW_SPMV_TRY(cusparseCreateDnVec(&cw->vec_r, (int64_t)n3, cw->r, TW_CUDA_REAL));
    TW_SPMV_TRY(cusparseCreateDnVec(&cw->vec_p, (int64_t)n3, cw->p, TW_CUDA_REAL));
    TW_SPMV_TRY(cusparseCreateDnVec(&cw->vec_q, (int64_t)n3, cw->q, TW_CUDA_REAL));
    TW_SPMV_TRY(cusparseSpMV_bufferSize(cw->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cw->matA, cw->vec_p, &zero,
                                        cw->vec_q, TW_CUDA_REAL, CUSPARSE_SPMV_BSR_ALG1, &bytes));
    if (bytes) {
        char hint[160];
        snprintf(hint, sizeof hint, "this world already holds %zu bytes on the device; use a smaller mesh or "
                 "--backend cpu", cw->bytes);
        tw_status ms = tw_cuda_malloc(&cw->spmv_buffer, bytes, "the cuSPARSE SpMV buffer", hint, __FILE__, __LINE__);
        if (ms != TW_OK) return ms;
        cw->spmv_buffer_bytes = bytes;
        cw->bytes += bytes;
    }
    /* one product now, outside any capture, compared with the kernel's: a
     * refusal that only SpMV itself reports, or a product that differs (a
     * block-order mix-up makes the operator non-symmetric and breaks PCG),
     * falls back here instead of failing or misleading every step */
    {
        tw_status ts = spmv_check(cw, SPMV_CHECK_CUSPARSE, spmv_fill_random, NULL, &st, &agree, &worst, &scale);
        if (ts != TW_OK) return ts;
    }
    TW_SPMV_TRY(st);
    if (!agree) {
        fprintf(stderr, "tetwarp: cuSPARSE's BSR SpMV differs from the hand-written kernel's on a random matrix and "
                        "vector (max |difference| %.3g, largest |entry| %.3g); using the hand-written BSR SpMV kernel\n",
                worst, scale);
        tw_cuda_pcg_free(cw);
        cw->own_spmv = 1;
    }
    return TW_OK;
fall_back:
    /* not a feature the user chose: the same product by the kernel above */
    fprintf(stderr, "tetwarp: cuSPARSE's SpMV on a 3x3 row-major BSR matrix failed (%s: %s); using the hand-written "
                    "BSR SpMV kernel\n", failed, cusparseGetErrorString(st));
    tw_cuda_pcg_free(cw);
    cw->own_spmv = 1;
    return TW_OK;
}
#undef TW_SPMV_TRY

void tw_cuda_pcg_free(tw_cuda_world *cw)
{
    if (cw->half_lo_blk) {
        cudaFree(cw->half_lo_blk);
        cw->bytes -= sizeof(int) * ((size_t)cw->d.nnzb + 2);
        cw->half_lo_blk = NULL;
    }
    if (cw->spmv_buffer) { cudaFree(cw->spmv_buffer); cw->bytes -= cw->spmv_buffer_bytes; }
    if (cw->vec_q) cusparseDestroyDnVec(cw->vec_q);
    if (cw->vec_p) cusparseDestroyDnVec(cw->vec_p);
    if (cw->vec_r) cusparseDestroyDnVec(cw->vec_r);
    if (cw->vec_vnew) cusparseDestroyDnVec(cw->vec_vnew);
    if (cw->vec_hang_u) cusparseDestroyDnVec(cw->vec_hang_u);
    cw->vec_hang_u = NULL;
    if (cw->matA) cusparseDestroySpMat(cw->matA);
    if (cw->sparse) cusparseDestroy(cw->sparse);
    cw->spmv_buffer = NULL;
    cw->spmv_buffer_bytes = 0;
    cw->vec_q = cw->vec_p = cw->vec_r = cw->vec_vnew = NULL;
    cw->matA = NULL;
    cw->sparse = NULL;
}

/* y = A x: vx, vy are the descriptors of x, y (cuSPARSE path); st: the
 * own kernel does nothing once the loop ended (NULL: always runs) */
static tw_status spmv(tw_cuda_world *cw, cusparseDnVecDescr_t vx, const tw_real *x, cusparseDnVecDescr_t vy,
                      tw_real *y, const tw_cuda_status *st)
{
    const tw_cuda_data &d = cw->d;
    if (cw->own_spmv && cw->warp_spmv) return tw_cuda_spmv_warp(cw, x, y, st);
    if (cw->own_spmv && cw->half_spmv && cw->half_lo_blk && !cw->use_bicgstab) {
        tw_bsr_half_index h = tw_bsr_half_in_place(d.row_ptr, d.col, d.diag, cw->half_lo_blk);
        bsr_half_spmv_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, h, d.A, x, y, st);
        TW_CUDA_LAUNCHED();
        return TW_OK;
    }
    if (cw->own_spmv) {
        bsr_spmv_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, d.row_ptr, d.col, d.A, x, y, st);
        TW_CUDA_LAUNCHED();
        return TW_OK;
    }
    tw_real one = 1, zero = 0;
    TW_CUSPARSE_TRY(cusparseSpMV(cw->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cw->matA, vx, &zero, vy,
                                 TW_CUDA_REAL, CUSPARSE_SPMV_BSR_ALG1, cw->spmv_buffer));
    return TW_OK;
}


/* The PCG's operator: y = A x, or with hanging vertices P^T A P x (P x
 * into hang_u, A of that, P^T in place) */
static tw_status pcg_spmv(tw_cuda_world *cw, cusparseDnVecDescr_t vx, const tw_real *x, cusparseDnVecDescr_t vy,
                          tw_real *y, const tw_cuda_status *st)
{
    if (!cw->nhang) return spmv(cw, vx, x, vy, y, st);
    int n = cw->d.n;
    hang_expand_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, cw->hp_ptr, cw->hp_idx, cw->hp_wt, x,
                                                                          cw->hang_u, st);
    TW_CUDA_LAUNCHED();
    tw_status s = spmv(cw, cw->vec_hang_u, cw->hang_u, vy, y, st);
    if (s != TW_OK) return s;
    hang_restrict_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, cw->ht_ptr, cw->ht_idx, cw->ht_wt, y,
                                                                            y, st);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

/* pcg_begin with the V-cycle: the initial residual, z = S V r, p = z */
static tw_status mg_pcg_begin(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    unsigned nb = tw_cuda_reduce_grid(n);
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    tw_status st;
    if ((st = spmv(cw, cw->vec_vnew, d.vnew, cw->vec_r, cw->r, NULL)) != TW_OK) return st;
    mg_residual_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, d.rhs, cw->r, cw->partial);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 2, (int)nb, TW_S_RR)) != TW_OK) return st;
    if ((st = tw_cuda_amg_apply(cw, cw->r, cw->z, NULL)) != TW_OK) return st;
    mg_precond_dot_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, cw->r, cw->z, cw->p,
                                                                  cw->partial, NULL);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_RZ)) != TW_OK) return st;
    pcg_start_kernel<<<1, 1, 0, cw->stream>>>(d.P, d.st, cw->scalars, tw_cuda_condition(cw), cw->use_cond);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

/* one iteration with the V-cycle (the unfused kernels otherwise) */
static tw_status mg_pcg_iteration(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n, n3 = 3 * n;
    unsigned nb = tw_cuda_reduce_grid(n);
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    tw_status st;
    if ((st = spmv(cw, cw->vec_p, cw->p, cw->vec_q, cw->q, d.st)) != TW_OK) return st;
    filter_dot_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, cw->p, cw->q, cw->partial, d.st);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_PQ)) != TW_OK) return st;
    mg_update_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cw->p, cw->q, d.vnew, cw->r, cw->scalars, cw->partial,
                                                             d.st);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_RR)) != TW_OK) return st;
    if ((st = tw_cuda_amg_apply(cw, cw->r, cw->z, d.st)) != TW_OK) return st;
    mg_precond_dot_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, cw->r, cw->z, NULL,
                                                                  cw->partial, d.st);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_RZ)) != TW_OK) return st;
    direction_kernel<<<tw_cuda_grid(n3), TW_CUDA_THREADS, 0, cw->stream>>>(n3, cw->scalars, cw->z, cw->p, d.st);
    TW_CUDA_LAUNCHED();
    pcg_decide_kernel<<<1, 1, 0, cw->stream>>>(d.P, d.st, cw->scalars, tw_cuda_condition(cw), cw->use_cond);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_solve_prepare(tw_cuda_world *cw, const tw_real **b)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    *b = d.rhs;
    if (cw->nhang) { /* the reduced system's preconditioner and right-hand side P^T rhs (rhs itself stays) */
        hang_block_jacobi_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(
            n, d.row_ptr, d.col, d.diag, d.A, cw->ht_ptr, cw->ht_idx, cw->ht_wt, cw->dinv);
        TW_CUDA_LAUNCHED();
        hang_restrict_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, cw->ht_ptr, cw->ht_idx,
                                                                                cw->ht_wt, d.rhs, cw->hang_b, NULL);
        TW_CUDA_LAUNCHED();
        *b = cw->hang_b;
    } else {
        block_jacobi_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, d.diag, d.A, cw->dinv);
        TW_CUDA_LAUNCHED();
    }
    return TW_OK;
}

tw_status tw_cuda_operator_pq(tw_cuda_world *cw)
{
    return pcg_spmv(cw, cw->vec_p, cw->p, cw->vec_q, cw->q, NULL);
}

tw_status tw_cuda_pcg_begin(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    unsigned nb = tw_cuda_reduce_grid(n);
    tw_status st;
    if (tw_cuda_amg_active(cw)) { /* the set-up or the update of the V-cycle (it may fall back to block-Jacobi) */
        if ((st = tw_cuda_amg_begin(cw)) != TW_OK) return st;
        if (tw_cuda_amg_active(cw)) return mg_pcg_begin(cw);
    }
    const tw_real *b;
    if ((st = tw_cuda_solve_prepare(cw, &b)) != TW_OK) return st;
    if ((st = pcg_spmv(cw, cw->vec_vnew, d.vnew, cw->vec_r, cw->r, NULL)) != TW_OK) return st;
    initial_residual_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, tw_cuda_pcg_filter(cw), d.cnormal, cw->dinv,
                                                                    b, cw->r, cw->z, cw->p, cw->partial);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 3, (int)nb, TW_S_RZ)) != TW_OK) return st;
    pcg_start_kernel<<<1, 1, 0, cw->stream>>>(d.P, d.st, cw->scalars, tw_cuda_condition(cw), cw->use_cond);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_pcg_iteration(tw_cuda_world *cw)
{
    if (tw_cuda_amg_active(cw)) return mg_pcg_iteration(cw);
    /* the fused kernels apply A alone: with hanging vertices the unfused
     * iteration below applies P^T A P (cuda_world.cu said so on stderr) */
    if (cw->fused_pcg && !cw->nhang) return tw_cuda_pcg_fused_iteration(cw);
    const tw_cuda_data &d = cw->d;
    int n = d.n, n3 = 3 * n;
    unsigned nb = tw_cuda_reduce_grid(n);
    tw_status st;
    if ((st = pcg_spmv(cw, cw->vec_p, cw->p, cw->vec_q, cw->q, d.st)) != TW_OK) return st;
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    filter_dot_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, cw->p, cw->q, cw->partial, d.st);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 1, (int)nb, TW_S_PQ)) != TW_OK) return st;
    update_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(n, cons, d.cnormal, cw->dinv, cw->p, cw->q, d.vnew, cw->r,
                                                          cw->z, cw->scalars, cw->partial, d.st);
    TW_CUDA_LAUNCHED();
    if ((st = tw_cuda_reduce_finish(cw, 2, (int)nb, TW_S_RZ)) != TW_OK) return st;
    direction_kernel<<<tw_cuda_grid(n3), TW_CUDA_THREADS, 0, cw->stream>>>(n3, cw->scalars, cw->z, cw->p, d.st);
    TW_CUDA_LAUNCHED();
    pcg_decide_kernel<<<1, 1, 0, cw->stream>>>(d.P, d.st, cw->scalars, tw_cuda_condition(cw), cw->use_cond);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

tw_status tw_cuda_read_status(tw_cuda_world *cw)
{
    TW_CUDA_TRY(cudaMemcpyAsync(&cw->hstatus, cw->status, sizeof cw->hstatus, cudaMemcpyDeviceToHost, cw->stream));
    TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
    return TW_OK;
}

tw_status tw_cuda_pcg_host_loop(tw_cuda_world *cw, const tw_cuda_params *hp)
{
    tw_status st;
    if (hp->fixed) { /* the whole budget at once: the device skips what it does not need */
        for (int it = 0; it < hp->limit; it++)
            if ((st = tw_cuda_pcg_iteration(cw)) != TW_OK) return st;
        return TW_OK;
    }
    for (int it = 0; it < hp->limit; it++) {
        if ((st = tw_cuda_read_status(cw)) != TW_OK) return st;
        if (!cw->hstatus.active) break;
        if ((st = tw_cuda_pcg_iteration(cw)) != TW_OK) return st;
    }
    return TW_OK;
}

/* q = A p by the step's SpMV, outside the PCG loop (tw_cuda_world_spmv, the BDF2 correction) */
tw_status tw_cuda_spmv_pq(tw_cuda_world *cw)
{
    return spmv(cw, cw->vec_p, cw->p, cw->vec_q, cw->q, NULL);
}
