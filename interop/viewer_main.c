/* tetwarp-view: the real-time viewer and headless frame renderer.
 *
 * A scene (demos/scenes.c, or the tool's scene options: --mesh, --bar, ...)
 * is a few bodies, each a tet mesh simulated by its own world. Each frame
 * the viewer runs some steps, turns each body's positions into its rendered
 * surface (the mesh's boundary, or a finer surface embedded in the tets),
 * recomputes the normals (host/render_surface.h) and uploads both with
 * glBufferSubData, or, for a body on the CUDA backend, has a kernel write
 * them straight into the registered vertex buffers (cuda_gl.h: "interop",
 * no copy through the host), then draws them shaded with OpenGL 3.3 core
 * through libepoxy.
 *
 * Headless (--headless): the context comes from EGL without any display
 * (egl_context.h: a GPU's EGL device, else Mesa's surfaceless llvmpipe), or,
 * when EGL gives no 3.3 core context, from a hidden GLFW window on the X
 * display (GLX; Xvfb on a machine without one); --gl egl|glx forces one.
 * Either way the frames are drawn into an offscreen framebuffer object,
 * read back with glReadPixels and written as PNG. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "camera.h"
#include "cli_args.h"
#include "cli_scene.h"
#include "cuda_gl.h"
#include "egl_context.h"
#include "gl_view.h"
#include "png_io.h"
#include "scenes.h"
#include "viewer_tool.h"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PROG "tetwarp-view"

static const char *const key_help =
    "Mouse: left-drag on the body pulls it with a spring; left-drag elsewhere orbits the camera;\n"
    "       right-drag or shift+left-drag turns the bone core (bunny, dane) about the vertical\n"
    "       (left/right), the skin following (other scenes: orbits); the wheel zooms.\n"
    "Keys:  1-6  method: 1 linear, 2 warp-vertex, 3 warp-edge, 4 corot-element, 5 green, 6 hybrid\n"
    "       space  pause / run         s  one step (when paused)      r  reset to rest\n"
    "       g  gravity on / off (recreates the worlds, keeping the state)\n"
    "       + / -  Young's modulus x2 / /2 (recreates the worlds)   [ / ]  time step /1.5 / x1.5\n"
    "       a  bone core: timed spin on / off (off: held where it is; a core drag holds it too)\n"
    "       w  wireframe              h  this help                   q, Esc  quit\n"
    "       l  tree-* and mr-liver: the simulated levels in colours on / off (0 blue, 1 green, 2 red)\n"
    "       k  tetra tree scenes: Young's modulus in colours on / off (red stiff, yellow soft)\n"
    "       t  tool: then left-drag on a body puts a sphere there and moves it (in the plane facing\n"
    "          you; the wheel pushes it in or out), the force on it in the title; t again removes it\n";

enum { GL_USE_EGL = 1, GL_USE_GLX = 2 };
enum { UPLOAD_AUTO = 0, UPLOAD_HOST, UPLOAD_INTEROP }; /* --upload */

typedef struct viewer_opts {
    const char *scene;        /* NULL: the tool's scene options */
    cli_scene_opts scene_opts;
    demo_options demo;
    const char *render_surface;
    int method_given, e_given;
    double dt;                /* 0: the scene's */
    int headless, frames, steps_per_frame, video;
    int gl;                   /* headless context: 0 EGL then GLX, GL_USE_EGL, GL_USE_GLX */
    int core_angle_given;
    double core_angle;        /* degrees: --core-angle */
    int upload;               /* UPLOAD_*: how the surfaces reach their vertex buffers */
    int backend_given, require_cuda;
    const char *out_dir;
    int width, height;
    int up_given, up_axis, up_sign; /* --up: 0 x, 1 y, 2 z; -1 for -x, -y, -z */
    double progress;          /* headless: seconds between progress lines; 0: after every frame */
    int color_mode;           /* --colors: DEMO_COLOR_* for the tetra tree bodies */
} viewer_opts;

typedef struct viewer {
    viewer_opts *o;
    demo_scene scene;
    camera cam;
    gl_view gl;
    gl_surface surf[DEMO_MAX_BODIES], floor;
    int have_floor;
    float *pos, *nrm, *col; /* scratch, the largest body's render vertices */
    double rest_volume[DEMO_MAX_BODIES];
    double gravity[DEMO_MAX_BODIES][3];
    int gravity_on, paused, single_step, wireframe, steps_per_frame, last_cg;
    long steps_done;
    /* mouse */
    int orbiting, dragging, drag_body, drag_vertex, turning; /* turning: the bone core, by a drag */
    int tool_mode;            /* t: the left drag moves the tool (viewer_tool.h) */
    viewer_tool tool;
    double help_until;        /* glfwGetTime() until which the title shows the keys (h) */
    double last_x, last_y, drag_plane_point[3], drag_plane_normal[3], drag_k;
    GLFWwindow *win;
    egl_context egl;          /* headless through EGL: no window */
    int win_w, win_h;
    int up_sign;              /* the camera's: -1 when up is the negative axis */
    const char *up_why;       /* how the up axis was chosen, for the "up:" line */
    cuda_gl *interop[DEMO_MAX_BODIES]; /* CUDA-GL per body, or NULL: host upload */
    size_t d2h_draw, d2h_step; /* vertex bytes the device sent to the host for drawing, for stepping */
    long drawn_interop, drawn_host; /* surface updates by each path */
} viewer;

/* Wall clock, s (glfwGetTime needs GLFW, which the EGL path does not start). */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_help(void)
{
    cli_scene_opts d = cli_default_scene_opts();
    printf("usage: " PROG " [--scene NAME | SCENE OPTIONS] [--render-surface PATH] [options]\n\n"
           "A window showing elastic solids simulated by tetwarp, or (--headless) PNG frames of them.\n\n"
           "  --scene NAME            bars | tube | bunny | dane | cube | tree-box | tree-bunny |\n"
           "                          tree-armadillo | tree-liver | mr-liver (the papers' scenes; each\n"
           "                          one also runs headless). Without --scene the scene options\n"
           "                          below build one body, as `tetwarp run` does.\n"
           "  --render-surface PATH   .obj/.off surface embedded in the tets and drawn instead of\n"
           "                          the mesh's boundary (bunny: replaces the Stanford scan;\n"
           "                          dane: replaces the TOSCA dog, in metres, z up)\n"
           "  --bunny-mesh lattice|tetgen  bunny: simulate a lattice of 8 mm cubes covering the closed\n"
           "                          bunny (default; ~40 CG iterations a step) or the shipped TetGen\n"
           "                          mesh (27k tets with 1-degree slivers; ~300 iterations)\n"
           "  --dt S                  time step, s (default: the scene's; 0.01 without --scene)\n"
           "  --steps-per-frame N     simulation steps per frame (default: 1/30 s of simulation)\n"
           "  --data DIR              folder with meshes/ for the scenes (default %s)\n"
           "  --size WxH              window or frame size in pixels (default 1280x720,\n"
           "                          headless 640x360)\n"
           "  --headless              no window: render --frames frames into --out as PNG; needs\n"
           "                          no display (EGL), else a hidden window on the X display\n"
           "  --gl egl|glx            headless context: EGL only (a GPU's EGL device, else Mesa's\n"
           "                          surfaceless llvmpipe) or GLX only (a hidden GLFW window,\n"
           "                          needs DISPLAY); default EGL, then GLX\n"
           "  --frames N              headless frames (default 60); frame 0 is the start state\n"
           "  --out DIR               headless output folder (default frames/), frame_00000.png ...\n"
           "  --video                 headless: also DIR/video.mp4 with ffmpeg when it is installed\n"
           "  --up x|y|z              the camera's up axis (-x, -y, -z: the negative axis); default:\n"
           "                          the scene's, or without --scene the axis most opposite to\n"
           "                          --gravity (z without gravity)\n"
           "  --progress S            headless: a progress line (frame, steps/s, eta) every S seconds,\n"
           "                          flushed also into a pipe (default 1; 0: after every frame)\n"
           "  --core-angle DEG        hold the bone core (bunny, dane) turned DEG degrees about the\n"
           "                          vertical instead of the timed spin (the skin follows)\n"
           "  --upload host|interop|auto  how the surfaces reach OpenGL: glBufferSubData from host\n"
           "                          memory, or (bodies on the CUDA backend) a kernel writing into\n"
           "                          the vertex buffers CUDA shares with OpenGL, which needs\n"
           "                          NVIDIA's OpenGL on the GPU; auto (default): interop where it\n"
           "                          works, else host\n"
           "  --colors body|levels|stiffness  tetra tree scenes (tree-*): colour by the body's colour,\n"
           "                          the level of the front's tet at each vertex (keys l, k)\n"
           "                          or Young's modulus (default body)\n"
           "  --require-cuda          exit 77 (a test's \"skipped\") when no CUDA device can be used\n"
           "  --help                  this text\n\n",
           TW_DATA_DIR);
    cli_scene_print_help(stdout, &d);
    printf("  (with --scene, --method and --E replace the scene's own; the scenes run on the\n"
           "  CPU unless --backend is given)\n\n%s\n"
           "The window needs a display (DISPLAY; Xvfb on a machine without one). --headless\n"
           "needs none: EGL renders offscreen on the GPU, or on the CPU with Mesa (Debian:\n"
           "apt-get install libegl1 libegl-mesa0), e.g.\n"
           "  " PROG " --scene bars --headless --frames 60 --out frames\n",
           key_help);
}

static int parse(int argc, char **argv, viewer_opts *o)
{
    memset(o, 0, sizeof *o);
    o->scene_opts = cli_default_scene_opts();
    o->demo = demo_default_options();
    o->frames = 60;
    o->out_dir = "frames";
    o->progress = 1;
    cli_args a = cli_args_make(argc - 1, argv + 1, PROG);
    while (cli_next(&a)) {
        if (cli_is_help(&a)) {
            print_help();
            exit(0);
        }
        if (!cli_is_option(&a)) return cli_error(&a, "unexpected argument '%s' (see `" PROG " --help`)", a.arg);
        if (cli_is(&a, "--method")) o->method_given = 1;
        if (cli_is(&a, "--E")) o->e_given = 1;
        if (cli_is(&a, "--backend")) o->backend_given = 1;
        int r = cli_scene_option(&o->scene_opts, &a);
        if (r < 0) return -1;
        if (r > 0) continue;
        if (cli_is(&a, "--scene")) {
            if (!(o->scene = cli_value(&a, "scene name"))) return -1;
        } else if (cli_is(&a, "--render-surface")) {
            if (!(o->render_surface = cli_value(&a, "surface file"))) return -1;
        } else if (cli_is(&a, "--bunny-mesh")) {
            const char *v = cli_value(&a, "lattice or tetgen");
            if (!v) return -1;
            if (strcmp(v, "lattice") && strcmp(v, "tetgen")) {
                fprintf(stderr, PROG ": --bunny-mesh '%s': choose lattice (8 mm cubes covering the closed bunny, "
                                "the default) or tetgen (the shipped bunny_closed_3485v.tet mesh)\n", v);
                return -1;
            }
            o->demo.bunny_tetgen = !strcmp(v, "tetgen");
        } else if (cli_is(&a, "--data")) {
            if (!(o->demo.data_dir = cli_value(&a, "folder"))) return -1;
        } else if (cli_is(&a, "--dt")) {
            if (cli_double(&a, "time step, s", &o->dt) || cli_require(&a, o->dt > 0, "> 0 (time step, s)"))
                return -1;
        } else if (cli_is(&a, "--steps-per-frame")) {
            if (cli_int(&a, "steps", &o->steps_per_frame) || cli_require(&a, o->steps_per_frame >= 1, ">= 1"))
                return -1;
        } else if (cli_is(&a, "--frames")) {
            if (cli_int(&a, "frame count", &o->frames) || cli_require(&a, o->frames >= 1, ">= 1")) return -1;
        } else if (cli_is(&a, "--out")) {
            if (!(o->out_dir = cli_value(&a, "folder"))) return -1;
        } else if (cli_is(&a, "--size")) {
            const char *s = cli_value(&a, "WxH");
            if (!s) return -1;
            if (sscanf(s, "%dx%d", &o->width, &o->height) != 2 || o->width < 16 || o->height < 16 ||
                o->width > 8192 || o->height > 8192)
                return cli_error(&a, "--size '%s': expected WxH, 16 to 8192 pixels each (e.g. 640x360)", s);
        } else if (cli_is(&a, "--headless")) {
            if (cli_flag(&a)) return -1;
            o->headless = 1;
        } else if (cli_is(&a, "--gl")) {
            const char *g = cli_value(&a, "egl or glx");
            if (!g) return -1;
            if (!strcmp(g, "egl")) o->gl = GL_USE_EGL;
            else if (!strcmp(g, "glx")) o->gl = GL_USE_GLX;
            else return cli_error(&a, "--gl '%s': expected egl or glx", g);
        } else if (cli_is(&a, "--require-cuda")) {
            if (cli_flag(&a)) return -1;
            o->require_cuda = 1;
        } else if (cli_is(&a, "--upload")) {
            static const char *const names[] = {"auto", "host", "interop"};
            if (cli_choice(&a, "upload path", names, 3, &o->upload)) return -1;
        } else if (cli_is(&a, "--core-angle")) {
            if (cli_double(&a, "degrees", &o->core_angle)) return -1;
            o->core_angle_given = 1;
        } else if (cli_is(&a, "--up")) {
            const char *u = cli_value(&a, "x, y or z");
            if (!u) return -1;
            const char *axis = u + (u[0] == '-' || u[0] == '+');
            if (strlen(axis) != 1 || axis[0] < 'x' || axis[0] > 'z')
                return cli_error(&a, "--up '%s': expected x, y or z (or -x, -y, -z: the negative axis up)", u);
            o->up_given = 1;
            o->up_axis = axis[0] - 'x';
            o->up_sign = u[0] == '-' ? -1 : 1;
        } else if (cli_is(&a, "--progress")) {
            if (cli_double(&a, "seconds", &o->progress) || cli_require(&a, o->progress >= 0, ">= 0 (seconds)"))
                return -1;
        } else if (cli_is(&a, "--colors")) {
            static const char *const names[] = {"body", "levels", "stiffness"};
            if (cli_choice(&a, "body, levels or stiffness", names, 3, &o->color_mode)) return -1;
        } else if (cli_is(&a, "--video")) {
            if (cli_flag(&a)) return -1;
            o->video = 1;
        } else {
            return cli_unknown(&a);
        }
    }
    if (o->gl == GL_USE_EGL && !o->headless) {
        fprintf(stderr, PROG ": --gl egl needs --headless (the window is a GLFW window on the X display)\n");
        return -1;
    }
    if (!o->width) {
        o->width = o->headless ? 640 : 1280;
        o->height = o->headless ? 360 : 720;
    }
    o->demo.render_surface = o->render_surface;
    o->demo.dt = o->dt;
    if (o->method_given) o->demo.method = o->scene_opts.method;
    if (o->e_given) o->demo.youngs = o->scene_opts.youngs;
    if (o->backend_given) o->demo.backend = o->scene_opts.backend;
    return 0;
}

/* The up axis opposite to gravity: the axis along which g is largest, up
 * against it (sign -1 when g points along +axis); z up without gravity. */
static int up_from_gravity(const double g[3], int *sign)
{
    int axis = 2;
    double most = 0;
    for (int k = 0; k < 3; k++)
        if (fabs(g[k]) > most) {
            most = fabs(g[k]);
            axis = k;
        }
    *sign = most > 0 && g[axis] > 0 ? -1 : 1;
    return axis;
}

/* The scene: a named demo, or one body from the tool's scene options, whose
 * camera looks at its bounding box with the up axis against gravity. */
static int build_scene(viewer *v)
{
    viewer_opts *o = v->o;
    v->up_sign = 1;
    v->up_why = "the scene's";
    if (o->scene) return demo_scene_build(&v->scene, o->scene, &o->demo, PROG);
    demo_scene *s = &v->scene;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", o->scene_opts.mesh_path ? "mesh" : "bar");
    tw_world_def def = tw_default_world_def();
    if (o->dt > 0) def.dt = o->dt;
    cli_scene cs;
    if (cli_scene_build(&o->scene_opts, def, PROG, &cs)) return -1;
    static const float color[3] = {0.3f, 0.55f, 0.9f};
    tw_mesh *m = cs.mesh;
    tw_world *w = cs.world;
    double *ey = cs.element_youngs;
    free(cs.fixed);
    const double *g = tw_world_get_def(w)->gravity;
    s->up = up_from_gravity(g, &v->up_sign);
    v->up_why = g[0] == 0 && g[1] == 0 && g[2] == 0 ? "no gravity" : "opposite to gravity";
    if (o->up_given) { /* before demo_scene_frame: its yaw depends on the up axis */
        s->up = o->up_axis;
        v->up_sign = o->up_sign;
        v->up_why = "--up";
    }
    if (demo_scene_add(s, cs.description, m, w, ey, o->render_surface, color, PROG)) {
        demo_scene_destroy(s);
        return -1;
    }
    demo_scene_frame(s);
    return 0;
}

/* ----------------------------------------------------------- GL context */

static void glfw_error(int code, const char *msg) { fprintf(stderr, PROG ": GLFW error 0x%x: %s\n", code, msg); }

/* What GL the display gives without asking for 3.3 core, for the message. */
static void report_old_gl(void)
{
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow *w = glfwCreateWindow(64, 64, "probe", NULL, NULL);
    const char *ver = "none (no OpenGL context at all)", *ren = "";
    if (w) {
        glfwMakeContextCurrent(w);
        ver = (const char *)glGetString(GL_VERSION);
        ren = (const char *)glGetString(GL_RENDERER);
    }
    fprintf(stderr,
            PROG ": OpenGL 3.3 core profile is not available: this display offers OpenGL %s%s%s.\n"
                 "  Install Mesa (Debian: apt-get install libgl1-mesa-dri libglx-mesa0; its llvmpipe\n"
                 "  renderer gives OpenGL 4.5 core, also under Xvfb), update the GPU driver, or unset\n"
                 "  MESA_GL_VERSION_OVERRIDE if it is set.\n",
            ver ? ver : "?", ren && *ren ? " on " : "", ren ? ren : "");
    if (w) glfwDestroyWindow(w);
}

static const char *const egl_hint =
    "  Without a display, --headless needs EGL: a GPU driver's (NVIDIA), or Mesa's (Debian:\n"
    "  apt-get install libegl1 libegl-mesa0; its llvmpipe renders on the CPU). Or run under\n"
    "  Xvfb for the hidden-window path: xvfb-run -a " PROG " ... (Debian: apt-get install xvfb).\n";

static int open_context(viewer *v)
{
    const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    int have_display = (d && *d) || (wl && *wl);
    char egl_err[2048] = "";
    if (v->o->headless && v->o->gl != GL_USE_GLX) {
        if (egl_context_open(&v->egl, egl_err, sizeof egl_err) == 0) {
            printf("GL context: %s, no display (surfaceless, drawing into a framebuffer object)\n", v->egl.what);
            printf("OpenGL %s on %s\n", (const char *)glGetString(GL_VERSION),
                   (const char *)glGetString(GL_RENDERER));
            return 0;
        }
        if (v->o->gl == GL_USE_EGL || !have_display) {
            fprintf(stderr, PROG ": no OpenGL 3.3 core context for --headless: EGL gave none (%s)%s.\n%s", egl_err,
                    v->o->gl == GL_USE_EGL ? ""
                                           : ", and there is no X display for a hidden window (DISPLAY unset)",
                    egl_hint);
            return -1;
        }
        fprintf(stderr, PROG ": EGL gave no OpenGL 3.3 core context (%s); trying a hidden GLFW window on %s\n",
                egl_err, d && *d ? d : wl);
    }
    if (!have_display) {
        if (v->o->headless)
            fprintf(stderr, PROG ": --gl glx: no X display (DISPLAY unset) for the hidden window: run under Xvfb,\n"
                            "  e.g. xvfb-run -a " PROG " ..., set DISPLAY, or leave out --gl glx (EGL needs no display)\n");
        else
            fprintf(stderr, PROG ": no X display (DISPLAY unset) for the window: set DISPLAY or run under Xvfb,\n"
                            "  e.g. xvfb-run -a " PROG " ...; PNG frames need no display: --headless (EGL)\n");
        return -1;
    }
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        fprintf(stderr, PROG ": cannot open the display '%s' (GLFW init failed): is the X server (or "
                        "Xvfb) running? e.g. Xvfb :99 -screen 0 1280x720x24 & export DISPLAY=:99\n",
                d ? d : wl);
        return -1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SAMPLES, v->o->headless ? 0 : 4);
    if (v->o->headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    glfwSetErrorCallback(NULL); /* the failure is explained below */
    v->win = glfwCreateWindow(v->o->headless ? 64 : v->o->width, v->o->headless ? 64 : v->o->height,
                              PROG, NULL, NULL);
    glfwSetErrorCallback(glfw_error);
    if (!v->win) {
        report_old_gl();
        glfwTerminate();
        return -1;
    }
    glfwMakeContextCurrent(v->win);
    if (epoxy_gl_version() < 33) {
        report_old_gl();
        return -1;
    }
    glfwSwapInterval(v->o->headless ? 0 : 1);
    if (v->o->headless) printf("GL context: hidden GLFW window on the X display %s (GLX)\n", d && *d ? d : wl);
    printf("OpenGL %s on %s\n", (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER));
    return 0;
}

/* --------------------------------------------------------------- frames */

/* Vertex bytes every body's device copy has sent to the host so far. */
static size_t d2h_bytes(const viewer *v)
{
    size_t n = 0;
    for (int i = 0; i < v->scene.body_count; i++) n += cuda_gl_d2h_bytes(v->scene.body[i].world);
    return n;
}

/* "interop", "host upload", or both when the bodies differ: for the status line. */
static const char *upload_label(const viewer *v)
{
    int n = 0;
    for (int i = 0; i < v->scene.body_count; i++) n += v->interop[i] != NULL;
    return n == 0 ? "host upload" : n == v->scene.body_count ? "interop" : "interop + host upload";
}

/* Each body's CUDA-GL interop (--upload auto or interop): -1 when forced and
 * unavailable; under auto a body on the CUDA backend that cannot have it
 * says why in one line and uploads from the host. */
static int setup_interop(viewer *v)
{
    if (v->o->upload == UPLOAD_HOST) return 0;
    int said = 0;
    for (int i = 0; i < v->scene.body_count; i++) {
        demo_body *b = &v->scene.body[i];
        char why[1024];
        if ((v->interop[i] = cuda_gl_create(&v->surf[i], b->render, b->world, why, sizeof why))) continue;
        if (v->o->upload == UPLOAD_INTEROP) {
            fprintf(stderr, PROG ": --upload interop: %s: %s\n", b->name, why);
            return -1;
        }
        if (!said && tw_world_get_def(b->world)->backend == TW_BACKEND_CUDA)
            printf("CUDA-GL interop unavailable, host upload instead: %s\n", why);
        said |= tw_world_get_def(b->world)->backend == TW_BACKEND_CUDA;
    }
    return 0;
}

/* Each body's surface into its vertex buffers: by interop where the body has
 * it and the device state is current, else from the host (colours always).
 * -1 when interop fails under --upload interop (auto drops to host upload). */
static int upload(viewer *v, int colors)
{
    size_t d0 = d2h_bytes(v);
    for (int i = 0; i < v->scene.body_count; i++) /* the front's levels change as it steps */
        colors |= (v->scene.body[i].front || v->scene.body[i].mr) && v->scene.body[i].color_mode == DEMO_COLOR_LEVELS;
    for (int i = 0; i < v->scene.body_count; i++) {
        demo_body *b = &v->scene.body[i];
        int r = 1;
        if (v->interop[i]) {
            char why[1024];
            r = cuda_gl_update(v->interop[i], b->world, why, sizeof why);
            if (r < 0) {
                fprintf(stderr, PROG ": %s: CUDA-GL interop failed%s: %s\n", b->name,
                        v->o->upload == UPLOAD_INTEROP ? "" : ", host upload from now on", why);
                cuda_gl_destroy(v->interop[i]);
                v->interop[i] = NULL;
                if (v->o->upload == UPLOAD_INTEROP) return -1;
            }
        }
        v->drawn_interop += r == 0;
        v->drawn_host += r != 0;
        if (r == 0 && !colors) continue;
        if (r != 0) demo_body_render_update(b, v->pos, v->nrm);
        if (colors) demo_body_render_colors(b, v->col);
        gl_surface_update(&v->surf[i], r ? v->pos : NULL, r ? v->nrm : NULL, colors ? v->col : NULL);
    }
    v->d2h_draw += d2h_bytes(v) - d0;
    return 0;
}

/* The device-to-host vertex traffic of `frames` frames, when a body runs on CUDA. */
static void print_d2h(const viewer *v, long frames)
{
    int cuda = 0;
    for (int i = 0; i < v->scene.body_count; i++)
        cuda |= tw_world_get_def(v->scene.body[i].world)->backend == TW_BACKEND_CUDA;
    if (!cuda || frames < 1) return;
    printf("d2h vertex bytes per frame: %.0f (%s; drawing %zu, stepping %zu bytes over %ld frames; surfaces "
           "updated %ld times by interop, %ld from the host)\n",
           (double)(v->d2h_draw + v->d2h_step) / (double)frames, upload_label(v), v->d2h_draw, v->d2h_step, frames,
           v->drawn_interop, v->drawn_host);
}

static void draw(viewer *v, int width, int height)
{
    float mvp[16];
    double eye[3], f[3], r[3], u[3];
    camera_matrix(&v->cam, (double)width / height, mvp);
    camera_frame(&v->cam, eye, f, r, u);
    gl_view_begin(&v->gl, width, height, mvp, eye, v->wireframe);
    static const float zero[3] = {0, 0, 0};
    if (v->have_floor) gl_view_draw(&v->gl, &v->floor, zero);
    for (int i = 0; i < v->scene.body_count; i++) gl_view_draw(&v->gl, &v->surf[i], v->scene.body[i].offset);
    if (v->tool.body >= 0) viewer_tool_draw(&v->tool, &v->gl, v->scene.body[v->tool.body].offset);
}

static int make_surfaces(viewer *v)
{
    int most = 0;
    for (int i = 0; i < v->scene.body_count; i++) {
        demo_body *b = &v->scene.body[i];
        const int *tris;
        int nt = demo_body_render_triangles(b, &tris);
        int nv = demo_body_render_vertices(b);
        if (nv > most) most = nv;
        if (gl_surface_create(&v->surf[i], nv, tris, nt)) {
            fprintf(stderr, PROG ": cannot create the vertex buffers of %s (%d vertices)\n", b->name, nv);
            return -1;
        }
    }
    v->pos = malloc(sizeof(float) * 3 * (size_t)most);
    v->nrm = malloc(sizeof(float) * 3 * (size_t)most);
    v->col = malloc(sizeof(float) * 3 * (size_t)most);
    if (!v->pos || !v->nrm || !v->col) return -1;
    demo_scene *s = &v->scene;
    if (s->has_floor) { /* a square under the scene, normal along up */
        int up = s->up, a = (up + 1) % 3, b = (up + 2) % 3;
        float p[12], n[12], c[12];
        static const int tris[6] = {0, 1, 2, 0, 2, 3};
        static const float sa[4] = {-1, 1, 1, -1}, sb[4] = {-1, -1, 1, 1};
        for (int k = 0; k < 4; k++) {
            p[3 * k + up] = (float)s->floor_level;
            p[3 * k + a] = (float)(s->floor_center[a] + sa[k] * s->floor_half);
            p[3 * k + b] = (float)(s->floor_center[b] + sb[k] * s->floor_half);
            for (int j = 0; j < 3; j++) {
                n[3 * k + j] = j == up ? 1.f : 0.f;
                c[3 * k + j] = 0.45f;
            }
        }
        if (gl_surface_create(&v->floor, 4, tris, 2)) return -1;
        gl_surface_update(&v->floor, p, n, c);
        v->have_floor = 1;
    }
    if (setup_interop(v)) return -1;
    return upload(v, 1);
}

static void print_volumes(viewer *v)
{
    demo_scene *s = &v->scene;
    printf("t %.2f s volumes:", tw_world_time(s->body[0].world));
    for (int i = 0; i < s->body_count; i++) {
        double vol = tw_world_volume(s->body[i].world);
        printf(" %s %.5g m^3 (%+.1f %%)%s", s->body[i].name, vol, 100 * (vol / v->rest_volume[i] - 1),
               i + 1 < s->body_count ? "," : "\n");
    }
}

/* steps_per_frame steps of every body, the bone cores driven first. */
static int advance(viewer *v, int steps)
{
    demo_scene *s = &v->scene;
    size_t d0 = d2h_bytes(v);
    for (int k = 0; k < steps; k++) {
        demo_body *b0 = &s->body[0];
        demo_scene_drive(s, tw_world_time(b0->world) + tw_world_dt(b0->world));
        if (v->tool.body >= 0) viewer_tool_drive(&v->tool, &s->body[v->tool.body]);
        double t0 = tw_world_time(b0->world);
        int cg;
        tw_status rc = demo_scene_step(s, &cg);
        if (rc != TW_OK) {
            fprintf(stderr, PROG ": step failed: %s (%s)\n", tw_last_error(), tw_status_name(rc));
            return -1;
        }
        v->last_cg = cg;
        v->steps_done++;
        if (s->print_volumes && floor(2 * tw_world_time(b0->world) + 1e-9) > floor(2 * t0 + 1e-9)) print_volumes(v);
    }
    v->d2h_step += d2h_bytes(v) - d0;
    return 0;
}

static const char *method_label(const demo_scene *s, char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; i < s->body_count; i++) {
        const char *m = tw_method_name(tw_world_get_def(s->body[i].world)->method);
        if (strstr(buf, m)) continue;
        if (buf[0]) strncat(buf, "/", n - strlen(buf) - 1);
        strncat(buf, m, n - strlen(buf) - 1);
    }
    return buf;
}

/* Headless progress: where the run is, how fast it goes, when it ends. */
typedef struct headless_progress {
    int frames;             /* frames to write, frame 0 included */
    long steps, done;       /* steps of the whole run, steps taken */
    double interval;        /* s between lines; 0: after every frame */
    double t_start, t_last; /* wall clock at the start and at the last line */
} headless_progress;

/* One line for frame f (0-based) in progress, flushed so that it shows also
 * when the output goes into a pipe or a file. The rate and eta count the
 * wall time of drawing and writing too. */
static void progress_line(headless_progress *p, int f)
{
    double now = now_s(), elapsed = now - p->t_start;
    double rate = elapsed > 0 ? p->done / elapsed : 0;
    printf("frame %d of %d, step %ld of %ld, %.3g steps/s, eta %.0f s\n", f + 1, p->frames, p->done, p->steps,
           rate, rate > 0 ? (p->steps - p->done) / rate : 0);
    fflush(stdout);
    p->t_last = now;
}

static int run_headless(viewer *v)
{
    viewer_opts *o = v->o;
    char err[512];
    if (gl_view_offscreen(&v->gl, o->width, o->height, err, sizeof err)) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    char dir[4096]; /* mkdir -p */
    snprintf(dir, sizeof dir, "%s", o->out_dir);
    for (char *c = dir + 1; *c; c++)
        if (*c == '/') {
            *c = 0;
            mkdir(dir, 0777);
            *c = '/';
        }
    mkdir(dir, 0777);
    struct stat st;
    if (stat(o->out_dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, PROG ": --out %s: cannot create the folder\n", o->out_dir);
        return -1;
    }
    unsigned char *rgb = malloc((size_t)o->width * (size_t)o->height * 3);
    if (!rgb) return -1;
    double t_sim = 0, t_start = now_s();
    v->d2h_draw = v->d2h_step = 0; /* counted over the frames that step */
    v->drawn_interop = v->drawn_host = 0;
    headless_progress p;
    p.frames = o->frames;
    p.steps = (long)(o->frames - 1) * v->steps_per_frame;
    p.done = 0;
    p.interval = o->progress;
    p.t_start = p.t_last = now_s();
    for (int f = 0; f < o->frames; f++) {
        if (f > 0) {
            double t0 = now_s();
            for (int k = 0; k < v->steps_per_frame; k++) { /* one at a time: progress within a long frame */
                if (advance(v, 1)) {
                    free(rgb);
                    return -1;
                }
                p.done++;
                if (p.interval > 0 && now_s() - p.t_last >= p.interval) progress_line(&p, f);
            }
            if (upload(v, 0)) {
                free(rgb);
                return -1;
            }
            t_sim += now_s() - t0;
        }
        draw(v, o->width, o->height);
        gl_view_read(o->width, o->height, rgb);
        char path[4096];
        snprintf(path, sizeof path, "%s/frame_%05d.png", o->out_dir, f);
        if (png_write_rgb(path, rgb, o->width, o->height, err, sizeof err)) {
            fprintf(stderr, PROG ": %s\n", err);
            free(rgb);
            return -1;
        }
        if (f > 0 && (p.interval == 0 || now_s() - p.t_last >= p.interval)) progress_line(&p, f);
    }
    free(rgb);
    char methods[128];
    int tets = 0;
    for (int i = 0; i < v->scene.body_count; i++) tets += tw_world_tet_count(v->scene.body[i].world);
    printf("%s: %d frames %dx%d in %s/ (t = %.3f s simulated, %ld steps, %.0f steps/s, %.2f s wall; %s, "
           "backend %s, %s, %d tets, last CG iterations %d)\n",
           v->scene.name, o->frames, o->width, o->height, o->out_dir, tw_world_time(v->scene.body[0].world),
           v->steps_done, t_sim > 0 ? v->steps_done / t_sim : 0, now_s() - t_start,
           method_label(&v->scene, methods, sizeof methods),
           tw_backend_name(tw_world_get_def(v->scene.body[0].world)->backend), upload_label(v), tets, v->last_cg);
    print_d2h(v, o->frames - 1);
    if (v->scene.print_volumes) print_volumes(v);
    if (o->video) {
        if (system("command -v ffmpeg >/dev/null 2>&1") != 0) {
            printf(PROG ": --video: ffmpeg not found (Debian: apt-get install ffmpeg); the PNG frames are in %s/\n",
                   o->out_dir);
        } else {
            char cmd[8400];
            snprintf(cmd, sizeof cmd,
                     "ffmpeg -loglevel error -y -framerate 30 -i '%s/frame_%%05d.png' -pix_fmt yuv420p "
                     "-vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' '%s/video.mp4'",
                     o->out_dir, o->out_dir);
            if (system(cmd) != 0) {
                fprintf(stderr, PROG ": --video: ffmpeg failed: %s\n", cmd);
                return -1;
            }
            printf("video: %s/video.mp4\n", o->out_dir);
        }
    }
    return 0;
}

/* ---------------------------------------------------------- interaction */

static void rebuild_all(viewer *v, double youngs_factor, int gravity_toggle)
{
    if (gravity_toggle) v->gravity_on = !v->gravity_on;
    for (int i = 0; i < v->scene.body_count; i++) {
        demo_body *b = &v->scene.body[i];
        tw_world_def d = b->def;
        d.method = tw_world_get_def(b->world)->method;
        d.dt = tw_world_dt(b->world);
        d.youngs_modulus *= youngs_factor;
        for (int k = 0; k < 3; k++) d.gravity[k] = v->gravity_on ? v->gravity[i][k] : 0;
        if (demo_body_rebuild(b, &d) != TW_OK)
            fprintf(stderr, PROG ": recreating %s: %s\n", b->name, tw_last_error());
    }
    v->dragging = 0;
    v->tool.body = v->tool.index = -1; /* the new worlds have the bodies' own colliders only */
    v->tool.dragging = 0;
    printf("E %g Pa, gravity %s\n", v->scene.body[0].def.youngs_modulus, v->gravity_on ? "on" : "off");
}

/* Holds every bone core where its timed spin has it now (no jump), so the
 * user can turn it from there. */
static void hold_cores(viewer *v)
{
    demo_scene *s = &v->scene;
    for (int i = 0; i < s->body_count; i++) {
        demo_body *b = &s->body[i];
        if (!b->core || b->core_held) continue;
        demo_scene_set_core_angle(s, i, b->core_driven);
    }
}

static void on_char(GLFWwindow *w, unsigned int c)
{
    viewer *v = glfwGetWindowUserPointer(w);
    demo_scene *s = &v->scene;
    if (c >= '1' && c <= '6') {
        tw_method m = (tw_method)(c - '1');
        for (int i = 0; i < s->body_count; i++)
            if (tw_world_set_method(s->body[i].world, m) != TW_OK) fprintf(stderr, PROG ": %s\n", tw_last_error());
        printf("method %s\n", tw_method_name(m));
    } else if (c == ' ') {
        v->paused = !v->paused;
    } else if (c == 's') {
        v->paused = 1;
        v->single_step = 1;
    } else if (c == 'r') {
        demo_scene_reset(s);
        v->dragging = 0;
        for (int i = 0; i < s->body_count; i++) tw_world_set_spring(s->body[i].world, -1, NULL, 0);
    } else if (c == 'g') {
        rebuild_all(v, 1, 1);
    } else if (c == '+' || c == '=') {
        rebuild_all(v, 2, 0);
    } else if (c == '-') {
        rebuild_all(v, 0.5, 0);
    } else if (c == '[' || c == ']') {
        for (int i = 0; i < s->body_count; i++) {
            double dt = tw_world_dt(s->body[i].world) * (c == ']' ? 1.5 : 1 / 1.5);
            if (tw_world_set_dt(s->body[i].world, dt) != TW_OK) fprintf(stderr, PROG ": %s\n", tw_last_error());
        }
        printf("dt %g s\n", tw_world_dt(s->body[0].world));
    } else if (c == 'a') {
        int core = demo_scene_core_body(s);
        if (core < 0) {
            printf("%s has no bone core\n", s->name);
        } else if (s->body[core].core_held) {
            demo_scene_spin_cores(s);
            printf("bone core: timed spin\n");
        } else {
            hold_cores(v);
            printf("bone core: held at %.0f degrees (right-drag or shift+left-drag turns it)\n",
                   s->body[core].core_angle * 180 / 3.14159265358979);
        }
    } else if (c == 't') {
        if (v->tool.body >= 0) {
            viewer_tool_remove(&v->tool, &s->body[v->tool.body]);
            v->tool_mode = 0;
        } else {
            v->tool_mode = !v->tool_mode;
        }
        printf("tool: %s\n", v->tool_mode ? "on (left-drag on a body)" : "off");
    } else if (c == 'w') {
        v->wireframe = !v->wireframe;
    } else if (c == 'l' || c == 'k') {
        int mode = c == 'l' ? DEMO_COLOR_LEVELS : DEMO_COLOR_STIFFNESS, trees = 0;
        for (int i = 0; i < s->body_count; i++)
            if (s->body[i].front || (s->body[i].mr && mode == DEMO_COLOR_LEVELS)) {
                s->body[i].color_mode = s->body[i].color_mode == mode ? DEMO_COLOR_BODY : mode;
                trees++;
                printf("%s: colours: %s\n", s->body[i].name,
                       s->body[i].color_mode == DEMO_COLOR_LEVELS      ? "the front's levels (0 blue, 1 green, 2 red, 3 yellow)"
                       : s->body[i].color_mode == DEMO_COLOR_STIFFNESS ? "Young's modulus (red stiff, yellow soft)"
                                                                       : "the body's");
            }
        if (!trees) printf("%s has no tetra tree or multiresolution body (tree-*, mr-liver)\n", s->name);
    } else if (c == 'h') {
        printf("%s", key_help);
        v->help_until = glfwGetTime() + 8;
        glfwSetWindowTitle(w, "keys: 1-6 method | space pause | s step | r reset | g gravity | +/- E | [ ] dt | "
                              "a core spin | w wireframe | drag: spring / orbit, right-drag: turn core, wheel: zoom");
    } else if (c == 'q') {
        glfwSetWindowShouldClose(w, 1);
    }
    upload(v, 1);
}

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods)
{
    if (key == GLFW_KEY_ESCAPE && action == GLFW_PRESS) glfwSetWindowShouldClose(w, 1);
}

/* Nearest hit of the ray with any body's rendered triangles (Möller-Trumbore). */
static int pick(viewer *v, const double o[3], const double d[3], int *body, double hit[3], int *tri_out)
{
    double best = INFINITY;
    *body = -1;
    for (int i = 0; i < v->scene.body_count; i++) {
        demo_body *b = &v->scene.body[i];
        const int *tris;
        int nt = demo_body_render_triangles(b, &tris);
        demo_body_render_update(b, v->pos, v->nrm);
        for (int t = 0; t < nt; t++) {
            double p[3][3];
            for (int c = 0; c < 3; c++)
                for (int k = 0; k < 3; k++) p[c][k] = v->pos[3 * tris[3 * t + c] + k] + b->offset[k];
            double e1[3], e2[3], s[3], h[3], q[3];
            for (int k = 0; k < 3; k++) {
                e1[k] = p[1][k] - p[0][k];
                e2[k] = p[2][k] - p[0][k];
                s[k] = o[k] - p[0][k];
            }
            h[0] = d[1] * e2[2] - d[2] * e2[1];
            h[1] = d[2] * e2[0] - d[0] * e2[2];
            h[2] = d[0] * e2[1] - d[1] * e2[0];
            double a = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
            if (fabs(a) < 1e-14) continue;
            double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / a;
            if (u < 0 || u > 1) continue;
            q[0] = s[1] * e1[2] - s[2] * e1[1];
            q[1] = s[2] * e1[0] - s[0] * e1[2];
            q[2] = s[0] * e1[1] - s[1] * e1[0];
            double vv = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / a;
            if (vv < 0 || u + vv > 1) continue;
            double t_hit = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / a;
            if (t_hit > 0 && t_hit < best) {
                best = t_hit;
                *body = i;
                *tri_out = t;
            }
        }
    }
    if (*body < 0) return 0;
    for (int k = 0; k < 3; k++) hit[k] = o[k] + best * d[k];
    return 1;
}

/* The free mesh vertex nearest to point p (m, in the body's frame) among the
 * vertices of triangle t (boundary) or of the tets of its corners (embedded). */
static int nearest_vertex(viewer *v, demo_body *b, int t, const double p[3])
{
    const int *tris;
    demo_body_render_triangles(b, &tris);
    int cand[12], n = 0;
    for (int c = 0; c < 3; c++) {
        int r = tris[3 * t + c];
        if (b->embedding)
            for (int k = 0; k < 4; k++) cand[n++] = tw_embedding_indices(b->embedding)[4 * r + k];
        else
            cand[n++] = r;
    }
    const tw_real *x = tw_world_positions(b->world);
    int best = -1;
    double bd = INFINITY;
    for (int k = 0; k < n; k++) {
        if (tw_world_get_constraint(b->world, cand[k]) != TW_FREE) continue;
        double dd = 0;
        for (int j = 0; j < 3; j++) dd += (x[3 * cand[k] + j] - p[j]) * (x[3 * cand[k] + j] - p[j]);
        if (dd < bd) {
            bd = dd;
            best = cand[k];
        }
    }
    return best;
}

static void drag_to(viewer *v, double mx, double my)
{
    double o[3], d[3];
    camera_ray(&v->cam, mx, my, v->win_w, v->win_h, o, d);
    double dn = d[0] * v->drag_plane_normal[0] + d[1] * v->drag_plane_normal[1] + d[2] * v->drag_plane_normal[2];
    if (fabs(dn) < 1e-9) return;
    double t = 0;
    for (int k = 0; k < 3; k++) t += (v->drag_plane_point[k] - o[k]) * v->drag_plane_normal[k];
    t /= dn;
    demo_body *b = &v->scene.body[v->drag_body];
    double anchor[3];
    for (int k = 0; k < 3; k++) anchor[k] = o[k] + t * d[k] - b->offset[k];
    tw_world_set_spring(b->world, v->drag_vertex, anchor, v->drag_k);
}

static void on_button(GLFWwindow *w, int button, int action, int mods)
{
    viewer *v = glfwGetWindowUserPointer(w);
    double mx, my;
    glfwGetCursorPos(w, &mx, &my);
    glfwGetWindowSize(w, &v->win_w, &v->win_h);
    v->last_x = mx;
    v->last_y = my;
    if (action == GLFW_RELEASE) {
        if (v->dragging) tw_world_set_spring(v->scene.body[v->drag_body].world, -1, NULL, 0);
        v->dragging = v->orbiting = v->turning = v->tool.dragging = 0;
        return;
    }
    if (demo_scene_core_body(&v->scene) >= 0 &&
        (button == GLFW_MOUSE_BUTTON_RIGHT || (button == GLFW_MOUSE_BUTTON_LEFT && (mods & GLFW_MOD_SHIFT)))) {
        hold_cores(v); /* the timed spin stops: the user has the core */
        v->turning = 1;
        return;
    }
    if (button == GLFW_MOUSE_BUTTON_LEFT) {
        double o[3], d[3], hit[3];
        int body, tri;
        camera_ray(&v->cam, mx, my, v->win_w, v->win_h, o, d);
        int picked = pick(v, o, d, &body, hit, &tri);
        if (v->tool_mode && (picked || v->tool.body >= 0)) {
            double eye[3], f[3], r[3], u[3], p[3];
            camera_frame(&v->cam, eye, f, r, u);
            if (!picked) { /* a drag off the body takes the tool where it is */
                body = v->tool.body;
                for (int k = 0; k < 3; k++) p[k] = v->tool.pos[k];
            } else {
                for (int k = 0; k < 3; k++) p[k] = hit[k] - v->scene.body[body].offset[k];
            }
            if (v->tool.body >= 0 && v->tool.body != body) viewer_tool_remove(&v->tool, &v->scene.body[v->tool.body]);
            if (viewer_tool_grab(&v->tool, &v->scene.body[body], body, p, f) == 0) {
                if (picked && v->tool.body == body) viewer_tool_aim(&v->tool, o, d, v->scene.body[body].offset);
                return;
            }
        }
        if (picked) {
            demo_body *b = &v->scene.body[body];
            double p[3];
            for (int k = 0; k < 3; k++) p[k] = hit[k] - b->offset[k];
            int vert = nearest_vertex(v, b, tri, p);
            if (vert >= 0) {
                double eye[3], f[3], r[3], u[3], mass = 0;
                camera_frame(&v->cam, eye, f, r, u);
                const tw_real *m = tw_world_vertex_mass(b->world);
                for (int i = 0; i < tw_world_vertex_count(b->world); i++) mass += m[i];
                v->dragging = 1;
                v->drag_body = body;
                v->drag_vertex = vert;
                v->drag_k = 300 * mass; /* N/m: about 17 rad/s for the whole body */
                for (int k = 0; k < 3; k++) {
                    v->drag_plane_point[k] = hit[k];
                    v->drag_plane_normal[k] = f[k];
                }
                drag_to(v, mx, my);
                return;
            }
        }
    }
    v->orbiting = 1;
}

static void on_move(GLFWwindow *w, double mx, double my)
{
    viewer *v = glfwGetWindowUserPointer(w);
    if (v->tool.dragging) {
        double o[3], d[3];
        camera_ray(&v->cam, mx, my, v->win_w, v->win_h, o, d);
        viewer_tool_aim(&v->tool, o, d, v->scene.body[v->tool.body].offset);
    } else if (v->dragging) drag_to(v, mx, my);
    else if (v->turning) { /* 0.01 rad per pixel of horizontal motion */
        demo_scene *s = &v->scene;
        for (int i = 0; i < s->body_count; i++)
            if (s->body[i].core) demo_scene_set_core_angle(s, i, s->body[i].core_angle + (mx - v->last_x) * 0.01);
    } else if (v->orbiting) {
        v->cam.yaw -= (mx - v->last_x) * 0.01;
        v->cam.pitch += (my - v->last_y) * 0.01;
        if (v->cam.pitch > 1.5) v->cam.pitch = 1.5;
        if (v->cam.pitch < -1.5) v->cam.pitch = -1.5;
    }
    v->last_x = mx;
    v->last_y = my;
}

static void on_scroll(GLFWwindow *w, double dx, double dy)
{
    viewer *v = glfwGetWindowUserPointer(w);
    if (v->tool_mode && v->tool.body >= 0) { /* pushes the tool along the view */
        viewer_tool_push(&v->tool, 0.25 * v->tool.radius * dy);
        return;
    }
    v->cam.distance *= pow(0.9, dy);
}

static int run_window(viewer *v)
{
    GLFWwindow *w = v->win;
    glfwSetWindowUserPointer(w, v);
    glfwSetCharCallback(w, on_char);
    glfwSetKeyCallback(w, on_key);
    glfwSetMouseButtonCallback(w, on_button);
    glfwSetCursorPosCallback(w, on_move);
    glfwSetScrollCallback(w, on_scroll);
    printf("%s", key_help);
    double t_title = glfwGetTime(), t_sim = 0;
    long frames = 0, stepped = 0, steps0 = v->steps_done;
    char title[512], methods[128];
    int tets = 0;
    for (int i = 0; i < v->scene.body_count; i++) tets += tw_world_tet_count(v->scene.body[i].world);
    v->d2h_draw = v->d2h_step = 0;
    v->drawn_interop = v->drawn_host = 0;
    while (!glfwWindowShouldClose(w)) {
        glfwPollEvents();
        if (!v->paused || v->single_step) {
            double t0 = glfwGetTime();
            if (advance(v, v->single_step ? 1 : v->steps_per_frame) || upload(v, 0)) return -1;
            t_sim += glfwGetTime() - t0;
            v->single_step = 0;
            stepped++;
        }
        int fw, fh;
        glfwGetFramebufferSize(w, &fw, &fh);
        glfwGetWindowSize(w, &v->win_w, &v->win_h);
        if (fw > 0 && fh > 0) draw(v, fw, fh);
        glfwSwapBuffers(w);
        frames++;
        double now = glfwGetTime();
        if (now - t_title > 0.5 && now > v->help_until) {
            char core[128] = "";
            int cb = demo_scene_core_body(&v->scene);
            if (cb >= 0 && v->scene.body[cb].core_held)
                snprintf(core, sizeof core, " | core held %.0f deg", v->scene.body[cb].core_angle * 180 / 3.14159265358979);
            else if (cb >= 0)
                snprintf(core, sizeof core, " | core spinning");
            if (v->tool.body >= 0) {
                double tf[3] = {0, 0, 0};
                tw_world_collider_force(v->scene.body[v->tool.body].world, v->tool.index, tf);
                size_t l = strlen(core);
                snprintf(core + l, sizeof core - l, " | tool F (%.2g, %.2g, %.2g) N", tf[0], tf[1], tf[2]);
            }
            snprintf(title, sizeof title,
                     PROG " %s | %.0f fps | %.0f steps/s | %s | %s, %s | %d tets | CG %d | E %.3g Pa | dt %.3g s | "
                          "gravity %s%s%s | h: help",
                     v->scene.name, frames / (now - t_title), t_sim > 0 ? (v->steps_done - steps0) / t_sim : 0,
                     method_label(&v->scene, methods, sizeof methods),
                     tw_backend_name(tw_world_get_def(v->scene.body[0].world)->backend), upload_label(v), tets,
                     v->last_cg,
                     v->scene.body[0].def.youngs_modulus, tw_world_dt(v->scene.body[0].world),
                     v->gravity_on ? "on" : "off", core, v->paused ? " | PAUSED" : "");
            glfwSetWindowTitle(w, title);
            t_title = now;
            frames = 0;
            t_sim = 0;
            steps0 = v->steps_done;
        }
    }
    print_d2h(v, stepped);
    return 0;
}

int main(int argc, char **argv)
{
    viewer_opts o;
    if (parse(argc, argv, &o)) return CLI_EXIT_USAGE;
    char why[512];
    if (o.require_cuda && !cuda_gl_device_usable(why, sizeof why)) {
        printf("skipped: --require-cuda: %s\n", why);
        return 77;
    }
    static viewer v;
    v.o = &o;
    viewer_tool_init(&v.tool);
    if (build_scene(&v)) return CLI_EXIT_FAIL;
    demo_scene *s = &v.scene;
    for (int i = 0; i < s->body_count; i++)
        if (s->body[i].front || (s->body[i].mr && o.color_mode == DEMO_COLOR_LEVELS)) s->body[i].color_mode = o.color_mode;
    for (int i = 0; i < s->body_count; i++) {
        v.rest_volume[i] = tw_world_volume(s->body[i].world);
        for (int k = 0; k < 3; k++) v.gravity[i][k] = s->body[i].def.gravity[k];
    }
    v.gravity_on = 1;
    if (o.core_angle_given) { /* held from the start: the first steps turn the core there */
        int held = 0;
        for (int i = 0; i < s->body_count; i++)
            held += demo_scene_set_core_angle(s, i, o.core_angle * 3.14159265358979 / 180) == 0;
        if (!held) {
            fprintf(stderr, PROG ": --core-angle: %s has no bone core (bunny and dane have one)\n", s->name);
            demo_scene_destroy(s);
            return CLI_EXIT_USAGE;
        }
        printf("%s: bone core held at %g degrees\n", s->name, o.core_angle);
    }
    demo_scene_drive(s, 0);
    double dt = tw_world_dt(s->body[0].world);
    v.steps_per_frame = o.steps_per_frame ? o.steps_per_frame : (int)fmax(1, floor(1.0 / (30 * dt) + 0.5));
    v.cam.target[0] = s->target[0];
    v.cam.target[1] = s->target[1];
    v.cam.target[2] = s->target[2];
    v.cam.distance = s->distance;
    v.cam.yaw = s->yaw;
    v.cam.pitch = s->pitch;
    v.cam.up = s->up;
    v.cam.up_sign = v.up_sign;
    if (o.scene && o.up_given) { /* the named scenes keep their floor; only the camera turns */
        v.cam.up = o.up_axis;
        v.cam.up_sign = o.up_sign;
        v.up_why = "--up";
    }
    v.cam.fov_y = 45 * 3.14159265358979 / 180;
    printf("up: %s%c (%s)\n", v.cam.up_sign < 0 ? "-" : "", "xyz"[v.cam.up], v.up_why);
    if (open_context(&v)) {
        demo_scene_destroy(s);
        return CLI_EXIT_FAIL;
    }
    char err[1024];
    int rc = 0;
    if (gl_view_init(&v.gl, err, sizeof err)) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = -1;
    }
    if (!rc) rc = make_surfaces(&v);
    if (!rc) {
        printf("%s: %d bod%s, %d steps of %g s per frame, %s\n", s->name, s->body_count,
               s->body_count == 1 ? "y" : "ies", v.steps_per_frame, dt, upload_label(&v));
        fflush(stdout); /* the setup lines, also into a pipe, before the first frame */
        rc = o.headless ? run_headless(&v) : run_window(&v);
    }
    for (int i = 0; i < s->body_count; i++) {
        cuda_gl_destroy(v.interop[i]);
        gl_surface_destroy(&v.surf[i]);
    }
    if (v.have_floor) gl_surface_destroy(&v.floor);
    viewer_tool_destroy(&v.tool);
    gl_view_destroy(&v.gl);
    if (v.win) glfwDestroyWindow(v.win);
    glfwTerminate(); /* a no-op when GLFW was not started (EGL) */
    egl_context_close(&v.egl);
    free(v.pos);
    free(v.nrm);
    free(v.col);
    demo_scene_destroy(s);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
