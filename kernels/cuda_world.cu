// The CUDA backend's world (see cuda_world.h). Placeholder until the
// backend lands: reports that the device path is not implemented yet.
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_world.h"

extern "C" tw_status tw_fail(tw_status s, const char *fmt, ...);

extern "C" int tw_cuda_usable(char *why, size_t why_size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) snprintf(why, why_size, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        cudaGetLastError();
        return 0;
    }
    return 1;
}

struct tw_cuda_world {
    int unused;
};

extern "C" tw_cuda_world *tw_cuda_world_create(struct tw_world *w)
{
    (void)w;
    tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend's step is not implemented yet (use --backend cpu)");
    return NULL;
}

extern "C" void tw_cuda_world_destroy(tw_cuda_world *cw) { (void)cw; }

extern "C" tw_status tw_cuda_world_step(tw_cuda_world *cw, struct tw_world *w, tw_step_stats *stats)
{
    (void)cw; (void)w; (void)stats;
    return tw_fail(TW_ERR_UNSUPPORTED, "the CUDA backend's step is not implemented yet");
}

extern "C" size_t tw_cuda_world_memory_bytes(const tw_cuda_world *cw)
{
    (void)cw;
    return 0;
}
