/* CUDA-GL buffer sharing (the design card, DESIGN.md §3): with the CUDA
 * backend a body's position and normal vertex buffers are registered with
 * CUDA (cudaGraphicsGLRegisterBuffer, write-discard) and each frame a kernel
 * writes the rendered surface into them straight from the device positions:
 * the embedding's barycentric gather (or the boundary's vertex copy), then
 * the gathered normals (host/render_surface.h, the same TW_HD functions the
 * CPU path runs). No vertex data crosses to the host.
 *
 * cuda_gl.cu implements it when the build has CUDA; cuda_gl.c is the stub of
 * builds without (cuda_gl_create always says why not). The viewer falls back
 * to glBufferSubData from host memory whenever cuda_gl_create returns NULL,
 * e.g. when the OpenGL context is Mesa's (llvmpipe under Xvfb), which CUDA
 * cannot share buffers with. NEITHER HAS RUN ON A GPU YET. */
#ifndef TW_CUDA_GL_H
#define TW_CUDA_GL_H
#include <stddef.h>

#include "gl_view.h"
#include "tetwarp.h"
#ifdef __cplusplus
extern "C" {
#endif
struct tw_render_surface;
typedef struct cuda_gl cuda_gl;

/* 1 when the build has the CUDA-GL path (nvcc was found). */
int cuda_gl_built(void);
/* 1 when a CUDA device can be used (tw_backend_usable); else 0 with the reason in why. */
int cuda_gl_device_usable(char *why, size_t why_size);

/* Interop for surface s, drawing rs, of a body whose world w runs on the
 * CUDA backend: registers s's position and normal buffers and uploads rs's
 * arrays once. Needs s's GL context current. NULL when the path cannot be
 * had, with the reason in why (one line): no CUDA in this build, w on the
 * CPU backend, or a CUDA call failed (the message names file, line and call;
 * registration fails when the GL context is not on the CUDA device). */
cuda_gl *cuda_gl_create(const gl_surface *s, const struct tw_render_surface *rs, const tw_world *w, char *why,
                        size_t why_size);

/* Writes w's current surface positions and normals into the buffers on the
 * device (map, kernels, unmap). 0: written. 1: not written because the
 * device positions are not current (the host changed the state since the
 * last step) or w no longer runs on CUDA: upload from the host this frame.
 * -1: a CUDA call failed, message in why. */
int cuda_gl_update(cuda_gl *c, const tw_world *w, char *why, size_t why_size);

/* Unregisters the buffers (s's GL context current) and frees the device arrays. */
void cuda_gl_destroy(cuda_gl *c);

/* Bytes of vertex data w's device copy has sent to the host since it was
 * made (tw_world_device_to_host_bytes); 0 for a world on the CPU backend. */
size_t cuda_gl_d2h_bytes(const tw_world *w);
#ifdef __cplusplus
}
#endif
#endif
