/* TW_HD: marks inline math shared by the CPU backend and the CUDA kernels.
 * Under nvcc it is __host__ __device__; in C it is static inline. Headers that use
 * it compile as C11 and as CUDA: no C++ in them, no compound literals. */
#ifndef TW_HD_H
#define TW_HD_H
#include "tetwarp.h"
#ifdef __CUDACC__
#define TW_HD __host__ __device__ __forceinline__
#else
/* always inlined: GCC at -O2 otherwise keeps the SVD, the corotated stress
 * and friends as calls with tw_m3 through the stack (measured ~10 % of
 * corot-element's rotations + assembly) */
#if defined(__GNUC__)
#define TW_HD static inline __attribute__((always_inline))
#else
#define TW_HD static inline
#endif
#endif

/* OpenMP loops run in parallel only above this many iterations: below it the
 * fork/join costs more than the loop (and oversubscribed machines stall). */
#define TW_PAR(count) ((count) > 8192)

/* The threads a loop of one world (or one solve) asks for in its num_threads
 * clause: threads when > 0 (a world's def.threads), else the OpenMP default
 * at that moment. A clause, never omp_set_num_threads, which would set the
 * calling thread's default for every later region: one world's setting
 * would become the next world's. */
#ifdef _OPENMP
#include <omp.h>
#define TW_THREADS(threads) ((threads) > 0 ? (threads) : omp_get_max_threads())
#endif
#endif
