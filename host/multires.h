/* Space- and time-adaptive multiresolution simulation (Debunne, Desbrun,
 * Cani and Barr 2001, "Dynamic real-time deformations using space and time
 * adaptive sampling", §2-4) on non-nested levels (hierarchy.h).
 *
 * Every level is an independent mesh of the same body with its own
 * positions and velocities. A node is active (it computes the force of its
 * tets and integrates it, §3.2 eq. 8), an interface node (not active, but a
 * neighbour of an active node of its level: it takes its position and
 * velocity from the tet of another level it lies in, §2.3) or inactive.
 * Splitting an active node activates its children on the next finer level
 * (the nodes in its Voronoi region) and deactivates it; merging does the
 * reverse. The quality criterion gamma = |f| / (mu h) (eq. 9, a length:
 * the deviation of the displacement from linear) with gamma_min < gamma_max
 * decides. Each active node steps with frame_dt / 2^i, the largest that
 * keeps under the Courant limit (eq. 10) and the node's velocity change
 * small; all meet at the display frame. A budget of tet evaluations per
 * frame bounds the work: a split that would pass it is refused (§3.4).
 *
 * The normal world (world.h) is untouched by this module: it has its own
 * state, in double, and the CPU only. */
#ifndef TW_MULTIRES_H
#define TW_MULTIRES_H
#include "hierarchy.h"

typedef enum tw_mr_strain {
    TW_MR_GREEN = 0, /* Green strain, St. Venant-Kirchhoff stress (§3.2) */
    TW_MR_CAUCHY = 1 /* the linear (Cauchy) strain of §3.1, for comparison */
} tw_mr_strain;

typedef enum tw_mr_step_limit {
    TW_MR_STEP_STIFFNESS = 0, /* a node's stable step from its rest stiffness and mass: 2/omega
                                 with omega^2 the Gershgorin bound of its block row of K over its
                                 mass. A sliver's nodes take their mass from healthy tets: the
                                 altitude would halve their step many times over */
    TW_MR_STEP_ALTITUDE = 1   /* eq. 10 as written: h / sqrt((lambda + 2 mu) / rho), h the node's
                                 smallest tet altitude (less where its region is lighter) */
} tw_mr_step_limit;

typedef struct tw_multires_def {
    double youngs, poisson, density; /* Pa, -, kg/m^3 */
    double damping_phi, damping_psi; /* visco-elastic stress phi tr(nu) I + 2 psi nu (eq. 4), Pa s */
    double gravity[3];               /* m/s^2 */
    tw_mr_strain strain;
    double frame_dt;       /* display step, s: every node steps frame_dt / 2^i */
    int max_dt_level;      /* the finest step is frame_dt / 2^max_dt_level; 0: what the
                              finest level's Courant limit needs, plus one for speed changes */
    double courant_factor; /* dt <= factor times the step_limit's stable step; in (0, 1] */
    tw_mr_step_limit step_limit;
    int semi_implicit;     /* 1: the filter v *= (I - dt^2/m J)^-1 with the rest node Jacobian
                              (eq. 11). The paper doubles the step with it; the step is left to
                              courant_factor here: at 1.0 with the filter the mixed levels of the
                              liver diverged where the finest level alone did not */
    double speed_change;   /* a node halves its step for the next frame when one step's
                              velocity change times its dt passes this fraction of h; 0: off */
    double gamma_min, gamma_max; /* merge below, split above, m (0 < min < max) */
    double work_budget;    /* tet evaluations per frame at most; 0: no budget */
    int start_level;       /* the level active at the start */
    int tool_refine;       /* 1: nodes the tool touches split first, whatever their gamma */
    double tool_margin;    /* m: with tool_refine, nodes within this of the tool's surface split
                              first too, and do not merge, in frames where the tool moves or
                              held the surface in the last one (0: only those it touches) */
    double level_stiffness[8]; /* per level (the first 8), the factor on E (0: 1): a coarse
                                  level's tets are stiffer than the body they discretise (fewer
                                  modes); a factor below 1 matches its compliance to the
                                  finest level's. gamma divides by the level's mu */
    double tool_dt;        /* s: nodes near the tool step at least this finely, so that the force
                              on it is sampled at 1/tool_dt or faster (haptics: 1 ms) */
    int threads;           /* OpenMP threads of a substep's tet kicks, 0: the OpenMP default. The
                              results are the same bits for any count */
    int kick_lanes;        /* tets a substep's kick evaluates side by side: 0 the most this CPU and
                              build run (4 with AVX on x86-64, else 2 where the compiler has vector
                              types, else 1); 1, 2 or 4 forces that many (tw_multires_create fails
                              where it cannot run). The results are the same bits for any */
} tw_multires_def;
tw_multires_def tw_default_multires_def(void);

/* A sphere moved along a scripted path: from center0 by `move` over
 * [0, move_time], back over [move_time, 2 move_time], then still. The
 * surface nodes near it are held out of it at every substep, moved along
 * their inward normals; the force on it is what the held nodes press with. */
typedef struct tw_mr_tool {
    double center0[3], radius; /* m */
    double move[3];            /* m */
    double move_time;          /* s; 0: still */
} tw_mr_tool;

typedef struct tw_mr_frame_stats {
    int active_nodes, interface_nodes;
    int active_per_level[8];   /* the first 8 levels */
    long work;                 /* tet evaluations this frame */
    long predicted_work;       /* the frame's work as planned before it ran */
    int over_budget;           /* 1: even after merging the plan passes the budget */
    int splits, merges, refused_splits, forced_merges;
    int stale_interface;       /* interface nodes with no fully current source tet: the tets of
                                  other levels holding them read each other in cycles, solved
                                  for rows over filled nodes */
    int substeps;              /* 2^(the frame's finest step level); 2^max_dt_level when the
                                  def fixes it */
    int tool_nodes;            /* active nodes near the tool this frame (held out of it) */
    int tool_held;             /* the most of them the tool held at one substep */
    int tool_step_level;       /* the finest step level of those nodes (-1: none): the force on
                                  the tool is updated 2^tool_step_level times a frame */
    double tool_force[3];      /* N: the force on the tool, mean over the frame's substeps; each
                                  held node's internal force over its last own step */
    double tool_force_last[3]; /* N: at the frame's last substep */
    double max_gamma;          /* m, over active nodes */
} tw_mr_frame_stats;

typedef struct tw_multires tw_multires;

/* A simulation on h's levels (h is taken over: freed with the simulation).
 * NULL with tw_last_error on failure (bad def, a degenerate tet). */
tw_multires *tw_multires_create(tw_hierarchy *h, const tw_multires_def *def);
void tw_multires_destroy(tw_multires *m);

/* Pins, on every level, the nodes whose rest coordinate `axis` is below
 * (less = 1) or above (less = 0) value; returns how many (all levels). */
int tw_multires_fix(tw_multires *m, int axis, int less, double value);
void tw_multires_set_tool(tw_multires *m, const tw_mr_tool *tool);
void tw_multires_set_budget(tw_multires *m, double work_budget);

/* One display frame: tool contact, merges and splits within the budget,
 * the per-node time steps, then the substeps of the frame's finest step. */
tw_status tw_multires_frame(tw_multires *m, tw_mr_frame_stats *stats);

/* Splits active node i of level l (l below the finest, i with children):
 * the children take their state from level l by interpolation. Merges the
 * children of node i of level l (all active) into it: it takes its state
 * from level l + 1. The interface is rebuilt. TW_ERR_INVALID when the move
 * is not possible. */
tw_status tw_multires_split(tw_multires *m, int l, int i);
tw_status tw_multires_merge(tw_multires *m, int l, int i);

/* The views the tests and the CLI read. */
int tw_multires_levels(const tw_multires *m);
const tw_mesh *tw_multires_mesh(const tw_multires *m, int l);
double *tw_multires_positions(tw_multires *m, int l);  /* 3 nv, m: writable (tests set states) */
double *tw_multires_velocities(tw_multires *m, int l); /* 3 nv, m/s */
enum { TW_MR_INACTIVE = 0, TW_MR_ACTIVE = 1, TW_MR_INTERFACE = 2 };
const unsigned char *tw_multires_states(const tw_multires *m, int l);
const signed char *tw_multires_dt_levels(const tw_multires *m, int l); /* of active nodes */
const double *tw_multires_node_h(const tw_multires *m, int l); /* smallest tet altitude, m */
const double *tw_multires_node_dt_limit(const tw_multires *m, int l); /* the step_limit's stable step
                                                                         times courant_factor, s */
double tw_multires_frame_dt(const tw_multires *m);
int tw_multires_max_dt_level(const tw_multires *m);
double tw_multires_time(const tw_multires *m);
double tw_multires_wave_speed(const tw_multires *m); /* sqrt((lambda + 2 mu) / rho), m/s */

/* Rebuilds the interface after a test wrote positions and velocities. */
void tw_multires_update_interface(tw_multires *m);

/* The energy of the active representation: kinetic (active nodes' lumped
 * masses), elastic (each tet weighted by its share of active nodes) and
 * gravitational (active nodes, relative to the rest state), J. */
void tw_multires_energy(tw_multires *m, double *kinetic, double *elastic, double *gravity);

/* The level that simulates the body's point at rest position `level l,
 * vertex i`: l where that node is active, else the level whose active nodes
 * carry most of the point's interpolation weight (l when none do). */
int tw_multires_point_level(const tw_multires *m, int l, int i);
/* The scripted tool's centre now (m); 0 without a tool. */
int tw_multires_tool_center(const tw_multires *m, double c[3]);
/* The position of the body's point at rest position `level l, vertex i`
 * as the active representation moves it. */
void tw_multires_probe(const tw_multires *m, int l, int i, double x[3]);
#endif
