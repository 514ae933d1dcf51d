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
#endif
