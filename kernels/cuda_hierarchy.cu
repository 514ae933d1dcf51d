// The transfer P of a mesh hierarchy on the device: cuda_hierarchy.h says
// what. A kernel is the CPU loop body on one thread (host/hierarchy.c's
// tw_transfer_prolong and tw_transfer_restrict): the products and sums are
// written with explicit rounding (__dmul_rn, __dadd_rn) so that nvcc does not
// contract them into FMAs the CPU does not use, and the results can agree
// with the CPU's to the last bit.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include <stdlib.h>
#include <string.h>

#include "cuda_hierarchy.h"
#include "cuda_internal.h"

struct tw_cuda_transfer {
    int n_fine, n_coarse, row;
    int *idx;    /* row n_fine */
    double *w;   /* row n_fine */
    int *t_ptr;  /* n_coarse + 1: P^T by coarse vertex */
    int *t_fine; /* the fine vertices of each coarse row, increasing */
    double *t_w; /* their weights */
};

__global__ void tw_transfer_prolong_kernel(int n_fine, int row, const int *__restrict__ idx,
                                           const double *__restrict__ w, const tw_real *__restrict__ coarse,
                                           tw_real *__restrict__ fine)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_fine) return;
    double s0 = 0, s1 = 0, s2 = 0;
    for (int k = 0; k < row; k++) {
        int j = idx[row * i + k];
        double wk = w[row * i + k];
        s0 = __dadd_rn(s0, __dmul_rn(wk, (double)coarse[3 * j]));
        s1 = __dadd_rn(s1, __dmul_rn(wk, (double)coarse[3 * j + 1]));
        s2 = __dadd_rn(s2, __dmul_rn(wk, (double)coarse[3 * j + 2]));
    }
    fine[3 * i] = (tw_real)s0;
    fine[3 * i + 1] = (tw_real)s1;
    fine[3 * i + 2] = (tw_real)s2;
}

// The CPU's scatter, gathered: coarse vertex J adds its terms in increasing
// fine order, each product rounded to tw_real before the sum (as the CPU's
// coarse[j] += (tw_real)(w * fine) does).
__global__ void tw_transfer_restrict_kernel(int n_coarse, const int *__restrict__ t_ptr,
                                            const int *__restrict__ t_fine, const double *__restrict__ t_w,
                                            const tw_real *__restrict__ fine, tw_real *__restrict__ coarse)
{
    int J = blockIdx.x * blockDim.x + threadIdx.x;
    if (J >= n_coarse) return;
    tw_real a0 = 0, a1 = 0, a2 = 0;
    for (int q = t_ptr[J]; q < t_ptr[J + 1]; q++) {
        int i = t_fine[q];
        double wq = t_w[q];
        a0 = a0 + (tw_real)__dmul_rn(wq, (double)fine[3 * i]);
        a1 = a1 + (tw_real)__dmul_rn(wq, (double)fine[3 * i + 1]);
        a2 = a2 + (tw_real)__dmul_rn(wq, (double)fine[3 * i + 2]);
    }
    coarse[3 * J] = a0;
    coarse[3 * J + 1] = a1;
    coarse[3 * J + 2] = a2;
}

void tw_cuda_transfer_free(tw_cuda_transfer *T)
{
    if (!T) return;
    cudaFree(T->idx);
    cudaFree(T->w);
    cudaFree(T->t_ptr);
    cudaFree(T->t_fine);
    cudaFree(T->t_w);
    free(T);
}

/* The transpose on the host, then every array up. */
static tw_status upload(tw_cuda_transfer *T, const int *idx, const double *w)
{
    size_t nnz = (size_t)T->row * (size_t)T->n_fine;
    int *ptr = (int *)calloc((size_t)T->n_coarse + 2, sizeof(int));
    int *fill = (int *)malloc(sizeof(int) * ((size_t)T->n_coarse + 1));
    int *tf = (int *)malloc(sizeof(int) * (nnz + 1));
    double *tw = (double *)malloc(sizeof(double) * (nnz + 1));
    tw_status s = TW_OK;
    if (!ptr || !fill || !tf || !tw) s = tw_fail(TW_ERR_NOMEM, "tw_cuda_transfer_create: out of host memory");
    for (size_t q = 0; q < nnz && s == TW_OK; q++) {
        if (idx[q] < 0 || idx[q] >= T->n_coarse)
            s = tw_fail(TW_ERR_INVALID, "tw_cuda_transfer_create: fine vertex %zu refers to coarse vertex %d, out of "
                        "[0, %d)", q / (size_t)T->row, idx[q], T->n_coarse);
        else if (w[q] != 0)
            ptr[idx[q] + 1]++;
    }
    if (s == TW_OK) {
        for (int J = 0; J < T->n_coarse; J++) ptr[J + 1] += ptr[J];
        memcpy(fill, ptr, sizeof(int) * (size_t)T->n_coarse);
        for (size_t q = 0; q < nnz; q++) /* fine vertices in increasing order within each coarse row */
            if (w[q] != 0) {
                int p = fill[idx[q]]++;
                tf[p] = (int)(q / (size_t)T->row);
                tw[p] = w[q];
            }
    }
    const char *hint = "use a smaller mesh or the CPU backend";
    size_t tn = s == TW_OK ? (size_t)ptr[T->n_coarse] : 0;
    if (s == TW_OK) s = tw_cuda_malloc((void **)&T->idx, sizeof(int) * (nnz + 1), "transfer indices", hint, __FILE__, __LINE__);
    if (s == TW_OK) s = tw_cuda_malloc((void **)&T->w, sizeof(double) * (nnz + 1), "transfer weights", hint, __FILE__, __LINE__);
    if (s == TW_OK)
        s = tw_cuda_malloc((void **)&T->t_ptr, sizeof(int) * ((size_t)T->n_coarse + 1), "transfer transpose", hint,
                           __FILE__, __LINE__);
    if (s == TW_OK)
        s = tw_cuda_malloc((void **)&T->t_fine, sizeof(int) * (tn + 1), "transfer transpose", hint, __FILE__, __LINE__);
    if (s == TW_OK)
        s = tw_cuda_malloc((void **)&T->t_w, sizeof(double) * (tn + 1), "transfer transpose", hint, __FILE__, __LINE__);
    if (s == TW_OK)
        s = tw_cuda_check(cudaMemcpy(T->idx, idx, sizeof(int) * nnz, cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__,
                          __LINE__);
    if (s == TW_OK)
        s = tw_cuda_check(cudaMemcpy(T->w, w, sizeof(double) * nnz, cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__,
                          __LINE__);
    if (s == TW_OK)
        s = tw_cuda_check(cudaMemcpy(T->t_ptr, ptr, sizeof(int) * ((size_t)T->n_coarse + 1), cudaMemcpyHostToDevice),
                          "cudaMemcpy", __FILE__, __LINE__);
    if (s == TW_OK && tn)
        s = tw_cuda_check(cudaMemcpy(T->t_fine, tf, sizeof(int) * tn, cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__,
                          __LINE__);
    if (s == TW_OK && tn)
        s = tw_cuda_check(cudaMemcpy(T->t_w, tw, sizeof(double) * tn, cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__,
                          __LINE__);
    free(ptr);
    free(fill);
    free(tf);
    free(tw);
    return s;
}

extern "C" tw_cuda_transfer *tw_cuda_transfer_create(int n_fine, int n_coarse, int row, const int *idx,
                                                     const double *w)
{
    if (n_fine < 0 || n_coarse <= 0 || row <= 0 || (n_fine > 0 && (!idx || !w))) {
        tw_fail(TW_ERR_INVALID, "tw_cuda_transfer_create: %d fine, %d coarse vertices, %d entries a row: null or "
                "empty transfer", n_fine, n_coarse, row);
        return NULL;
    }
    tw_cuda_transfer *T = (tw_cuda_transfer *)calloc(1, sizeof *T);
    if (!T) {
        tw_fail(TW_ERR_NOMEM, "tw_cuda_transfer_create: out of host memory");
        return NULL;
    }
    T->n_fine = n_fine;
    T->n_coarse = n_coarse;
    T->row = row;
    if (upload(T, idx, w) != TW_OK) {
        tw_cuda_transfer_free(T);
        return NULL;
    }
    return T;
}

static int blocks_for(int n) { return (n + TW_CUDA_THREADS - 1) / TW_CUDA_THREADS; }

extern "C" tw_status tw_cuda_transfer_prolong(const tw_cuda_transfer *T, const tw_real *d_coarse, tw_real *d_fine,
                                              struct CUstream_st *stream)
{
    if (T->n_fine == 0) return TW_OK;
    tw_transfer_prolong_kernel<<<blocks_for(T->n_fine), TW_CUDA_THREADS, 0, stream>>>(T->n_fine, T->row, T->idx, T->w,
                                                                                       d_coarse, d_fine);
    TW_CUDA_TRY(cudaGetLastError());
    return TW_OK;
}

extern "C" tw_status tw_cuda_transfer_restrict(const tw_cuda_transfer *T, const tw_real *d_fine, tw_real *d_coarse,
                                               struct CUstream_st *stream)
{
    tw_transfer_restrict_kernel<<<blocks_for(T->n_coarse), TW_CUDA_THREADS, 0, stream>>>(
        T->n_coarse, T->t_ptr, T->t_fine, T->t_w, d_fine, d_coarse);
    TW_CUDA_TRY(cudaGetLastError());
    return TW_OK;
}
