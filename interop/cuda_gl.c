/* CUDA-GL interop: a stub until the CUDA backend lands (see cuda_gl.h). */
#include "cuda_gl.h"

#ifdef TW_VIEWER_CUDA_GL
#error "TW_VIEWER_CUDA_GL: the CUDA-GL path is not written yet. It needs, per surface: \
cudaGraphicsGLRegisterBuffer(vbo_pos/vbo_nrm, cudaGraphicsRegisterFlagsWriteDiscard) once, then each \
frame cudaGraphicsMapResources, cudaGraphicsResourceGetMappedPointer, a kernel applying the \
embedding (barycentric gather) and the normals from the device positions, cudaGraphicsUnmapResources."
#endif

int cuda_gl_available(const tw_world *w)
{
    (void)w;
    return 0;
}

int cuda_gl_update(gl_surface *s, const tw_world *w, const tw_embedding *e)
{
    (void)s;
    (void)w;
    (void)e;
    return -1;
}

const char *cuda_gl_reason(void) { return "CUDA-GL interop not built (stub; host upload)"; }
