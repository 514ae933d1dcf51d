/* Contact between the bodies of one world (a tw_mesh_merge'd mesh); the
 * design is at the top of contact_bodies.c. The hooks step.c calls are
 * declared in world.h's style here; struct tw_bodies is read and written in
 * contact_bodies.c only. */
#ifndef TW_CONTACT_BODIES_H
#define TW_CONTACT_BODIES_H
#include "tetwarp.h"

struct tw_world;
typedef struct tw_bodies tw_bodies;

/* The bodies' surfaces, their BVHs and the per-vertex contact arrays for a
 * world of mesh m (nbodies > 1); NULL with tw_last_error() on failure. */
tw_bodies *tw_bodies_create(const tw_mesh *m, const tw_real *x, const tw_real *mass, double size);
void tw_bodies_free(tw_bodies *b);
/* Forgets the contacts and the pending reactions (tw_world_reset). */
void tw_bodies_reset(tw_bodies *b);

/* After tw_contact_detect at the start of an implicit step (positions x,
 * velocities w->v): every surface vertex's nearest triangle of another body
 * (BVHs refitted to x, rebuilt after a large motion); where that is nearer
 * than the vertex's collider, it replaces the collider's normal, distance
 * and friction in w->cnormal / cdist / cmu and the first active set in
 * w->fcons. Adds last step's reactions to w->rhs. Returns the contacts
 * (collider and body) in the first active set; `contacts` is
 * tw_contact_detect's count. */
int tw_bodies_detect(struct tw_world *w, const tw_real *x, double heff, int contacts);
/* After each contact pass's active-set update (tw_contact_update): the
 * impulses the active body contacts took (J n and friction) pushed onto
 * their triangles' vertices in w->rhs, and the triangles' velocities the
 * contacts hold taken from the pass's solve, both relaxed by one half; the
 * active contacts land again. Returns 1 when that moved some vertex more than
 * TW_BODY_MOVE_TOL x the world's size over the step (another solve is
 * wanted), else 0; 0 with no bodies. */
#define TW_BODY_MOVE_TOL 1e-4
/* How deep (x the world's size) a vertex of the body that does not hold a
 * contact may go into the other before it joins (contact_bodies.c). */
#define TW_BODY_SLACK 2.5e-4
int tw_bodies_pass(struct tw_world *w, double heff);
/* After the step (positions x, velocities v): every free surface vertex more
 * than TW_BODY_SLACK x size inside another body is moved onto its surface and
 * its approach to it stopped (a safety net, as contact.c's projection for
 * the colliders). Returns how many were more than 1e-4 x size inside. */
int tw_bodies_project(struct tw_world *w, tw_real *x, tw_real *v);
#endif
