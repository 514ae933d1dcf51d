/* Scenes that several test files build, defined once here (a private
 * header: it reaches host/tetra_tree.h, so only the tests built in tests/
 * see it). */
#ifndef TW_TEST_SCENES_H
#define TW_TEST_SCENES_H
#include "multires.h"
#include "tetra_front.h"
#include "tetra_tree.h"
#include "tetwarp.h"

/* T2 of the sagging box's tree: low enough that the box refines and
 * coarsens within 100 steps. */
#define TW_TEST_BOX_T2 3e-6

/* The sagging box of the tetra-front tests: a 0.3 x 0.1 x 0.1 m bar of 3 x
 * 1 x 1 base cells, 3 levels, T2 t2 (TW_TEST_BOX_T2 for the box that
 * switches), the rest of tw_default_tetra_tree_def; *pin (the caller frees
 * it): 1 on the finest level's vertices at x = 0. NULL (tw_last_error) on
 * failure. */
tw_tetra_tree *tw_test_box_tree(double t2, unsigned char **pin);

/* A unit cube of 6 tets refined twice (3 levels, 384 finest tets),
 * homogeneous, T1 t1, the rest of tw_default_tetra_tree_def. NULL
 * (tw_last_error) on failure. */
tw_tetra_tree *tw_test_cube_tree(double t1);

/* The sagging box's tree (tw_test_box_tree at TW_TEST_BOX_T2), its pins
 * and a front on them. */
typedef struct tw_test_box_front {
    tw_tetra_tree *t;
    unsigned char *pin;
    tw_front *f;
} tw_test_box_front;
/* Makes *b, the front of settings d (tw_default_front_def where NULL);
 * returns b->f, NULL (tw_last_error) when the tree or the front fails, b->t
 * then NULL when the tree did. tw_test_box_front_free frees what was made,
 * either way. */
tw_front *tw_test_box_front_create(tw_test_box_front *b, const tw_front_def *d);
void tw_test_box_front_free(tw_test_box_front *b);

/* Steps f 100 times and calls check(f, what, ctx) at the start, after every
 * switch (a step whose front was rebuilt) and at every tenth step between;
 * `what` names the moment ("start", "step K", "step K (a switch)"). Returns
 * how many checks passed, all of them, or -1 at the first check that
 * returns 0 or step that fails (the step's error on stderr). *switches: the
 * switch steps; *hanging: the most T-junction vertices after a step. */
int tw_test_front_checkpoints(tw_front *f, int (*check)(tw_front *f, const char *what, void *ctx), void *ctx,
                              int *switches, int *hanging);

/* Sets f's front (tw_front_set) to every tet of level `level` of t, the
 * tree f was made from. */
tw_status tw_test_front_set_level(tw_front *f, const tw_tetra_tree *t, int level);
/* Sets f's front (tw_front_set) to three levels of t, a tree of 3 levels f
 * was made from: every base tet but tet 0, the children of tet 0 but its
 * first, and that first child's eight children (T-junction vertices whose
 * expansions nest). */
tw_status tw_test_front_set_mixed(tw_front *f, const tw_tetra_tree *t);

/* Max over the hanging vertices of g of |x - the weighted average of its
 * constrainers| in w's positions, m; NaN where a position is NaN. */
double tw_test_hanging_error(const tw_world *w, const tw_graded_mesh *g);
/* A deterministic pseudo-random number in [-a, a]; *state is the
 * generator's state (a linear congruential one), advanced by one. */
double tw_test_jitter(unsigned *state, double a);

/* A cube of side `edge` m as an n^3 tw_mesh_bar, its interior vertices
 * moved by up to amount * edge / n along each axis (tw_test_jitter from
 * `seed`), then the whole shifted by `shift` m along x. NULL (tw_last_error)
 * on failure. */
tw_mesh *tw_test_jittered_cube(double edge, int n, double amount, double shift, unsigned seed);

/* The unit icosphere: the icosahedron with each triangle split in 4,
 * `levels` times (tw_surface_destroy frees it). */
tw_surface *tw_test_icosphere(int levels);
/* The unit icosphere of 3 subdivisions graded to 0.1 m on `levels` levels
 * (tw_mesh_graded, the rest of tw_default_graded_def; 1: the uniform
 * lattice). NULL (tw_last_error on stderr) on failure. */
tw_graded_mesh *tw_test_graded_sphere(int levels);

/* The multiresolution tests' levels: three cubes of 0.1 m (coarsest
 * first), level l of n[l]^3 cells with its interior vertices moved by up to
 * amount[l] cells (tw_test_jittered_cube, seed 777), as non-nested levels
 * (tw_multires_create takes them over). NULL (tw_last_error) on failure. */
tw_hierarchy *tw_test_mr_cubes(const int n[3], const double amount[3]);
/* A sphere tool of `radius` m over (x, y) of those cubes' top face (z =
 * 0.1 m), its lowest point `depth` m below the face (negative: above it),
 * moved dz m along z over move_time s and back. */
tw_mr_tool tw_test_mr_tool(double radius, double x, double y, double depth, double dz, double move_time);

/* The implicit paths a graded sphere dropped on a floor runs through
 * (the reduced system under contact): corot-element with block-Jacobi and
 * with multigrid, BDF2, green with two Newton iterations, warp-vertex's
 * exact system by BiCGStab. */
typedef struct tw_test_graded_path {
    tw_method method;
    tw_integrator integrator;
    int bicgstab;
    tw_preconditioner precond;
} tw_test_graded_path;
#define TW_TEST_GRADED_PATHS 5
extern const tw_test_graded_path tw_test_graded_paths[TW_TEST_GRADED_PATHS];
/* The drop's world def on path p: E 1e6 Pa, gravity 9.81 m/s^2 down z,
 * dt 0.01 s, the rest of tw_default_world_def. */
tw_world_def tw_test_graded_drop_def(const tw_test_graded_path *p);

/* The shipped bunny's surface (bunny_closed_3485v.off) graded to fine_size
 * m on `levels` levels (tw_mesh_graded, the rest of tw_default_graded_def).
 * NULL (tw_last_error) on failure. */
tw_graded_mesh *tw_test_graded_bunny(double fine_size, int levels);

/* The shipped bunny (bunny_closed_3485v.tet) into *bunny, and, returned,
 * the lattice of 8 mm cubes that covers its surface (bunny_closed_3485v.off;
 * demos/scenes.h's demo_lattice_mesh): the bunny scene's pair of meshes at a
 * finer cell. NULL on failure (*bunny then NULL). */
tw_mesh *tw_test_bunny_lattice(tw_mesh **bunny);
/* Müller's bar (demos/scenes.h's demo_bar_def for method) on backend, at
 * dt 10 ms with stiffness damping 0.02: the bar the GPU tests step on both
 * backends. */
tw_world_def tw_test_bar_def(tw_method method, tw_backend backend);

/* A world of def d on m (the 0.2 m block of the slope tests) over a plane
 * tilted by theta about y (normal (-sin, 0, cos)) with friction mu, block
 * and plane moved by off along x: the block placed on the plane (its rest
 * positions turned by -theta about y, its bottom face z = 0 on it), or at
 * `at` (not NULL: 3n positions). NULL (tw_last_error) on failure. */
tw_world *tw_test_slope_world(const tw_mesh *m, const tw_world_def *d, double theta, double off, double mu,
                              const tw_real *at);

/* Steps w (a world whose state a setter replaced) and f (a world newly
 * created in that state) `steps` times side by side: how many positions and
 * velocities differ in their bits, summed over the steps, plus the steps
 * whose contacts, contact solves or CG iterations differ; the first step
 * that differs is printed. *contacts: f's contacts summed over the steps.
 * -1 when a step fails. */
int tw_test_steps_apart(tw_world *w, tw_world *f, int steps, int *contacts);
#endif
