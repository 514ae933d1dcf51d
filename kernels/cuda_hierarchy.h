/* A mesh hierarchy's transfer P on the device (host/hierarchy.h's form: a
 * fixed number of barycentric entries per fine vertex): prolongation
 * fine = P coarse, and restriction coarse = P^T fine by a precomputed
 * transpose (CSR by coarse vertex, the fine vertices in increasing order), so
 * that each coarse vertex sums its own terms in a fixed order: no atomics,
 * and the same sums in the same order as the CPU's tw_transfer_restrict.
 * C interface (extern "C"), implemented in cuda_hierarchy.cu; compiled only
 * when nvcc is found.
 *
 * NEVER RUN ON A GPU YET: written and compiled on a machine without one
 * (tests/test_gpu_hierarchy.c compares it with the CPU functions). */
#ifndef TW_CUDA_HIERARCHY_H
#define TW_CUDA_HIERARCHY_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct tw_cuda_transfer tw_cuda_transfer;
struct CUstream_st; /* cudaStream_t, without the CUDA headers */

/* Uploads a transfer given as host arrays: row entries per fine vertex
 * (coarse vertex idx[row i + k], weight w[row i + k]; weight 0: unused), and
 * its transpose built here. NULL with tw_last_error set on failure (an index
 * out of range, no device, device memory). */
tw_cuda_transfer *tw_cuda_transfer_create(int n_fine, int n_coarse, int row, const int *idx, const double *w);
void tw_cuda_transfer_free(tw_cuda_transfer *T);

/* d_fine (3 n_fine, device) = P d_coarse (3 n_coarse, device), on stream
 * (NULL: the default stream); asynchronous. */
tw_status tw_cuda_transfer_prolong(const tw_cuda_transfer *T, const tw_real *d_coarse, tw_real *d_fine,
                                   struct CUstream_st *stream);
/* d_coarse (3 n_coarse) = P^T d_fine (3 n_fine), device arrays; asynchronous. */
tw_status tw_cuda_transfer_restrict(const tw_cuda_transfer *T, const tw_real *d_fine, tw_real *d_coarse,
                                    struct CUstream_st *stream);
#ifdef __cplusplus
}
#endif
#endif
