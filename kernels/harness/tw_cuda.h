/* C entry points of the CUDA kernels (extern "C", callable from C11). */
#ifndef TW_CUDA_H
#define TW_CUDA_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
/* 1 when a CUDA device is usable, else 0 (and the reason in tw_last_error
 * is not set: no device is not an error). */
int tw_cuda_device_count(void);
/* Polar rotations of `count` 3x3 row-major matrices (host arrays), one
 * thread per matrix, with the same tw_polar3 the CPU backend runs. */
tw_status tw_cuda_polar_batched(const tw_real *A, tw_real *R, int count);
#ifdef __cplusplus
}
#endif
#endif
