/* The fused PCG's arithmetic, written once for the kernels
 * (kernels/cuda_pcg_fused.cu) and their CPU emulation (tests/test_pcg_fused.c).
 *
 * The fused PCG is host/solver_impl.h's filtered block-Jacobi PCG in two
 * kernels per iteration, each a grid-stride loop over TW_RED_BLOCKS blocks
 * at most of TW_RED_THREADS threads, ending with a deterministic reduction:
 *  1. row: for each block row i (TW_ROW_LANES lanes share it, lane l takes
 *     the row's blocks l, l + TW_ROW_LANES, ...), the direction update folded
 *     into the product: q_i = sum_k A_ik (z_k + beta p_k), the lanes' sums
 *     added by a butterfly; lane 0 then writes p'_i = z_i + beta p_i and
 *     q_i = S q_i and adds p'_i . q_i to its thread's sum. p is read from one
 *     buffer and p' written to the other (the iteration's parity picks them):
 *     other rows still read p_i. beta is 0 on the first iteration, whose p
 *     buffer holds z, so p' = z as the CPU's first direction.
 *  2. update: per vertex x += alpha p', r -= alpha q, z = S Dinv r; sums
 *     r.z and r.r.
 * Each block's threads' sums go through the tree of tw_tree_step into one
 * partial per block; the last block to finish (an integer ticket) sums the
 * partials by tw_red_finish_part and the same tree, then computes alpha
 * (kernel 1) or beta and the loop's decision (kernel 2). Every addition's
 * order depends on the sizes only (no float atomics): two runs give the
 * same bits, and tests/test_pcg_fused.c replays the same order on the CPU.
 * alpha and beta are host/solver_impl.h's: double quotients of the double
 * sums, rounded to the vector type where they scale a vector. */
#ifndef TW_HD_PCG_FUSED_H
#define TW_HD_PCG_FUSED_H
#include "hd.h"
#include "bsr_row_real.h" /* tw_filter_block, tw_block_jacobi_vertex: the CPU solvers' */

#define TW_RED_THREADS 256 /* threads of a reducing block (a power of 2) */
#define TW_RED_BLOCKS 1024 /* at most this many blocks (and partials) per reduction */
#define TW_ROW_LANES 16    /* lanes sharing a block row (a power of 2, at most 32) */
#define TW_ROW_GROUPS (TW_RED_THREADS / TW_ROW_LANES) /* block rows per block and pass */

/* A load of what another block of the same kernel wrote (after its fence):
 * through L2, never a stale L1 line. */
#ifdef __CUDA_ARCH__
#define TW_LOAD_GLOBAL(p) __ldcg(p)
#else
#define TW_LOAD_GLOBAL(p) (*(p))
#endif
/* A load of what no thread writes during the kernel (the matrix, its
 * pattern, the vectors a product reads): the read-only data cache. */
#ifdef __CUDA_ARCH__
#define TW_LOAD_RO(p) __ldg(p)
#else
#define TW_LOAD_RO(p) (*(p))
#endif

/* Blocks of a grid-stride loop over count items, per items_per_block items a
 * block takes per pass (TW_RED_THREADS vertices, or TW_ROW_GROUPS rows). */
TW_HD int tw_red_blocks(long count, int items_per_block)
{
    long b = (count + items_per_block - 1) / items_per_block;
    return b < 1 ? 1 : b > TW_RED_BLOCKS ? TW_RED_BLOCKS : (int)b;
}

/* One level of a block's tree: sh[t] += sh[t + s] for t < s. On the device
 * the threads t < s do it at once between two barriers, on the CPU a loop
 * over t: the same additions (each reads an index >= s, which this level
 * does not write). */
TW_HD void tw_tree_step(double *sh, int t, int s)
{
    if (t < s) sh[t] += sh[t + s];
}

/* The whole tree over count (a power of 2) values, as the CPU replays it */
TW_HD double tw_tree_sum(double *sh, int count)
{
    for (int s = count / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; t++) tw_tree_step(sh, t, s);
    return sh[0];
}

/* The last block's thread t: its share of the nb partials, in order */
TW_HD double tw_red_finish_part(const double *partial, int nb, int t)
{
    double s = 0;
    for (int j = t; j < nb; j += TW_RED_THREADS) s += TW_LOAD_GLOBAL(partial + j);
    return s;
}

/* alpha = rz / pq and beta = rz_new / rz, host/solver_impl.h's (double;
 * rounded to tw_real where they scale a vector) */
TW_HD double tw_pcg_alpha(double rz, double pq) { return rz / pq; }
TW_HD double tw_pcg_beta(double rz_new, double rz) { return rz_new / rz; }

/* host/solver_impl.h's loop test: go on while it < limit, the tolerance is
 * not met (unless fixed) and rz > 0 */
TW_HD int tw_pcg_go_on(int it, int limit, int fixed, double tol, double rn, double bnorm, double rz)
{
    return it < limit && (fixed || !(rn <= tol * bnorm)) && rz > 0;
}

/* The end of an iteration (after the update's sums rr, rz): *iterations
 * counted, *rn = |r|; returns whether the loop goes on. */
TW_HD int tw_pcg_decide(int *iterations, double *rn, double rr, double rz, double bnorm, int limit, int fixed,
                        double tol)
{
    int it = ++*iterations;
    *rn = sqrt(rr);
    return tw_pcg_go_on(it, limit, fixed, tol, *rn, bnorm, rz);
}

/* lane's share of y_i = A_i. x over row i's blocks lane, lane +
 * TW_ROW_LANES, ... (y: 3, set here): the TW_ROW_LANES lanes of a row read
 * one contiguous span of its blocks at a time */
TW_HD void tw_row_lane_product(const int *row_ptr, const int *col, const tw_real *val, const tw_real *x, int i,
                               int lane, tw_real *y)
{
    tw_real y0 = 0, y1 = 0, y2 = 0;
    int end = TW_LOAD_RO(row_ptr + i + 1);
    for (int k = TW_LOAD_RO(row_ptr + i) + lane; k < end; k += TW_ROW_LANES) {
        const tw_real *a = val + 9 * (size_t)k;
        const tw_real *xj = x + 3 * (size_t)TW_LOAD_RO(col + k);
        tw_real x0 = TW_LOAD_RO(xj), x1 = TW_LOAD_RO(xj + 1), x2 = TW_LOAD_RO(xj + 2);
        y0 += TW_LOAD_RO(a) * x0 + TW_LOAD_RO(a + 1) * x1 + TW_LOAD_RO(a + 2) * x2;
        y1 += TW_LOAD_RO(a + 3) * x0 + TW_LOAD_RO(a + 4) * x1 + TW_LOAD_RO(a + 5) * x2;
        y2 += TW_LOAD_RO(a + 6) * x0 + TW_LOAD_RO(a + 7) * x1 + TW_LOAD_RO(a + 8) * x2;
    }
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
}

/* The lanes' butterfly on the CPU: after it every lane holds the row's sum,
 * lane l adding lane l ^ off's value to its own for off = TW_ROW_LANES / 2,
 * ..., 1, as the kernels' __shfl_xor_sync steps do (v: TW_ROW_LANES x 3) */
TW_HD void tw_row_butterfly(tw_real (*v)[3])
{
    for (int off = TW_ROW_LANES / 2; off > 0; off >>= 1) {
        tw_real w[TW_ROW_LANES][3];
        for (int l = 0; l < TW_ROW_LANES; l++)
            for (int c = 0; c < 3; c++) w[l][c] = v[l][c] + v[l ^ off][c];
        for (int l = 0; l < TW_ROW_LANES; l++)
            for (int c = 0; c < 3; c++) v[l][c] = w[l][c];
    }
}

/* lane's share of q_i = A_i. (z + beta p) over row i's blocks lane,
 * lane + TW_ROW_LANES, ... (y: 3, set here) */
TW_HD void tw_row_lane_sum(const int *row_ptr, const int *col, const tw_real *val, const tw_real *z,
                           const tw_real *p, tw_real beta, int i, int lane, tw_real *y)
{
    tw_real y0 = 0, y1 = 0, y2 = 0;
    int end = TW_LOAD_RO(row_ptr + i + 1);
    for (int k = TW_LOAD_RO(row_ptr + i) + lane; k < end; k += TW_ROW_LANES) {
        const tw_real *a = val + 9 * (size_t)k;
        size_t j = 3 * (size_t)TW_LOAD_RO(col + k);
        tw_real x0 = TW_LOAD_RO(z + j) + beta * TW_LOAD_RO(p + j);
        tw_real x1 = TW_LOAD_RO(z + j + 1) + beta * TW_LOAD_RO(p + j + 1);
        tw_real x2 = TW_LOAD_RO(z + j + 2) + beta * TW_LOAD_RO(p + j + 2);
        y0 += TW_LOAD_RO(a) * x0 + TW_LOAD_RO(a + 1) * x1 + TW_LOAD_RO(a + 2) * x2;
        y1 += TW_LOAD_RO(a + 3) * x0 + TW_LOAD_RO(a + 4) * x1 + TW_LOAD_RO(a + 5) * x2;
        y2 += TW_LOAD_RO(a + 6) * x0 + TW_LOAD_RO(a + 7) * x1 + TW_LOAD_RO(a + 8) * x2;
    }
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
}

/* Row i's end, by its lane 0, with y = (A (z + beta p))_i: p'_i = z_i +
 * beta p_i into pn, q_i = S y; returns p'_i . q_i (double, as the CPU's dot) */
TW_HD double tw_row_finish(int i, const tw_real *y, tw_real beta, const tw_real *z, const tw_real *p, tw_real *pn,
                           tw_real *q, const unsigned char *cons, const tw_real *nrm)
{
    size_t k = 3 * (size_t)i;
    tw_real qi[3] = {y[0], y[1], y[2]};
    tw_filter_block(cons[i], nrm, i, qi);
    double s = 0;
    for (int c = 0; c < 3; c++) {
        tw_real pc = z[k + c] + beta * p[k + c];
        pn[k + c] = pc;
        q[k + c] = qi[c];
        s += (double)pc * (double)qi[c];
    }
    return s;
}

/* The update of vertex i: x += alpha p, r -= alpha q, z = S Dinv r;
 * s[0] += r.z, s[1] += r.r */
TW_HD void tw_update_vertex(int i, tw_real alpha, const tw_real *p, const tw_real *q, const tw_real *dinv,
                            const unsigned char *cons, const tw_real *nrm, tw_real *x, tw_real *r, tw_real *z,
                            double *s)
{
    size_t k = 3 * (size_t)i;
    for (int c = 0; c < 3; c++) {
        x[k + c] += alpha * p[k + c];
        r[k + c] -= alpha * q[k + c];
    }
    const tw_real *ri = r + k;
    tw_real zi[3];
    tw_block_jacobi_vertex(dinv, r, i, cons[i], nrm, zi);
    for (int c = 0; c < 3; c++) {
        z[k + c] = zi[c];
        s[0] += (double)ri[c] * (double)zi[c];
        s[1] += (double)ri[c] * (double)ri[c];
    }
}

/* Thread t of block b (of nb) in the update kernel: its vertices i = b
 * TW_RED_THREADS + t, then + nb TW_RED_THREADS, ... below n; s[0], s[1]
 * set to its sums */
TW_HD void tw_update_thread(int b, int t, int nb, int n, tw_real alpha, const tw_real *p, const tw_real *q,
                            const tw_real *dinv, const unsigned char *cons, const tw_real *nrm, tw_real *x, tw_real *r,
                            tw_real *z, double *s)
{
    s[0] = s[1] = 0;
    for (long i = (long)b * TW_RED_THREADS + t; i < n; i += (long)nb * TW_RED_THREADS)
        tw_update_vertex((int)i, alpha, p, q, dinv, cons, nrm, x, r, z, s);
}
#endif
