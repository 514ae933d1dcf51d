/* Contact with colliders (Zhuang & Canny sec. 4), CPU side.
 *
 * Implicit integrators: non-penetration is an inequality on the step's
 * velocity, g_i = d_i + heff n_i . v_i >= 0 (d the signed distance at the
 * start of the step, n the nearest collider's normal; exact for planes,
 * linearised for spheres and boxes), with the normal impulse J_i >= 0 and
 * J_i g_i = 0. The step's linear system A v = b with these constraints is a
 * convex QP (A symmetric positive definite for the symmetric methods); it is
 * solved by a primal-dual active-set method (Hintermueller, Ito & Kunisch,
 * SIAM J. Optim. 2002), as Baraff & Witkin's constraint release does across
 * steps but here inside the step:
 *   1. the active set starts with the vertices inside or touching and not
 *      separating by more than rounding (tw_contact_is_in: a resting contact
 *      stays in); an active vertex's normal velocity is -d/heff (it lands on
 *      the surface) and the PCG filter keeps it (Baraff & Witkin's modified
 *      PCG);
 *   2. after the solve, J_i = (A v - b)_i . n_i; an active vertex that pulls
 *      (J < 0) is released, an inactive one the solve takes through the
 *      surface (g < 0) joins, landed; while that changes anything, solve
 *      again, warm-started (at most TW_CONTACT_PASSES solves).
 * Only vertices that actually reach the surface within the step are
 * constrained, and none is held to it by a pull: a speculative contact fixed
 * before the solve (a vertex centimetres away made to land in this step) was
 * what pulled bodies into the floor at steps above about 10 ms, storing strain
 * and energy the drop never released.
 * Friction is implicit tangential damping cf (I - n n^T) on the contact
 * vertex's diagonal block (dissipative by construction: friction applied to
 * the velocities after the solve was not), from the impulse of this step:
 * the first solve uses the last step's J; each update sets cf so that
 * cf |v_t| = mu J when sliding, or to the stuck value mu J / vt_min when the
 * vertex's own force stays inside Coulomb's cone (a lagged-friction fixed
 * point; Coulomb within 2 %, at most TW_CONTACT_FRICTION_PASSES extra
 * solves for friction alone).
 * Static friction is a constraint, not a damping (Baraff and Witkin 1998,
 * "Large steps in cloth simulation", sec. 5: constraints in the filtered
 * CG, each constraint's force read back from the solve): a vertex that
 * the model below finds inside Coulomb's cone, or whose tangential speed
 * falls to vt_min, and one that starts a step that slow with a normal
 * impulse from the last, is stuck (TW_CONTACT_STICK): the filter holds
 * all three of its velocity components, at the collider's velocity and
 * the landing normal velocity. Its constraint impulse p = (A v - b)_i
 * gives J = p.n and the friction p_t that holds it; it slips when
 * |p_t| > mu J (1 + TW_CONTACT_STOL) (and, far from the origin, by more
 * than the rounding of its forces: tw_contact_update_stuck), with the
 * friction impulse mu J p_t / |p_t| in its right-hand side (the normal
 * alone constrained), and sticks again
 * when its tangential velocity no longer goes against that friction. A
 * stuck vertex does not move; with the stuck damping mu J / vt_min instead
 * it moves at up to vt_min, a body resting just inside the friction cone
 * creeps down a slope, and its friction, never quite Coulomb's, is solved
 * again up to the pass cap in every step. Only a collider's contacts stick
 * (a body contact's coupled solve keeps the damping), and only with
 * friction: frictionless contact never sees it.
 * Sliding is the damping below. Both come from one model of the vertex's
 * response to its damping,
 * |v_t| = f / (a + d), with a fitted through the step's last two solves
 * (hd/contact.h): a vertex whose normal impulse falls below what holds it
 * slides in the next solve, at about Coulomb's speed, not creeping off at
 * the stuck damping's speed and breaking away only steps later. That model
 * sees only the vertex's own block, its mass and the stiff springs to its
 * neighbours; a body sliding as a whole gives each contact about its mass
 * over the contacts instead. So each update first weighs the contact set
 * as a whole (tw_contact_patch): where the friction the solve needed, summed
 * as a vector, is off Coulomb's bound sum mu J (by more than 0.5 %: a stuck
 * set whose load left the cone, or a set sliding as one), the body's
 * tangential momentum gives the speed it slides at, and every contact gets
 * Coulomb's friction at that speed; a stuck block breaks away in one step.
 * BDF2 takes one implicit Euler step after a step with an impact (a contact
 * vertex that started it approaching faster than |g| h: step.c), so that its
 * two-step base never carries the velocity the contact stopped.
 * Every integrator then projects: a vertex that ended inside a collider is
 * moved to its surface, its approaching normal velocity removed, and friction
 * applied in proportion to that velocity change (explicit Newmark's contact;
 * for the implicit ones a safety net, counted as unresolved beyond 1e-4 size).
 *
 * Moving colliders (a tool): a kinematic collider with velocity vc moves by
 * h vc in the step, so the gap is g_i = d_i + heff n_i . v_i - h n_i . vc
 * and a landed vertex's normal velocity follows the surface; friction is
 * damping of the velocity relative to the collider, -cf (I - n n^T)(v - vc),
 * whose vc part is a right-hand-side term. The force on a collider is what
 * its contacts received, with the sign turned: over its active contacts the
 * impulse the body's own rows need at the solved velocity, (A0 v - b0)_i
 * (A0, b0 without the friction damping: normal J_i n_i plus the friction
 * impulse, read from the rows rather than from the damping, which the last
 * update may have changed after the last solve), over heff; plus the
 * momentum the end-of-step projection gave, over h. The end-of-step
 * projection uses the collider where the step leaves it.
 *
 * The per-vertex math (distances, the contact test, landing, friction, the
 * impulse, the active-set update, the projection) is in hd/contact.h, shared
 * with the CUDA kernels (kernels/cuda_contact.cu); this file holds the loops
 * over the vertices, step.c the passes. */
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
static tw_status check_collider(const tw_collider_def *c);

tw_status tw_world_add_collider(tw_world *w, const tw_collider_def *c)
{
    w->host_dirty = 1; /* the device copy re-uploads */
    if (w->ncolliders == TW_MAX_COLLIDERS)
        return tw_fail(TW_ERR_INVALID, "collider: at most %d colliders", TW_MAX_COLLIDERS);
    tw_status s = check_collider(c);
    if (s != TW_OK) return s;
    w->cmoved[w->ncolliders] = 0;
    memset(w->cforce[w->ncolliders], 0, sizeof w->cforce[0]);
    tw_contact_model_drop(w, w->ncolliders);
    w->colliders[w->ncolliders++] = *c;
    return TW_OK;
}

static tw_status check_collider(const tw_collider_def *c)
{
    static const char *kinds[] = {"plane", "box", "sphere", "capsule"};
    if (!c || (unsigned)c->kind > TW_COLLIDER_CAPSULE)
        return tw_fail(TW_ERR_INVALID, "collider: unknown kind %d", c ? (int)c->kind : -1);
    const char *k = kinds[c->kind];
    if (!finite3(c->velocity) || (c->kind == TW_COLLIDER_CAPSULE && !finite3(c->end_velocity)))
        return tw_fail(TW_ERR_INVALID, "%s collider: the velocity is not finite", k);
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
            return tw_fail(TW_ERR_INVALID, "%s collider: radius %g m must be finite and > 0", k, c->radius);
        if (!finite3(c->center)) return tw_fail(TW_ERR_INVALID, "%s collider: the centre is not finite", k);
        if (c->kind == TW_COLLIDER_CAPSULE && !finite3(c->end))
            return tw_fail(TW_ERR_INVALID, "capsule collider: the end is not finite");
    }
    return TW_OK;
}

void tw_world_clear_colliders(tw_world *w)
{
    w->host_dirty = 1;
    w->ncolliders = 0;
}

int tw_world_collider_count(const tw_world *w) { return w->ncolliders; }

static tw_status check_index(const tw_world *w, int index)
{
    if (index < 0 || index >= w->ncolliders)
        return tw_fail(TW_ERR_INVALID, "collider %d: no such collider (the world has %d)", index, w->ncolliders);
    return TW_OK;
}

tw_status tw_world_get_collider(const tw_world *w, int index, tw_collider_def *c)
{
    tw_status s = check_index(w, index);
    if (s == TW_OK && c) *c = w->colliders[index];
    return s;
}

tw_status tw_world_set_collider(tw_world *w, int index, const tw_collider_def *c)
{
    tw_status s = check_index(w, index);
    if (s == TW_OK) s = check_collider(c);
    if (s != TW_OK) return s;
    w->host_dirty = 1;
    w->colliders[index] = *c;
    w->cmoved[index] = 0;
    tw_contact_model_drop(w, index);
    return TW_OK;
}

tw_status tw_world_move_collider(tw_world *w, int index, const double center[3], const double end[3])
{
    tw_status s = check_index(w, index);
    if (s != TW_OK) return s;
    if (!center || !finite3(center) || (end && !finite3(end)))
        return tw_fail(TW_ERR_INVALID, "collider %d: the target position is missing or not finite", index);
    tw_collider_def *c = &w->colliders[index];
    double h = w->def.dt, *t = w->ctarget[index];
    double *from = c->kind == TW_COLLIDER_PLANE ? c->point : c->center;
    for (int a = 0; a < 3; a++) {
        t[a] = center[a];
        c->velocity[a] = (center[a] - from[a]) / h;
        t[3 + a] = end ? end[a] : c->end[a] + (center[a] - from[a]);
        c->end_velocity[a] = (t[3 + a] - c->end[a]) / h;
    }
    w->cmoved[index] = 1; /* (the CUDA step uploads the colliders every step) */
    return TW_OK;
}

tw_status tw_world_collider_force(const tw_world *w, int index, double f[3])
{
    tw_status s = check_index(w, index);
    if (s == TW_OK)
        for (int a = 0; a < 3; a++) f[a] = w->cforce[index][a];
    return s;
}

int tw_colliders_moving(const tw_world *w)
{
    for (int k = 0; k < w->ncolliders; k++) {
        const tw_collider_def *c = &w->colliders[k];
        for (int a = 0; a < 3; a++)
            if (c->velocity[a] != 0 || (c->kind == TW_COLLIDER_CAPSULE && c->end_velocity[a] != 0)) return 1;
    }
    return 0;
}

void tw_colliders_advanced(const tw_world *w, double h, tw_collider_def *out)
{
    for (int k = 0; k < w->ncolliders; k++) {
        tw_collider_def *c = &out[k];
        *c = w->colliders[k];
        double *p = c->kind == TW_COLLIDER_PLANE ? c->point : c->center;
        if (w->cmoved[k]) { /* exactly on the path */
            for (int a = 0; a < 3; a++) {
                p[a] = w->ctarget[k][a];
                c->end[a] = w->ctarget[k][3 + a];
            }
            continue;
        }
        for (int a = 0; a < 3; a++) {
            if (c->velocity[a] != 0) p[a] += h * c->velocity[a];
            if (c->end_velocity[a] != 0) c->end[a] += h * c->end_velocity[a];
        }
    }
}

void tw_colliders_advance(tw_world *w, double h)
{
    tw_colliders_advanced(w, h, w->colliders);
    memset(w->cmoved, 0, sizeof w->cmoved);
}

double tw_collider_distance(const tw_collider_def *c, const double x[3], double n[3])
{
    return tw_collider_distance_hd(c, x, n);
}

int tw_contact_detect(tw_world *w, const tw_real *x, double heff)
{
    int n = w->fem.n, count = 0;
    memcpy(w->fcons, w->cons, (size_t)n);
    memset(w->cslip, 0, sizeof(tw_real) * 3 * (size_t)n); /* w->rhs is new */
    w->cbase = x;
    for (int i = 0; i < n; i++) w->cfprev[2 * (size_t)i + 1] = -1; /* no earlier solve this step (body contacts too) */
    if (!w->ncolliders) return 0;
    double touch = TW_CONTACT_TOUCH * w->size;
    for (int i = 0; i < n; i++) {
        w->cfric[i] = 0; /* A is freshly assembled */
        if (w->cons[i]) continue;
        if (!tw_contact_mark_vertex(w->colliders, w->ncolliders, x + 3 * (size_t)i, w->v + 3 * (size_t)i,
                                    w->cimpulse[i], touch, heff,
                                    w->cnormal + 3 * (size_t)i, &w->cdist[i], &w->cmu[i], &w->ccol[i],
                                    w->cvel + 3 * (size_t)i)) {
            /* a contact that left: its next first pass has no friction. In a
             * world of bodies the vertex may have a body contact instead,
             * which reads this impulse too: tw_bodies_detect zeroes it
             * once it knows. */
            if (!w->bodies) w->cimpulse[i] = 0;
            continue;
        }
        w->fcons[i] = TW_FILTER_NORMAL;
        count++;
    }
    return count;
}

/* May vertex i's contact stick (TW_CONTACT_STICK)? A collider's, with
 * friction. (A body contact's coupled solve keeps the damping.) */
static int can_stick(const tw_world *w, int i) { return w->ccol[i] < w->ncolliders && w->cmu[i] > 0; }

/* Stuck vertex i's velocity in v (tw_contact_stick_velocity), from the
 * step's base positions w->cbase (w->x: implicit Euler). */
static void stick_velocity(const tw_world *w, tw_real *v, int i, double heff)
{
    size_t k = 3 * (size_t)i;
    int bdf2 = w->cbase && w->cbase != w->x;
    tw_contact_stick_velocity_at(v + k, w->cnormal + k, w->cvel + k, w->x + k, bdf2 ? w->cbase + k : NULL,
                                 w->cdist[i], heff, w->def.dt);
}

void tw_contact_friction_implicit(tw_world *w, double heff)
{
    const tw_fem *f = &w->fem;
    double vt_min = TW_CONTACT_TOUCH * w->size / heff;
    for (int i = 0; i < f->n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        size_t k = 3 * (size_t)i;
        if (can_stick(w, i) &&
            tw_contact_starts_stuck(w->v + k, w->cvel + k, w->cnormal + k, w->cmu[i], w->cimpulse[i], vt_min)) {
            w->fcons[i] = TW_CONTACT_STICK;
            stick_velocity(w, w->vnew, i, heff);
            continue;
        }
        tw_contact_friction_block(w->A + 9 * (size_t)f->diag[i], w->rhs + k, w->cnormal + k, w->v + k, w->cvel + k,
                                  w->cmu[i], w->cimpulse[i], vt_min, &w->cfric[i]);
    }
}

int tw_contact_newton_hold(tw_world *w, int on)
{
    int count = 0;
    for (int i = 0; i < w->fem.n; i++) /* a slip friction held too */
        count += tw_contact_hold_vertex(&w->fcons[i], tw_contact_slipping(w->cslip + 3 * (size_t)i) ? 1 : w->cfric[i],
                                        on);
    return count;
}

void tw_contact_land_all(tw_world *w, tw_real *v, double heff)
{
    double h = w->def.dt;
    for (int i = 0; i < w->fem.n; i++) {
        size_t k = 3 * (size_t)i;
        if (w->fcons[i] == TW_CONTACT_STICK) stick_velocity(w, v, i, heff);
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        tw_contact_land(v + k, w->cnormal + k, w->cdist[i], heff, tw_contact_reach(w->cvel + k, w->cnormal + k, h));
    }
}

/* Stuck vertex i's constraint impulse p = (A v - b)_i (it has no damping)
 * and its normal part *J. */
static void stuck_impulse(const tw_world *w, const tw_real *b, const tw_real *v, int i, double p[3], double *J)
{
    const tw_fem *f = &w->fem;
    const tw_real *nn = w->cnormal + 3 * (size_t)i;
    tw_contact_vertex_impulse(f->row_ptr, f->col, w->A, v, b, nn, 0, w->cvel + 3 * (size_t)i, i, p);
    *J = p[0] * nn[0] + p[1] * nn[1] + p[2] * nn[2];
}

double tw_contact_patch(const tw_world *w, const tw_real *b, const tw_real *v, double heff)
{
    const tw_fem *f = &w->fem;
    double mass = tw_contact_patch_mass(w) * (1 + heff * w->def.damping_mass);
    if (!(mass > 0)) return 0;
    double s[TW_CONTACT_PATCH_SUMS] = {0};
    for (int i = 0; i < f->n; i++) {
        if (!tw_contact_active(w->fcons[i]) || w->cons[i] || !(w->cdist[i] < INFINITY)) continue;
        size_t k = 3 * (size_t)i;
        if (w->fcons[i] == TW_CONTACT_STICK) {
            double p[3], J;
            stuck_impulse(w, b, v, i, p, &J);
            for (int a = 0; a < 3; a++) p[a] -= J * w->cnormal[k + a];
            tw_contact_patch_add_impulse(s, p, NULL, w->cvel + k, w->cnormal + k, w->cmu[i], J);
            continue;
        }
        double J = tw_contact_impulse(f->row_ptr, f->col, w->A, v, b, w->cnormal + k, i);
        if (tw_contact_slipping(w->cslip + k)) {
            double sl[3] = {w->cslip[k], w->cslip[k + 1], w->cslip[k + 2]};
            tw_contact_patch_add_impulse(s, sl, v + k, w->cvel + k, w->cnormal + k, w->cmu[i], J);
            continue;
        }
        tw_contact_patch_add(s, v + k, w->cvel + k, w->cnormal + k, w->cfric[i], w->cmu[i], J);
    }
    double vt_min = TW_CONTACT_TOUCH * w->size / heff;
    double speed = tw_contact_patch_speed(s, mass, TW_CONTACT_PTOL, vt_min);
    if (speed == 0 && w->ncolliders && tw_contact_patch_stops(s, mass, TW_CONTACT_PTOL, vt_min))
        return TW_CONTACT_PATCH_STOPS;
    return speed;
}

int tw_contact_update(tw_world *w, const tw_real *b, tw_real *v, double heff, int *friction)
{
    const tw_fem *f = &w->fem;
    double g = sqrt(w->def.gravity[0] * w->def.gravity[0] + w->def.gravity[1] * w->def.gravity[1] +
                    w->def.gravity[2] * w->def.gravity[2]);
    double gtol = TW_CONTACT_GTOL * w->size, touch = TW_CONTACT_TOUCH * w->size, vt_min = touch / heff;
    double h = w->def.dt;
    double cm = 1 + heff * w->def.damping_mass; /* A's mass term is m cm */
    int changed = 0, fr = 0;
    double patch_v = tw_contact_patch(w, b, v, heff);
    for (int i = 0; i < f->n; i++) {
        if (w->cons[i] || !(w->cdist[i] < INFINITY)) continue;
        size_t k = 3 * (size_t)i;
        double J = 0, p[3];
        int stuck = w->fcons[i] == TW_CONTACT_STICK;
        if (w->fcons[i] == TW_FILTER_NORMAL) J = tw_contact_impulse(f->row_ptr, f->col, w->A, v, b, w->cnormal + k, i);
        if (stuck) stuck_impulse(w, b, v, i, p, &J);
        /* b is w->rhs: the friction of a moving collider writes its row */
        int r = tw_contact_update_vertex(&w->fcons[i], w->A + 9 * (size_t)f->diag[i], w->rhs + k, &w->cfric[i],
                                         &w->cimpulse[i], w->cfprev + 2 * (size_t)i, v + k, w->cvel + k,
                                         w->cnormal + k, w->cdist[i], tw_contact_reach(w->cvel + k, w->cnormal + k, h),
                                         w->cmu[i], J, heff, f->mass[i] * cm, TW_CONTACT_JTOL * f->mass[i] * g * heff,
                                         gtol, vt_min, tw_contact_rounding_speed(touch, w->cbase + k, heff),
                                         TW_CONTACT_FTOL, patch_v, can_stick(w, i), w->cslip + k, stuck ? p : NULL);
        changed += (r & TW_CONTACT_CHANGED) != 0;
        fr += (r & TW_CONTACT_FRICTION) != 0;
    }
    tw_contact_land_all(w, v, heff); /* the joined ones, after every impulse was read */
    if (friction) *friction = fr;
    return changed;
}

void tw_contact_forces(tw_world *w, const tw_real *b, const tw_real *v, double heff)
{
    const tw_fem *f = &w->fem;
    for (int i = 0; i < f->n; i++) {
        if (!tw_contact_active(w->fcons[i]) || w->ccol[i] >= w->ncolliders) continue;
        size_t k = 3 * (size_t)i;
        double p[3];
        tw_contact_vertex_impulse(f->row_ptr, f->col, w->A, v, b, w->cnormal + k, w->cfric[i], w->cvel + k, i, p);
        for (int a = 0; a < 3; a++) p[a] += w->cslip[k + a]; /* b holds it; the body's own rows do not */
        for (int a = 0; a < 3; a++) w->cforce[w->ccol[i]][a] -= p[a] / heff;
    }
}

int tw_contact_shift(const tw_world *w, tw_real *s)
{
    int any = 0;
    for (int i = 0; i < w->fem.n; i++) {
        tw_real *si = s + 3 * (size_t)i;
        const tw_real *vc = w->cvel + 3 * (size_t)i, *nn = w->cnormal + 3 * (size_t)i;
        si[0] = si[1] = si[2] = 0;
        if (w->fcons[i] != TW_FILTER_NORMAL || !tw_contact_moving(vc)) continue;
        double vcn = (double)vc[0] * nn[0] + (double)vc[1] * nn[1] + (double)vc[2] * nn[2];
        for (int a = 0; a < 3; a++) si[a] = (tw_real)(vc[a] - vcn * nn[a]);
        any = 1;
    }
    return any;
}

/* The momentum a projection gave vertex i (its velocity went from v0 to vi)
 * onto its collider's force, over h. */
static void projection_force(tw_world *w, int i, const tw_real *v0, const tw_real *vi, double h)
{
    if (w->ccol[i] >= w->ncolliders) return;
    double m = w->fem.mass[i];
    for (int a = 0; a < 3; a++) w->cforce[w->ccol[i]][a] -= m * ((double)vi[a] - v0[a]) / h;
}

int tw_contact_project_positions(tw_world *w, tw_real *x)
{
    int count = 0;
    memcpy(w->fcons, w->cons, (size_t)w->fem.n);
    if (!w->ncolliders) return 0;
    double touch = TW_CONTACT_TOUCH * w->size; /* tw_contact_detect's */
    for (int i = 0; i < w->fem.n; i++) {
        if (w->cons[i]) continue;
        if (!tw_contact_project_vertex_touching(w->colliders, w->ncolliders, touch, x + 3 * (size_t)i,
                                                w->cnormal + 3 * (size_t)i, &w->cmu[i], &w->ccol[i],
                                                w->cvel + 3 * (size_t)i))
            continue;
        w->fcons[i] = TW_FILTER_NORMAL;
        count++;
    }
    return count;
}

void tw_contact_project_velocities(tw_world *w, tw_real *v, tw_real *acc, double h)
{
    for (int i = 0; i < w->fem.n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        size_t k = 3 * (size_t)i;
        const tw_real *nn = w->cnormal + k;
        tw_real v0[3] = {v[k], v[k + 1], v[k + 2]};
        tw_contact_project_velocity(v + k, nn, w->cmu[i], w->cvel + k);
        projection_force(w, i, v0, v + k, h);
        if (acc) tw_contact_project_acceleration(acc + k, nn, w->cmu[i], v + k, w->cvel + k, h);
    }
}

int tw_contact_project(tw_world *w, tw_real *x, tw_real *v, double h)
{
    int n = w->fem.n, deep = 0;
    memcpy(w->fcons, w->cons, (size_t)n);
    if (!w->ncolliders) return 0;
    double tol = 1e-4 * w->size;
    for (int i = 0; i < n; i++) {
        if (w->cons[i]) continue;
        size_t k = 3 * (size_t)i;
        tw_real *xi = x + k, x0[3] = {xi[0], xi[1], xi[2]};
        if (!tw_contact_project_vertex(w->colliders, w->ncolliders, xi, w->cnormal + k, &w->cmu[i], &w->ccol[i],
                                       w->cvel + k))
            continue;
        double m2 = 0;
        for (int a = 0; a < 3; a++) m2 += ((double)xi[a] - x0[a]) * ((double)xi[a] - x0[a]);
        deep += m2 > tol * tol;
        tw_real v0[3] = {v[k], v[k + 1], v[k + 2]};
        tw_contact_project_velocity(v + k, w->cnormal + k, w->cmu[i], w->cvel + k);
        projection_force(w, i, v0, v + k, h);
    }
    return deep;
}
