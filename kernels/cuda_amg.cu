// The multigrid preconditioner on the device (the C interface and its
// contract: cuda_amg.h): host/amg.c's smoothed-aggregation V-cycle, its
// hierarchy set up once on the host and its per-step values made here.
//
// Set-up (once per hierarchy, host-driven, outside any graph): at the first
// mg solve the step's system matrix, the filter and the rest positions come
// back from the device; tw_amg_create builds the hierarchy on the host as
// the CPU backend's first mg solve does (aggregates from the device's
// matrix, the CPU's up to rounding; the rigid-body modes, the first
// Galerkin products, 20 power iterations); its arrays (tw_amg_level_view_of) and the Galerkin products'
// lists (host/amg_lists.h) are uploaded, and the device makes the coarsest
// level's pseudo-inverse from the uploaded coarse operator. The host
// hierarchy is then dropped (only its constrained set is kept, to know when
// a new one is needed). The captured step graph is dropped too, so the next
// capture takes the multigrid's kernels in.
//
// Per solve (tw_cuda_amg_begin, in the graph where the step is one): as
// tw_amg_update. A one-thread kernel decides on the device whether this is
// a Galerkin update (every galerkin_interval updates, or the contact set
// changed: an integer flag raised by any vertex that changed, the only
// atomic here); every kernel of the Galerkin part reads that decision and
// returns at once when it is 0, so the graph has one shape for both kinds
// of update (the cost: 33 empty kernel nodes per level pair, 26 of them
// the power iteration's, on the updates in between; an IF conditional node
// would remove them). Every output block of P, A P and P^T A P is one
// thread's sum over its list, in amg.c's order (host/hd/amg_galerkin.h): no
// float atomics, the same bits every run. The power iteration's sums are deterministic block trees and
// a one-block finish (cuda_reduce.cuh). The coarsest level: one block
// factors it column by column (amg.c's dense_cholesky and its null
// pivots: a coarse mode an aggregate cannot carry is a zero row and
// column, which cuSOLVER's potrf would refuse), then a thread per column
// solves for a unit vector: the pseudo-inverse, stored transposed so that
// the cycle's product (a thread per row, sum in column order) reads it
// coalesced. A dense product instead of two triangular solves: at <= a few
// hundred unknowns the solves are a few hundred dependent steps each (one
// block, a barrier per step), the product one pass over n^2 doubles by n
// threads.
//
// Per PCG application (tw_cuda_amg_apply): the V-cycle of host/hd/amg_cycle.h
// from x = 0, five kernels per level (first sweep, residual sweep,
// restriction, prolongation, post-sweep) and one for the coarsest level.
// The finest level's two sweeps with a product read a thread per block row
// (the hand-written SpMV's layout), or with TW_CUDA_MG_SWEEP=warp in the
// environment when the hierarchy is set up, TW_ROW_LANES lanes per row (the
// warp SpMV's, host/hd/pcg_fused.h).
// Each row of a sweep is a full-row gather (amg.c reads the upper half and
// scatters the transposes: a race on the device), so the sums round
// differently from the CPU's; tests/test_amg_emul.c measures by how much.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_amg.h"
#include "cuda_internal.h"
#include "cuda_reduce.cuh"
#include "hd/amg_galerkin.h"
#include "hd/pcg_fused.h" /* TW_ROW_LANES: the warp SpMV's lanes */
extern "C" {
#include "amg.h"
#include "amg_lists.h"
}

#define TW_CUDA_AMG_LEVELS 16
#define TW_CUDA_AMG_POWER 6          /* amg.c's power iterations at an update */
#define TW_CUDA_AMG_MAX_COARSEST 4096 /* unknowns of a dense coarsest level (128 MiB in double) */

/* ctl[]: the update's decision, on the device */
enum { TW_MG_SINCE = 0, TW_MG_GALERKIN = 1, TW_MG_CHANGED = 2, TW_MG_CTL = 3 };
/* pw[]: one level's power iteration and damping, on the device */
enum { TW_PW_RATIO = 0, TW_PW_SCALE = 1, TW_PW_STOPPED = 2, TW_PW_LAMBDA = 3, TW_PW_OMEGA = 4, TW_PW_COUNT = 5 };

typedef struct amg_level {
    int nnode, bs, n;
    /* the operator below the finest level: block CSR, per block its row */
    int nnzb;
    int *ptr, *col, *diag, *mirror, *row;
    double *val;
    float *fval;
    double *dinv;
    float *fdinv;
    tw_real *eig, *y;
    double *pw;
    tw_real *x, *t, *b, *r;
    tw_real *cd; /* the Chebyshev smoother's direction (NULL: block-Jacobi) */
    /* to the next level */
    int p0_nnzb, p_nnzb, ap_nnzb;
    int *p0_ptr, *p0_col, *p_ptr, *p_col, *pt_ptr, *pt_col, *pt_map;
    double *p0, *p, *ap;
    float *pf, *ptf;
    int *p_row, *pl_ptr, *pl_k, *pl_j, *p0_self;
    int *ap_row, *apl_ptr, *apl_k, *apl_kb;
    int *acl_ptr, *acl_p, *acl_ap;
} amg_level;

struct tw_cuda_amg {
    int nlev, nv, smooth, interval, nc;
    int coarse_smooth;    /* the smoother's steps below the finest level (0: smooth) */
    double damp;
    double cheb_ratio;    /* Chebyshev's interval [lambda / ratio, lambda] (levels with cd) */
    double prolong;       /* omega = prolong / lambda (amg.c level_lambda) */
    amg_level lev[TW_CUDA_AMG_LEVELS];
    double *chol, *unit, *invt; /* the coarsest level: factor, unit vectors, pseudo-inverse transposed */
    unsigned char *contact;
    double *p0_rest;
    int *ctl;
    double *partial; /* 2 x TW_CUDA_REDUCE_BLOCKS */
    int warp_sweep;       /* TW_CUDA_MG_SWEEP=warp at the set-up: the finest sweeps' rows by TW_ROW_LANES lanes */
    unsigned char *fixed; /* host: the constrained vertices it was built for */
    double hpw[TW_CUDA_AMG_LEVELS][TW_PW_COUNT]; /* host: the scalars as uploaded (alive until the copies ran) */
    int hctl[TW_MG_CTL];
    void **allocs;
    int nallocs, cap;
    size_t bytes;
};

namespace {

__device__ __forceinline__ int galerkin_off(const int *ctl) { return !ctl[TW_MG_GALERKIN]; }
__device__ __forceinline__ int loop_done(const tw_cuda_status *st) { return st && !st->active; }

/* ---- the update ---- */

/* ctl[CHANGED] |= a vertex whose contact state differs from the last Galerkin update's */
__global__ void contacts_changed_kernel(int nv, const unsigned char *cons, const unsigned char *contact, int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nv) return;
    if ((cons[i] == TW_FILTER_NORMAL) != (contact[i] != 0)) atomicOr(&ctl[TW_MG_CHANGED], 1);
}

/* tw_amg_update's decision (one thread); a single-level hierarchy refactors every update */
__global__ void decide_kernel(int *ctl, int interval, int single)
{
    int changed = ctl[TW_MG_CHANGED];
    ctl[TW_MG_CHANGED] = 0;
    if (!single && ++ctl[TW_MG_SINCE] < interval && !changed) {
        ctl[TW_MG_GALERKIN] = 0;
    } else {
        ctl[TW_MG_SINCE] = 0;
        ctl[TW_MG_GALERKIN] = 1;
    }
}

/* the finest level's block inverses (every update) */
__global__ void fine_inverse_kernel(int n, tw_amg_fine fine, const int *diag, double *dinv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tw_amg_node_inverse(&fine, NULL, 3, i, diag[i], dinv + 9 * (size_t)i);
}

/* a coarse level's block inverses (Galerkin updates) */
__global__ void coarse_inverse_kernel(int n, const double *val, const int *diag, double *dinv, const int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || galerkin_off(ctl)) return;
    tw_amg_node_inverse(NULL, val, TW_AMG_CB, i, diag[i], dinv + 36 * (size_t)i);
}

/* the finest P0 on the filtered subspace, the contact set recorded (amg.c project_tentative) */
__global__ void project_kernel(int nv, const unsigned char *cons, const tw_real *normal, const int *p0_ptr,
                               const double *rest, double *p0, unsigned char *contact, const int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nv || galerkin_off(ctl)) return;
    unsigned char c = cons[i];
    contact[i] = c == TW_FILTER_NORMAL;
    int k = p0_ptr[i];
    if (k == p0_ptr[i + 1]) return;
    double *v = p0 + 18 * (size_t)k;
    const double *s = rest + 18 * (size_t)k;
    for (int e = 0; e < 18; e++) v[e] = s[e];
    if (c != TW_FILTER_NORMAL) return;
    for (int q = 0; q < TW_AMG_CB; q++) {
        double col[3] = {v[q], v[6 + q], v[12 + q]};
        tw_amg_filter3(c, normal + 3 * (size_t)i, col);
        v[q] = col[0]; v[6 + q] = col[1]; v[12 + q] = col[2];
    }
}

/* before the power iteration: the finest vector filtered, the state reset */
__global__ void power_prep_kernel(int nv, const unsigned char *cons, const tw_real *normal, tw_real *x, double *pw,
                                  const int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (galerkin_off(ctl)) return;
    if (i == 0) {
        pw[TW_PW_RATIO] = 1;
        pw[TW_PW_STOPPED] = 0;
    }
    if (cons && i < nv) tw_amg_filter3v(cons[i], normal + 3 * (size_t)i, x + 3 * (size_t)i);
}

/* y = -S A x (a sweep's residual with b = 0) */
template <int FINE>
__global__ void power_sweep_kernel(int nnode, const int *ptr, const int *col, const tw_real *fine_val,
                                   const float *fval, const unsigned char *cons, const tw_real *normal,
                                   const tw_real *x, tw_real *y, const double *pw, const int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nnode || galerkin_off(ctl) || pw[TW_PW_STOPPED] != 0) return;
    tw_real yi[TW_AMG_CB] = {0, 0, 0, 0, 0, 0};
    if (FINE) tw_amg_fine_row(ptr, col, fine_val, x, i, yi);
    else tw_amg_block_row(ptr, col, fval, x, i, TW_AMG_CB, TW_AMG_CB, 0, yi);
    tw_amg_sweep_finish(FINE ? 3 : TW_AMG_CB, i, yi, NULL, x, NULL, FINE ? cons : NULL, normal, y, NULL, NULL, 0,
                        0);
}

/* y = D^-1 y per node; partial sums of x.x and y.y */
__global__ void power_node_kernel(int nnode, int bs, const double *dinv, const tw_real *x, tw_real *y,
                                  double *partial, const double *pw, const int *ctl)
{
    if (galerkin_off(ctl) || pw[TW_PW_STOPPED] != 0) return; /* uniform across the grid */
    double s[2] = {0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nnode; i += gridDim.x * blockDim.x)
        tw_amg_power_node(bs, i, dinv, x, y, &s[0], &s[1]);
    tw_block_partials<2>(s, partial);
}

/* the sums (one block, amg.c's stopping rule): ratio and the vector's scale */
__global__ void power_finish_kernel(const double *partial, int nb, double *pw, const int *ctl)
{
    __shared__ double sh[2][TW_CUDA_THREADS];
    if (galerkin_off(ctl) || pw[TW_PW_STOPPED] != 0) return;
    int t = threadIdx.x;
    for (int k = 0; k < 2; k++) {
        double s = 0;
        for (int j = t; j < nb; j += TW_CUDA_THREADS) s += partial[k * nb + j];
        sh[k][t] = s;
    }
    __syncthreads();
    for (int h = TW_CUDA_THREADS / 2; h > 0; h >>= 1) {
        if (t < h)
            for (int k = 0; k < 2; k++) sh[k][t] += sh[k][t + h];
        __syncthreads();
    }
    if (t) return;
    double xx = sh[0][0], yy = sh[1][0];
    if (!(xx > 0) || !(yy > 0)) {
        pw[TW_PW_STOPPED] = 1;
        return;
    }
    pw[TW_PW_RATIO] = sqrt(yy / xx);
    pw[TW_PW_SCALE] = 1 / sqrt(yy);
}

__global__ void power_scale_kernel(int n, const tw_real *y, tw_real *x, const double *pw, const int *ctl)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n || galerkin_off(ctl) || pw[TW_PW_STOPPED] != 0) return;
    x[q] = (tw_real)(y[q] * pw[TW_PW_SCALE]);
}

__global__ void power_end_kernel(double *pw, double prolong, const int *ctl)
{
    if (galerkin_off(ctl)) return;
    pw[TW_PW_LAMBDA] = 1.1 * pw[TW_PW_RATIO];
    pw[TW_PW_OMEGA] = prolong / pw[TW_PW_LAMBDA];
}

/* the smoother's damped copy (always: 1; else Galerkin updates only) */
__global__ void scale_dinv_kernel(size_t nb, double damp, const double *dinv, float *fdinv, const double *pw,
                                  const int *ctl, int always)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nb || (!always && galerkin_off(ctl))) return;
    fdinv[k] = (float)(damp / pw[TW_PW_LAMBDA] * dinv[k]);
}

/* P's blocks and their float copy */
__global__ void prolongator_kernel(int np, tw_amg_fine fine, const double *cval, int bs, const int *p_row,
                                   const int *pl_ptr, const int *pl_k, const int *pl_j, const int *p0_self,
                                   const int *p0_ptr, const double *p0, const double *dinv, const double *pw,
                                   double *p, float *pf, const int *ctl)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= np || galerkin_off(ctl)) return;
    int i = p_row[q], u0 = pl_ptr[q], pb = bs * TW_AMG_CB;
    const double *p0i = p0_self[q] >= 0 ? p0 + (size_t)pb * p0_self[q] : NULL;
    double *o = p + (size_t)pb * q;
    tw_amg_prolongator_block(&fine, cval, bs, i, pl_ptr[q + 1] - u0, pl_k + u0, pl_j + u0, p0_ptr, p0,
                             dinv + (size_t)bs * bs * i, pw[TW_PW_OMEGA], p0i, o);
    for (int e = 0; e < pb; e++) pf[(size_t)pb * q + e] = (float)o[e];
}

/* P^T's float blocks: P's transposed */
__global__ void transpose_kernel(int np, int bs, const int *pt_map, const float *pf, float *ptf, const int *ctl)
{
    int kt = blockIdx.x * blockDim.x + threadIdx.x;
    if (kt >= np || galerkin_off(ctl)) return;
    int pb = bs * TW_AMG_CB;
    const float *s = pf + (size_t)pb * pt_map[kt];
    float *o = ptf + (size_t)pb * kt;
    for (int r = 0; r < TW_AMG_CB; r++)
        for (int q = 0; q < bs; q++) o[r * bs + q] = s[q * TW_AMG_CB + r];
}

__global__ void ap_kernel(int nap, tw_amg_fine fine, const double *cval, int bs, const int *ap_row,
                          const int *apl_ptr, const int *apl_k, const int *apl_kb, const double *p, double *ap,
                          const int *ctl)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nap || galerkin_off(ctl)) return;
    int u0 = apl_ptr[b];
    tw_amg_ap_block(&fine, cval, bs, ap_row[b], apl_ptr[b + 1] - u0, apl_k + u0, apl_kb + u0, p,
                    ap + (size_t)bs * TW_AMG_CB * b);
}

/* P^T A P's blocks on and right of the diagonal, and their float copy */
__global__ void coarse_upper_kernel(int nac, int bs, const int *row, const int *col, const int *acl_ptr,
                                    const int *acl_p, const int *acl_ap, const double *p, const double *ap,
                                    double *val, float *fval, const int *ctl)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nac || galerkin_off(ctl) || col[b] < row[b]) return;
    int u0 = acl_ptr[b];
    double *o = val + 36 * (size_t)b;
    tw_amg_coarse_block(bs, acl_ptr[b + 1] - u0, acl_p + u0, acl_ap + u0, p, ap, o);
    for (int e = 0; e < 36; e++) fval[36 * (size_t)b + e] = (float)o[e];
}

/* the blocks left of the diagonal: their mirrors transposed */
__global__ void coarse_lower_kernel(int nac, const int *row, const int *col, const int *mirror, double *val,
                                    float *fval, const int *ctl)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nac || galerkin_off(ctl) || col[b] >= row[b]) return;
    const double *s = val + 36 * (size_t)mirror[b];
    double *o = val + 36 * (size_t)b;
    for (int r = 0; r < 6; r++)
        for (int q = 0; q < 6; q++) {
            o[r * 6 + q] = s[q * 6 + r];
            fval[36 * (size_t)b + r * 6 + q] = (float)s[q * 6 + r];
        }
}

/* ---- the coarsest level ---- */

__global__ void dense_zero_kernel(size_t nn, double *a, const int *ctl)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nn || galerkin_off(ctl)) return;
    a[k] = 0;
}

/* the coarsest operator's blocks into the dense matrix (cval NULL: the
 * finest level, filtered: a single-level hierarchy) */
__global__ void dense_gather_kernel(int nnode, int bs, const int *ptr, const int *col, tw_amg_fine fine,
                                    const double *cval, double *a, const int *ctl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nnode || galerkin_off(ctl)) return;
    int n = nnode * bs;
    for (int k = ptr[i]; k < ptr[i + 1]; k++) {
        double blk[36];
        tw_amg_level_block(&fine, cval, 1, i, col[k], k, blk);
        for (int r = 0; r < bs; r++)
            for (int q = 0; q < bs; q++) a[((size_t)bs * i + r) * n + (size_t)bs * col[k] + q] = blk[r * bs + q];
    }
}

/* amg.c's dense_cholesky in one block: column j's pivot on thread 0, then
 * the entries below it, a thread each (the same sums per entry) */
__global__ void cholesky_kernel(int n, double *a, const int *ctl)
{
    __shared__ double dmax, s;
    if (galerkin_off(ctl)) return;
    int t = threadIdx.x;
    if (t == 0) {
        double m = 0;
        for (int i = 0; i < n; i++) m = fmax(m, fabs(a[(size_t)i * n + i]));
        dmax = m;
    }
    __syncthreads();
    for (int j = 0; j < n; j++) {
        if (t == 0) {
            s = tw_amg_chol_pivot(n, a, j);
            if (s > 1e-12 * dmax) a[(size_t)j * n + j] = sqrt(s);
        }
        __syncthreads();
        if (!(s > 1e-12 * dmax)) {
            for (int i = j + t; i < n; i += blockDim.x) a[(size_t)i * n + j] = 0;
        } else {
            for (int i = j + 1 + t; i < n; i += blockDim.x) tw_amg_chol_entry(n, a, i, j);
        }
        __syncthreads();
    }
}

/* column c of the pseudo-inverse: (L L^T)^+ e_c, into row c of invt */
__global__ void inverse_columns_kernel(int n, const double *L, double *unit, double *invt, const int *ctl)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n || galerkin_off(ctl)) return;
    double *e = unit + (size_t)n * c;
    for (int r = 0; r < n; r++) e[r] = r == c;
    tw_amg_dense_cholesky_solve(n, L, e, invt + (size_t)n * c);
}

/* ---- the V-cycle ---- */

/* b = S r on the finest level */
__global__ void cycle_input_kernel(int nv, const unsigned char *cons, const tw_real *normal, const tw_real *r,
                                   tw_real *b, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nv || loop_done(st)) return;
    tw_real *bi = b + 3 * (size_t)i;
    for (int q = 0; q < 3; q++) bi[q] = r[3 * (size_t)i + q];
    tw_amg_filter3v(cons[i], normal + 3 * (size_t)i, bi);
}

/* A sweep's smoother step: block-Jacobi (cd NULL), or step `step` of the
 * Chebyshev polynomial, its coefficients from the level's lambda on the
 * device (every thread computes the same two numbers) */
typedef struct amg_step {
    tw_real *cd;
    const double *pw;
    double damp, ratio;
    int step;
} amg_step;

__device__ void amg_step_coeffs(const amg_step &k, tw_real *ca, tw_real *cc)
{
    *ca = 0;
    *cc = 0;
    if (k.cd) tw_amg_cheb_coeffs(k.pw[TW_PW_LAMBDA], k.damp, k.ratio, k.step, ca, cc);
}

/* one sweep (x NULL: from 0, no product; out NULL: the residual into r) */
template <int FINE>
__global__ void sweep_kernel(int nnode, const int *ptr, const int *col, const tw_real *fine_val, const float *fval,
                             const float *fdinv, const unsigned char *cons, const tw_real *normal, const tw_real *b,
                             const tw_real *x, tw_real *r, tw_real *out, amg_step k, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nnode || loop_done(st)) return;
    tw_real ca, cc;
    amg_step_coeffs(k, &ca, &cc);
    tw_real yi[TW_AMG_CB] = {0, 0, 0, 0, 0, 0};
    if (x) {
        if (FINE) tw_amg_fine_row(ptr, col, fine_val, x, i, yi);
        else tw_amg_block_row(ptr, col, fval, x, i, TW_AMG_CB, TW_AMG_CB, 0, yi);
    }
    tw_amg_sweep_finish(FINE ? 3 : TW_AMG_CB, i, yi, b, x, fdinv, FINE ? cons : NULL, normal, r, out, k.cd, ca,
                        cc);
}

/* sweep_kernel<1> with TW_ROW_LANES lanes per block row (TW_CUDA_MG_SWEEP=warp):
 * each lane sums the row's blocks lane, lane + TW_ROW_LANES, ... (the warp
 * SpMV's split), a butterfly adds the lanes' sums, lane 0
 * finishes the row. x is never NULL here (the first sweep has no product).
 * Every lane of the warp reaches the shuffles: rows past n keep theirs. */
__global__ void __launch_bounds__(TW_CUDA_THREADS)
    sweep_fine_lanes_kernel(int nnode, const int *__restrict__ ptr, const int *__restrict__ col,
                            const tw_real *__restrict__ val, const float *fdinv, const unsigned char *cons,
                            const tw_real *normal, const tw_real *b, const tw_real *__restrict__ x, tw_real *r,
                            tw_real *out, amg_step k, const tw_cuda_status *st)
{
    if (loop_done(st)) return; /* uniform across the grid */
    long i = ((long)blockIdx.x * TW_CUDA_THREADS + threadIdx.x) / TW_ROW_LANES;
    int lane = threadIdx.x % TW_ROW_LANES;
    tw_real v[3] = {0, 0, 0};
    if (i < nnode) tw_amg_fine_row_lane(ptr, col, val, x, (int)i, lane, TW_ROW_LANES, v);
#pragma unroll
    for (int off = TW_ROW_LANES / 2; off > 0; off >>= 1)
#pragma unroll
        for (int c = 0; c < 3; c++) v[c] += __shfl_xor_sync(0xffffffffu, v[c], off);
    if (i < nnode && lane == 0) {
        tw_real ca, cc;
        amg_step_coeffs(k, &ca, &cc);
        tw_amg_sweep_finish(3, (int)i, v, b, x, fdinv, cons, normal, r, out, k.cd, ca, cc);
    }
}

/* y_i (br values) = (M x)_i, add: y_i += it */
__global__ void block_product_kernel(int nbr, const int *ptr, const int *col, const float *fval, int br, int bc,
                                     const tw_real *x, tw_real *y, int add, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbr || loop_done(st)) return;
    tw_amg_block_row(ptr, col, fval, x, i, br, bc, add, y + (size_t)br * i);
}

__global__ void coarsest_kernel(int n, const double *invt, const tw_real *b, tw_real *x, const tw_cuda_status *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || loop_done(st)) return;
    double s = 0;
    for (int j = 0; j < n; j++) s += invt[(size_t)n * j + i] * (double)b[j];
    x[i] = (tw_real)s;
}

} // namespace

/* ---- host side ---- */

static tw_status amg_track(tw_cuda_amg *g, void *p)
{
    if (g->nallocs == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        void **a = (void **)realloc(g->allocs, sizeof(void *) * (size_t)cap);
        if (!a) {
            cudaFree(p);
            return tw_fail(TW_ERR_NOMEM, "%s:%d: out of host memory", __FILE__, __LINE__);
        }
        g->allocs = a;
        g->cap = cap;
    }
    g->allocs[g->nallocs++] = p;
    return TW_OK;
}

/* count T's on the device (zeroed), a copy of host when it is not NULL.
 * Out of device memory is TW_ERR_NOMEM: the set-up fails and the world
 * goes on with block-Jacobi (tw_cuda_amg_begin), as the CPU's solve does
 * when its hierarchy cannot be made; any other failure is TW_ERR_DEVICE
 * (the step fails). */
template <class T>
static tw_status amg_up(tw_cuda_world *cw, tw_cuda_amg *g, T **d, const T *host, size_t count, const char *what)
{
    size_t bytes = sizeof(T) * (count + 1);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
        return tw_fail(TW_ERR_NOMEM, "%s:%d: out of device memory: cudaMalloc of %zu bytes for %s failed (the "
                       "hierarchy holds %zu bytes so far; the device has %zu of %zu bytes free)", __FILE__, __LINE__,
                       bytes, what, g->bytes, free_b, total_b);
    }
    tw_status s = tw_cuda_check(e, "cudaMalloc", __FILE__, __LINE__);
    if (s != TW_OK) return s;
    if ((s = amg_track(g, p)) != TW_OK) return s;
    g->bytes += bytes;
    cw->bytes += bytes;
    *d = (T *)p;
    TW_CUDA_TRY(cudaMemsetAsync(p, 0, bytes, cw->stream));
    if (host && count) TW_CUDA_TRY(cudaMemcpyAsync(p, host, sizeof(T) * count, cudaMemcpyHostToDevice, cw->stream));
    return TW_OK;
}

static void amg_release(tw_cuda_world *cw, tw_cuda_amg *g)
{
    if (!g) return;
    if (cw->have_stream) cudaStreamSynchronize(cw->stream);
    for (int k = 0; k < g->nallocs; k++) cudaFree(g->allocs[k]);
    cudaGetLastError();
    cw->bytes -= g->bytes;
    free(g->allocs);
    free(g->fixed);
    free(g);
}

/* the captured graph bakes the hierarchy's arrays and kernels: a new one is captured at the next step */
static void drop_graph(tw_cuda_world *cw)
{
    if (!cw->exec) return;
    cudaGraphExecDestroy(cw->exec);
    cw->exec = NULL;
}

extern "C" void tw_cuda_amg_free(tw_cuda_world *cw)
{
    amg_release(cw, cw->amg);
    cw->amg = NULL;
}

extern "C" int tw_cuda_world_mg_levels(const tw_cuda_world *cw) { return cw && cw->amg ? cw->amg->nlev : 0; }
extern "C" int tw_cuda_world_mg_warp_sweep(const tw_cuda_world *cw) { return cw && cw->amg ? cw->amg->warp_sweep : 0; }

extern "C" int tw_cuda_amg_active(const tw_cuda_world *cw) { return cw->mg_wanted && !cw->mg_failed; }

extern "C" tw_status tw_cuda_amg_prepare(tw_cuda_world *cw, const tw_cuda_step_in *in, int *host_driven)
{
    const tw_world_def *def = in->def;
    int wanted = def->precond == TW_PRECOND_MG && def->integrator != TW_EXPLICIT_NEWMARK;
    *host_driven = 0;
    if (wanted && in->nhang > 0) {
        /* the device applies P^T A P as P, A, P^T and never forms it: a
         * hierarchy built from A would precondition the wrong operator, so
         * block-Jacobi while hanging vertices are set (the multigrid again
         * once they are gone, as on the CPU) */
        if (!cw->mg_hang_noted)
            fprintf(stderr, "tetwarp: %d hanging vertices: the device's PCG runs block-Jacobi while they are set "
                            "(the multigrid on the reduced system runs on the CPU backend only)\n", in->nhang);
        cw->mg_hang_noted = 1;
        wanted = 0;
    }
    if (cw->amg && (!wanted || (in->cons && in->dirty))) {
        int keep = wanted;
        for (int i = 0; keep && i < cw->d.n; i++) keep = (in->cons[i] != 0) == (cw->amg->fixed[i] != 0);
        if (!keep) {
            tw_cuda_amg_free(cw);
            drop_graph(cw);
        }
    }
    if (wanted != cw->mg_wanted) drop_graph(cw); /* the PCG's kernels change */
    cw->mg_wanted = wanted;
    *host_driven = tw_cuda_amg_active(cw) && !cw->amg;
    return TW_OK;
}

static tw_status amg_coarsest(tw_cuda_world *cw);

/* the set-up: the hierarchy from the step's matrix on the host, uploaded */
static tw_status amg_setup(tw_cuda_world *cw)
{
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    size_t nnzb = (size_t)d.nnzb;
    tw_status s = TW_OK;
    /* what the host needs back: the pattern, the matrix, the filter, the rest positions */
    int *hptr = (int *)malloc(sizeof(int) * ((size_t)n + 1 + nnzb + n + 3));
    tw_real *hval = (tw_real *)malloc(sizeof(tw_real) * (9 * nnzb + 6 * (size_t)n + 1));
    unsigned char *hcons = (unsigned char *)malloc((size_t)n + 1);
    tw_amg *host = NULL;
    tw_amg_lists lists[TW_CUDA_AMG_LEVELS];
    memset(lists, 0, sizeof lists);
    tw_cuda_amg *g = (tw_cuda_amg *)calloc(1, sizeof *g);
    if (!hptr || !hval || !hcons || !g) {
        free(hptr); free(hval); free(hcons); free(g);
        return tw_fail(TW_ERR_NOMEM, "%s:%d: out of host memory setting up the multigrid (%d vertices)", __FILE__,
                       __LINE__, n);
    }
    int *hcol = hptr + n + 1, *hdiag = hcol + nnzb;
    tw_real *hX = hval + 9 * nnzb, *hnrm = hX + 3 * (size_t)n;
#define TW_DOWN(dst, src, bytes) TW_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cw->stream))
    {
        /* a lambda keeps TW_CUDA_TRY's returns inside the download */
        auto down = [&]() -> tw_status {
            TW_DOWN(hptr, d.row_ptr, sizeof(int) * ((size_t)n + 1));
            TW_DOWN(hcol, d.col, sizeof(int) * nnzb);
            TW_DOWN(hdiag, d.diag, sizeof(int) * (size_t)n);
            TW_DOWN(hval, d.A, sizeof(tw_real) * 9 * nnzb);
            TW_DOWN(hX, d.X, sizeof(tw_real) * 3 * (size_t)n);
            TW_DOWN(hnrm, d.cnormal, sizeof(tw_real) * 3 * (size_t)n);
            TW_DOWN(hcons, tw_cuda_pcg_filter(cw), (size_t)n);
            TW_CUDA_TRY(cudaStreamSynchronize(cw->stream));
            return TW_OK;
        };
        s = down();
    }
#undef TW_DOWN
    cw->d2h_bytes += sizeof(tw_real) * (9 * nnzb + 6 * (size_t)n);
    if (s == TW_OK) {
        tw_bsr A;
        A.n = n; A.nnzb = (int)nnzb; A.row_ptr = hptr; A.col = hcol; A.diag = hdiag; A.val = hval; A.threads = 0;
        tw_filter f = {hcons, hnrm};
        host = tw_amg_create(&A, hX, &f, NULL);
        if (!host) s = TW_ERR_NOMEM;
    }
    tw_amg_view gv;
    if (s == TW_OK) {
        tw_amg_view_of(host, &gv);
        if (gv.nlev > TW_CUDA_AMG_LEVELS || gv.coarsest_n > TW_CUDA_AMG_MAX_COARSEST)
            s = tw_fail(TW_ERR_UNSUPPORTED, "the multigrid's coarsest level has %d unknowns (at most %d on the "
                        "device)", gv.coarsest_n, TW_CUDA_AMG_MAX_COARSEST);
    }
    if (s == TW_OK) {
        g->nlev = gv.nlev; g->nv = n; g->smooth = gv.smooth_steps; g->interval = gv.galerkin_interval;
        g->damp = gv.smooth_damping; g->nc = gv.coarsest_n;
        g->coarse_smooth = gv.coarse_smooth_steps; g->cheb_ratio = gv.cheb_ratio; g->prolong = gv.prolong_damping;
        const char *sweep = getenv("TW_CUDA_MG_SWEEP");
        g->warp_sweep = sweep && strcmp(sweep, "warp") == 0;
        if (sweep && *sweep && !g->warp_sweep && strcmp(sweep, "row") != 0)
            fprintf(stderr, "tetwarp: TW_CUDA_MG_SWEEP=%s is neither warp nor row; the multigrid's sweeps run a "
                            "thread per row\n", sweep);
        g->fixed = (unsigned char *)malloc((size_t)n + 1);
        if (!g->fixed) s = tw_fail(TW_ERR_NOMEM, "%s:%d: out of host memory", __FILE__, __LINE__);
        else memcpy(g->fixed, gv.fixed, (size_t)n);
    }
    for (int li = 0; s == TW_OK && li < g->nlev; li++) {
        amg_level *l = &g->lev[li];
        tw_amg_level_view v, cv;
        if ((s = tw_amg_level_view_of(host, li, &v)) != TW_OK) break;
        int bb = v.bs * v.bs, last = li + 1 == g->nlev;
        l->nnode = v.nnode; l->bs = v.bs; l->n = v.nnode * v.bs;
        double *pw = g->hpw[li];
        pw[TW_PW_RATIO] = 1; pw[TW_PW_SCALE] = 1; pw[TW_PW_STOPPED] = 0;
        pw[TW_PW_LAMBDA] = v.lambda; pw[TW_PW_OMEGA] = v.omega;
#define TW_UP(dst, src, count, what) \
        if (s == TW_OK) s = amg_up(cw, g, &(dst), src, (size_t)(count), what)
        TW_UP(l->pw, pw, TW_PW_COUNT, "multigrid scalars");
        TW_UP(l->dinv, v.dinv, (size_t)bb * l->nnode, "multigrid smoother");
        TW_UP(l->fdinv, v.fdinv, (size_t)bb * l->nnode, "multigrid smoother");
        TW_UP(l->eig, v.eig, l->n, "multigrid vectors");
        TW_UP(l->y, (const tw_real *)NULL, l->n, "multigrid vectors");
        TW_UP(l->x, (const tw_real *)NULL, l->n, "multigrid vectors");
        TW_UP(l->t, (const tw_real *)NULL, l->n, "multigrid vectors");
        if (gv.chebyshev && !last) TW_UP(l->cd, (const tw_real *)NULL, l->n, "multigrid smoother");
        TW_UP(l->b, (const tw_real *)NULL, l->n, "multigrid vectors");
        TW_UP(l->r, (const tw_real *)NULL, l->n, "multigrid vectors");
        if (li) {
            l->nnzb = v.nnzb;
            TW_UP(l->ptr, v.ptr, l->nnode + 1, "multigrid operators");
            TW_UP(l->col, v.col, v.nnzb, "multigrid operators");
            TW_UP(l->diag, v.diag, l->nnode, "multigrid operators");
            TW_UP(l->mirror, v.mirror, v.nnzb, "multigrid operators");
            TW_UP(l->row, lists[li - 1].ac_row, v.nnzb, "multigrid operators");
            TW_UP(l->val, v.val, (size_t)36 * v.nnzb, "multigrid operators");
            TW_UP(l->fval, v.fval, (size_t)36 * v.nnzb, "multigrid operators");
        }
        if (last || s != TW_OK) continue;
        if ((s = tw_amg_level_view_of(host, li + 1, &cv)) != TW_OK) break;
        if ((s = tw_amg_lists_build(li ? v.ptr : hptr, li ? v.col : hcol, &v, &cv, &lists[li])) != TW_OK) break;
        const tw_amg_lists *t = &lists[li];
        size_t pb = (size_t)v.bs * TW_AMG_CB;
        l->p0_nnzb = v.p0_nnzb; l->p_nnzb = v.p_nnzb; l->ap_nnzb = v.ap_nnzb;
        TW_UP(l->p0_ptr, v.p0_ptr, l->nnode + 1, "multigrid prolongators");
        TW_UP(l->p0_col, v.p0_col, v.p0_nnzb, "multigrid prolongators");
        TW_UP(l->p0, v.p0_val, pb * v.p0_nnzb, "multigrid prolongators");
        TW_UP(l->p_ptr, v.p_ptr, l->nnode + 1, "multigrid prolongators");
        TW_UP(l->p_col, v.p_col, v.p_nnzb, "multigrid prolongators");
        TW_UP(l->p, v.p_val, pb * v.p_nnzb, "multigrid prolongators");
        TW_UP(l->pf, v.p_fval, pb * v.p_nnzb, "multigrid prolongators");
        TW_UP(l->pt_ptr, v.pt_ptr, cv.nnode + 1, "multigrid prolongators");
        TW_UP(l->pt_col, v.pt_col, v.p_nnzb, "multigrid prolongators");
        TW_UP(l->pt_map, v.pt_map, v.p_nnzb, "multigrid prolongators");
        TW_UP(l->ptf, v.pt_fval, pb * v.p_nnzb, "multigrid prolongators");
        TW_UP(l->ap, v.ap_val, pb * v.ap_nnzb, "multigrid products");
        TW_UP(l->p_row, t->p_row, v.p_nnzb, "multigrid product lists");
        TW_UP(l->pl_ptr, t->pl_ptr, v.p_nnzb + 1, "multigrid product lists");
        TW_UP(l->pl_k, t->pl_k, t->pl_ptr[v.p_nnzb], "multigrid product lists");
        TW_UP(l->pl_j, t->pl_j, t->pl_ptr[v.p_nnzb], "multigrid product lists");
        TW_UP(l->p0_self, t->p0_self, v.p_nnzb, "multigrid product lists");
        TW_UP(l->ap_row, t->ap_row, v.ap_nnzb, "multigrid product lists");
        TW_UP(l->apl_ptr, t->apl_ptr, v.ap_nnzb + 1, "multigrid product lists");
        TW_UP(l->apl_k, t->apl_k, t->apl_ptr[v.ap_nnzb], "multigrid product lists");
        TW_UP(l->apl_kb, t->apl_kb, t->apl_ptr[v.ap_nnzb], "multigrid product lists");
        TW_UP(l->acl_ptr, t->acl_ptr, cv.nnzb + 1, "multigrid product lists");
        TW_UP(l->acl_p, t->acl_p, t->acl_ptr[cv.nnzb], "multigrid product lists");
        TW_UP(l->acl_ap, t->acl_ap, t->acl_ptr[cv.nnzb], "multigrid product lists");
    }
    if (s == TW_OK) {
        size_t nc = (size_t)g->nc;
        int *ctl = g->hctl; /* GALERKIN 1: the set-up's coarsest factor below runs */
        ctl[TW_MG_SINCE] = gv.since_galerkin; ctl[TW_MG_GALERKIN] = 1; ctl[TW_MG_CHANGED] = 0;
        TW_UP(g->ctl, ctl, TW_MG_CTL, "multigrid control");
        TW_UP(g->partial, (const double *)NULL, 2 * (size_t)TW_CUDA_REDUCE_BLOCKS, "multigrid reductions");
        TW_UP(g->contact, gv.contact, n, "multigrid contact set");
        if (g->nlev > 1) TW_UP(g->p0_rest, gv.p0_rest, (size_t)18 * g->lev[0].p0_nnzb, "multigrid prolongators");
        TW_UP(g->chol, (const double *)NULL, nc * nc, "multigrid coarsest level");
        TW_UP(g->unit, (const double *)NULL, nc * nc, "multigrid coarsest level");
        TW_UP(g->invt, (const double *)NULL, nc * nc, "multigrid coarsest level");
    }
#undef TW_UP
    /* the copies read host memory freed below: wait for them */
    if (s == TW_OK) s = tw_cuda_check(cudaStreamSynchronize(cw->stream), "cudaStreamSynchronize", __FILE__, __LINE__);
    for (int li = 0; li < TW_CUDA_AMG_LEVELS; li++) tw_amg_lists_free(&lists[li]);
    tw_amg_free(host);
    free(hptr); free(hval); free(hcons);
    if (s == TW_OK) {
        cw->amg = g;
        s = amg_coarsest(cw);
        if (s == TW_OK) s = tw_cuda_check(cudaStreamSynchronize(cw->stream), "cudaStreamSynchronize", __FILE__,
                                          __LINE__);
        if (s != TW_OK) cw->amg = NULL;
    }
    if (s != TW_OK) amg_release(cw, g);
    return s;
}

/* the coarsest level's pseudo-inverse (Galerkin updates and the set-up) */
static tw_status amg_coarsest(tw_cuda_world *cw)
{
    tw_cuda_amg *g = cw->amg;
    const tw_cuda_data &d = cw->d;
    int li = g->nlev - 1, n = g->nc;
    amg_level *l = &g->lev[li];
    size_t nn = (size_t)n * n;
    tw_amg_fine fine = {d.row_ptr, d.col, d.A, tw_cuda_pcg_filter(cw), d.cnormal};
    dense_zero_kernel<<<tw_cuda_grid((long)nn), TW_CUDA_THREADS, 0, cw->stream>>>(nn, g->chol, g->ctl);
    TW_CUDA_LAUNCHED();
    dense_gather_kernel<<<tw_cuda_grid(l->nnode), TW_CUDA_THREADS, 0, cw->stream>>>(
        l->nnode, l->bs, li ? l->ptr : d.row_ptr, li ? l->col : d.col, fine, li ? l->val : NULL, g->chol, g->ctl);
    TW_CUDA_LAUNCHED();
    cholesky_kernel<<<1, TW_CUDA_THREADS, 0, cw->stream>>>(n, g->chol, g->ctl);
    TW_CUDA_LAUNCHED();
    inverse_columns_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, g->chol, g->unit, g->invt, g->ctl);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

/* level li's lambda_max(D^-1 A) by TW_CUDA_AMG_POWER power iterations from its vector */
static tw_status amg_power(tw_cuda_world *cw, int li, const tw_amg_fine &fine)
{
    tw_cuda_amg *g = cw->amg;
    amg_level *l = &g->lev[li];
    unsigned nb = tw_cuda_reduce_grid(l->nnode), grid = tw_cuda_grid(l->nnode);
    power_prep_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(li ? 0 : l->nnode, li ? NULL : fine.cons, fine.normal,
                                                                l->eig, l->pw, g->ctl);
    TW_CUDA_LAUNCHED();
    for (int it = 0; it < TW_CUDA_AMG_POWER; it++) {
        if (li)
            power_sweep_kernel<0><<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, l->ptr, l->col, NULL, l->fval,
                                                                           NULL, fine.normal, l->eig, l->y, l->pw,
                                                                           g->ctl);
        else
            power_sweep_kernel<1><<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, fine.row_ptr, fine.col,
                                                                           fine.val, NULL, fine.cons, fine.normal,
                                                                           l->eig, l->y, l->pw, g->ctl);
        TW_CUDA_LAUNCHED();
        power_node_kernel<<<nb, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, l->bs, l->dinv, l->eig, l->y, g->partial,
                                                                  l->pw, g->ctl);
        TW_CUDA_LAUNCHED();
        power_finish_kernel<<<1, TW_CUDA_THREADS, 0, cw->stream>>>(g->partial, (int)nb, l->pw, g->ctl);
        TW_CUDA_LAUNCHED();
        power_scale_kernel<<<tw_cuda_grid(l->n), TW_CUDA_THREADS, 0, cw->stream>>>(l->n, l->y, l->eig, l->pw, g->ctl);
        TW_CUDA_LAUNCHED();
    }
    power_end_kernel<<<1, 1, 0, cw->stream>>>(l->pw, g->prolong, g->ctl);
    TW_CUDA_LAUNCHED();
    return TW_OK;
}

/* tw_amg_update on the device (see the top of the file) */
static tw_status amg_update(tw_cuda_world *cw)
{
    tw_cuda_amg *g = cw->amg;
    const tw_cuda_data &d = cw->d;
    int n = d.n;
    tw_status s;
    tw_amg_fine fine = {d.row_ptr, d.col, d.A, tw_cuda_pcg_filter(cw), d.cnormal};
    if (g->nlev > 1) {
        contacts_changed_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, fine.cons, g->contact, g->ctl);
        TW_CUDA_LAUNCHED();
    }
    decide_kernel<<<1, 1, 0, cw->stream>>>(g->ctl, g->interval, g->nlev == 1);
    TW_CUDA_LAUNCHED();
    amg_level *l0 = &g->lev[0];
    if (g->nlev == 1) return amg_coarsest(cw);
    fine_inverse_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, fine, d.diag, l0->dinv);
    TW_CUDA_LAUNCHED();
    project_kernel<<<tw_cuda_grid(n), TW_CUDA_THREADS, 0, cw->stream>>>(n, fine.cons, fine.normal, l0->p0_ptr,
                                                                        g->p0_rest, l0->p0, g->contact, g->ctl);
    TW_CUDA_LAUNCHED();
    for (int li = 0; li + 1 < g->nlev; li++) {
        amg_level *l = &g->lev[li], *c = &g->lev[li + 1];
        const double *cval = li ? l->val : NULL;
        int bs = l->bs;
        if (li) {
            coarse_inverse_kernel<<<tw_cuda_grid(l->nnode), TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, l->val, l->diag,
                                                                                              l->dinv, g->ctl);
            TW_CUDA_LAUNCHED();
        }
        if ((s = amg_power(cw, li, fine)) != TW_OK) return s;
        size_t nbb = (size_t)bs * bs * l->nnode;
        scale_dinv_kernel<<<tw_cuda_grid((long)nbb), TW_CUDA_THREADS, 0, cw->stream>>>(nbb, g->damp, l->dinv, l->fdinv,
                                                                                       l->pw, g->ctl, li == 0);
        TW_CUDA_LAUNCHED();
        prolongator_kernel<<<tw_cuda_grid(l->p_nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(
            l->p_nnzb, fine, cval, bs, l->p_row, l->pl_ptr, l->pl_k, l->pl_j, l->p0_self, l->p0_ptr, l->p0, l->dinv,
            l->pw, l->p, l->pf, g->ctl);
        TW_CUDA_LAUNCHED();
        transpose_kernel<<<tw_cuda_grid(l->p_nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(l->p_nnzb, bs, l->pt_map, l->pf,
                                                                                      l->ptf, g->ctl);
        TW_CUDA_LAUNCHED();
        ap_kernel<<<tw_cuda_grid(l->ap_nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(
            l->ap_nnzb, fine, cval, bs, l->ap_row, l->apl_ptr, l->apl_k, l->apl_kb, l->p, l->ap, g->ctl);
        TW_CUDA_LAUNCHED();
        coarse_upper_kernel<<<tw_cuda_grid(c->nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(
            c->nnzb, bs, c->row, c->col, l->acl_ptr, l->acl_p, l->acl_ap, l->p, l->ap, c->val, c->fval, g->ctl);
        TW_CUDA_LAUNCHED();
        coarse_lower_kernel<<<tw_cuda_grid(c->nnzb), TW_CUDA_THREADS, 0, cw->stream>>>(c->nnzb, c->row, c->col,
                                                                                       c->mirror, c->val, c->fval,
                                                                                       g->ctl);
        TW_CUDA_LAUNCHED();
    }
    return amg_coarsest(cw);
}

extern "C" tw_status tw_cuda_amg_begin(tw_cuda_world *cw)
{
    if (!tw_cuda_amg_active(cw)) return TW_OK;
    if (cw->amg) return amg_update(cw);
    if (cw->capturing) /* tw_cuda_amg_prepare made this step host-driven */
        return tw_fail(TW_ERR_DEVICE, "%s:%d: the multigrid set-up inside a graph capture", __FILE__, __LINE__);
    tw_status s = amg_setup(cw);
    if (s == TW_ERR_DEVICE) return s; /* the device is in trouble (out of memory is TW_ERR_NOMEM): the step fails */
    if (s != TW_OK) {
        fprintf(stderr, "tetwarp: the device's multigrid preconditioner could not be set up (%s); this world's PCG "
                        "runs block-Jacobi\n", tw_last_error());
        cw->mg_failed = 1;
        tw_clear_error();
    }
    drop_graph(cw);
    return TW_OK;
}

/* x = V b on level li (b in the level's b), from x = 0; the result's
 * pointer: final on the finest level (the caller's z), else one of the
 * level's two vectors */
static tw_status amg_cycle(tw_cuda_world *cw, int li, tw_real *final, const tw_cuda_status *st, tw_real **result)
{
    tw_cuda_amg *g = cw->amg;
    const tw_cuda_data &d = cw->d;
    amg_level *l = &g->lev[li];
    const unsigned char *cons = tw_cuda_pcg_filter(cw);
    unsigned grid = tw_cuda_grid(l->nnode);
    tw_real *x = l->x, *t = l->t;
    tw_status s;
    if (li == g->nlev - 1) {
        tw_real *out = li ? x : final;
        coarsest_kernel<<<tw_cuda_grid(g->nc), TW_CUDA_THREADS, 0, cw->stream>>>(g->nc, g->invt, l->b, out, st);
        TW_CUDA_LAUNCHED();
        *result = out;
        return TW_OK;
    }
    amg_level *c = &g->lev[li + 1];
    /* one sweep: FINE as a template argument */
#define TW_SWEEP(b_, x_, r_, out_, k_)                                                                                 \
    do {                                                                                                               \
        if (!li && g->warp_sweep && (x_))                                                                              \
            sweep_fine_lanes_kernel<<<tw_cuda_grid((long)l->nnode * TW_ROW_LANES), TW_CUDA_THREADS, 0,                 \
                                      cw->stream>>>(l->nnode, d.row_ptr, d.col, d.A, l->fdinv, cons, d.cnormal,        \
                                                    b_, x_, r_, out_, k_, st);                                         \
        else if (li)                                                                                                   \
            sweep_kernel<0><<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, l->ptr, l->col, NULL, l->fval,         \
                                                                      l->fdinv, NULL, d.cnormal, b_, x_, r_,           \
                                                                      out_, k_, st);                                   \
        else                                                                                                           \
            sweep_kernel<1><<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, d.row_ptr, d.col, d.A, NULL,           \
                                                                      l->fdinv, cons, d.cnormal, b_, x_, r_,           \
                                                                      out_, k_, st);                                   \
        TW_CUDA_LAUNCHED();                                                                                            \
    } while (0)
    /* the smoother's steps on this level (amg.c smooth); the residual sweep is no step */
    int steps = li && g->coarse_smooth > 0 ? g->coarse_smooth : g->smooth;
    amg_step ks = {l->cd, l->pw, g->damp, g->cheb_ratio, 0}, kr = {NULL, l->pw, g->damp, g->cheb_ratio, 0};
    TW_SWEEP(l->b, (const tw_real *)NULL, (tw_real *)NULL, x, ks);
    for (int k = 1; k < steps; k++) {
        ks.step = k;
        TW_SWEEP(l->b, x, (tw_real *)NULL, t, ks);
        tw_real *u = x; x = t; t = u;
    }
    TW_SWEEP(l->b, x, l->r, (tw_real *)NULL, kr);
    block_product_kernel<<<tw_cuda_grid(c->nnode), TW_CUDA_THREADS, 0, cw->stream>>>(
        c->nnode, l->pt_ptr, l->pt_col, l->ptf, TW_AMG_CB, l->bs, l->r, c->b, 0, st);
    TW_CUDA_LAUNCHED();
    tw_real *xc = NULL;
    if ((s = amg_cycle(cw, li + 1, final, st, &xc)) != TW_OK) return s;
    block_product_kernel<<<grid, TW_CUDA_THREADS, 0, cw->stream>>>(l->nnode, l->p_ptr, l->p_col, l->pf, l->bs,
                                                                   TW_AMG_CB, xc, x, 1, st);
    TW_CUDA_LAUNCHED();
    for (int k = 0; k < steps; k++) {
        tw_real *out = !li && k + 1 == steps ? final : t; /* the finest level's last sweep: into z */
        ks.step = k;
        TW_SWEEP(l->b, x, (tw_real *)NULL, out, ks);
        t = x;
        x = out;
    }
#undef TW_SWEEP
    *result = x;
    return TW_OK;
}

extern "C" tw_status tw_cuda_amg_apply(tw_cuda_world *cw, const tw_real *r, tw_real *z, const tw_cuda_status *st)
{
    tw_cuda_amg *g = cw->amg;
    const tw_cuda_data &d = cw->d;
    cycle_input_kernel<<<tw_cuda_grid(d.n), TW_CUDA_THREADS, 0, cw->stream>>>(d.n, tw_cuda_pcg_filter(cw), d.cnormal,
                                                                            r, g->lev[0].b, st);
    TW_CUDA_LAUNCHED();
    tw_real *x = NULL;
    return amg_cycle(cw, 0, z, st, &x);
}
