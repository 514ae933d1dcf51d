/* tw_cusolver_svd_batched: cuSOLVER's batched Jacobi SVD from plain C.
 *
 * cuSOLVER is column-major: the row-major 3x3 inputs are transposed into
 * column-major on the host, and U, V come back column-major and are
 * transposed the other way. Sorting is asked for and also enforced here
 * (descending S, U and V columns permuted with it), so callers never depend
 * on the library's default. The handle, the Jacobi parameters and the buffer
 * (sized by the library's own query) are made once per call and destroyed in
 * reverse order; every call is checked.
 *
 * NEVER RUN ON A GPU YET: compiled on a machine without one. */
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tw_cusolver.h"

#ifdef TW_DOUBLE
#define TW_GESVDJ_BATCHED cusolverDnDgesvdjBatched
#define TW_GESVDJ_BATCHED_BUFFER cusolverDnDgesvdjBatched_bufferSize
#else
#define TW_GESVDJ_BATCHED cusolverDnSgesvdjBatched
#define TW_GESVDJ_BATCHED_BUFFER cusolverDnSgesvdjBatched_bufferSize
#endif

static const char *cusolver_status_name(cusolverStatus_t s)
{
    switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
        return "CUSOLVER_STATUS_NOT_INITIALIZED (no device, or the CUDA runtime failed)";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED (out of device memory)";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "a cuSOLVER error";
    }
}

static tw_status cuda_ok(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return TW_OK;
    cudaGetLastError();
    return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

static tw_status cusolver_ok(cusolverStatus_t e, const char *call, const char *file, int line)
{
    if (e == CUSOLVER_STATUS_SUCCESS) return TW_OK;
    return tw_fail(TW_ERR_DEVICE, "%s:%d: %s failed: %s (status %d)", file, line, call, cusolver_status_name(e),
                   (int)e);
}

/* set st and jump to the cleanup on failure */
#define TRY_CUDA(call)                                                                                       \
    do {                                                                                                     \
        st = cuda_ok((call), #call, __FILE__, __LINE__);                                                     \
        if (st != TW_OK) goto done;                                                                          \
    } while (0)
#define TRY_CUSOLVER(call)                                                                                   \
    do {                                                                                                     \
        st = cusolver_ok((call), #call, __FILE__, __LINE__);                                                 \
        if (st != TW_OK) goto done;                                                                          \
    } while (0)

/* row-major <-> column-major of count 3x3 matrices (the same transpose) */
static void transpose_all(const tw_real *in, tw_real *out, int count)
{
    for (size_t k = 0; k < (size_t)count; k++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) out[9 * k + 3 * c + r] = in[9 * k + 3 * r + c];
}

/* s descending, U's and V's columns (row-major 3x3) moved with it */
static void sort_triplet(tw_real *U, tw_real *s, tw_real *V)
{
    for (int i = 0; i < 2; i++)
        for (int j = 2; j > i; j--)
            if (s[j] > s[j - 1]) {
                tw_real t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
                for (int r = 0; r < 3; r++) {
                    t = U[3 * r + j]; U[3 * r + j] = U[3 * r + j - 1]; U[3 * r + j - 1] = t;
                    t = V[3 * r + j]; V[3 * r + j] = V[3 * r + j - 1]; V[3 * r + j - 1] = t;
                }
            }
}

tw_status tw_cusolver_svd_batched(const tw_real *A, tw_real *U, tw_real *S, tw_real *V, int count, double *ms)
{
    if (count < 1 || !A || !U || !S || !V)
        return tw_fail(TW_ERR_INVALID, "tw_cusolver_svd_batched: count %d (need >= 1) or a NULL array", count);
    tw_status st = TW_OK;
    size_t mat = sizeof(tw_real) * 9 * (size_t)count, vec = sizeof(tw_real) * 3 * (size_t)count;
    cusolverDnHandle_t handle = NULL;
    gesvdjInfo_t params = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    tw_real *dA = NULL, *dU = NULL, *dS = NULL, *dV = NULL, *work = NULL;
    int *dinfo = NULL, lwork = 0;
    tw_real *colmajor = malloc(mat);
    int *info = malloc(sizeof(int) * (size_t)count);
    if (!colmajor || !info) {
        st = tw_fail(TW_ERR_NOMEM, "tw_cusolver_svd_batched: out of host memory for %d matrices", count);
        goto done;
    }
    transpose_all(A, colmajor, count);

    TRY_CUSOLVER(cusolverDnCreate(&handle));
    TRY_CUSOLVER(cusolverDnCreateGesvdjInfo(&params));
    TRY_CUSOLVER(cusolverDnXgesvdjSetSortEig(params, 1));
    TRY_CUDA(cudaMalloc((void **)&dA, mat));
    TRY_CUDA(cudaMalloc((void **)&dU, mat));
    TRY_CUDA(cudaMalloc((void **)&dV, mat));
    TRY_CUDA(cudaMalloc((void **)&dS, vec));
    TRY_CUDA(cudaMalloc((void **)&dinfo, sizeof(int) * (size_t)count));
    TRY_CUDA(cudaMemcpy(dA, colmajor, mat, cudaMemcpyHostToDevice));
    TRY_CUSOLVER(TW_GESVDJ_BATCHED_BUFFER(handle, CUSOLVER_EIG_MODE_VECTOR, 3, 3, dA, 3, dS, dU, 3, dV, 3, &lwork,
                                          params, count));
    TRY_CUDA(cudaMalloc((void **)&work, sizeof(tw_real) * (size_t)(lwork > 0 ? lwork : 1)));
    TRY_CUDA(cudaEventCreate(&ev[0]));
    TRY_CUDA(cudaEventCreate(&ev[1]));
    TRY_CUDA(cudaEventRecord(ev[0], 0));
    TRY_CUSOLVER(TW_GESVDJ_BATCHED(handle, CUSOLVER_EIG_MODE_VECTOR, 3, 3, dA, 3, dS, dU, 3, dV, 3, work, lwork, dinfo,
                                   params, count));
    TRY_CUDA(cudaEventRecord(ev[1], 0));
    TRY_CUDA(cudaEventSynchronize(ev[1]));
    if (ms) {
        float t = 0;
        TRY_CUDA(cudaEventElapsedTime(&t, ev[0], ev[1]));
        *ms = t;
    }
    TRY_CUDA(cudaMemcpy(info, dinfo, sizeof(int) * (size_t)count, cudaMemcpyDeviceToHost));
    for (int k = 0; k < count; k++)
        if (info[k] != 0) {
            st = tw_fail(TW_ERR_DEVICE, "%s:%d: gesvdjBatched: matrix %d of %d: info %d (%s)", __FILE__, __LINE__, k,
                         count, info[k], info[k] > 0 ? "no convergence within the sweeps" : "invalid argument");
            goto done;
        }
    TRY_CUDA(cudaMemcpy(S, dS, vec, cudaMemcpyDeviceToHost));
    TRY_CUDA(cudaMemcpy(colmajor, dU, mat, cudaMemcpyDeviceToHost));
    transpose_all(colmajor, U, count);
    TRY_CUDA(cudaMemcpy(colmajor, dV, mat, cudaMemcpyDeviceToHost));
    transpose_all(colmajor, V, count);
    for (size_t k = 0; k < (size_t)count; k++) sort_triplet(U + 9 * k, S + 3 * k, V + 9 * k);

done:
    if (ev[1]) cudaEventDestroy(ev[1]);
    if (ev[0]) cudaEventDestroy(ev[0]);
    cudaFree(work);
    cudaFree(dinfo);
    cudaFree(dS);
    cudaFree(dV);
    cudaFree(dU);
    cudaFree(dA);
    if (params) cusolverDnDestroyGesvdjInfo(params);
    if (handle) cusolverDnDestroy(handle);
    free(info);
    free(colmajor);
    return st;
}
