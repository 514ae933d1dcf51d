// CUDA-GL buffer sharing (see cuda_gl.h): a body's position and normal VBOs
// registered with CUDA once, and each frame
//
//   map both buffers -> positions kernel (embedding gather or boundary copy
//   from the device positions) -> normals kernel (each vertex gathers its
//   triangles in CSR order) -> unmap
//
// so the surface goes from the world's device positions into OpenGL with no
// copy through the host. The kernels are the CPU loop bodies of
// tw_render_surface_update (host/render_surface.h) on one thread per vertex,
// reading a copy of the render surface whose arrays were uploaded once. This
// file is compiled with --fmad=false (interop/CMakeLists.txt): the CPU build
// contracts no a*b+c into an FMA (-std=c11), so both paths give the same
// floats and the interop and host-upload frames the same image.
//
// Ordering: all of it runs on the world's own stream (tw_world_device_positions
// gives it; non-blocking), after the step that wrote the positions and before the next
// one, which would overwrite them; the map waits for OpenGL's use of the
// buffers and the unmap makes OpenGL's next use wait for the kernels.
//
// When: the device positions are the state's truth after a step and as long
// as no setter changed the host's state (tw_world_device_positions returns
// them then); otherwise, e.g. after a reset before the next step, the host's
// positions are, and that frame is drawn from the host (no download: they
// are current there).
//
// NEVER RUN ON A GPU. Written and compiled (nvcc 13, sm_90) on a machine
// without one; tests/viewer_tests.cmake's viewer.interop_* cases are what a
// session with a device runs first (they skip, exit 77, without one).
#include <epoxy/gl.h> // first: it defines the GL header guards, so cuda_gl_interop.h's <GL/gl.h> adds nothing
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_gl.h"
#include "hd/render.h"

#define CUDA_GL_THREADS 256

struct cuda_gl {
    cudaGraphicsResource_t res[2]; // position, normal VBOs
    int registered[2];
    tw_render_surface d;           // the render surface with device arrays (kernel argument)
    size_t bytes;                  // 3 floats per render vertex: each buffer's size
};

// One line naming the call, the file and line, and the CUDA error; clears a
// non-sticky error so the next call is not blamed.
static int check(cudaError_t e, const char *call, const char *file, int line, char *why, size_t why_size)
{
    if (e == cudaSuccess) return 0;
    cudaGetLastError();
    snprintf(why, why_size, "%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorName(e),
             cudaGetErrorString(e));
    return -1;
}
#define CUDA_GL_CHECK(call) check((call), #call, __FILE__, __LINE__, why, why_size)

__global__ void surface_positions(tw_render_surface s, const tw_real *x, float *pos)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.nv) tw_render_position(&s, i, x, pos + 3 * (size_t)i);
}

__global__ void surface_normals(tw_render_surface s, const float *pos, float *nrm)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.nv) tw_render_normal(&s, i, pos, nrm + 3 * (size_t)i);
}

extern "C" int cuda_gl_built(void) { return 1; }

extern "C" int cuda_gl_device_usable(char *why, size_t why_size)
{
    return tw_backend_usable(TW_BACKEND_CUDA, why, why_size);
}

extern "C" size_t cuda_gl_d2h_bytes(const tw_world *w) { return tw_world_device_to_host_bytes(w); }

// Teardown: a failure cannot be returned, so it is printed (and the rest still freed).
static void report(cudaError_t e, const char *call, int line)
{
    char why[512];
    if (check(e, call, __FILE__, line, why, sizeof why)) fprintf(stderr, "tetwarp-view: %s\n", why);
}

extern "C" void cuda_gl_destroy(cuda_gl *c)
{
    if (!c) return;
    for (int k = 0; k < 2; k++)
        if (c->registered[k])
            report(cudaGraphicsUnregisterResource(c->res[k]), "cudaGraphicsUnregisterResource", __LINE__);
    void *arrays[5] = {c->d.tris, c->d.idx, c->d.w, c->d.vt_start, c->d.vt_tri};
    for (int k = 0; k < 5; k++)
        if (arrays[k]) report(cudaFree(arrays[k]), "cudaFree", __LINE__);
    free(c);
}

// A device copy of `count` elements of `size` bytes at h (nothing when h is NULL).
static int upload(void **d, const void *h, size_t count, size_t size, const char *what, char *why, size_t why_size)
{
    *d = NULL;
    if (!h) return 0;
    size_t bytes = count * size + 1;
    if (check(cudaMalloc(d, bytes), "cudaMalloc", __FILE__, __LINE__, why, why_size) ||
        check(cudaMemcpy(*d, h, count * size, cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__, __LINE__, why,
              why_size)) {
        size_t n = strlen(why);
        snprintf(why + n, why_size > n ? why_size - n : 0, " (render surface %s, %zu bytes)", what, bytes);
        return -1;
    }
    return 0;
}

extern "C" cuda_gl *cuda_gl_create(const gl_surface *s, const struct tw_render_surface *rs, const tw_world *w,
                                   char *why, size_t why_size)
{
    tw_backend backend = tw_world_get_def(w)->backend;
    if (backend != TW_BACKEND_CUDA) {
        snprintf(why, why_size, "the world runs on the %s backend, not cuda", tw_backend_name(backend));
        return NULL;
    }
    int world_nv = tw_world_vertex_count(w);
    if (rs->mesh_nv != world_nv || rs->nv != s->vertex_count) {
        snprintf(why, why_size, "the render surface (%d vertices of a %d-vertex mesh) does not match the buffers "
                 "(%d vertices) and the world (%d vertices)", rs->nv, rs->mesh_nv, s->vertex_count, world_nv);
        return NULL;
    }
    // the GL context must be on a CUDA device, else registration cannot work
    unsigned int count = 0;
    int devices[4];
    cudaError_t e = cudaGLGetDevices(&count, devices, 4, cudaGLDeviceListAll);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        const char *ren = (const char *)glGetString(GL_RENDERER);
        snprintf(why, why_size, "%s:%d: cudaGLGetDevices: the OpenGL context (renderer '%s') is on no CUDA device "
                 "(%s): interop needs NVIDIA's OpenGL driver on the GPU the world runs on",
                 __FILE__, __LINE__, ren ? ren : "?", e != cudaSuccess ? cudaGetErrorString(e) : "none listed");
        return NULL;
    }
    int current = 0, found = 0;
    if (CUDA_GL_CHECK(cudaGetDevice(&current))) return NULL;
    for (unsigned k = 0; k < count && k < 4; k++) found |= devices[k] == current;
    if (!found) {
        snprintf(why, why_size, "the OpenGL context is on CUDA device %d, the world on device %d", devices[0], current);
        return NULL;
    }
    cuda_gl *c = (cuda_gl *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_size, "out of memory (CUDA-GL state)");
        return NULL;
    }
    c->bytes = 3 * sizeof(float) * (size_t)rs->nv;
    c->d.nv = rs->nv;
    c->d.ntri = rs->ntri;
    c->d.mesh_nv = rs->mesh_nv;
    size_t t3 = 3 * (size_t)rs->ntri;
    const GLuint vbo[2] = {s->vbo_pos, s->vbo_nrm};
    for (int k = 0; k < 2; k++) {
        if (CUDA_GL_CHECK(cudaGraphicsGLRegisterBuffer(&c->res[k], vbo[k], cudaGraphicsRegisterFlagsWriteDiscard)))
            goto fail;
        c->registered[k] = 1;
    }
    if (upload((void **)&c->d.tris, rs->tris, t3, sizeof(int), "triangles", why, why_size) ||
        upload((void **)&c->d.vt_start, rs->vt_start, (size_t)rs->nv + 1, sizeof(int), "vertex triangles", why,
               why_size) ||
        upload((void **)&c->d.vt_tri, rs->vt_tri, t3, sizeof(int), "vertex triangles", why, why_size) ||
        upload((void **)&c->d.idx, rs->idx, 4 * (size_t)rs->nv, sizeof(int), "tet indices", why, why_size) ||
        upload((void **)&c->d.w, rs->w, 4 * (size_t)rs->nv, sizeof(float), "weights", why, why_size))
        goto fail;
    return c;
fail:
    cuda_gl_destroy(c);
    return NULL;
}

extern "C" int cuda_gl_update(cuda_gl *c, const tw_world *w, char *why, size_t why_size)
{
    void *stream = NULL;
    const tw_real *x = tw_world_device_positions(w, &stream);
    if (!x || tw_world_vertex_count(w) != c->d.mesh_nv) return 1; // the host's positions are the current ones
    cudaStream_t st = (cudaStream_t)stream;
    if (CUDA_GL_CHECK(cudaGraphicsMapResources(2, c->res, st))) return -1;
    float *buf[2];
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        size_t size = 0;
        rc = CUDA_GL_CHECK(cudaGraphicsResourceGetMappedPointer((void **)&buf[k], &size, c->res[k]));
        if (!rc && size < c->bytes) {
            snprintf(why, why_size, "%s:%d: mapped vertex buffer of %zu bytes, %zu needed", __FILE__, __LINE__, size,
                     c->bytes);
            rc = -1;
        }
    }
    if (!rc) {
        unsigned blocks = (unsigned)((c->d.nv + CUDA_GL_THREADS - 1) / CUDA_GL_THREADS);
        surface_positions<<<blocks, CUDA_GL_THREADS, 0, st>>>(c->d, x, buf[0]);
        rc = CUDA_GL_CHECK(cudaGetLastError());
        if (!rc) {
            surface_normals<<<blocks, CUDA_GL_THREADS, 0, st>>>(c->d, buf[0], buf[1]);
            rc = CUDA_GL_CHECK(cudaGetLastError());
        }
    }
    if (rc) { // GL gets its buffers back; the first failure is the one reported
        cudaGraphicsUnmapResources(2, c->res, st);
        cudaGetLastError();
        return -1;
    }
    return CUDA_GL_CHECK(cudaGraphicsUnmapResources(2, c->res, st));
}
