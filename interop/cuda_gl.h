/* CUDA-GL buffer sharing (the design card, DESIGN.md §3): with the CUDA
 * backend the render vertex buffer is registered with CUDA
 * (cudaGraphicsGLRegisterBuffer) and a kernel writes the rendered surface's
 * positions and normals straight into it each frame, with no copy through
 * the host.
 *
 * NOT IMPLEMENTED: the CUDA backend does not exist yet. This is a compiled-out
 * stub: without TW_VIEWER_CUDA_GL (never defined by the build today)
 * cuda_gl_available() returns 0 and the viewer updates its buffers with
 * glBufferSubData from host memory. Nothing here has run on a GPU. */
#ifndef TW_CUDA_GL_H
#define TW_CUDA_GL_H

#include "gl_view.h"
#include "tetwarp.h"

/* 1 when the build has the CUDA-GL path and `w` runs on the CUDA backend. */
int cuda_gl_available(const tw_world *w);
/* Writes the surface of `w` into s's buffers on the device; -1 when unavailable. */
int cuda_gl_update(gl_surface *s, const tw_world *w, const tw_embedding *e);
/* Why the path is off, for the status line. */
const char *cuda_gl_reason(void);

#endif
