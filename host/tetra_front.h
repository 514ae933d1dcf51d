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
 * per tet) is solved by block-Jacobi PCG. */
#ifndef TW_TETRA_FRONT_H
#define TW_TETRA_FRONT_H
#include "tetra_tree.h"

typedef struct tw_front_def {
    double dt;                  /* s */
    double gravity[3];          /* m/s^2 */
    double damping_mass;        /* Rayleigh alpha, 1/s */
    double damping_stiffness;   /* Rayleigh beta, s */
    double cg_tolerance;        /* relative residual */
    int cg_max_iterations;
    int adapt;                  /* 1: the front moves; 0: the finest level throughout */
    int start_level;            /* the front's level at the start (adapt), default 0 */
    double coarsen_margin;      /* hysteresis: a parent returns only with every alpha inside this
                                   fraction of its valid range, default 0.5 */
    double t3;                  /* sec. 5.2 condition 3: every child's strain within t3 (max norm,
                                   strain units) of the parent's, default 1e-3 */
    int hold_steps;             /* a tet refined less than this many steps ago is not coarsened, default 10 */
    int threads;                /* OpenMP threads, 0: the default */
} tw_front_def;
tw_front_def tw_default_front_def(void);

typedef struct tw_front_stats {
    int active_tets, free_vertices, hanging_vertices;
    int refined, coarsened;     /* tets switched this step (parents refined, parents restored) */
    int rebuilt;                /* 1 when the reduced system's pattern was rebuilt */
    int cg_iterations;
    double cg_residual;
    double energy_jump;         /* J: total energy after the step's switch minus before (0 without one) */
    double ms_front, ms_system, ms_solve; /* the step's parts, ms */
} tw_front_stats;

typedef struct tw_front tw_front;

/* A front on tree t (which must outlive it), at rest, with vertices whose
 * pinned[v] (finest level, may be NULL) is non-zero held fixed. */
tw_front *tw_front_create(const tw_tetra_tree *t, const unsigned char *pinned, const tw_front_def *def);
void tw_front_free(tw_front *f);

/* One step: front update, then implicit Euler. TW_ERR_DIVERGED on NaN. */
tw_status tw_front_step(tw_front *f, tw_front_stats *stats);

int tw_front_active_tets(const tw_front *f);
/* 1 where tree tet id is in the front. */
int tw_front_is_active(const tw_front *f, int id);

/* Every finest vertex's position (3 per vertex): the front's where it is a
 * vertex of it, else the linear interpolation in the active tet holding it. */
void tw_front_positions(const tw_front *f, double *x);

/* Total energy: kinetic + elastic (corotated, at the current rotations) +
 * gravity's potential, J. */
double tw_front_energy(tw_front *f);

/* The strain coordinates alpha (eq. 2) of tree tet id at the current
 * positions: the Voigt components of the stretch U - I, F = R U, engineering
 * shears; its corners must be vertices of the front or interpolated. */
void tw_front_alpha(const tw_front *f, int id, double alpha[6]);

/* Tests: forces the front to exactly the tets with active[id] != 0 (a
 * valid cut of the tree) and rebuilds its system. */
tw_status tw_front_set(tw_front *f, const unsigned char *active);
/* Tests: the largest distance of a T-junction vertex from the linear
 * interpolation of the coarse tet it lies on, m. */
double tw_front_tjunction_error(const tw_front *f);
/* The state (3 per finest vertex, positions and velocities; read-write for
 * tests that impose a deformation). */
double *tw_front_x(tw_front *f);
double *tw_front_v(tw_front *f);
#endif
