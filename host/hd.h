/* TW_HD: marks inline math shared by the CPU backend and the CUDA kernels.
 * Under nvcc it is __host__ __device__; in C it is nothing. Headers that use
 * it compile as C11 and as CUDA: no C++ in them, no compound literals. */
#ifndef TW_HD_H
#define TW_HD_H
#include "tetwarp.h"
#ifdef __CUDACC__
#define TW_HD __host__ __device__ __forceinline__
#else
#define TW_HD static inline
#endif

/* OpenMP loops run in parallel only above this many iterations: below it the
 * fork/join costs more than the loop (and oversubscribed machines stall). */
#define TW_PAR(count) ((count) > 8192)
#endif
