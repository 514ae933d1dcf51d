/* hd/bsr_row.h's instance for tw_real under its own names (tw_bsr_row_product,
 * tw_block_jacobi_inverse, tw_block_jacobi_vertex, ...), guarded: the CUDA
 * solvers, hd/pcg_fused.h and the host code outside solver.c include this
 * one. solver.c instantiates bsr_row.h itself (through solver_impl.h, for
 * tw_real and double) and does not include this header. */
#ifndef TW_HD_BSR_ROW_REAL_H
#define TW_HD_BSR_ROW_REAL_H
#include "hd.h"
#define TW_S_REAL tw_real
#define TW_S(name) name
#include "bsr_row.h"
#undef TW_S_REAL
#undef TW_S
#endif
