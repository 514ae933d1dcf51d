#include "egl_context.h"

#include <stdio.h>
#include <string.h>

#ifdef TW_VIEWER_NO_EGL /* libepoxy without EGL (epoxy_has_egl=0) */
int egl_context_open(egl_context *c, char *err, int err_size)
{
    memset(c, 0, sizeof *c);
    snprintf(err, (size_t)err_size, "this build's libepoxy has no EGL support (rebuild libepoxy with EGL)");
    return -1;
}
void egl_context_close(egl_context *c) { memset(c, 0, sizeof *c); }
#else

#include <dlfcn.h>
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    default: return "EGL error";
    }
}

/* Appends "; " and a formatted reason to err. */
static void add_reason(char *err, int err_size, const char *fmt, ...)
{
    size_t used = strlen(err);
    if (used + 3 >= (size_t)err_size) return;
    if (used) {
        strcat(err, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + used, (size_t)err_size - used, fmt, ap);
    va_end(ap);
}

/* Initializes dpy and makes a surfaceless 3.3 core context current on it. */
static int try_display(egl_context *c, EGLDisplay dpy, const char *label, char *err, int err_size)
{
    EGLint major = 0, minor = 0;
    if (dpy == EGL_NO_DISPLAY) {
        add_reason(err, err_size, "%s: no display (%s)", label, egl_error_name(eglGetError()));
        return -1;
    }
    if (!eglInitialize(dpy, &major, &minor)) {
        add_reason(err, err_size, "%s: eglInitialize failed (%s)", label, egl_error_name(eglGetError()));
        return -1;
    }
    const char *vendor = eglQueryString(dpy, EGL_VENDOR);
    if (!epoxy_has_egl_extension(dpy, "EGL_KHR_surfaceless_context")) {
        add_reason(err, err_size, "%s (%s): no EGL_KHR_surfaceless_context", label, vendor ? vendor : "?");
        eglTerminate(dpy);
        return -1;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        add_reason(err, err_size, "%s (%s): no desktop OpenGL (eglBindAPI: %s)", label, vendor ? vendor : "?",
                   egl_error_name(eglGetError()));
        eglTerminate(dpy);
        return -1;
    }
    static const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                            EGL_NONE};
    EGLConfig config = EGL_NO_CONFIG_KHR;
    EGLint configs = 0;
    if ((!eglChooseConfig(dpy, config_attribs, &config, 1, &configs) || configs < 1) &&
        !epoxy_has_egl_extension(dpy, "EGL_KHR_no_config_context")) {
        add_reason(err, err_size, "%s (%s): no OpenGL config", label, vendor ? vendor : "?");
        eglTerminate(dpy);
        return -1;
    }
    if (configs < 1) config = EGL_NO_CONFIG_KHR;
    static const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                             EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                             EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, context_attribs);
    if (ctx == EGL_NO_CONTEXT) {
        EGLint e = eglGetError();
        char offers[160] = "";
        static const EGLint any[] = {EGL_NONE}; /* what it does give, for the message */
        EGLContext probe = eglCreateContext(dpy, config, EGL_NO_CONTEXT, any);
        if (probe != EGL_NO_CONTEXT && eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, probe)) {
            const char *ver = (const char *)glGetString(GL_VERSION);
            snprintf(offers, sizeof offers, ", it offers OpenGL %s", ver ? ver : "?");
            eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
        if (probe != EGL_NO_CONTEXT) eglDestroyContext(dpy, probe);
        add_reason(err, err_size, "%s (%s): no OpenGL 3.3 core context (%s)%s", label, vendor ? vendor : "?",
                   egl_error_name(e), offers);
        eglTerminate(dpy);
        return -1;
    }
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        add_reason(err, err_size, "%s (%s): eglMakeCurrent without a surface failed (%s)", label,
                   vendor ? vendor : "?", egl_error_name(eglGetError()));
        eglDestroyContext(dpy, ctx);
        eglTerminate(dpy);
        return -1;
    }
    if (epoxy_gl_version() < 33) { /* e.g. MESA_GL_VERSION_OVERRIDE */
        const char *ver = (const char *)glGetString(GL_VERSION);
        add_reason(err, err_size, "%s (%s): OpenGL %s, below 3.3", label, vendor ? vendor : "?", ver ? ver : "?");
        eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        eglDestroyContext(dpy, ctx);
        eglTerminate(dpy);
        return -1;
    }
    c->display = dpy;
    c->context = ctx;
    snprintf(c->what, sizeof c->what, "EGL %d.%d %s (%s)", major, minor, label, vendor ? vendor : "?");
    return 0;
}

int egl_context_open(egl_context *c, char *err, int err_size)
{
    memset(c, 0, sizeof *c);
    err[0] = 0;
    /* libepoxy aborts the process when it cannot load libEGL: look first */
    c->library = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!c->library) {
        add_reason(err, err_size, "libEGL.so.1 not found (%s)", dlerror());
        return -1;
    }
    /* a GPU: the EGL device platform (NVIDIA's driver offers it; Mesa's
     * software device is left to the surfaceless platform below) */
    if (epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_device_enumeration") &&
        epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_platform_device")) {
        EGLDeviceEXT devices[16];
        EGLint n = 0;
        if (!eglQueryDevicesEXT(16, devices, &n)) n = 0;
        int query = epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_device_query");
        for (EGLint i = 0; i < n; i++) {
            const char *ext = query ? eglQueryDeviceStringEXT(devices[i], EGL_EXTENSIONS) : NULL;
            if (ext && strstr(ext, "EGL_MESA_device_software")) continue;
            char label[64];
            snprintf(label, sizeof label, "device platform, device %d of %d", (int)i + 1, (int)n);
            EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
            if (try_display(c, dpy, label, err, err_size) == 0) return 0;
        }
        if (n == 0) add_reason(err, err_size, "device platform: no EGL device");
    } else {
        add_reason(err, err_size, "device platform: not offered (EGL_EXT_device_enumeration)");
    }
    /* no GPU: Mesa (llvmpipe) without a display */
    if (epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless")) {
        EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        if (try_display(c, dpy, "surfaceless platform", err, err_size) == 0) return 0;
    } else {
        add_reason(err, err_size, "surfaceless platform: not offered (EGL_MESA_platform_surfaceless: Mesa's EGL)");
    }
    egl_context_close(c);
    return -1;
}

void egl_context_close(egl_context *c)
{
    if (c->display) {
        eglMakeCurrent(c->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (c->context) eglDestroyContext(c->display, c->context);
        eglTerminate(c->display);
    }
    if (c->library) dlclose(c->library);
    memset(c, 0, sizeof *c);
}
#endif
