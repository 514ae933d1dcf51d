/* The FEM pattern (vertex lists, BSR pattern, gather lists) built on the GPU
 * by kernels/thrust_fem.h's sort / unique / scan builder and copied back into
 * the host's tw_fem: a tw_fem_pattern_fn (host/fem.h) for tw_fem_build_using.
 * Implemented in fem_pattern_gpu.c; compiled only when nvcc is found. */
#ifndef TW_FEM_PATTERN_GPU_H
#define TW_FEM_PATTERN_GPU_H
#include "tetwarp.h"

struct tw_fem;
tw_status tw_fem_pattern_gpu(struct tw_fem *fem);
#endif
