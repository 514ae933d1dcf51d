// Deterministic sums in double: a grid-stride kernel (at most
// TW_CUDA_REDUCE_BLOCKS blocks of TW_CUDA_THREADS) ends with
// tw_block_partials, which writes one partial per block and value; then
// tw_cuda_reduce_finish (cuda_pcg.cu) sums the partials in one block. The
// order of the additions depends only on the sizes, never on timing: no
// atomics. (The CPU sums serially, so the last bits differ.)
//
// Included by the .cu files that need it; internal linkage (anonymous
// namespace) so each file has its own copy of the device code.
#ifndef TW_CUDA_REDUCE_CUH
#define TW_CUDA_REDUCE_CUH
#include "cuda_internal.h"

namespace {

/* Every thread of the block calls this (after its grid-stride loop) with its
 * NV partial sums; partial[k * gridDim.x + blockIdx.x] receives the block's. */
template <int NV> __device__ __forceinline__ void tw_block_partials(const double (&v)[NV], double *partial)
{
    __shared__ double sh[NV][TW_CUDA_THREADS];
    int t = threadIdx.x;
    for (int k = 0; k < NV; k++) sh[k][t] = v[k];
    __syncthreads();
    for (int s = TW_CUDA_THREADS / 2; s > 0; s >>= 1) {
        if (t < s)
            for (int k = 0; k < NV; k++) sh[k][t] += sh[k][t + s];
        __syncthreads();
    }
    if (t == 0)
        for (int k = 0; k < NV; k++) partial[k * gridDim.x + blockIdx.x] = sh[k][0];
}

} // namespace
#endif
