/* The CUDA backend's world: a device copy of a CPU world's constant FEM data
 * (uploaded once) and state, stepped on the GPU. C interface (extern "C"),
 * implemented in cuda_world.cu; compiled only when nvcc is found.
 *
 * Contract with host/world.c: tw_world_create builds the CPU world as usual
 * (the precompute is the same), then tw_cuda_world_create uploads it; every
 * setter of the public API marks w->host_dirty, and tw_cuda_world_step
 * uploads the dynamic state (constraints, targets, forces; x and v where the
 * host's copy is current) when it is set, runs the step on the device (as a
 * CUDA Graph, cuda_world.cu) and leaves x and v there: after a step the
 * device holds the truth and w->host_x_stale / host_v_stale say so; the
 * host's accessors call tw_cuda_world_download before reading w->x / w->v.
 * A step copies no vertex data to the host. */
#ifndef TW_CUDA_WORLD_H
#define TW_CUDA_WORLD_H
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
struct tw_world;
typedef struct tw_cuda_world tw_cuda_world;

/* 1 when a CUDA device can be used; else 0 with the reason in why. */
int tw_cuda_usable(char *why, size_t why_size);
/* Uploads w's constant data; NULL with tw_last_error() on failure (out of
 * device memory, CUDA error: the message says which call and why). */
tw_cuda_world *tw_cuda_world_create(struct tw_world *w);
void tw_cuda_world_destroy(tw_cuda_world *cw);
/* One step of w's integrator on the device (see the contract above). A
 * feature the device path does not have yet returns TW_ERR_UNSUPPORTED naming
 * it; never a silent fallback. */
tw_status tw_cuda_world_step(tw_cuda_world *cw, struct tw_world *w, tw_step_stats *stats);
/* Device memory held, bytes. */
size_t tw_cuda_world_memory_bytes(const tw_cuda_world *cw);
/* The device array of the current positions (3n tw_real, the state the last
 * step left), valid until cw is destroyed: what CUDA-GL interop reads. */
const tw_real *tw_cuda_world_device_positions(const tw_cuda_world *cw);
/* Copies the device's positions into x and velocities into v (3n each;
 * either may be NULL), counted in tw_cuda_world_d2h_bytes. */
tw_status tw_cuda_world_download(tw_cuda_world *cw, tw_real *x, tw_real *v);
/* on = 0: the host-driven step (the CG loop decided by reading a device flag
 * each iteration); 1 (the default unless TW_CUDA_GRAPH=0 is set in the
 * environment): the step as one CUDA Graph with the CG loop in a conditional
 * while node. Takes effect at the next step. */
void tw_cuda_world_set_graph(tw_cuda_world *cw, int on);
/* 1 when the last step ran as a CUDA Graph; 0 when host-driven (graph off,
 * not built yet, or it could not be built: stderr said why). */
int tw_cuda_world_graph(const tw_cuda_world *cw);
/* The stream every step runs on (a cudaStream_t, non-blocking: it does not
 * wait for the legacy default stream nor it for it). A step returns after
 * its work finished; work that reads the device positions between steps
 * (interop) should run on this stream so the next step waits for it. */
void *tw_cuda_world_stream(const tw_cuda_world *cw);
/* Bytes of vertex data (positions, velocities) copied from the device to the
 * host since cw was created: a frame that draws through interop adds none. */
size_t tw_cuda_world_d2h_bytes(const tw_cuda_world *cw);
#ifdef __cplusplus
}
#endif
#endif
