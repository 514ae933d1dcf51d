/* The papers' scenes, built once and used by the viewer, the tests and the
 * benchmarks (as Box2D's shared/ scenes feed its samples app and its
 * benchmark alike). No OpenGL: what the viewer draws is computed here
 * (host/render_surface.h) and drawn in interop/.
 *
 * Two levels. The bodies (demo_bar_mesh, demo_bar_def, demo_wall_world,
 * demo_drop_cube_*, ...) are one mesh, its material and its pins or floor:
 * a test or a benchmark takes them and sets its own time step. The scenes
 * (demo_scene_build) are a few such bodies, each its own mesh and world with
 * a colour and a render offset, plus a camera and an optional floor:
 *
 *   bars   three bars fixed to a wall under gravity: linear (red),
 *          warp-vertex (blue), green (green) (Müller 2002 fig. 7)
 *   tube   a tube dropped from 50 cm onto a floor (Müller fig. 8)
 *   bunny  the closed bunny with a rigid bone core turned about y, the
 *          69k-triangle Stanford scan embedded as the visible surface (fig. 9)
 *   dane   the long-legged TOSCA dog (no Great Dane mesh exists): a coarse
 *          lattice of 4 cm cubes covering its 50k-triangle surface, which is
 *          embedded and drawn (Müller §4.3); a bone core turned about the
 *          vertical, the soft skin lagging behind it (fig. 10)
 *   cube   a cube fixed on one side under gravity at three resolutions
 *          (Debunne 2001)
 *   bunny-block  the bunny (a lattice of 1 cm cubes) dropped on a soft block,
 *          both in one world (tw_mesh_merge): body contact
 *   stack  three cubes dropped onto each other and the floor, one world
 *   dane-floor   the dog (a lattice of 4 cm cubes, no bone core) turned on
 *          its side and dropped onto the floor, where it lies
 *
 * and the adaptive tetra tree's scenes (Imai et al. 2013, tree_scenes.c),
 * each one body stepped by its front (tw_front) instead of a world:
 *
 *   tree-box        the box of sec. 6 (figs. 6-8) fixed on the wall x = 0
 *   tree-bunny      fig. 10: the bunny standing, stiff feet, soft ears
 *   tree-armadillo  figs. 11-12: stiffness varying left to right, equal
 *                   forces pulling both hands outward, no gravity
 *   tree-liver      fig. 13: the liver hanging under gravity, a synthetic
 *                   vessel tree (marked as region 2) ten times stiffer
 *
 * and Debunne et al. 2001's multiresolution (mr_scene.c):
 *
 *   mr-liver        the liver on three non-nested levels (181, 705 and 2,207
 *                   nodes) with a sphere pressing into it: scripted, or the
 *                   viewer's tool (key t) moved by the mouse
 *
 * A body's world can be rebuilt with a changed def (Young's modulus, gravity)
 * keeping positions, velocities, pins, the bone core and the colliders. */
#ifndef TW_DEMO_SCENES_H
#define TW_DEMO_SCENES_H

#include "tetwarp.h"

/* ---- the bodies */

/* Müller 2002 fig. 6's bar: 1 m x 10 cm x 10 cm, 20 x 2 x 2 cells (480
 * tets, 189 vertices), lying along +x from x = 0. NULL on failure
 * (tw_last_error). */
#define DEMO_BAR_LENGTH 1.0
tw_mesh *demo_bar_mesh(void);
/* The bar's material: E 1 MPa, soft enough to bend strongly under gravity
 * (linear theory's tip deflection is 1.5 m), the library's density, Poisson
 * ratio and gravity (-z); the library's time step and damping, which a
 * scene or a test sets for itself. */
tw_world_def demo_bar_def(tw_method method);
/* A world for m from d with the vertices at x = 0 pinned (the wall the bar
 * and the cubes hang from). NULL on failure (tw_last_error), also when no
 * vertex lies at x = 0. */
tw_world *demo_wall_world(const tw_mesh *m, const tw_world_def *d);

/* The cube dropped onto the floor (contact, explicit vs implicit): 0.2 m,
 * 4 x 4 x 4 cells (384 tets), its bottom at z = 0. */
#define DEMO_DROP_CUBE_EDGE 0.2
tw_mesh *demo_drop_cube_mesh(void);
/* A world for m from d, every vertex raised by z0 (m), with `floor` added as
 * a collider when not NULL (tw_default_collider_def() is the plane z = 0).
 * NULL on failure (tw_last_error). */
tw_world *demo_drop_cube_world(const tw_mesh *m, const tw_world_def *d, double z0, const tw_collider_def *floor);

/* Müller fig. 8's tube: radii 5 and 8 cm, 60 cm long, 2 x 16 x 12 cells,
 * centred on x = 0, tilted 15 degrees about y, its lowest point 0.5 m above
 * the floor z = 0. NULL on failure. */
tw_mesh *demo_tube_mesh(void);
/* Debunne 2001's cube: 0.3 m, cells^3 cells. NULL on failure. */
tw_mesh *demo_cube_mesh(int cells);

/* Several bodies in one world (tw_mesh_merge; body contact). A stack of
 * `cubes` cubes of edge `edge` m (cells^3 cells each) on the floor z = 0,
 * each turned `twist` radians about z and shifted `shift` m along x and y
 * against the one below, and `gap` m above it (the lowest `gap` m above the
 * floor). NULL on failure. */
tw_mesh *demo_stack_mesh(int cubes, double edge, int cells, double twist, double shift, double gap);
/* A world for a merged mesh (any number of bodies) from d with `floor`
 * added when not NULL; NULL on failure (tw_last_error). */
tw_world *demo_bodies_world(const tw_mesh *m, const tw_world_def *d, const tw_collider_def *floor);

/* ---- the scenes */

#define DEMO_MAX_BODIES 4

typedef struct demo_body {
    char name[32];
    tw_mesh *mesh;            /* owned */
    tw_world *world;          /* owned */
    tw_world_def def;         /* what the world was made from */
    double *element_youngs;   /* owned or NULL (def.element_youngs points here) */
    tw_surface *surface;      /* owned render surface, or NULL */
    tw_embedding *embedding;  /* NULL: the mesh's boundary is rendered */
    struct tw_render_surface *render; /* owned: what is drawn and how it follows the mesh (host/render_surface.h) */
    int *faces;               /* boundary faces (3 per face), owned */
    int face_count;
    float color[3];
    float offset[3];          /* render offset, m */
    unsigned char *core;      /* kinematic bone core mask (per vertex) or NULL */
    int core_count;
    double core_center[3];    /* m */
    double spin_amplitude;    /* rad: core angle A sin(2 pi f t) about the up axis */
    double spin_frequency;    /* Hz */
    double bob_amplitude;     /* m: core moves A sin(2 pi f t) along the up axis */
    int core_held;            /* 1: the core is held at core_angle (the user turns it), not spun */
    double core_angle;        /* rad about the up axis, when held */
    double core_driven, core_drive_time; /* rad and s: the angle last driven, and when */
    int collider_count;
    tw_collider_def colliders[4];
    const float (*body_colors)[3]; /* a merged mesh (tw_mesh_merge): the colour of each of its bodies, or NULL */
    /* an adaptive tetra tree body (tree_scenes.c): the front steps it and
     * its world, on the finest level's mesh, only holds the positions the
     * viewer draws and picks */
    tw_tetra_tree *tree;      /* owned, or NULL */
    tw_front *front;          /* owned, or NULL */
    tw_front_def front_def;
    unsigned char *tree_pinned; /* per finest vertex, owned */
    double *tree_force;       /* external forces per finest vertex (3 each, N) or NULL, owned */
    double *tree_youngs;      /* per finest tet, Pa, owned */
    double *tree_x;           /* scratch: 3 per finest vertex */
    int color_mode;           /* DEMO_COLOR_* */
    /* a multiresolution body (mr_scene.c): stepped a display frame at a
     * time by tw_multires_frame; its world, on the finest level's mesh,
     * holds the positions drawn. A sphere collider in that world (the
     * viewer's tool) becomes the simulation's tool. */
    struct tw_multires *mr;   /* owned, or NULL */
    int mr_tool_body;         /* the body drawn as the scripted tool, or -1 */
    double mr_tool_radius;    /* m */
    int display_only;         /* 1: never stepped (drawn where another body puts it) */
} demo_body;

/* What demo_body_render_colors paints: the body's colour, the level of the
 * front's tet holding each vertex (a tree body; level 0 blue, 1 green, 2
 * red, 3 yellow, finer purple), or Young's modulus (a tree body; red stiff
 * to yellow soft, as Imai et al.'s figures, log scale). */
enum { DEMO_COLOR_BODY = 0, DEMO_COLOR_LEVELS, DEMO_COLOR_STIFFNESS };

typedef struct demo_scene {
    char name[32];
    int body_count;
    demo_body body[DEMO_MAX_BODIES];
    int up;                   /* 1: y up, 2: z up */
    double target[3], distance, yaw, pitch; /* initial camera, m and radians */
    int has_floor;
    double floor_level;       /* along `up`, m */
    double floor_center[3], floor_half; /* m */
    int print_volumes;        /* print each body's volume change */
} demo_scene;

/* Scene options the command line can override (0 / -1: the scene's own). */
typedef struct demo_options {
    const char *data_dir;   /* folder holding meshes/ */
    double youngs;            /* Pa, 0: the scene's */
    double dt;                /* s, 0: the scene's */
    int method;               /* -1: the scene's */
    const char *render_surface; /* bunny: replaces the Stanford scan; NULL: default */
    int bunny_tetgen;           /* bunny: the shipped TetGen mesh instead of the covering lattice */
    tw_backend backend;       /* every body's world (default cpu) */
} demo_options;
demo_options demo_default_options(void);

/* The adaptive tetra tree's scenes (tree_scenes.c): 1 when `name` is one
 * of them (tree-box, tree-bunny, tree-bunny-soft: the bunny with the ears'
 * E everywhere, tree-armadillo, tree-liver, tree-liver-plain: without the
 * vessels), and its builder. */
int demo_tree_scene(const char *name);
int demo_tree_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog);
/* The body's tet level (0 coarsest) per finest vertex: the finest level of
 * the front's tets holding it. levels: nv ints. */
void demo_tree_vertex_levels(const demo_body *b, int *levels);
/* The armadillo's hands (tree-armadillo): finest vertices within this
 * distance (m) of the extreme vertex along -x and +x. */
#define DEMO_ARMADILLO_HAND_RADIUS 0.2
/* The closed surface of `file` in data/meshes (scaled by `scale`) as a
 * lattice of `cell` m cubes (tw_mesh_graded, one level); cover: also the
 * cells the surface passes near. NULL on failure (message printed). */
tw_mesh *demo_lattice_mesh(const demo_options *o, const char *file, double scale, double cell, int cover,
                           const char *prog);

/* Debunne et al. 2001's multiresolution scene (mr_scene.c): mr-liver. */
int demo_mr_scene(const char *name);
int demo_mr_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog);

/* Names of the scenes, NULL-terminated. */
extern const char *const demo_scene_names[];

/* Builds scene `name`. On failure prints "PROG: message" (the loader's or the
 * embedding's message included), frees what it made and returns -1. */
int demo_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog);

/* Adds a body to s from a mesh and world already made (ownership passes to
 * the scene), optionally embedding a render surface; -1 on failure (message
 * printed, mesh and world destroyed). */
int demo_scene_add(demo_scene *s, const char *name, tw_mesh *mesh, tw_world *world,
                   double *element_youngs, const char *render_surface, const float color[3],
                   const char *prog);
/* Camera and floor that frame every body's rest state. */
void demo_scene_frame(demo_scene *s);

void demo_scene_destroy(demo_scene *s);

/* Moves the bone cores to their targets at time t (s): the timed spin and
 * bob, or the held angle (demo_scene_set_core_angle), turning at most
 * DEMO_CORE_MAX_SPEED toward it (a held angle far away is reached in a
 * ramp, not in one step that would turn the skin inside out). */
#define DEMO_CORE_MAX_SPEED 4.0 /* rad/s; the timed spins stay below it */
void demo_scene_drive(demo_scene *s, double t);
/* One step of every body; cg_iterations summed. Returns TW_OK or the first error. */
tw_status demo_scene_step(demo_scene *s, int *cg_iterations);
void demo_scene_reset(demo_scene *s);

/* Holds body `body`'s bone core at `radians` about the scene's up axis
 * through the core's rest centre, instead of the timed spin: the next steps
 * bring the core there and the skin follows dynamically. Returns -1 when
 * the body does not exist or has no core. */
int demo_scene_set_core_angle(demo_scene *s, int body, double radians);
/* Back to the timed spin for every core (the held angles are dropped). */
void demo_scene_spin_cores(demo_scene *s);
/* The first body with a bone core, or -1. */
int demo_scene_core_body(const demo_scene *s);

/* Recreates body b's world from def, keeping positions, velocities, pins,
 * the core and the colliders. */
tw_status demo_body_rebuild(demo_body *b, const tw_world_def *def);

/* Surface for rendering: vertex count and triangles (3 per triangle). */
int demo_body_render_vertices(const demo_body *b);
int demo_body_render_triangles(const demo_body *b, const int **tris);
/* Current render positions and unit normals (3 floats per render vertex). */
void demo_body_render_update(const demo_body *b, float *pos, float *nrm);
/* Colours per render vertex: the body's colour, pinned vertices yellow,
 * kinematic (bone core) vertices purple. */
void demo_body_render_colors(const demo_body *b, float *col);

#endif
