/* The tetra front (Imai et al. 2013, sec. 3.2 and 5): a cut through the
 * tetra tree that is simulated, refined where a tet's strain leaves its
 * valid range and coarsened where a parent fits again.
 *
 * The state lives on the finest level's vertex array (a vertex keeps its
 * index on every finer level, so every level's vertices are in it). The
 * front's unknowns are its free vertices: the corners of active tets that do
 * not lie on an edge or face of a coarser active tet. A T-junction vertex,
 * one that does, is not an unknown: it is the linear interpolation of that
 * tet's corners, reached through the hierarchy's P (each vertex the midpoint
 * of its parent edge, coarsest first), so x = Q x_free with Q exact on the
 * coarse tet's linear field and the system is Q^T A Q: no crack and no
 * post-step fix-up.
 *
 * Each step: the front is updated (coarse-to-fine by eq. 6, fine-to-coarse
 * by the three conditions of sec. 5.2 with a hysteresis), the reduced system
 * is rebuilt when the front changed, and one implicit Euler step with
 * corotated forces (R K_e (R^T x - X), K_e = V B^T C B with the tree's C
 * per tet) is solved by PCG (block-Jacobi, or the engine's multigrid on a
 * large front: tw_front_def.precond; a multigrid is kept across switches
 * through the tree's interpolation while it serves, tetra_front.c). */
#ifndef TW_TETRA_FRONT_H
#define TW_TETRA_FRONT_H
#include "tetra_front_maps.h"
#include "tetra_tree.h"

/* Tests: forces the front to exactly the tets with active[id] != 0 (a
 * valid cut of the tree) and rebuilds its system. */
tw_status tw_front_set(tw_front *f, const unsigned char *active);
/* Tests: the largest distance of a T-junction vertex from the linear
 * interpolation of the coarse tet it lies on, m. */
double tw_front_tjunction_error(const tw_front *f);
/* External forces, N, 3 per finest vertex (copied; NULL removes them),
 * constant until set again; a vertex outside the front passes its force to
 * the front through the interpolation that places it (Q^T f). */
tw_status tw_front_set_forces(tw_front *f, const double *force);
/* The state (3 per finest vertex, positions and velocities; read-write for
 * tests that impose a deformation). */
double *tw_front_x(tw_front *f);
double *tw_front_v(tw_front *f);
/* The last step's cost split, CPU ms of the calling thread's process
 * (benchmarks): the switch decisions, the energy check around a switch, the
 * front structures' rebuild, the element pass and assembly, the
 * preconditioner's set-up (a new hierarchy) and update, the PCG. */
enum { TW_FRONT_MS_DECIDE, TW_FRONT_MS_ENERGY, TW_FRONT_MS_REBUILD, TW_FRONT_MS_ASSEMBLE, TW_FRONT_MS_SETUP,
       TW_FRONT_MS_UPDATE, TW_FRONT_MS_PCG, TW_FRONT_MS_N };
void tw_front_profile(const tw_front *f, double ms[TW_FRONT_MS_N]);
/* Tests and benchmarks: the last step's preconditioner, 0 block-Jacobi, 1
 * the multigrid set up for its front, 2 an earlier front's multigrid kept
 * across a switch (lagged); lag 0 sets the multigrid up anew after every
 * switch instead (the default is 1). */
int tw_front_mg_kind(const tw_front *f);
void tw_front_set_mg_lag(tw_front *f, int lag);

/* What the last rebuild changed, as a device front's pattern update reads it
 * (kernels/thrust_front.h): per finest vertex its reduced index (-1: not
 * free) and whether its row was redone, and the slots (free vertex ids,
 * TW_FRONT_SLOTS per tet, -1 past its count) of every active tet with a slot
 * in a redone row. The arrays are the front's (rid, redo) or malloc'd
 * (slot: tw_front_switch_free), valid until the next rebuild. */
#define TW_FRONT_SLOTS 12
typedef struct tw_front_switch {
    int nv, n;
    const int *rid;
    const unsigned char *redo;
    int ntet;
    int *slot;
} tw_front_switch;
tw_status tw_front_switch_record(const tw_front *f, tw_front_switch *rec);
void tw_front_switch_free(tw_front_switch *rec);
/* Tests: the CPU front's reduced BSR pattern (the front's arrays). */
void tw_front_pattern(const tw_front *f, int *n, int *nnzb, const int **row_ptr, const int **col, const int **diag);
/* Tests: the device front's pattern copied to malloc'd arrays;
 * TW_ERR_INVALID on the CPU backend. */
tw_status tw_front_device_pattern(const tw_front *f, int *n, int *nnzb, int **row_ptr, int **col, int **diag);
/* The last step's solve ran on the device (1) or the CPU (0). */
int tw_front_on_device(const tw_front *f);

/* The current front's gather maps (tetra_front_maps.h), malloc'd
 * (tw_front_maps_free): what the device front uploads at a rebuild. */
tw_status tw_front_maps_build(const tw_front *f, tw_front_maps *m);
/* The tree's per-tet gradients (12 per tree tet) and element stiffness
 * (144), the element pass's constant data (the front's arrays). */
void tw_front_element_data(const tw_front *f, const double **g, const double **Ke);
/* Tests: the host's element pass and assembly at the current state, as a
 * step's (no switch, no solve, the state unchanged), into the arrays
 * tw_front_system shows: A's values (the pattern's order), the right-hand
 * side and the PCG's start (3 per free vertex) and the reduced external
 * forces per finest vertex (NULL: none). */
tw_status tw_front_assemble(tw_front *f);
void tw_front_system(const tw_front *f, const tw_real **val, const tw_real **rhs, const tw_real **vr,
                     const double **fq);
/* Tests: the device front's element pass and assembly at the current state
 * (the device's own, no solve), copied to val (9 nnzb), rhs and vr (3 n);
 * TW_ERR_INVALID on the CPU backend. */
tw_status tw_front_device_system(tw_front *f, tw_real *val, tw_real *rhs, tw_real *vr);
#endif
