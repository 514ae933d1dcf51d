/* Headless OpenGL 3.3 core through EGL (libepoxy's EGL dispatch), with no
 * display: a GPU's EGL device (eglQueryDevicesEXT, EGL_PLATFORM_DEVICE_EXT:
 * NVIDIA's driver) first, else Mesa's surfaceless platform
 * (EGL_PLATFORM_SURFACELESS_MESA: llvmpipe on a machine without a GPU).
 * The context has no surface (EGL_KHR_surfaceless_context): everything is
 * drawn into a framebuffer object (gl_view_offscreen). */
#ifndef TW_EGL_CONTEXT_H
#define TW_EGL_CONTEXT_H

typedef struct egl_context {
    void *library;  /* dlopen handle of libEGL.so.1 */
    void *display;  /* EGLDisplay */
    void *context;  /* EGLContext, current once opened */
    char what[256]; /* which platform and vendor, for the status line */
} egl_context;

/* Makes a 3.3 core context current. Returns 0, or -1 with what was tried
 * and why each failed in err (the caller adds how to get EGL). */
int egl_context_open(egl_context *c, char *err, int err_size);
/* Releases the context and the display; safe on a zeroed or failed one. */
void egl_context_close(egl_context *c);

#endif
