/* The multigrid hierarchy's Galerkin products as lists (host/amg.c's
 * patterns, exported by tw_amg_level_view_of): per output block, the
 * products that add into it, in the order amg.c adds them. A device (or
 * its CPU emulation) then computes each block of P, A P and P^T A P on one
 * thread from its list (host/hd/amg_galerkin.h): no atomics, no search for
 * an output position. Built once per hierarchy, on the host. */
#ifndef TW_AMG_LISTS_H
#define TW_AMG_LISTS_H
#include "amg.h"

typedef struct tw_amg_lists {
    /* P (l.p_nnzb blocks): per block its row, the A blocks of that row
     * (and their columns) whose column's aggregate is the block's, and the
     * row's own P0 block when the row's aggregate is the block's, else -1 */
    int *p_row, *pl_ptr, *pl_k, *pl_j, *p0_self;
    /* A P (l.ap_nnzb blocks): per block its row and the pairs (A block,
     * P block) */
    int *ap_row, *apl_ptr, *apl_k, *apl_kb;
    /* P^T A P (c.nnzb blocks): per block its row, and for a block on or
     * right of the diagonal the pairs (P block, AP block); a block left of
     * it is its mirror's transpose (an empty list) */
    int *ac_row, *acl_ptr, *acl_p, *acl_ap;
    long entries; /* list entries in all, for the memory a device copy takes */
} tw_amg_lists;

/* The lists below level l: gptr, gcol are level l's operator graph (the
 * step's BSR pattern on the finest level, l.ptr and l.col below), c the
 * next level. TW_ERR_NOMEM (with its message) or TW_ERR_INVALID when the
 * patterns do not fit together. */
tw_status tw_amg_lists_build(const int *gptr, const int *gcol, const tw_amg_level_view *l,
                             const tw_amg_level_view *c, tw_amg_lists *out);
void tw_amg_lists_free(tw_amg_lists *lists);
#endif
