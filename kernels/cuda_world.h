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

/* Diagnostics for the parity tests (tests/test_gpu_stages.c): the per-stage
 * results a step leaves in the device's scratch, to compare with the CPU
 * world's (host/world.h: w->R, w->f, w->rhs, w->A, w->vnew after one
 * implicit Euler step). Not for the step loop: each call waits for the
 * stream, and its bytes are counted in tw_cuda_world_d2h_bytes like any
 * other device-to-host copy (a test of "no copies per step" must not call
 * these). */
typedef enum tw_cuda_array {
    TW_CUDA_ARRAY_R,    /* 9 per vertex (warp-vertex, warp-edge: R_i) or per element (corot-element, hybrid:
                           R_e; green: F_e), row-major; sized 9 max(n, nt); linear writes none */
    TW_CUDA_ARRAY_S,    /* per element: corot-element, hybrid 16 (hd/element.h tw_corot_pack); green 48
                           (tw_green_pack); sized 48 nt (TW_GREEN_PACK) */
    TW_CUDA_ARRAY_F,    /* 3n: the elastic force at the step's start (after the ghost-force correction), N */
    TW_CUDA_ARRAY_RHS,  /* 3n: M v + dt (f + f_ext), N s */
    TW_CUDA_ARRAY_A,    /* 9 nnzb: the system matrix's BSR block values (row-major 3x3 blocks, the pattern of
                           w->fem: row_ptr, col) */
    TW_CUDA_ARRAY_VNEW, /* 3n: the velocities the solve produced, m/s */
    TW_CUDA_ARRAY_COUNT
} tw_cuda_array;
/* How many tw_real the device array `which` holds (0 for an unknown one). */
size_t tw_cuda_world_array_count(const tw_cuda_world *cw, tw_cuda_array which);
/* Copies the first count values of the device array `which` into host
 * (count <= tw_cuda_world_array_count, else TW_ERR_INVALID naming both). */
tw_status tw_cuda_world_download_array(tw_cuda_world *cw, tw_cuda_array which, tw_real *host, size_t count);
/* y = A x (3n each, host memory) with the device's SpMV of the step's
 * (cuSPARSE's BSR SpMV, or the hand-written kernel when that is the one in
 * use: TW_CUDA_SPMV=own or a refusal) on the current system matrix, through
 * the PCG's scratch vectors p and q (free between steps). The download of y
 * is counted in tw_cuda_world_d2h_bytes. */
tw_status tw_cuda_world_spmv(tw_cuda_world *cw, const tw_real *x, tw_real *y);
#ifdef __cplusplus
}
#endif
#endif
