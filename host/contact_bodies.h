/* Contact between the bodies of one world (a tw_mesh_merge'd mesh); the
 * design is at the top of contact_bodies.c. The hooks step.c calls are
 * declared in world.h's style here; struct tw_bodies is read and written in
 * contact_bodies.c only. */
#ifndef TW_CONTACT_BODIES_H
#define TW_CONTACT_BODIES_H
#include "solver.h"
#include "tetwarp.h"

struct tw_world;
typedef struct tw_bodies tw_bodies;

/* The bodies' surfaces, their BVHs and the per-vertex contact arrays for a
 * world of mesh m (nbodies > 1); NULL with tw_last_error() on failure. */
tw_bodies *tw_bodies_create(const tw_mesh *m, const tw_real *x, const tw_real *mass, double size);
void tw_bodies_free(tw_bodies *b);
/* Forgets the contacts (tw_world_restart: a setter replaced the state). */
void tw_bodies_reset(tw_bodies *b);

/* After tw_contact_detect at the start of an implicit step (positions x,
 * velocities w->v): every surface vertex's nearest triangle of another body
 * (BVHs refitted to x, rebuilt after a large motion); where that is nearer
 * than the vertex's collider, it replaces the collider's normal, distance
 * and friction in w->cnormal / cdist / cmu and the first active set in
 * w->fcons; zeroes w->cimpulse of each free vertex outside that set (in a
 * world of bodies tw_contact_detect leaves it). Returns the contacts
 * (collider and body) in the first active set; `contacts` is
 * tw_contact_detect's count. */
int tw_bodies_detect(struct tw_world *w, const tw_real *x, double heff, int contacts);
/* After each contact pass's solve: every body contact's triangle point's
 * normal velocity n.v_q from the solve (w->vnew), and its effective distance
 * d - heff n.v_q in w->cdist, which the active-set update reads; the
 * under vertices' springs on where the solve ends them inside the other
 * body, off where outside. Returns how many springs changed (the pass is
 * solved again); 0 with no bodies. */
int tw_bodies_pass(struct tw_world *w, double heff);
/* How deep (x the world's size) a vertex of the body that does not hold a
 * contact may go into the other before it joins (contact_bodies.c). */
#define TW_BODY_SLACK 2.5e-4
/* How deep (x the world's size) a vertex of the side that does not hold,
 * left out of the contacts under a holding contact's triangle, may lie
 * inside the other body before the end-of-step projection moves it: a
 * spring (TW_BODY_SPRING) pushes it out before that (contact_bodies.c). */
#define TW_BODY_UNDER 1e-3
/* The stiffness of the one-sided spring that pushes such a vertex out of
 * the other body's triangle (heff^2 k), x the vertex's own normal diagonal
 * of the step's matrix (contact_bodies.c); 0: no spring. */
#define TW_BODY_SPRING 2.0
/* The longest chain of held vertices (a vertex held to a triangle whose
 * vertices are held to others') the coupled solve follows. */
#define TW_BODY_CHAIN 8
/* The active body contacts (w->fcons normal and a triangle this step), listed
 * for tw_bodies_solve; returns their count plus the springs' (0: the solve
 * has no body coupling; 0 with no bodies). */
int tw_bodies_coupled(struct tw_world *w);
/* The coupled solve's lists after tw_bodies_coupled, for the solve on the
 * CUDA backend (kernels/cuda_bodies.cu): hd/body_solve.h's form in host
 * memory (the caller frees it with tw_body_lists_free), and *depth, P's
 * chain length. TW_OK, or TW_ERR_NOMEM. */
struct tw_body_lists;
tw_status tw_bodies_lists(const struct tw_world *w, struct tw_body_lists *out, int *depth);
/* A contact pass's solve of w->A v = rhs with the active body contacts as
 * equalities n.v_p = n.(sum_k w_k v_k) - d/heff between a vertex and its
 * triangle's vertices (P y + s, PCG on S P^T A P S; contact_bodies.c), the
 * relative friction, and w->fcons / w->cnormal's filter for the rest. v: the
 * warm start and its prescribed components in, the solution out. Uses
 * w->work's vectors. After tw_bodies_coupled. */
tw_solve_result tw_bodies_solve(struct tw_world *w, const tw_real *rhs, tw_real *v, double heff);
/* After the step (positions x, velocities v): every free surface vertex more
 * than TW_BODY_SLACK x size inside another body is moved onto its surface and
 * its approach to it stopped (a safety net, as contact.c's projection for
 * the colliders). Returns how many were more than 1e-4 x size inside. */
int tw_bodies_project(struct tw_world *w, tw_real *x, tw_real *v);
#endif
