// Device facts for the benchmark (tw_bandwidth.h): name, memory, and the
// measured device-to-device copy bandwidth, the ceiling a bandwidth-bound CG
// iteration is compared with.
//
// The copy: two buffers of `bytes`, one untimed warm-up copy, then
// TW_COPY_REPEATS copies each between two CUDA events; the best time wins
// (the least disturbed by clocks ramping up or other work). GB/s counts read
// and write, 2 x bytes per copy, as bandwidth figures for kernels do.
//
// NEVER RUN ON A GPU YET: written and compiled on a machine without one.
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "tw_bandwidth.h"

enum { TW_COPY_REPEATS = 20 };

/* The timed copies into *best_ms; the caller owns and frees the buffers and events. */
static tw_status time_copies(void *dst, const void *src, size_t bytes, cudaEvent_t a, cudaEvent_t b, float *best_ms)
{
    TW_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
    TW_CUDA_TRY(cudaDeviceSynchronize());
    float best = -1;
    for (int k = 0; k < TW_COPY_REPEATS; k++) {
        TW_CUDA_TRY(cudaEventRecord(a));
        TW_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
        TW_CUDA_TRY(cudaEventRecord(b));
        TW_CUDA_TRY(cudaEventSynchronize(b));
        float ms = 0;
        TW_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
        if (ms > 0 && (best < 0 || ms < best)) best = ms;
    }
    *best_ms = best;
    return TW_OK;
}

extern "C" tw_status tw_cuda_copy_bandwidth(size_t bytes, double *gbps)
{
    *gbps = 0;
    if (bytes < 1024) return tw_fail(TW_ERR_INVALID, "tw_cuda_copy_bandwidth: %zu bytes is too small a copy to time", bytes);
    void *src = NULL, *dst = NULL;
    cudaEvent_t a = NULL, b = NULL;
    float ms = -1;
    const char *hint = "ask for a smaller copy";
    tw_status s = tw_cuda_malloc(&src, bytes, "the copy's source", hint, __FILE__, __LINE__);
    if (s == TW_OK) s = tw_cuda_malloc(&dst, bytes, "the copy's destination", hint, __FILE__, __LINE__);
    if (s == TW_OK) s = tw_cuda_check(cudaMemset(src, 1, bytes), "cudaMemset(src, 1, bytes)", __FILE__, __LINE__);
    if (s == TW_OK) s = tw_cuda_check(cudaEventCreate(&a), "cudaEventCreate(&a)", __FILE__, __LINE__);
    if (s == TW_OK) s = tw_cuda_check(cudaEventCreate(&b), "cudaEventCreate(&b)", __FILE__, __LINE__);
    if (s == TW_OK) s = time_copies(dst, src, bytes, a, b, &ms);
    if (s == TW_OK && !(ms > 0))
        s = tw_fail(TW_ERR_DEVICE, "%s:%d: the copy of %zu bytes timed at %g ms: no usable timing", __FILE__, __LINE__,
                    bytes, (double)ms);
    if (s == TW_OK) *gbps = 2.0 * (double)bytes / (1e-3 * ms) / 1e9;
    if (b) cudaEventDestroy(b);
    if (a) cudaEventDestroy(a);
    if (dst) cudaFree(dst);
    if (src) cudaFree(src);
    cudaGetLastError(); /* the clean-up reports nothing */
    return s;
}

extern "C" tw_status tw_cuda_device_info(char *name, size_t n, size_t *total_mem)
{
    int dev = 0;
    TW_CUDA_TRY(cudaGetDevice(&dev));
    cudaDeviceProp p;
    TW_CUDA_TRY(cudaGetDeviceProperties(&p, dev));
    if (name && n) snprintf(name, n, "%s", p.name);
    if (total_mem) *total_mem = p.totalGlobalMem;
    return TW_OK;
}

extern "C" tw_status tw_cuda_memory_info(size_t *free_bytes, size_t *total_bytes)
{
    size_t f = 0, t = 0;
    TW_CUDA_TRY(cudaMemGetInfo(&f, &t));
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return TW_OK;
}

extern "C" tw_status tw_cuda_synchronize(void)
{
    TW_CUDA_TRY(cudaDeviceSynchronize());
    return TW_OK;
}
