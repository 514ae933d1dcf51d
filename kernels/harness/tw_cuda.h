/* The batched polar kernel of the harness (extern "C", callable from C11):
 * linked by the tests and the benchmark only (kernels/harness/). */
#ifndef TW_CUDA_H
#define TW_CUDA_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
/* Polar rotations of `count` 3x3 row-major matrices (host arrays), one
 * thread per matrix, with the same tw_polar3 the CPU backend runs. */
tw_status tw_cuda_polar_batched(const tw_real *A, tw_real *R, int count);
#ifdef __cplusplus
}
#endif
#endif
