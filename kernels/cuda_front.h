/* The tetra front's step on the CUDA device (kernels/cuda_front.cu), from
 * plain C (host/tetra_front.c). The host keeps the switch decisions, the
 * front structures and the state (positions and velocities, double); the
 * device keeps the tree's per-tet data (gradients, element stiffness:
 * uploaded once), the front's BSR pattern, updated at a switch by Thrust
 * from what the switch changed (kernels/thrust_front.h), and the gather
 * maps of the rebuild (host/tetra_front_maps.h: uploaded at a switch), and
 * runs each step's element pass, gathered assembly and right-hand side
 * (host/hd/front_element.h, the CPU front's bodies, in double) and the
 * filtered block-Jacobi PCG (the CPU's tw_pcg, host/solver_impl.h) on them.
 * Per step the host uploads the positions of the front's vertices (3 double
 * each), the velocities of the free ones (3 double each, and their reduced
 * external forces where set) and reads back the solution (3 tw_real per
 * free vertex).
 *
 * Every function returns TW_OK, or TW_ERR_NOMEM / TW_ERR_DEVICE /
 * TW_ERR_INVALID with tw_last_error() naming the file, line and call.
 *
 * NEVER RUN ON A GPU YET: written and compiled on a machine without one. */
#ifndef TW_CUDA_FRONT_H
#define TW_CUDA_FRONT_H
#include "tetra_front_maps.h"
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

/* The tree's per-tet data, once: ntree tets' gradients (12 each) and
 * element stiffness (144 each, row-major), double. */
tw_status tw_cuda_front_tree(tw_cuda_front *d, int ntree, const double *g, const double *Ke);
/* A rebuild's gather maps, after its tw_cuda_front_pattern (m->nnzb and
 * m->n must be the pattern's). */
tw_status tw_cuda_front_maps(tw_cuda_front *d, const tw_front_maps *m);
/* The step's system on the device: xu (3 per front vertex, the maps'
 * used), vf and fqf (3 per free vertex; fqf NULL: no external force)
 * uploaded, then the element pass, the blocks' gather, the diagonal's mass,
 * the right-hand side and the PCG's start. */
tw_status tw_cuda_front_assemble(tw_cuda_front *d, const double *xu, const double *vf, const double *fqf);
/* Tests: the last assembly's values (9 per block), right-hand side and
 * start (3 per free vertex) copied to host arrays. */
tw_status tw_cuda_front_system_to_host(const tw_cuda_front *d, tw_real *val, tw_real *rhs, tw_real *vr);
/* The PCG on the last assembly (the CPU's stopping rules: rel. residual
 * tol, at most max_iterations); the solution copied to x (3 per free
 * vertex). iterations, residual (relative) and negative_curvature as
 * tw_solve_result's. */
tw_status tw_cuda_front_solve(tw_cuda_front *d, double tol, int max_iterations, tw_real *x, int *iterations,
                              double *residual, int *negative_curvature);
/* Bytes copied host to device and device to host by the last assembly and
 * solve. */
size_t tw_cuda_front_step_bytes(const tw_cuda_front *d);

#ifdef __cplusplus
}
#endif
#endif
