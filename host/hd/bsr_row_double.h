/* hd/bsr_row.h's instance for double vectors under the names with _d
 * (tw_filter_block_d, ...) in either build, guarded: for hd code that works
 * in double whatever tw_real is (hd/amg_galerkin.h's filter of the
 * multigrid's prolongator columns). solver.c instantiates bsr_row.h itself
 * (its float build's _d names are these) and does not include this header. */
#ifndef TW_HD_BSR_ROW_DOUBLE_H
#define TW_HD_BSR_ROW_DOUBLE_H
#include "hd.h"
#define TW_S_REAL double
#define TW_S(name) name##_d
#include "bsr_row.h"
#undef TW_S_REAL
#undef TW_S
#endif
