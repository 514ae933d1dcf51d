// Batched 3x3 polar decomposition: one thread per matrix, the CPU's tw_polar3
// (host/hd/math3.h) compiled for the device. A harness, not the engine's
// path: test_gpu_svd checks the shared TW_HD math on the device with it, and
// the benchmark times it beside cuSOLVER's batched SVD.
#include <cuda_runtime.h>

#include "hd/math3.h"
#include "tw_cuda.h"

extern "C" tw_status tw_fail(tw_status s, const char *fmt, ...);

__global__ static void polar_kernel(const tw_real *A, tw_real *R, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    tw_m3_store(R + 9 * (size_t)i, tw_polar3(tw_m3_load(A + 9 * (size_t)i)));
}

#define TW_CUDA_CHECK(call)                                                                              \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            cudaFree(dA);                                                                                \
            cudaFree(dR);                                                                                \
            return tw_fail(TW_ERR_DEVICE, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
        }                                                                                                \
    } while (0)

extern "C" tw_status tw_cuda_polar_batched(const tw_real *A, tw_real *R, int count)
{
    tw_real *dA = NULL, *dR = NULL;
    if (count <= 0) /* a launch of 0 blocks is an invalid configuration */
        return count == 0 ? TW_OK : tw_fail(TW_ERR_INVALID, "tw_cuda_polar_batched: count %d < 0", count);
    size_t bytes = sizeof(tw_real) * 9 * (size_t)count;
    TW_CUDA_CHECK(cudaMalloc(&dA, bytes));
    TW_CUDA_CHECK(cudaMalloc(&dR, bytes));
    TW_CUDA_CHECK(cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    polar_kernel<<<(count + 255) / 256, 256>>>(dA, dR, count);
    TW_CUDA_CHECK(cudaGetLastError());
    TW_CUDA_CHECK(cudaMemcpy(R, dR, bytes, cudaMemcpyDeviceToHost));
    cudaFree(dA);
    cudaFree(dR);
    return TW_OK;
}
