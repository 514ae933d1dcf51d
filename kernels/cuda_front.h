/* The tetra front's solve on the CUDA device (kernels/cuda_front.cu), from
 * plain C (host/tetra_front.c). The host keeps the switch decisions, the
 * front structures, the element pass and the assembly; the device keeps the
 * front's BSR pattern, updated at a switch by Thrust from what the switch
 * changed (kernels/thrust_front.h), and runs each step's filtered
 * block-Jacobi PCG (the CPU's tw_pcg, host/solver_impl.h) on the uploaded
 * values. Per step the host uploads the values (9 tw_real per block), the
 * right-hand side and the start (3 tw_real per free vertex each) and reads
 * back the solution (3 per free vertex); at a switch the reduced index and
 * redo flag per finest vertex, the constraint per free vertex and the slot
 * lists of the tets whose rows are redone.
 *
 * Every function returns TW_OK, or TW_ERR_NOMEM / TW_ERR_DEVICE /
 * TW_ERR_INVALID with tw_last_error() naming the file, line and call.
 *
 * NEVER RUN ON A GPU YET: written and compiled on a machine without one. */
#ifndef TW_CUDA_FRONT_H
#define TW_CUDA_FRONT_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_cuda_front tw_cuda_front;

/* A device front over nv finest vertices (no pattern yet); NULL with
 * tw_last_error set on failure. */
tw_cuda_front *tw_cuda_front_create(int nv);
void tw_cuda_front_destroy(tw_cuda_front *d);

/* The pattern update of a switch (or the first build, every row redone):
 * n free vertices, rid and redo per finest vertex, ntet slot lists of 12
 * vertex ids each (-1 past a tet's count), cons per free vertex (non-zero:
 * held). Returns the new pattern's block count in *nnzb. */
tw_status tw_cuda_front_pattern(tw_cuda_front *d, int n, const int *rid, const unsigned char *redo, int ntet,
                                const int *slot, const unsigned char *cons, int *nnzb);
/* Tests: the device pattern copied to malloc'd host arrays (row_ptr n + 1,
 * col nnzb, diag n). */
tw_status tw_cuda_front_pattern_to_host(const tw_cuda_front *d, int *n, int *nnzb, int **row_ptr, int **col,
                                        int **diag);

/* One solve A x = b on the current pattern: val (9 per block, the host's
 * assembly in the pattern's order), b and the start x (3 per free vertex)
 * uploaded, x overwritten with the solution; the CPU's stopping rules (rel.
 * residual tol, at most max_iterations). iterations, residual (relative) and
 * negative_curvature as tw_solve_result's. */
tw_status tw_cuda_front_solve(tw_cuda_front *d, const tw_real *val, const tw_real *b, tw_real *x, double tol,
                              int max_iterations, int *iterations, double *residual, int *negative_curvature);
/* Bytes copied host to device and device to host by the last solve. */
size_t tw_cuda_front_step_bytes(const tw_cuda_front *d);

#ifdef __cplusplus
}
#endif
#endif
