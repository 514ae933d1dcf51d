/* The multigrid preconditioner on the device (kernels/cuda_amg.cu): the
 * smoothed-aggregation hierarchy of host/amg.c, set up on the host from the
 * device's first system matrix and uploaded; per PCG solve on the device its
 * update (the smoother's block inverses every solve; every
 * galerkin_interval solves, or when the contact set changed, the power
 * iteration, P, A P, P^T A P and the coarsest level's pseudo-inverse) and
 * per PCG application a V-cycle. Used by the device's PCG (cuda_pcg.cu) when
 * the world def asks for TW_PRECOND_MG.
 *
 * NEVER RUN ON A GPU YET: written and compiled on a machine without one;
 * tests/test_amg_emul.c replays its arithmetic on the CPU. */
#ifndef TW_CUDA_AMG_H
#define TW_CUDA_AMG_H
#include "cuda_world.h"
#ifdef __cplusplus
extern "C" {
#endif
struct tw_cuda_status; /* cuda_internal.h */

/* Levels of the device's hierarchy: 0 while none is built (the device PCG
 * then runs block-Jacobi: mg not asked, not set up yet, or its set-up
 * failed, which stderr said). For the tests. */
int tw_cuda_world_mg_levels(const tw_cuda_world *cw);
/* 1 when its finest sweeps run TW_ROW_LANES lanes per row (TW_CUDA_MG_SWEEP=warp
 * in the environment at the set-up, the world's first mg step) */
int tw_cuda_world_mg_warp_sweep(const tw_cuda_world *cw);

/* Before a step (cuda_world.cu step_device): whether the PCG uses the
 * multigrid this step (def->precond mg, an implicit integrator), and
 * *host_driven = 1 when it must be set up during this step (the set-up
 * reads the step's system matrix back: the step cannot be a graph). A
 * hierarchy built for another set of constrained vertices (a setter
 * uploaded cons) is dropped and made again; a change of hierarchy drops
 * the captured graph (its kernels bake the hierarchy's arrays). */
tw_status tw_cuda_amg_prepare(tw_cuda_world *cw, const tw_cuda_step_in *in, int *host_driven);
void tw_cuda_amg_free(tw_cuda_world *cw);

/* 1 when this solve's PCG preconditions with the V-cycle (tw_cuda_amg_begin
 * then sets up or updates it) */
int tw_cuda_amg_active(const tw_cuda_world *cw);
/* At the start of a PCG solve, after the system matrix: the set-up (outside
 * any capture) or the update, enqueued on cw->stream. When the set-up
 * fails the world goes on with block-Jacobi (stderr says why) and
 * tw_cuda_amg_active turns 0: the caller checks it again after this. */
tw_status tw_cuda_amg_begin(tw_cuda_world *cw);
/* z = V r, the V-cycle from zero (z is not filtered here); st: every
 * kernel does nothing once st->active is 0 (NULL: always runs) */
tw_status tw_cuda_amg_apply(tw_cuda_world *cw, const tw_real *r, tw_real *z, const struct tw_cuda_status *st);
#ifdef __cplusplus
}
#endif
#endif
