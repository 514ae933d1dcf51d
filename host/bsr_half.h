/* The symmetric half of a step's 3x3-BSR system matrix on the CPU: the
 * index (hd/bsr_half.h) built from a full pattern, in place (the full
 * matrix's values, only its upper half read) or compact (only the half
 * stored, its values copied from the full matrix by tw_bsr_half_refresh:
 * what tw_pcg uses, the in-place form streaming no less on a CPU whose
 * prefetchers fetch the skipped lower blocks anyway). The product is
 * tw_bsr_half_spmv (solver.h).
 *
 * Only for a symmetric matrix: the PCG's systems are (corot-element,
 * hybrid, green's tangent, linear, warp-vertex's and warp-edge's symmetric
 * approximation R_i K_ij R_j^T, each plus mass and Rayleigh damping);
 * warp_system bicgstab's exact blocks R_i K_ij R_i^T are not, and its
 * BiCGStab keeps the full matrix. */
#ifndef TW_BSR_HALF_H
#define TW_BSR_HALF_H
#include "solver.h"

typedef struct tw_bsr_half {
    int n, nnzb;              /* the full pattern's */
    const int *row_ptr, *col; /* the full pattern it was built on (tw_bsr_half_matches) */
    int *lo_blk;              /* in place: nnzb entries, read at the lower positions only */
    int nh;                   /* compact: blocks stored, n diagonal + the upper ones */
    int *up_ptr, *up_col, *lo_ptr, *lo_row, *lo_cblk, *src; /* compact: its pattern; src: full position */
    tw_real *val;             /* compact: 9 per stored block, row-major */
    tw_bsr_half_index index;  /* the product's view (in place: into the full arrays) */
} tw_bsr_half;

/* The in-place index of the full pattern (n block rows, nnzb blocks, diag
 * the diagonal's positions). The pattern must be structurally symmetric with
 * ascending columns and every diagonal block present: TW_ERR_INVALID names
 * the first row that is not. */
tw_status tw_bsr_half_init(tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col, const int *diag);
/* The compact form of the same pattern, its values from val (the full
 * matrix's, tw_real). */
tw_status tw_bsr_half_init_compact(tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col,
                                   const int *diag, const tw_real *val);
/* compact: copies the upper half of the full matrix's values val */
void tw_bsr_half_refresh(tw_bsr_half *h, const tw_real *val, int threads);
/* 1 when h was built on this pattern (the same arrays and sizes) */
int tw_bsr_half_matches(const tw_bsr_half *h, int n, int nnzb, const int *row_ptr, const int *col);
/* bytes one product reads (matrix values and indices, x and y once each),
 * real the scalar's size: the streaming model of bench/spmv_half.c */
double tw_bsr_half_bytes(const tw_bsr_half *h, size_t real);
void tw_bsr_half_free(tw_bsr_half *h);

/* TW_SPMV=half in the environment or the world def's spmv field; 0 when
 * neither asks for it. */
int tw_spmv_half_wanted(tw_spmv_form def_form);
#endif
