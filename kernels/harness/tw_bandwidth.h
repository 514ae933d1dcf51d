/* Device facts a benchmark reports beside its own numbers: the GPU's name and
 * memory, and its measured device-to-device copy bandwidth (the practical
 * ceiling for a bandwidth-bound kernel such as a CG iteration). C interface
 * (extern "C"), implemented in cuda_bandwidth.cu; compiled only when nvcc is
 * found (callers guard with #ifdef TW_HAVE_CUDA). Every CUDA call is checked:
 * on failure the status is TW_ERR_DEVICE and tw_last_error() names the file,
 * line, call and CUDA's reason. */
#ifndef TW_BANDWIDTH_H
#define TW_BANDWIDTH_H
#include <stddef.h>

#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Copies one device buffer of `bytes` into another with cudaMemcpy
 * (device to device) several times, each timed with CUDA events, and returns
 * the best in *gbps, GB/s (1e9 bytes/s) counting the bytes read and the
 * bytes written (2 x bytes per copy). Needs 2 x bytes of free device memory;
 * too little is TW_ERR_DEVICE saying how much was free. */
tw_status tw_cuda_copy_bandwidth(size_t bytes, double *gbps);

/* The current device's name (copied into name, at most n bytes with the
 * terminating 0) and its total global memory, bytes. Either output may be NULL. */
tw_status tw_cuda_device_info(char *name, size_t n, size_t *total_mem);

/* Free and total device memory now, bytes (cudaMemGetInfo): the difference
 * before and after creating a world is what it holds, library workspaces
 * included. Either output may be NULL. */
tw_status tw_cuda_memory_info(size_t *free_bytes, size_t *total_bytes);

/* Waits for all work on the current device (cudaDeviceSynchronize): a
 * benchmark's wall clock then covers every step it timed. */
tw_status tw_cuda_synchronize(void);

#ifdef __cplusplus
}
#endif
#endif
