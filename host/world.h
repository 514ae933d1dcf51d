/* The CPU backend's world: the FEM data, the state, and the per-step scratch.
 * Shared by world.c (lifecycle, setters), step.c (the time step and its
 * integrators), forces.c (rotations, forces, system matrix per method),
 * energy.c and static.c (equilibrium solves). */
#ifndef TW_WORLD_H
#define TW_WORLD_H
#include "fem.h"
#include "hierarchy.h"
#include "hd/step.h"
#include "solver.h"
#include "tetwarp.h"

/* A CUDA world of at least this many elements builds its FEM pattern (vertex
 * lists, BSR pattern, gather lists) on the GPU (tw_fem_pattern_gpu). On the
 * CPU that step is about three quarters of tw_fem_build (Release, 2-core
 * EPYC, 2026-11): a bar of 0.98 M tets 1.0 of 1.4 s, 5.1 M tets 5.1 of 6.7 s;
 * the TetGen bunny of 0.96 M tets 2.8 of 3.9 s, 5.1 M tets 16.1 of 22.2 s
 * (K assembly 17-23 %, elements 6-7 %). Below this size the step costs the
 * CPU at most about 1.5 s (linear in the tets); the GPU's time is not
 * measured yet (the builder has not run on a GPU), so the cut is set by the
 * CPU's cost, not by a measured break-even point. */
#define TW_GPU_PATTERN_MIN_TETS 500000

struct tw_world {
    const tw_mesh *mesh;
    struct tw_cuda_world *cuda; /* the device copy when the backend is cuda (kernels/cuda_world.h) */
    int host_dirty;       /* a setter changed state the device copy must re-upload */
    int impulses_zeroed;  /* cuda: tw_world_restart zeroed cimpulse; the device zeroes its copy with the
                             next upload */
    int host_x_stale, host_v_stale; /* cuda: the device's x / v are newer than w->x / w->v (after a
                                       step); tw_world_fetch downloads them */
    tw_world_def def;
    tw_fem fem;
    long step;
    double time;
    double size;          /* bounding-box diagonal, m: the divergence yardstick */
    int warned_large_step; /* the once-per-world warning of a step that moves a vertex > size / 4 */
    /* state, 3n each */
    tw_real *x, *v, *fext, *target;
    unsigned char *cons;  /* tw_constraint per vertex */
    /* spring */
    int spring_vertex;
    double spring_anchor[3], spring_k;
    /* scratch */
    tw_real *R;           /* 9 per vertex (warp-*) or per element (corot, green: F) */
    tw_real *S;           /* per-element packs (hd/element.h): green TW_GREEN_PACK, corot/hybrid TW_COROT_PACK; sized TW_GREEN_PACK nt */
    tw_real *fe;          /* 12 per element */
    tw_real *f;           /* 3n elastic force */
    tw_real *rhs, *vnew;  /* 3n */
    tw_real *A;           /* 9 per block: the system matrix */
    int *edge_nbr;        /* 2 per vertex: warp-edge frame neighbours */
    /* integrator state */
    tw_real *acc;         /* explicit Newmark: accelerations (3n) */
    int has_acc;
    tw_real *xres, *xres_next; /* explicit Newmark: the rounding its position updates carry (3n each) */
    tw_real *xprev, *vprev, *xbase, *vbase; /* BDF2: the previous state and the base terms (3n) */
    int has_history;
    /* contact */
    tw_collider_def colliders[TW_MAX_COLLIDERS];
    int ncolliders;
    unsigned char *fcons; /* per step: cons plus TW_FILTER_NORMAL for contacts (n) */
    tw_real *cnormal;     /* contact normals (3n) */
    tw_real *cdist;       /* contact signed distances (n) */
    tw_real *cimpulse;    /* contact normal impulses of the last step, N s (n) */
    tw_real *cimpulse_start; /* cimpulse at the step's start, put back when the step fails (n) */
    tw_real *cmu;         /* contact friction coefficients, set when a contact is marked (n) */
    tw_real *cfric;       /* implicit friction: the tangential damping in A's diagonal block this step, N s/m (n) */
    tw_real *cfprev;      /* implicit friction: per vertex an earlier solve's damping and the tangential speed it gave (2n) */
    unsigned char *ccol;  /* the contact's collider (index, TW_CONTACT_NONE when none) (n) */
    tw_real *cvel;        /* the contact's collider surface velocity, m/s (3n; 0 for static colliders) */
    const tw_real *cbase; /* the step's base positions, x+ = cbase + heff v+ (tw_contact_detect's x) */
    tw_real *cslip;       /* a contact slipping from stuck: its friction impulse in w->rhs this step, N s (3n) */
    double cforce[TW_MAX_COLLIDERS][3]; /* the force the body exerted on each collider in the last step, N */
    double ctarget[TW_MAX_COLLIDERS][6]; /* tw_world_move_collider: center and end after the next step */
    unsigned char cmoved[TW_MAX_COLLIDERS]; /* 1: ctarget holds the collider's next position */
    /* def.collider_models (contact_model.c): per collider the last step's
     * force stiffness (N/m, row-major), its contacts and the condensation's
     * CG iterations, describing step cmodel_step (w->step after it; -1:
     * none yet); per collider the three responses (9n, allocated at its
     * first contact) that start the next step's; allocated at the first
     * contact: 3 x 3n scratch, the static matrix's values (9 nnzb) and the
     * contacts' curvature stiffness (n) and the axes of those on a
     * capsule's side (3n) */
    double cstiff[TW_MAX_COLLIDERS][9];
    int cmodel_contacts[TW_MAX_COLLIDERS], cmodel_iterations[TW_MAX_COLLIDERS];
    /* per collider: its centre (plane: point) and velocity where step
     * cmodel_step left it (tw_world_move_collider sets the next step's
     * velocity at once); cmodel_valid 0: replaced since (set, added) */
    double cmodel_at[TW_MAX_COLLIDERS][6];
    unsigned char cmodel_valid[TW_MAX_COLLIDERS];
    long cmodel_step;
    tw_real *cmodel_resp[TW_MAX_COLLIDERS], *cmodel_scratch, *cmodel_A;
    double *cmodel_curv;
    tw_real *newton;      /* Newton iterations: 4 vectors of 3n */
    /* the energy check of tw_world_step (step.c): the mechanical energy after
     * step energy_step, valid while the state's fingerprint is energy_key */
    double energy_last, energy_key;
    long energy_step;
    /* its blow-up test (step.c): the energy and its scale when the run of
     * steps nothing did work on began, and the state at the step's start
     * (x, v, then BDF2's xprev, vprev or Newmark's acc; 4 x 3n, allocated at
     * the first test), restored when the test fails */
    double energy_ref, energy_ref_scale;
    long energy_above; /* the step that ended above them while gaining energy (-1: the last one did not) */
    tw_real *energy_snap;
    /* element methods: the energy check's pass leaves R, S and fe at the
     * step's end positions (tw_compute_rotations_energy), a copy of which is
     * rot_x; rot_cached says they still hold there (any other
     * tw_compute_rotations clears it), so the next step need not compute
     * them again; warp-vertex: R at the positions its turn test computed
     * them at (step.c warp_turn_iterations) */
    tw_real *rot_x;
    int rot_cached, rot_method;
    /* warp-vertex's automatic second linearisation (step.c
     * warp_turn_iterations): the step's start rotations, 9n, allocated at
     * the first test */
    tw_real *turn_R;
    /* hanging (geometrically constrained) vertices, hanging.c: vertex
     * hang_vertex[k] sits at sum_j hang_w[j] x[hang_idx[j]] over
     * j in [hang_ptr[k], hang_ptr[k+1]) */
    int nhang, *hang_vertex, *hang_ptr, *hang_idx;
    double *hang_w;
    struct tw_hanging_system *hsys; /* the implicit step's reduced system, when nhang > 0 */
    struct tw_bodies *bodies; /* contact between the bodies of a tw_mesh_merge'd mesh (contact_bodies.c), or NULL */
    /* the sum of the vertex masses in vertex order (tw_world_total_mass),
     * formed at creation: the masses are set there only */
    double mass_total;
    /* how many vertices have cons[i] != TW_FREE (tw_contact_patch_mass
     * reads it), kept by tw_world_set_cons, the one writer of cons */
    int constrained;
    tw_solver_work work;
    struct tw_amg *amg; /* def.precond mg: the multigrid hierarchy (amg.h), built at the first solve */
};

/* Makes w->x (positions) and / or w->v (velocities) current before the host
 * reads them: with the CUDA backend the device holds the state after a step
 * and this downloads what is stale (counted in the device's d2h bytes); a
 * no-op otherwise. Const because the public accessors are: only the cache
 * changes. On a device error the message is in tw_last_error. */
tw_status tw_world_fetch(const tw_world *w, int positions, int velocities);

/* What the steps carry from one state to the next starts over, as in a new
 * world: BDF2's history, explicit Newmark's acceleration and carried
 * rounding, and the contact impulses (a contact that pressed in the state
 * replaced would start the next step stuck, tw_contact_starts_stuck, or stay
 * in its first active set in the rounding band, tw_contact_mark_vertex), on
 * the device too, the body contacts (tw_bodies_reset; their impulses are
 * among cimpulse, the rest each step's detection sets anew) and the tool
 * models (tw_world_collider_model describes the state replaced). For the
 * setters that replace the state (positions,
 * velocities, reset, the static solve). */
void tw_world_restart(tw_world *w);

/* Rotations (or deformation gradients) for the current method at w->x. */
void tw_compute_rotations(tw_world *w, const tw_real *x);
/* Elastic force of the current method at x into out (3n), from the rotations
 * computed at x. Applies the ghost-force correction when enabled. */
void tw_compute_elastic_force(tw_world *w, const tw_real *x, tw_real *out, int ghost_correction);
/* A = cm * M + ck * K' (+ ck * spring on the spring vertex), K' the method's
 * system stiffness at the rotations computed last. */
void tw_assemble_system(tw_world *w, double cm, double ck);
/* Elastic energy at x for the current method. */
double tw_compute_elastic_energy(tw_world *w, const tw_real *x);
/* corot-element, hybrid, green: tw_compute_rotations(w, x), the element
 * forces of tw_compute_elastic_force (w->fe) and the elastic energy at x
 * from one element pass (the same numbers as the separate calls); marks
 * them cached at x (w->rot_x), so a tw_compute_elastic_force at x gathers
 * them without recomputing. Other methods: returns tw_compute_elastic_energy
 * and caches nothing. */
double tw_compute_rotations_energy(tw_world *w, const tw_real *x);
/* 1 when w->R, w->S and w->fe hold the current method's rotations and
 * element forces at x (the cache tw_compute_rotations_energy left). */
int tw_rotations_cached(const tw_world *w, const tw_real *x);

/* External force (gravity, point forces, the spring at x) into out (3n). */
void tw_external_force(const tw_world *w, const tw_real *x, tw_real *out);

/* Contact (contact.c; the design is at its top). Start of an implicit step
 * from positions x (x+ = x + heff v+): the nearest collider of every free
 * vertex in w->cnormal / cdist / cmu, the first pass's active set (inside, or
 * touching and not separating: tw_contact_is_in) in w->fcons; returns how
 * many. The impulse of a vertex outside that set is zeroed, in a world of
 * bodies by tw_bodies_detect, which runs next. */
int tw_contact_detect(tw_world *w, const tw_real *x, double heff);
/* Before the first solve: implicit Coulomb friction, tangential damping on
 * the active vertices' diagonal blocks of w->A from last step's impulses, or
 * a stick constraint (TW_CONTACT_STICK, its velocity in w->vnew) for a
 * vertex that ended the last step stuck. */
void tw_contact_friction_implicit(tw_world *w, double heff);
/* The Newton iterations after the contact passes (step.c newton_refine)
 * keep the passes' friction: with on, every active contact with friction
 * damping is held whole in w->fcons (TW_CONTACT_HELD: the Newton steps keep
 * its velocity), without, released again; returns how many. */
int tw_contact_newton_hold(tw_world *w, int on);
/* The active vertices' normal velocity in v set to land on the surface this
 * step (before the first solve, and after each update for the joined ones);
 * a stuck vertex's whole velocity set to stay on the collider. */
void tw_contact_land_all(tw_world *w, tw_real *v, double heff);
/* After each solve of w->A v = b: the active-set update (release, join and
 * land, friction). Returns how many vertices joined or left the active set;
 * *friction (when not NULL) gets how many had friction off Coulomb's (their
 * damping is updated; see tw_contact_update_vertex). */
int tw_contact_update(tw_world *w, const tw_real *b, tw_real *v, double heff, int *friction);
/* The contact set's sliding speed after a solve of w->A v = b
 * (tw_contact_patch_speed over the active contacts; 0: none;
 * TW_CONTACT_PATCH_STOPS: it comes to rest within the step), which
 * tw_contact_update gives every active vertex. The body sliding as a whole
 * is the model: tw_contact_patch_mass, the free vertices' mass, is 0 (no
 * estimate) where the world holds several bodies or a constrained vertex. */
double tw_contact_patch(const tw_world *w, const tw_real *b, const tw_real *v, double heff);
double tw_contact_patch_mass(const tw_world *w); /* world.c */
/* The sum of the vertex masses, kg (w->mass_total). */
double tw_world_total_mass(const tw_world *w);
/* Sets vertex v's constraint w->cons[v] to c, keeping w->constrained: every
 * write of w->cons goes through it. */
static inline void tw_world_set_cons(tw_world *w, int v, unsigned char c)
{
    w->constrained += (c != TW_FREE) - (w->cons[v] != TW_FREE);
    w->cons[v] = c;
}
/* The shift of a contact solve on moving colliders: s_i the collider's
 * tangential velocity at each active contact on one, 0 elsewhere; returns 1
 * when any is not 0. The implicit step solves for v - s: the friction
 * damping's right-hand side cf (I - n n^T) vc (large for a stuck contact)
 * then cancels in b - A s, so the solve's relative tolerance is measured
 * against the body's own forces, as for a static collider. */
int tw_contact_shift(const tw_world *w, tw_real *s);
/* Projects vertices inside a collider out, removes approaching normal
 * velocity and applies Coulomb friction from that velocity change (relative
 * to a moving collider); the momentum it gives goes into w->cforce over h.
 * Returns how many were more than 1e-4 x size inside. */
int tw_contact_project(tw_world *w, tw_real *x, tw_real *v, double h);
/* After the contact passes of an implicit step (w->A v = b): the active
 * contacts' impulses (normal and friction) over heff added to w->cforce
 * (zeroed at the start of each step). */
void tw_contact_forces(tw_world *w, const tw_real *b, const tw_real *v, double heff);
/* def.collider_models, after the contact passes of an implicit step (w->A
 * v = b with the passes' filter, before any Newton iteration; no body
 * contact, no hanging vertices): the stiffness of each touched collider's
 * force (w->cstiff, contact_model.c). TW_OK, or TW_ERR_NOMEM with
 * tw_last_error set. */
tw_status tw_contact_model(tw_world *w, double heff);
/* At the end of a step that computed the models: each collider's centre
 * and velocity, which the models are about (contact_model.c). */
void tw_contact_model_commit(tw_world *w);
/* Collider k was replaced (tw_world_set_collider, tw_world_add_collider):
 * its model, about the collider before, is dropped. */
void tw_contact_model_drop(tw_world *w, int k);
/* The colliders' motion over a step of h: each moves by h x its velocity,
 * or onto its tw_world_move_collider target. Nothing for static ones. */
void tw_colliders_advance(tw_world *w, double h);
/* The same into out (ncolliders), w unchanged (the CUDA step's colliders at
 * the end of the step). */
void tw_colliders_advanced(const tw_world *w, double h, tw_collider_def *out);
/* 1 when a collider moves (does work on the body). */
int tw_colliders_moving(const tw_world *w);
/* The two halves: positions (marking the projected vertices, and explicit
 * Newmark's touching ones (tw_contact_project_vertex_touching), in w->fcons with
 * their normals; returns how many), then velocities (and accelerations, when
 * acc is not NULL, lose their component into the collider). */
int tw_contact_project_positions(tw_world *w, tw_real *x);
void tw_contact_project_velocities(tw_world *w, tw_real *v, tw_real *acc, double h);

/* Hanging vertices (hanging.c): before a step, their kinematic targets from
 * the constraining vertices' predicted positions (the explicit step moves
 * them so); after it, positions and velocities set exactly to the weighted
 * averages. No-ops when none. */
void tw_hanging_before_step(tw_world *w, double h);
void tw_hanging_after_step(tw_world *w);
void tw_hanging_free(tw_world *w);

/* The implicit step's system on the non-hanging vertices (hanging.c's design
 * note): P writes every vertex as a combination of non-hanging ones (the
 * identity for those), the step solves P^T A P v_r = P^T b and sets v = P v_r. */
typedef struct tw_hanging_system {
    int nr;             /* non-hanging vertices: the reduced unknowns */
    int *vertex_of;     /* nr: the vertex of each reduced unknown */
    int *ptr, *idx;     /* P's rows (n + 1, then its entries: reduced unknowns) */
    double *wt;         /* P's weights */
    tw_hier_matrix Ar;  /* P^T A P (pattern from the first solve) */
    tw_real *b, *x, *normal; /* 3 nr: P^T b, the unknowns, the filter's contact normals */
    tw_real *X;         /* 3 nr: rest positions (multigrid's rigid modes) */
    unsigned char *cons; /* nr: the filter */
    tw_solver_work work;
    struct tw_amg *amg; /* multigrid on Ar when def.precond is mg */
} tw_hanging_system;
/* The reduced system of A x = b (A: w->A, filter over all vertices): Ar's
 * values, P^T b, x's non-hanging values as the start, the filter's reduced
 * copy in *reduced. TW_OK, or an error (memory) with tw_last_error set. */
tw_status tw_hanging_reduce(tw_world *w, const tw_real *b, const tw_real *x, const tw_filter *filter,
                            tw_filter *reduced);
/* x = P x_r after the reduced solve: every vertex, the hanging ones exactly
 * at their combinations. */
void tw_hanging_expand(const tw_world *w, tw_real *x);

/* The plain view of w's arrays and loads the per-item loop bodies read
 * (hd/step.h); pointers into w, valid while w is. */
tw_step_view tw_world_view(const tw_world *w);

/* Newton iterations per implicit step: def.newton_iterations, or when it is
 * 0 (automatic) 2 for BDF2 with a non-linear method on the CPU, else 1. */
int tw_world_newton_iterations(const tw_world *w);
/* 1 when a step's single linearisation is tested for its rotations' turn
 * and given a second where they turned far (warp-vertex, implicit, the
 * count automatic and 1, no body contact: hd/step.h TW_WARP_TURN); both
 * backends. */
int tw_world_warp_turn_test(const tw_world *w);
/* The threads w's OpenMP loops ask for (num_threads): def.threads, or the
 * OpenMP default when it is 0. Per world: creating a world changes no
 * process-wide setting. */
int tw_world_threads(const tw_world *w);

double tw_now_ms(void);
/* The first vertex with a non-finite component among n3 / 3, or -1. */
int tw_first_nonfinite(const tw_real *a, size_t n3);
tw_bsr tw_world_bsr(const tw_world *w);
#endif
