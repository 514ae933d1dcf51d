#include "scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "render_surface.h"
#include "multires.h"
#include "tree_scenes.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#ifndef TW_DATA_DIR
#define TW_DATA_DIR "data"
#endif

const char *const demo_scene_names[] = {"bars",       "tube",       "bunny",          "dane",       "cube",
                                        "bunny-block", "stack",     "dane-floor",     "tree-box",   "tree-bunny",
                                        "tree-armadillo", "tree-liver", "mr-liver",  NULL};

demo_options demo_default_options(void)
{
    demo_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = TW_DATA_DIR;
    o.method = -1;
    o.backend = TW_BACKEND_CPU;
    return o;
}

/* ------------------------------------------------------------- helpers */

/* A copy of m with positions R X + t (R row-major). */
static tw_mesh *mesh_moved(tw_mesh *m, const double R[9], const double t[3])
{
    int nv = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    double *Y = malloc(sizeof(double) * 3 * (size_t)nv);
    if (!Y) return NULL;
    for (int i = 0; i < nv; i++)
        for (int r = 0; r < 3; r++)
            Y[3 * i + r] = R[3 * r] * X[3 * i] + R[3 * r + 1] * X[3 * i + 1] + R[3 * r + 2] * X[3 * i + 2] + t[r];
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *out = tw_mesh_create(Y, nv, tw_mesh_tets(m), tw_mesh_tet_count(m), tw_mesh_regions(m), &ld, NULL);
    free(Y);
    return out;
}

static void rotation_about(int axis, double angle, double R[9])
{
    double c = cos(angle), s = sin(angle);
    memset(R, 0, 9 * sizeof(double));
    int a = (axis + 1) % 3, b = (axis + 2) % 3;
    R[3 * axis + axis] = 1;
    R[3 * a + a] = c;
    R[3 * a + b] = -s;
    R[3 * b + a] = s;
    R[3 * b + b] = c;
}

static int fail(const char *prog, const char *what, demo_scene *s)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, tw_last_error());
    demo_scene_destroy(s);
    return -1;
}

/* demo_scene_add, the render surface either loaded from the path
 * render_surface or, when `loaded` is not NULL, that surface (owned from
 * here on; render_surface then only names it in messages). */
static int add_body(demo_scene *s, const char *name, tw_mesh *mesh, tw_world *world, double *element_youngs,
                    const char *render_surface, tw_surface *loaded, const float color[3], const char *prog)
{
    if (s->body_count == DEMO_MAX_BODIES) {
        fprintf(stderr, "%s: at most %d bodies in a scene\n", prog, DEMO_MAX_BODIES);
        tw_world_destroy(world);
        tw_mesh_destroy(mesh);
        free(element_youngs);
        if (loaded) tw_surface_destroy(loaded);
        return -1;
    }
    demo_body *b = &s->body[s->body_count++];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->mesh = mesh;
    b->world = world;
    b->def = *tw_world_get_def(world);
    b->element_youngs = element_youngs;
    b->def.element_youngs = element_youngs;
    for (int k = 0; k < 3; k++) b->color[k] = color[k];
    b->face_count = tw_mesh_boundary_faces(mesh, &b->faces);
    if (b->face_count <= 0) {
        fprintf(stderr, "%s: %s: the mesh has no boundary faces\n", prog, name);
        if (loaded) tw_surface_destroy(loaded);
        return -1;
    }
    if (render_surface || loaded) {
        b->surface = loaded ? loaded : tw_surface_load(render_surface);
        if (!b->surface) {
            fprintf(stderr, "%s: --render-surface: %s\n", prog, tw_last_error());
            return -1;
        }
        tw_embed_report rep;
        b->embedding = tw_embed_surface(mesh, b->surface, 0, &rep);
        if (!b->embedding) {
            fprintf(stderr, "%s: --render-surface %s cannot be embedded in the tets: %s\n", prog,
                    render_surface, tw_last_error());
            return -1;
        }
        printf("%s: embedded %s: %d vertices (%d inside, %d outside, farthest %.3g m), %d triangles, %.0f ms\n",
               name, render_surface, rep.vertices, rep.inside, rep.outside, rep.max_distance,
               tw_embedding_triangle_count(b->embedding), rep.ms);
    }
    b->render = tw_render_surface_create(tw_mesh_vertex_count(mesh), b->faces, b->face_count, b->embedding);
    if (!b->render) {
        fprintf(stderr, "%s: %s: render surface: %s\n", prog, name, tw_last_error());
        return -1;
    }
    return 0;
}

int demo_scene_add(demo_scene *s, const char *name, tw_mesh *mesh, tw_world *world,
                   double *element_youngs, const char *render_surface, const float color[3],
                   const char *prog)
{
    return add_body(s, name, mesh, world, element_youngs, render_surface, NULL, color, prog);
}

/* A world for mesh with `def`; on failure the message is printed. */
static tw_world *make_world(tw_mesh *m, const tw_world_def *def, const char *prog, const char *name)
{
    tw_world *w = tw_world_create(m, def);
    if (!w) fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
    return w;
}

static void apply_options(tw_world_def *d, const demo_options *o)
{
    if (o->youngs > 0) d->youngs_modulus = o->youngs;
    if (o->dt > 0) d->dt = o->dt;
    if (o->method >= 0) d->method = (tw_method)o->method;
    d->backend = o->backend;
}

static void bbox(const tw_mesh *m, double lo[3], double hi[3])
{
    const double *X = tw_mesh_positions(m);
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int i = 0; i < tw_mesh_vertex_count(m); i++)
        for (int k = 0; k < 3; k++) {
            if (X[3 * i + k] < lo[k]) lo[k] = X[3 * i + k];
            if (X[3 * i + k] > hi[k]) hi[k] = X[3 * i + k];
        }
}

void demo_scene_frame(demo_scene *s)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < s->body_count; i++) {
        double a[3], b[3];
        bbox(s->body[i].mesh, a, b);
        for (int k = 0; k < 3; k++) {
            if (a[k] + s->body[i].offset[k] < lo[k]) lo[k] = a[k] + s->body[i].offset[k];
            if (b[k] + s->body[i].offset[k] > hi[k]) hi[k] = b[k] + s->body[i].offset[k];
        }
    }
    double diag = 0;
    for (int k = 0; k < 3; k++) {
        s->target[k] = 0.5 * (lo[k] + hi[k]);
        diag += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    diag = sqrt(diag);
    s->distance = 1.6 * diag;
    s->yaw = s->up == 1 ? 0.5 : -1.2;
    s->pitch = 0.35;
    for (int k = 0; k < 3; k++) s->floor_center[k] = s->target[k];
    s->floor_half = diag;
}

/* Bone core in body b, made kinematic; spin and bob per the args. core:
 * the mask (owned from here on), or NULL for the vertices deeper than
 * depth (m) below the mesh's boundary. */
static int add_core(demo_body *b, unsigned char *core, double depth, double spin, double freq, double bob,
                    const char *prog)
{
    int nv = tw_mesh_vertex_count(b->mesh), n = 0;
    b->core = core ? core : calloc((size_t)nv, 1);
    if (!b->core) return -1;
    if (core) {
        for (int i = 0; i < nv; i++) n += core[i] != 0;
    } else {
        n = tw_mesh_mark_core(b->mesh, depth, b->core);
        if (n < 0) {
            fprintf(stderr, "%s: %s: bone core: %s\n", prog, b->name, tw_last_error());
            return -1;
        }
        printf("%s: bone core: %d of %d vertices deeper than %g m\n", b->name, n, nv, depth);
    }
    b->core_count = n;
    const double *X = tw_mesh_positions(b->mesh);
    for (int i = 0; i < nv; i++)
        if (b->core[i])
            for (int k = 0; k < 3; k++) b->core_center[k] += X[3 * i + k] / n;
    b->spin_amplitude = spin;
    b->spin_frequency = freq;
    b->bob_amplitude = bob;
    if (tw_world_set_kinematic_group(b->world, b->core) != TW_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, b->name, tw_last_error());
        return -1;
    }
    return 0;
}

static char *data_path(const demo_options *o, const char *file)
{
    size_t n = strlen(o->data_dir) + strlen(file) + 16;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/meshes/%s", o->data_dir, file);
    return p;
}

/* -------------------------------------------------------------- bodies */

tw_mesh *demo_bar_mesh(void) { return tw_mesh_bar(DEMO_BAR_LENGTH, 0.1, 0.1, 20, 2, 2); }

tw_world_def demo_bar_def(tw_method method)
{
    tw_world_def d = tw_default_world_def();
    d.method = method;
    d.youngs_modulus = 1e6;
    return d;
}

tw_world *demo_wall_world(const tw_mesh *m, const tw_world_def *d)
{
    tw_world *w = tw_world_create(m, d);
    if (w && tw_world_pin_where(w, 0, 1, 1e-6) == 0) {
        tw_world_destroy(w);
        tw_fail(TW_ERR_INVALID, "demo_wall_world: no vertex at x = 0 to pin");
        return NULL;
    }
    return w;
}

tw_mesh *demo_drop_cube_mesh(void)
{
    return tw_mesh_bar(DEMO_DROP_CUBE_EDGE, DEMO_DROP_CUBE_EDGE, DEMO_DROP_CUBE_EDGE, 4, 4, 4);
}

tw_world *demo_drop_cube_world(const tw_mesh *m, const tw_world_def *d, double z0, const tw_collider_def *floor)
{
    tw_world *w = tw_world_create(m, d);
    if (!w) return NULL;
    int n = tw_world_vertex_count(w);
    tw_real *x = malloc(sizeof(tw_real) * 3 * (size_t)n);
    tw_status st = x ? TW_OK : tw_fail(TW_ERR_NOMEM, "demo_drop_cube_world: out of memory for %d vertices", n);
    if (x) {
        const double *X = tw_mesh_positions(m);
        for (int i = 0; i < 3 * n; i++) x[i] = (tw_real)(X[i] + (i % 3 == 2 ? z0 : 0));
        st = tw_world_set_positions(w, x);
        free(x);
    }
    if (st == TW_OK && floor) st = tw_world_add_collider(w, floor);
    if (st != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

tw_mesh *demo_tube_mesh(void)
{
    tw_mesh *t = tw_mesh_tube(0.05, 0.08, 0.6, 2, 16, 12);
    if (!t) return NULL;
    /* centred, tilted 15 degrees about y, lowest point 0.5 m above the floor */
    double R[9], zero[3] = {-0.3, 0, 0};
    rotation_about(1, 15 * M_PI / 180, R);
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    tw_mesh *c = mesh_moved(t, I, zero);
    tw_mesh_destroy(t);
    if (!c) return NULL;
    double lift[3] = {0, 0, 0};
    tw_mesh *r = mesh_moved(c, R, lift);
    tw_mesh_destroy(c);
    if (!r) return NULL;
    double lo[3], hi[3];
    bbox(r, lo, hi);
    lift[2] = 0.5 - lo[2];
    tw_mesh *m = mesh_moved(r, I, lift);
    tw_mesh_destroy(r);
    return m;
}

tw_mesh *demo_cube_mesh(int cells) { return tw_mesh_bar(0.3, 0.3, 0.3, cells, cells, cells); }

tw_mesh *demo_stack_mesh(int cubes, double edge, int cells, double twist, double shift, double gap)
{
    if (cubes < 1 || cubes > 64) {
        tw_fail(TW_ERR_INVALID, "demo_stack_mesh: %d cubes (1 to 64)", cubes);
        return NULL;
    }
    tw_mesh *cube = tw_mesh_bar(edge, edge, edge, cells, cells, cells);
    if (!cube) return NULL;
    const tw_mesh *parts[64];
    double P[64 * 12];
    for (int k = 0; k < cubes; k++) {
        parts[k] = cube;
        double R[9], c = 0.5 * edge, *p = P + 12 * k;
        rotation_about(2, twist * k, R);
        memcpy(p, R, sizeof R);
        /* turned about the cube's own vertical axis, then raised */
        p[9] = c - (R[0] * c + R[1] * c) + shift * k;
        p[10] = c - (R[3] * c + R[4] * c) + shift * k;
        p[11] = gap + k * (edge + gap);
    }
    tw_mesh *m = tw_mesh_merge(parts, P, cubes);
    tw_mesh_destroy(cube);
    return m;
}

tw_world *demo_bodies_world(const tw_mesh *m, const tw_world_def *d, const tw_collider_def *floor)
{
    tw_world *w = tw_world_create(m, d);
    if (w && floor && tw_world_add_collider(w, floor) != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

/* -------------------------------------------------------------- scenes */

static int build_bars(demo_scene *s, const demo_options *o, const char *prog)
{
    static const tw_method methods[3] = {TW_LINEAR, TW_WARP_VERTEX, TW_GREEN};
    static const float colors[3][3] = {{0.85f, 0.18f, 0.15f}, {0.2f, 0.35f, 0.95f}, {0.2f, 0.75f, 0.25f}};
    s->up = 2;
    s->print_volumes = 1;
    for (int i = 0; i < 3; i++) {
        tw_mesh *m = demo_bar_mesh();
        if (!m) return fail(prog, "bar", s);
        tw_world_def d = demo_bar_def(methods[i]);
        d.dt = 1.0 / 120;
        d.damping_mass = 1.0;
        d.damping_stiffness = 0.01;
        if (o->youngs > 0) d.youngs_modulus = o->youngs;
        if (o->dt > 0) d.dt = o->dt;
        d.backend = o->backend; /* the method stays: the scene compares three */
        tw_world *w = demo_wall_world(m, &d);
        if (!w) {
            fprintf(stderr, "%s: %s: %s\n", prog, tw_method_name(methods[i]), tw_last_error());
            tw_mesh_destroy(m);
            demo_scene_destroy(s);
            return -1;
        }
        if (demo_scene_add(s, tw_method_name(methods[i]), m, w, NULL, NULL, colors[i], prog)) {
            demo_scene_destroy(s);
            return -1;
        }
        s->body[i].offset[0] = 1.25f * (float)i;
    }
    demo_scene_frame(s);
    s->yaw = -M_PI / 2; /* from -y, the bars side by side along x */
    s->pitch = 0.12;
    s->target[2] = -0.4;
    s->distance = 2.9;
    return 0;
}

static int build_tube(demo_scene *s, const demo_options *o, const char *prog)
{
    s->up = 2;
    tw_mesh *m = demo_tube_mesh();
    if (!m) return fail(prog, "tube", s);
    tw_world_def d = tw_default_world_def();
    d.method = TW_WARP_VERTEX;
    d.youngs_modulus = 2e5;
    d.dt = 1.0 / 240;
    d.damping_stiffness = 0.002;
    apply_options(&d, o);
    tw_world *w = make_world(m, &d, prog, "tube");
    if (!w) {
        tw_mesh_destroy(m);
        demo_scene_destroy(s);
        return -1;
    }
    static const float color[3] = {0.25f, 0.55f, 0.9f};
    if (demo_scene_add(s, "tube", m, w, NULL, NULL, color, prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    demo_body *b = &s->body[0];
    b->colliders[0] = tw_default_collider_def(); /* the floor z = 0 */
    b->collider_count = 1;
    if (tw_world_add_collider(w, &b->colliders[0]) != TW_OK) return fail(prog, "floor", s);
    demo_scene_frame(s);
    s->has_floor = 1;
    s->floor_level = 0;
    s->floor_half = 0.8;
    s->target[2] = 0.3;
    s->distance = 1.9;
    s->pitch = 0.25;
    return 0;
}

static int build_cored(demo_scene *s, const demo_options *o, const char *prog, const char *mesh_file,
                       const char *surface_file, const char *name, double youngs, double depth,
                       double spin, double freq, double bob, const float color[3])
{
    s->up = 1;
    char *path = data_path(o, mesh_file);
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = path ? tw_mesh_load(path, &ld, NULL) : NULL;
    free(path);
    if (!m) return fail(prog, name, s);
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.youngs_modulus = youngs;
    d.gravity[1] = -9.81;
    d.gravity[2] = 0;
    d.dt = 1.0 / 60;
    d.damping_mass = 0.5;
    d.damping_stiffness = 0.005;
    apply_options(&d, o);
    tw_world *w = make_world(m, &d, prog, name);
    if (!w) {
        tw_mesh_destroy(m);
        demo_scene_destroy(s);
        return -1;
    }
    char *surf = NULL;
    if (o->render_surface)
        {
        surf = malloc(strlen(o->render_surface) + 1);
        if (surf) strcpy(surf, o->render_surface);
    }
    else if (surface_file)
        surf = data_path(o, surface_file);
    int rc = demo_scene_add(s, name, m, w, NULL, surf, color, prog);
    free(surf);
    if (rc || add_core(&s->body[0], NULL, depth, spin, freq, bob, prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    demo_scene_frame(s);
    s->distance *= 0.7;
    return 0;
}

/* A lattice-cored body (Müller 2002 §4.3): a surface too fine (or too badly
 * shaped) to simulate is covered by a lattice of `cell` cubes
 * (tw_graded_def.cover: every surface point lies in a tet, each cube 6 Kuhn
 * tets, well shaped, so the PCG needs few iterations); the lattice is
 * simulated and a surface is embedded in it and drawn: `render_file` from
 * the shared meshes, else the lattice's own source surface. The core is
 * every lattice vertex inside the source surface and deeper than `depth`
 * below it (not below the lattice's boundary, which sticks out by up to a
 * cell: at thin parts the core would reach the drawn skin). */
static char *copy_string(const char *t)
{
    char *c = malloc(strlen(t) + 1);
    if (c) strcpy(c, t);
    return c;
}

typedef struct lattice_body {
    const char *name, *surface_file, *render_file;
    double scale;      /* surface units to metres */
    int up;            /* the vertical axis */
    double cell, depth, youngs, spin, freq, bob;
    float color[3];
    double thin_youngs; /* Pa: parts the core does not reach (farther than thin_reach from it); 0: youngs */
    double thin_reach;  /* m */
} lattice_body;

/* Per-tet Young's modulus: L->thin_youngs where the tet's centroid is
 * farther than L->thin_reach from every core vertex (a part too thin for a
 * lattice vertex to lie deep inside it, a dog's tail), else L->youngs.
 * NULL when thin_youngs is 0 or out of memory (then youngs everywhere). */
static double *thin_part_youngs(const tw_mesh *m, const unsigned char *core, const lattice_body *L)
{
    if (!(L->thin_youngs > 0)) return NULL;
    int nt = tw_mesh_tet_count(m), nv = tw_mesh_vertex_count(m), thin = 0;
    double *E = malloc(sizeof(double) * (size_t)nt);
    if (!E) return NULL;
    const double *X = tw_mesh_positions(m);
    const int *T = tw_mesh_tets(m);
    double r2 = L->thin_reach * L->thin_reach;
    for (int e = 0; e < nt; e++) {
        double c[3] = {0, 0, 0};
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++) c[k] += X[3 * T[4 * e + q] + k] / 4;
        int near = 0;
        for (int i = 0; i < nv && !near; i++) {
            if (!core[i]) continue;
            double dx = X[3 * i] - c[0], dy = X[3 * i + 1] - c[1], dz = X[3 * i + 2] - c[2];
            near = dx * dx + dy * dy + dz * dz <= r2;
        }
        E[e] = near ? L->youngs : L->thin_youngs;
        thin += !near;
    }
    printf("%s: %d of %d tets farther than %g m from the core: E %g Pa (elsewhere %g Pa)\n", L->name, thin, nt,
           L->thin_reach, L->thin_youngs, L->youngs);
    return E;
}

static int build_lattice_cored(demo_scene *s, const demo_options *o, const char *prog, const lattice_body *L)
{
    s->up = L->up;
    /* with no render file of its own, --render-surface replaces the source
     * surface (in metres) */
    int replaced = !L->render_file && o->render_surface;
    tw_surface *surf = NULL;
    char *path = replaced ? copy_string(o->render_surface) : data_path(o, L->surface_file);
    if (path && (surf = tw_surface_load(path)) && L->scale != 1 && !replaced)
        for (int i = 0; i < 3 * surf->vertex_count; i++) surf->positions[i] *= L->scale;
    free(path);
    if (!surf) return fail(prog, L->name, s);
    tw_graded_def gd = tw_default_graded_def();
    gd.fine_size = L->cell;
    gd.levels = 1;
    gd.cover = 1;
    tw_graded_mesh *g = tw_mesh_graded(surf, &gd);
    if (!g) {
        tw_surface_destroy(surf);
        char what[96];
        snprintf(what, sizeof what, "%s: lattice around the surface", L->name);
        return fail(prog, what, s);
    }
    tw_mesh *m = g->mesh;
    g->mesh = NULL;
    printf("%s: lattice of %g m cubes covering %s: %d vertices, %d tets, %.0f ms\n", L->name, L->cell,
           L->surface_file, tw_mesh_vertex_count(m), tw_mesh_tet_count(m), 1000 * g->seconds);
    tw_graded_mesh_destroy(g);
    /* the core: measured from the source surface, not the lattice's boundary */
    int nv = tw_mesh_vertex_count(m);
    unsigned char *core = calloc((size_t)nv, 1);
    int n = core ? tw_mesh_mark_core_surface(m, surf, L->depth, core) : -1;
    if (n < 0) {
        fprintf(stderr, "%s: %s: bone core: %s\n", prog, L->name, core ? tw_last_error() : "out of memory");
        free(core);
        tw_mesh_destroy(m);
        tw_surface_destroy(surf);
        demo_scene_destroy(s);
        return -1;
    }
    printf("%s: bone core: %d of %d vertices inside %s and deeper than %g m below it\n", L->name, n, nv,
           L->surface_file, L->depth);
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.youngs_modulus = L->youngs;
    d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    d.gravity[L->up] = -9.81;
    d.dt = 1.0 / 60;
    d.damping_mass = 0.5;
    d.damping_stiffness = 0.005;
    apply_options(&d, o);
    double *youngs = o->youngs > 0 ? NULL : thin_part_youngs(m, core, L);
    d.element_youngs = youngs;
    tw_world *w = make_world(m, &d, prog, L->name);
    if (!w) {
        free(youngs);
        free(core);
        tw_mesh_destroy(m);
        tw_surface_destroy(surf);
        demo_scene_destroy(s);
        return -1;
    }
    /* the drawn surface: --render-surface, the shared render file, or the source surface */
    char *render = replaced            ? NULL
                   : o->render_surface ? copy_string(o->render_surface)
                   : L->render_file    ? data_path(o, L->render_file)
                                       : NULL;
    if (render) {
        tw_surface_destroy(surf);
        surf = NULL;
    }
    int rc = add_body(s, L->name, m, w, youngs, render ? render : replaced ? o->render_surface : L->surface_file,
                      surf, L->color, prog);
    free(render);
    if (rc) free(core);
    if (rc || add_core(&s->body[0], core, L->depth, L->spin, L->freq, L->bob, prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    demo_scene_frame(s);
    return 0;
}

/* dane (Müller fig. 10): the TOSCA dog's 50k-triangle surface (cm, z up,
 * feet at z = 0, head toward -y; scaled to metres) needs about 88k tets when
 * TetGen keeps it: a lattice of 4 cm cubes instead (5 cm leave the lower
 * legs without a vertex inside them: they stretch like noodles). The core
 * is every lattice vertex at least 7 mm inside the dog's surface (body,
 * head, legs down to the paws: a skeleton); the soft skin (E 5 kPa) lags
 * behind it as it turns. The tail, thinner than a cell, has no vertex
 * inside: its tets (those farther than 8 cm from the core) are stiffer
 * (E 50 kPa) so the body carries it. */
static int build_dane(demo_scene *s, const demo_options *o, const char *prog)
{
    static const lattice_body dane = {"dane", "dog_tosca_dog0_eyescapped.off", NULL, 0.01, 2,
                                      0.04, 0.007, 5e3, 0.6, 0.8, 0.05, {0.75f, 0.6f, 0.45f}, 5e4, 0.08};
    if (build_lattice_cored(s, o, prog, &dane)) return -1;
    s->yaw = -0.6; /* from the front left, a little above */
    s->pitch = 0.25;
    s->distance *= 0.65;
    return 0;
}

/* bunny (Müller fig. 9): the shipped TetGen mesh of the closed bunny has
 * 1-degree slivers (its surface forces them; TetGen's quality bounds do not
 * remove them), which cost the PCG ~300 iterations a step; a lattice of
 * 1 cm cubes covering the same closed surface needs a few tens. The
 * 69k-triangle Stanford scan is embedded and drawn; the core is the
 * lattice vertices deeper than 1 cm inside the closed surface.
 * --bunny-mesh tetgen keeps the shipped mesh (its core measured from its
 * own boundary, which is that surface). */
static int build_bunny(demo_scene *s, const demo_options *o, const char *prog)
{
    static const lattice_body bunny = {"bunny", "bunny_closed_3485v.off", "bunny_stanford_original_69k.obj", 1, 1,
                                       0.01, 0.01, 3e4, 0.9, 0.5, 0.0, {0.85f, 0.72f, 0.55f}, 0, 0};
    if (o->bunny_tetgen)
        return build_cored(s, o, prog, "bunny_closed_3485v.tet.node", "bunny_stanford_original_69k.obj", "bunny",
                           bunny.youngs, bunny.depth, bunny.spin, bunny.freq, bunny.bob, bunny.color);
    if (build_lattice_cored(s, o, prog, &bunny)) return -1;
    s->distance *= 0.7;
    return 0;
}

static int build_cube(demo_scene *s, const demo_options *o, const char *prog)
{
    static const int cells[3] = {2, 4, 8};
    static const float colors[3][3] = {{0.9f, 0.45f, 0.2f}, {0.3f, 0.6f, 0.9f}, {0.45f, 0.8f, 0.35f}};
    s->up = 2;
    for (int i = 0; i < 3; i++) {
        tw_mesh *m = demo_cube_mesh(cells[i]);
        if (!m) return fail(prog, "cube", s);
        tw_world_def d = tw_default_world_def();
        d.method = TW_GREEN;
        d.youngs_modulus = 1e5;
        d.dt = 1.0 / 120;
        d.damping_mass = 1.0;
        apply_options(&d, o);
        char name[32];
        snprintf(name, sizeof name, "cube %d^3", cells[i]);
        tw_world *w = demo_wall_world(m, &d);
        if (!w) {
            fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
            tw_mesh_destroy(m);
            demo_scene_destroy(s);
            return -1;
        }
        if (demo_scene_add(s, name, m, w, NULL, NULL, colors[i], prog)) {
            demo_scene_destroy(s);
            return -1;
        }
        s->body[i].offset[0] = 0.6f * (float)i;
    }
    demo_scene_frame(s);
    s->yaw = -M_PI / 2 + 0.35;
    s->pitch = 0.3;
    s->target[2] = 0.0;
    s->distance = 2.0;
    return 0;
}

/* ---- scenes of contact: several bodies in one world (tw_mesh_merge), or
 * one body on the floor; no bone core, everything falls */

/* The closed surface of `file` (scaled by `scale`) as a lattice of `cell` m
 * cubes whose centres are inside it (tw_mesh_graded, one level). */
static tw_mesh *lattice_of(const demo_options *o, const char *file, double scale, double cell, const char *prog)
{
    return demo_lattice_mesh(o, file, scale, cell, 0, prog);
}

tw_mesh *demo_lattice_mesh(const demo_options *o, const char *file, double scale, double cell, int cover,
                           const char *prog)
{
    char *path = data_path(o, file);
    tw_surface *surf = path ? tw_surface_load(path) : NULL;
    free(path);
    if (!surf) {
        fprintf(stderr, "%s: %s: %s\n", prog, file, tw_last_error());
        return NULL;
    }
    for (int i = 0; i < 3 * surf->vertex_count; i++) surf->positions[i] *= scale;
    tw_graded_def gd = tw_default_graded_def();
    gd.fine_size = cell;
    gd.levels = 1;
    gd.cover = cover;
    tw_graded_mesh *g = tw_mesh_graded(surf, &gd);
    tw_surface_destroy(surf);
    if (!g) {
        fprintf(stderr, "%s: %s: lattice: %s\n", prog, file, tw_last_error());
        return NULL;
    }
    tw_mesh *m = g->mesh;
    g->mesh = NULL;
    tw_graded_mesh_destroy(g);
    return m;
}

/* Placement (12 doubles, tw_mesh_merge) that turns m by R and puts its
 * bounding box's centre at (cx, cy) and its lowest point at z0. */
static void place(const tw_mesh *m, const double R[9], double cx, double cy, double z0, double P[12])
{
    const double *X = tw_mesh_positions(m);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < tw_mesh_vertex_count(m); i++)
        for (int r = 0; r < 3; r++) {
            double y = R[3 * r] * X[3 * i] + R[3 * r + 1] * X[3 * i + 1] + R[3 * r + 2] * X[3 * i + 2];
            lo[r] = fmin(lo[r], y);
            hi[r] = fmax(hi[r], y);
        }
    memcpy(P, R, 9 * sizeof(double));
    P[9] = cx - 0.5 * (lo[0] + hi[0]);
    P[10] = cy - 0.5 * (lo[1] + hi[1]);
    P[11] = z0 - lo[2];
}

/* A scene of one world holding `m` (its bodies coloured from `colors`) on
 * the floor z = 0. */
static int add_floor_world(demo_scene *s, const char *name, tw_mesh *m, tw_world_def *d, double *youngs,
                           const float colors[][3], const demo_options *o, const char *prog)
{
    apply_options(d, o);
    if (youngs && o->youngs > 0) { /* --E replaces every body's modulus */
        free(youngs);
        youngs = NULL;
    }
    d->element_youngs = youngs;
    tw_collider_def floor = tw_default_collider_def();
    tw_world *w = demo_bodies_world(m, d, &floor);
    if (!w) {
        fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
        free(youngs);
        tw_mesh_destroy(m);
        demo_scene_destroy(s);
        return -1;
    }
    if (demo_scene_add(s, name, m, w, youngs, NULL, colors[0], prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    demo_body *b = &s->body[0];
    b->colliders[0] = floor;
    b->collider_count = 1;
    b->body_colors = colors;
    s->up = 2;
    demo_scene_frame(s);
    s->has_floor = 1;
    s->floor_level = 0;
    return 0;
}

/* bunny-block: the closed bunny as a lattice of 1 cm cubes (E 1e5 Pa),
 * dropped from 3 cm onto a soft block 30 x 30 x 10 cm of 5 cm cells (E 2e4
 * Pa) on the floor. The bunny's surface is the finer: its vertices hold
 * against the block. */
static int build_bunny_block(demo_scene *s, const demo_options *o, const char *prog)
{
    static const float colors[2][3] = {{0.85f, 0.72f, 0.55f}, {0.35f, 0.6f, 0.85f}};
    tw_mesh *bunny = lattice_of(o, "bunny_closed_3485v.off", 1, 0.01, prog);
    tw_mesh *block = bunny ? tw_mesh_bar(0.3, 0.3, 0.1, 6, 6, 2) : NULL;
    if (!block) {
        tw_mesh_destroy(bunny);
        return fail(prog, "bunny-block", s);
    }
    double R[9], I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, P[24];
    rotation_about(0, M_PI / 2, R); /* the bunny's y up to z */
    place(bunny, R, 0.15, 0.15, 0.13, P);
    place(block, I, 0.15, 0.15, 0, P + 12);
    const tw_mesh *parts[2] = {bunny, block};
    tw_mesh *m = tw_mesh_merge(parts, P, 2);
    tw_mesh_destroy(bunny);
    tw_mesh_destroy(block);
    if (!m) return fail(prog, "bunny-block", s);
    printf("bunny-block: bunny lattice of 1 cm cubes and a 6 x 6 x 2 block: %d vertices, %d tets\n",
           tw_mesh_vertex_count(m), tw_mesh_tet_count(m));
    double E[2] = {1e5, 2e4}, *youngs = malloc(sizeof(double) * (size_t)tw_mesh_tet_count(m));
    if (youngs) tw_fill_by_body(m, E, youngs);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = E[0];
    d.dt = 1.0 / 60;
    if (add_floor_world(s, "bunny-block", m, &d, youngs, colors, o, prog)) return -1;
    s->distance *= 0.8;
    return 0;
}

/* stack: three 20 cm cubes (4 x 4 x 4 cells, E 1e5 Pa), each turned 0.3 rad
 * on the one below, dropped 2 cm onto each other and the floor. */
static int build_stack(demo_scene *s, const demo_options *o, const char *prog)
{
    static const float colors[3][3] = {{0.9f, 0.45f, 0.2f}, {0.3f, 0.6f, 0.9f}, {0.45f, 0.8f, 0.35f}};
    tw_mesh *m = demo_stack_mesh(3, 0.2, 4, 0.3, 0, 0.02);
    if (!m) return fail(prog, "stack", s);
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 1.0 / 60;
    return add_floor_world(s, "stack", m, &d, NULL, colors, o, prog);
}

/* dane-floor: the TOSCA dog as a lattice of 4 cm cubes (E 1e5 Pa, no bone
 * core), turned onto its side and dropped from 5 cm onto the floor, where it
 * lies. */
static int build_dane_floor(demo_scene *s, const demo_options *o, const char *prog)
{
    static const float colors[1][3] = {{0.75f, 0.6f, 0.45f}};
    tw_mesh *dog = lattice_of(o, "dog_tosca_dog0_eyescapped.off", 0.01, 0.04, prog);
    if (!dog) return fail(prog, "dane-floor", s);
    double R[9], P[12];
    rotation_about(1, M_PI / 2, R); /* on its side: its up (z) to x */
    place(dog, R, 0, 0, 0.05, P);
    const tw_mesh *parts[1] = {dog};
    tw_mesh *m = tw_mesh_merge(parts, P, 1);
    tw_mesh_destroy(dog);
    if (!m) return fail(prog, "dane-floor", s);
    printf("dane-floor: lattice of 4 cm cubes: %d vertices, %d tets\n", tw_mesh_vertex_count(m),
           tw_mesh_tet_count(m));
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 1.0 / 60;
    d.damping_stiffness = 0.02;
    return add_floor_world(s, "dane-floor", m, &d, NULL, colors, o, prog);
}

int demo_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    if (!strcmp(name, "bars")) return build_bars(s, o, prog);
    if (!strcmp(name, "tube")) return build_tube(s, o, prog);
    if (!strcmp(name, "bunny")) return build_bunny(s, o, prog);
    if (!strcmp(name, "dane")) return build_dane(s, o, prog);
    if (!strcmp(name, "cube")) return build_cube(s, o, prog);
    if (!strcmp(name, "bunny-block")) return build_bunny_block(s, o, prog);
    if (!strcmp(name, "stack")) return build_stack(s, o, prog);
    if (!strcmp(name, "dane-floor")) return build_dane_floor(s, o, prog);
    if (demo_tree_scene(name)) return demo_tree_scene_build(s, name, o, prog);
    if (demo_mr_scene(name)) return demo_mr_scene_build(s, name, o, prog);
    fprintf(stderr,
            "%s: --scene '%s': unknown scene (choose bars, tube, bunny, dane, cube, bunny-block, stack, "
            "dane-floor, tree-box, tree-bunny, tree-armadillo, tree-liver or mr-liver)\n",
            prog, name);
    return -1;
}

void demo_scene_destroy(demo_scene *s)
{
    for (int i = 0; i < s->body_count; i++) {
        demo_body *b = &s->body[i];
        tw_world_destroy(b->world);
        tw_mesh_destroy(b->mesh);
        free(b->element_youngs);
        tw_embedding_destroy(b->embedding);
        tw_render_surface_destroy(b->render);
        if (b->surface) tw_surface_destroy(b->surface);
        free(b->faces);
        free(b->core);
        tw_front_destroy(b->front);
        tw_multires_destroy(b->mr);
        tw_tetra_tree_destroy(b->tree);
        free(b->tree_pinned);
        free(b->tree_force);
        free(b->tree_youngs);
        free(b->tree_x);
    }
    memset(s, 0, sizeof *s);
}

/* --------------------------------------------------------------- running */

void demo_scene_drive(demo_scene *s, double t)
{
    for (int i = 0; i < s->body_count; i++) {
        demo_body *b = &s->body[i];
        if (!b->core) continue;
        double phase = sin(2 * M_PI * b->spin_frequency * t);
        double target = b->core_held ? b->core_angle : b->spin_amplitude * phase;
        double elapsed = t >= b->core_drive_time ? t - b->core_drive_time : t; /* a new world starts at 0 */
        double step = DEMO_CORE_MAX_SPEED * elapsed;
        b->core_driven += fmin(fmax(target - b->core_driven, -step), step);
        b->core_drive_time = t;
        double R[9], tr[3] = {0, 0, 0};
        rotation_about(s->up, b->core_driven, R);
        if (!b->core_held) tr[s->up] = b->bob_amplitude * sin(2 * M_PI * b->spin_frequency * 2 * t);
        tw_world_drive_group(b->world, b->core, R, tr, b->core_center);
    }
}

tw_status demo_scene_step(demo_scene *s, int *cg_iterations)
{
    *cg_iterations = 0;
    for (int i = 0; i < s->body_count; i++) {
        demo_body *b = &s->body[i];
        if (b->display_only) continue;
        if (b->mr) {
            int cg = 0;
            tw_status rc = demo_mr_step(s, b, &cg);
            if (rc != TW_OK) return rc;
            continue;
        }
        if (b->front) {
            tw_front_stats fs;
            tw_status rc = tw_front_step(b->front, &fs);
            if (rc != TW_OK) return rc;
            *cg_iterations += fs.cg_iterations;
            demo_tree_sync(b);
            continue;
        }
        tw_step_stats st;
        tw_status rc = tw_world_step(b->world, &st);
        if (rc != TW_OK) return rc;
        *cg_iterations += st.cg_iterations;
    }
    return TW_OK;
}

void demo_scene_reset(demo_scene *s)
{
    for (int i = 0; i < s->body_count; i++) {
        if (s->body[i].mr) {
            printf("%s: a multiresolution body is not reset (rebuild the scene)\n", s->body[i].name);
            continue;
        }
        if (s->body[i].front && demo_tree_reset(&s->body[i]) != TW_OK)
            fprintf(stderr, "%s: reset: %s\n", s->body[i].name, tw_last_error());
        tw_world_reset(s->body[i].world);
        s->body[i].core_angle = 0; /* a held core goes back to rest, still held */
        s->body[i].core_driven = 0;
        s->body[i].core_drive_time = 0;
    }
    demo_scene_drive(s, 0);
}

int demo_scene_set_core_angle(demo_scene *s, int body, double radians)
{
    if (body < 0 || body >= s->body_count || !s->body[body].core) return -1;
    s->body[body].core_held = 1;
    s->body[body].core_angle = radians;
    return 0;
}

void demo_scene_spin_cores(demo_scene *s)
{
    for (int i = 0; i < s->body_count; i++) {
        s->body[i].core_held = 0;
        s->body[i].core_angle = 0;
    }
}

int demo_scene_core_body(const demo_scene *s)
{
    for (int i = 0; i < s->body_count; i++)
        if (s->body[i].core) return i;
    return -1;
}

tw_status demo_body_rebuild(demo_body *b, const tw_world_def *def)
{
    if (b->mr || b->display_only)
        return tw_fail(TW_ERR_UNSUPPORTED, "%s: a multiresolution body keeps its material and gravity", b->name);
    if (b->front) /* the tree's material is estimated once; its front keeps its def */
        return tw_fail(TW_ERR_UNSUPPORTED, "%s: a tetra tree body keeps its material and gravity", b->name);
    int nv = tw_mesh_vertex_count(b->mesh);
    tw_real *x = malloc(sizeof(tw_real) * 3 * (size_t)nv), *v = malloc(sizeof(tw_real) * 3 * (size_t)nv);
    unsigned char *c = malloc((size_t)nv);
    if (!x || !v || !c) {
        free(x);
        free(v);
        free(c);
        return TW_ERR_NOMEM;
    }
    memcpy(x, tw_world_positions(b->world), sizeof(tw_real) * 3 * (size_t)nv);
    memcpy(v, tw_world_velocities(b->world), sizeof(tw_real) * 3 * (size_t)nv);
    for (int i = 0; i < nv; i++) c[i] = (unsigned char)tw_world_get_constraint(b->world, i);
    tw_world *w = tw_world_create(b->mesh, def);
    tw_status rc = w ? TW_OK : TW_ERR_INVALID;
    if (w) {
        /* pinned vertices hold the position they have when pinned: the rest
         * position first (as at creation), then the state is restored */
        for (int i = 0; i < nv; i++)
            if (c[i] == TW_PINNED) tw_world_set_constraint(w, i, TW_PINNED);
        if (b->core) tw_world_set_kinematic_group(w, b->core);
        for (int i = 0; i < b->collider_count; i++) tw_world_add_collider(w, &b->colliders[i]);
        tw_world_set_positions(w, x);
        tw_world_set_velocities(w, v);
        tw_world_destroy(b->world);
        b->world = w;
        b->def = *def;
    }
    free(x);
    free(v);
    free(c);
    return rc;
}

/* ------------------------------------------------------------- rendering */

int demo_body_render_vertices(const demo_body *b)
{
    return b->embedding ? tw_embedding_vertex_count(b->embedding) : tw_mesh_vertex_count(b->mesh);
}

int demo_body_render_triangles(const demo_body *b, const int **tris)
{
    if (b->embedding) {
        *tris = tw_embedding_triangles(b->embedding);
        return tw_embedding_triangle_count(b->embedding);
    }
    *tris = b->faces;
    return b->face_count;
}

void demo_body_render_update(const demo_body *b, float *pos, float *nrm)
{
    tw_render_surface_update(b->render, tw_world_positions(b->world), pos, nrm);
}

void demo_body_render_colors(const demo_body *b, float *col)
{
    if (b->mr && b->color_mode == DEMO_COLOR_LEVELS) {
        demo_mr_render_colors(b, col);
        return;
    }
    if (b->front && b->color_mode != DEMO_COLOR_BODY) {
        demo_tree_render_colors(b, col);
        return;
    }
    static const float pinned[3] = {0.95f, 0.85f, 0.2f}, kinematic[3] = {0.6f, 0.3f, 0.85f};
    int n = demo_body_render_vertices(b);
    const int *idx = b->embedding ? tw_embedding_indices(b->embedding) : NULL;
    for (int i = 0; i < n; i++) {
        const float *c = b->color;
        if (idx) { /* an embedded vertex whose whole tet is constrained */
            int all = 1, kin = 0;
            for (int k = 0; k < 4; k++) {
                tw_constraint ck = tw_world_get_constraint(b->world, idx[4 * i + k]);
                all &= ck != TW_FREE;
                kin |= ck == TW_KINEMATIC;
            }
            if (all) c = kin ? kinematic : pinned;
        } else {
            tw_constraint ck = tw_world_get_constraint(b->world, i);
            if (b->body_colors) c = b->body_colors[tw_mesh_vertex_body(b->mesh, i)];
            if (ck == TW_PINNED) c = pinned;
            if (ck == TW_KINEMATIC) c = kinematic;
        }
        for (int k = 0; k < 3; k++) col[3 * i + k] = c[k];
    }
}
