/* Contact with static colliders (Zhuang & Canny sec. 4), CPU side.
 *
 * Implicit integrators: a free vertex at or inside a collider at the start of
 * the step, or one that would reach it within the step at its current
 * velocity, becomes a constrained direction in the PCG filter. Its normal
 * velocity is prescribed as -d/h (d its signed distance): it lands exactly
 * on the surface, stays there, or leaves a penetration in one step, so a
 * resting body carries its weight without jitter and an impact injects no
 * strain. After the solve the constraint's impulse is read off the residual,
 * J n = (A v - b)_i; a contact whose impulse pulls (J < 0) is released for the
 * next step. Friction is implicit: the next step adds tangential damping
 * d (I - n n^T) to the contact vertex's diagonal block with d |v_t| = mu J,
 * so the friction impulse is Coulomb's mu J while sliding, less as the vertex
 * slows (sticking), and never adds energy — friction applied to the velocities
 * after the solve did (measured: a tube dropped on the floor gained 30 J of
 * its 16 J drop energy).
 * Every integrator then projects: a vertex that ended inside a collider is
 * moved to its surface, its approaching normal velocity removed, and friction
 * applied in proportion to that velocity change.
 *
 * The per-vertex math (distances, the contact test, landing, friction, the
 * impulse, the projection) is in hd/contact.h, shared with the CUDA kernels
 * (kernels/cuda_contact.cu); this file holds the loops over the vertices. */
#include <math.h>
#include <string.h>

#include "hd/contact.h"
#include "error.h"
#include "world.h"

tw_collider_def tw_default_collider_def(void)
{
    tw_collider_def c;
    memset(&c, 0, sizeof c);
    c.kind = TW_COLLIDER_PLANE;
    c.normal[2] = 1;
    c.half_extents[0] = c.half_extents[1] = c.half_extents[2] = 0.5;
    c.radius = 0.5;
    c.friction = 0.5;
    return c;
}

static int finite3(const double v[3]) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

tw_status tw_world_add_collider(tw_world *w, const tw_collider_def *c)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    static const char *kinds[] = {"plane", "box", "sphere"};
    if (!c || (unsigned)c->kind > TW_COLLIDER_SPHERE)
        return tw_fail(TW_ERR_INVALID, "collider: unknown kind %d", c ? (int)c->kind : -1);
    const char *k = kinds[c->kind];
    if (w->ncolliders == TW_MAX_COLLIDERS)
        return tw_fail(TW_ERR_INVALID, "collider: at most %d colliders", TW_MAX_COLLIDERS);
    if (!(c->friction >= 0) || !isfinite(c->friction))
        return tw_fail(TW_ERR_INVALID, "%s collider: friction %g must be finite and >= 0", k, c->friction);
    if (c->kind == TW_COLLIDER_PLANE) {
        double l = sqrt(c->normal[0] * c->normal[0] + c->normal[1] * c->normal[1] + c->normal[2] * c->normal[2]);
        if (!finite3(c->point) || !finite3(c->normal) || !(l > 0))
            return tw_fail(TW_ERR_INVALID, "plane collider: normal (%g, %g, %g) must be finite and non-zero",
                           c->normal[0], c->normal[1], c->normal[2]);
    } else if (c->kind == TW_COLLIDER_BOX) {
        for (int a = 0; a < 3; a++)
            if (!(c->half_extents[a] > 0) || !isfinite(c->half_extents[a]))
                return tw_fail(TW_ERR_INVALID, "box collider: half extent %c = %g m must be finite and > 0", "xyz"[a],
                               c->half_extents[a]);
        if (!finite3(c->center)) return tw_fail(TW_ERR_INVALID, "box collider: the centre is not finite");
    } else {
        if (!(c->radius > 0) || !isfinite(c->radius))
            return tw_fail(TW_ERR_INVALID, "sphere collider: radius %g m must be finite and > 0", c->radius);
        if (!finite3(c->center)) return tw_fail(TW_ERR_INVALID, "sphere collider: the centre is not finite");
    }
    w->colliders[w->ncolliders++] = *c;
    return TW_OK;
}

void tw_world_clear_colliders(tw_world *w)
{
    w->host_dirty = 1;
    w->ncolliders = 0;
}

double tw_collider_distance(const tw_collider_def *c, const double x[3], double n[3])
{
    return tw_collider_distance_hd(c, x, n);
}

int tw_contact_detect(tw_world *w, const tw_real *x, double heff)
{
    int n = w->fem.n, count = 0;
    memcpy(w->fcons, w->cons, (size_t)n);
    if (!w->ncolliders) return 0;
    double touch = 1e-6 * w->size;
    for (int i = 0; i < n; i++) {
        if (w->cons[i]) continue;
        /* in contact: inside; touching and not separating; or about to
         * arrive within this step at the current velocity (a speculative
         * contact: its normal velocity is set to land exactly on the surface,
         * so no vertex is projected and no strain is injected) — the last two
         * unless the constraint pulled last step */
        if (!tw_contact_mark_vertex(w->colliders, w->ncolliders, x + 3 * (size_t)i, w->v + 3 * (size_t)i, touch, heff,
                                    &w->released[i], w->cnormal + 3 * (size_t)i, &w->cdist[i], &w->cmu[i]))
            continue;
        w->fcons[i] = TW_FILTER_NORMAL;
        count++;
    }
    return count;
}

void tw_contact_friction_implicit(tw_world *w, double heff)
{
    const tw_fem *f = &w->fem;
    /* tangential damping d (I - n n^T) with d |v_t| = mu J: the impulse is
     * mu J while sliding at the current speed and less as it slows; a stuck
     * vertex (|v_t| below 1e-6 size / heff) gets a very large d */
    double vt_min = 1e-6 * w->size / heff;
    for (int i = 0; i < f->n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        tw_contact_friction_block(w->A + 9 * (size_t)f->diag[i], w->cnormal + 3 * (size_t)i, w->v + 3 * (size_t)i,
                                  w->cmu[i], w->cimpulse[i], vt_min);
    }
}

void tw_contact_impulses(tw_world *w, const tw_real *b, const tw_real *v)
{
    const tw_fem *f = &w->fem;
    for (int i = 0; i < f->n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) {
            w->cimpulse[i] = 0;
            continue;
        }
        /* the constraint impulse: (A v - b)_i along n */
        double J = tw_contact_impulse(f->row_ptr, f->col, w->A, v, b, w->cnormal + 3 * (size_t)i, i);
        if (J < 0) w->released[i] = 1; /* the floor would have to pull: let go next step */
        w->cimpulse[i] = (tw_real)fmax(J, 0);
    }
}

int tw_contact_project_positions(tw_world *w, tw_real *x)
{
    int count = 0;
    memcpy(w->fcons, w->cons, (size_t)w->fem.n);
    if (!w->ncolliders) return 0;
    for (int i = 0; i < w->fem.n; i++) {
        if (w->cons[i]) continue;
        if (!tw_contact_project_vertex(w->colliders, w->ncolliders, x + 3 * (size_t)i, w->cnormal + 3 * (size_t)i,
                                       &w->cmu[i]))
            continue;
        w->fcons[i] = TW_FILTER_NORMAL;
        count++;
    }
    return count;
}

void tw_contact_project_velocities(tw_world *w, tw_real *v, tw_real *acc)
{
    for (int i = 0; i < w->fem.n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        tw_contact_project_velocity(v + 3 * (size_t)i, nn, w->cmu[i]);
        if (acc) tw_contact_project_acceleration(acc + 3 * (size_t)i, nn);
    }
}

void tw_contact_project(tw_world *w, tw_real *x, tw_real *v)
{
    if (tw_contact_project_positions(w, x)) tw_contact_project_velocities(w, v, NULL);
}
