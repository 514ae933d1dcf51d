/* CUDA-GL interop for builds without CUDA (see cuda_gl.h): never available,
 * the viewer uploads from the host. Builds with nvcc compile cuda_gl.cu instead. */
#include "cuda_gl.h"

#include <stdio.h>

int cuda_gl_built(void) { return 0; }

int cuda_gl_device_usable(char *why, size_t why_size)
{
    snprintf(why, why_size, "this build has no CUDA (nvcc was not found when it was configured)");
    return 0;
}

cuda_gl *cuda_gl_create(const gl_surface *s, const struct tw_render_surface *rs, const tw_world *w, char *why,
                        size_t why_size)
{
    (void)s;
    (void)rs;
    (void)w;
    snprintf(why, why_size, "this build has no CUDA (nvcc was not found when it was configured)");
    return NULL;
}

int cuda_gl_update(cuda_gl *c, const tw_world *w, char *why, size_t why_size)
{
    (void)c;
    (void)w;
    snprintf(why, why_size, "this build has no CUDA");
    return 1;
}

void cuda_gl_destroy(cuda_gl *c) { (void)c; }

size_t cuda_gl_d2h_bytes(const tw_world *w)
{
    (void)w;
    return 0;
}
