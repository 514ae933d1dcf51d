/* Contact with colliders (static or moving), per vertex: the math host/contact.c runs in
 * its loops and the CUDA kernels (kernels/cuda_contact.cu) run on one thread
 * each. TW_HD inline, C11 and nvcc alike (see hd.h); the design is at the top
 * of host/contact.c.
 *
 * Distances, normals and the contact test are in double (the colliders
 * are double); what is stored per contact (normal, distance, friction) is
 * tw_real, and every expression here keeps the CPU's exact types, so the
 * CPU's results are those it had before these were shared. A moving
 * collider's velocity (vc, per contact) enters through the relative
 * velocity; where vc is zero each function runs the static collider's
 * arithmetic unchanged, so static contacts give the same bits. */
#ifndef TW_CONTACT_HD_H
#define TW_CONTACT_HD_H
#include <float.h> /* tw_contact_touch */
#include <math.h>

#include "hd/hd.h"
#include "solver.h" /* TW_FILTER_NORMAL, TW_FILTER_STICK */

/* A capsule's segment parameter in [0, 1] of the point nearest x. */
TW_HD double tw_capsule_param(const tw_collider_def *c, const double x[3])
{
    double ab = 0, ax = 0;
    for (int a = 0; a < 3; a++) {
        double e = c->end[a] - c->center[a];
        ab += e * e;
        ax += (x[a] - c->center[a]) * e;
    }
    return ab > 0 ? fmin(fmax(ax / ab, 0.0), 1.0) : 0.0;
}

/* Signed distance of x to c (m, negative inside) and the outward unit normal
 * there (tw_collider_distance). */
TW_HD double tw_collider_distance_hd(const tw_collider_def *c, const double x[3], double n[3])
{
    if (c->kind == TW_COLLIDER_PLANE) {
        double l = sqrt(c->normal[0] * c->normal[0] + c->normal[1] * c->normal[1] + c->normal[2] * c->normal[2]);
        double d = 0;
        for (int a = 0; a < 3; a++) {
            n[a] = c->normal[a] / l;
            d += (x[a] - c->point[a]) * n[a];
        }
        return d;
    }
    if (c->kind == TW_COLLIDER_SPHERE) {
        double r[3], l = 0;
        for (int a = 0; a < 3; a++) {
            r[a] = x[a] - c->center[a];
            l += r[a] * r[a];
        }
        l = sqrt(l);
        for (int a = 0; a < 3; a++) n[a] = l > 0 ? r[a] / l : (a == 2);
        return l - c->radius;
    }
    if (c->kind == TW_COLLIDER_CAPSULE) {
        double t = tw_capsule_param(c, x), r[3], l = 0;
        for (int a = 0; a < 3; a++) {
            r[a] = x[a] - (c->center[a] + t * (c->end[a] - c->center[a]));
            l += r[a] * r[a];
        }
        l = sqrt(l);
        for (int a = 0; a < 3; a++) n[a] = l > 0 ? r[a] / l : (a == 2);
        return l - c->radius;
    }
    /* box: outside, the distance to the nearest point; inside, minus the
     * distance to the nearest face */
    double q[3], out = 0, inside = -INFINITY;
    int axis = 0;
    for (int a = 0; a < 3; a++) {
        q[a] = fabs(x[a] - c->center[a]) - c->half_extents[a];
        if (q[a] > 0) out += q[a] * q[a];
        if (q[a] > inside) { inside = q[a]; axis = a; }
    }
    if (out > 0) {
        double l = sqrt(out);
        for (int a = 0; a < 3; a++) n[a] = q[a] > 0 ? copysign(q[a], x[a] - c->center[a]) / l : 0;
        return l;
    }
    for (int a = 0; a < 3; a++) n[a] = a == axis ? copysign(1.0, x[a] - c->center[a]) : 0;
    return inside;
}

/* The velocity of c's surface nearest x, m/s: c->velocity, for a capsule
 * interpolated between its ends' velocities. */
TW_HD void tw_collider_velocity_hd(const tw_collider_def *c, const double x[3], double v[3])
{
    double t = c->kind == TW_COLLIDER_CAPSULE ? tw_capsule_param(c, x) : 0;
    for (int a = 0; a < 3; a++) v[a] = c->velocity[a] + t * (c->end_velocity[a] - c->velocity[a]);
}

/* No contact with a collider (tw_contact_nearest's *which). */
#define TW_CONTACT_NONE 255

/* The deepest of the nc colliders at xi: its distance, normal, friction
 * coefficient, index (*which) and surface velocity (vc); +inf (n, mu, which
 * and vc untouched) when there is none. */
TW_HD double tw_contact_nearest(const tw_collider_def *cs, int nc, const tw_real *xi, double n[3], double *mu,
                                int *which, double vc[3])
{
    double x[3] = {xi[0], xi[1], xi[2]}, best = INFINITY, m[3];
    for (int k = 0; k < nc; k++) {
        double d = tw_collider_distance_hd(&cs[k], x, m);
        if (d < best) {
            best = d;
            n[0] = m[0]; n[1] = m[1]; n[2] = m[2];
            *mu = cs[k].friction;
            *which = k;
        }
    }
    if (best < INFINITY) tw_collider_velocity_hd(&cs[*which], x, vc);
    return best;
}

/* 1 when vc (a contact's collider velocity) is not zero. */
TW_HD int tw_contact_moving(const tw_real *vc) { return vc[0] != 0 || vc[1] != 0 || vc[2] != 0; }

/* How far the collider's surface moves along nn in a step of h: h vc.n (m). */
TW_HD double tw_contact_reach(const tw_real *vc, const tw_real *nn, double h)
{
    return tw_contact_moving(vc) ? h * ((double)vc[0] * nn[0] + (double)vc[1] * nn[1] + (double)vc[2] * nn[2]) : 0;
}

/* The contact passes of an implicit step (host/step.c): at most this many
 * solves, each followed by the active-set update below. */
#define TW_CONTACT_PASSES 8

/* Of those, the solves for friction alone (the normal set unchanged) at
 * most: friction is solved again while some contact's is off Coulomb's
 * (tw_contact_update_vertex's TW_CONTACT_FRICTION: beyond TW_CONTACT_FTOL
 * for a vertex, TW_CONTACT_PTOL for the set), so a step whose friction
 * settles in a solve pays nothing more. The lagged friction approaches
 * Coulomb's bound over several solves (stopped after two, a block on a
 * slope just inside the friction cone kept a few per cent less friction
 * than its load and slid off); the cap bounds the contacts whose friction
 * does not settle within the tolerance, cycling between sticking and
 * sliding or creeping. */
#define TW_CONTACT_FRICTION_PASSES 6

/* Another contact solve after an active-set update: while the update
 * changed the normal set, or friction alone is off Coulomb's and has had
 * fewer than TW_CONTACT_FRICTION_PASSES solves of its own; never past
 * max_passes solves in all. The CPU's and the device's pass loops share it. */
TW_HD int tw_contact_solve_again(int changed, int friction, int friction_passes, int passes, int max_passes)
{
    return (changed || (friction && friction_passes < TW_CONTACT_FRICTION_PASSES)) && passes < max_passes;
}

/* Is a free vertex in the first pass's active set (tw_contact_detect)?
 * Inside, or touching (d <= touch) and not separating: its start velocity
 * (normal part vn) leaves it within touch at the end of the step,
 * d + heff vn <= touch. A vertex resting on the surface has d and vn at
 * the level of rounding (the end-of-step projection and the landing put it
 * there to the last bit, BDF2's base (4 x_n - x_n-1)/3 moves it by bits
 * every step), so a sign test vn <= 0 would drop about half of a resting
 * body's loaded contacts from each step's first solve, without friction
 * and without their last impulse; touch (tw_contact_touch) is many of
 * those roundings. A vertex separating faster than that is out; one that
 * is pulled after all is released by the update. A vertex that is still
 * away from the surface joins only once a solve shows it would cross it. */
TW_HD int tw_contact_is_in(double d, double vn, double touch, double heff)
{
    return d < 0 || (d <= touch && d + heff * vn <= touch);
}

/* The body's touch distance over its size (a millionth: many roundings of
 * either precision near the origin), and the friction speed threshold's
 * distance per step (vt_min = TW_CONTACT_TOUCH size / heff). */
#define TW_CONTACT_TOUCH 1e-6

/* tw_contact_touch's roundings of a coordinate. */
#define TW_CONTACT_TOUCH_ROUNDINGS 8

/* The touch distance of tw_contact_is_in at a vertex at xi, m: touch
 * (TW_CONTACT_TOUCH x the body's size) or TW_CONTACT_TOUCH_ROUNDINGS
 * roundings of xi's largest coordinate, whichever is more. The rounding of a position grows with its
 * distance from the origin (|x| FLT_EPSILON, 1.2e-5 m at 100 m in float, a
 * 0.2 m body's touch 2e-7 m), and a resting vertex's d and vn are that
 * rounding; the collider's point near xi is about as far (distances are
 * computed in double from xi: xi's rounding is the one that counts). */
TW_HD double tw_contact_touch(double touch, const tw_real *xi)
{
#ifdef TW_DOUBLE
    const double eps = DBL_EPSILON;
#else
    const double eps = FLT_EPSILON;
#endif
    double m = fmax(fabs((double)xi[0]), fmax(fabs((double)xi[1]), fabs((double)xi[2])));
    return fmax(touch, TW_CONTACT_TOUCH_ROUNDINGS * eps * m);
}

/* The speed that moves a vertex at xi (the step's base position) by a
 * quarter of its coordinates' rounding in the step, eps |x| / (4 heff)
 * (under half the unit in the last place of x: a move that rounds back to
 * where it was), m/s, from the rounding part of tw_contact_touch's distance
 * (its TW_CONTACT_TOUCH_ROUNDINGS roundings of x beyond the body's touch:
 * eps |x| / (4 heff) less touch / (4 TW_CONTACT_TOUCH_ROUNDINGS heff));
 * 0 near the origin, where the body's touch is the larger. In float a coordinate near 100 m rounds to 7.6e-6 m,
 * and the elastic forces of positions that coarse move a resting vertex of
 * the 0.2 m block (E 1e6) at 3-5 mm/s, micrometres in a 1 ms step: a
 * stuck contact's impulse carries that rounding (tw_contact_update_stuck),
 * and at a quarter rounding it no longer flips stuck contacts (at a
 * sixteenth it still did, at 1/60 s). (The
 * friction's speed threshold vt_min, TW_CONTACT_TOUCH size / heff, stays
 * the body's: raised to tw_contact_touch / heff, it let stuck contacts slip
 * on unstopped, and the placed block 100 m away crept 0.64 mm in a second
 * at 1/60 s.) */
TW_HD double tw_contact_rounding_speed(double touch, const tw_real *xi, double heff)
{
    return (tw_contact_touch(touch, xi) - touch) / (4 * TW_CONTACT_TOUCH_ROUNDINGS * heff);
}

/* Vertex i (free) at the start of an implicit step: writes the nearest
 * collider's normal, distance, friction, index and surface velocity
 * (distance +inf, normal z, no friction, TW_CONTACT_NONE, velocity 0 when
 * there is none: such a vertex never joins) and returns 1 when it starts in
 * the active set (the body of tw_contact_detect's loop); the normal velocity
 * tested is the one relative to the collider, against the touch distance
 * tw_contact_touch gives at xi from the body's touch. Beyond the body's
 * touch, within the rounding of xi (far from the origin), only a contact
 * that carried load in the last step (J its normal impulse then) is in: a
 * resting one is there by rounding, while one the body lifts a few
 * roundings off the surface (the upper edge of the block on the slope 100
 * m away, float) would be in every step only to be released by the first
 * solve, a solve a step spent on it. */
TW_HD int tw_contact_mark_vertex(const tw_collider_def *cs, int nc, const tw_real *xi, const tw_real *vi, tw_real J,
                                 double touch, double heff, tw_real nrm[3], tw_real *dist, tw_real *fric, unsigned char *col,
                                 tw_real vel[3])
{
    double nn[3] = {0, 0, 1}, mu = 0, vc[3] = {0, 0, 0};
    int k = TW_CONTACT_NONE;
    double d = tw_contact_nearest(cs, nc, xi, nn, &mu, &k, vc);
    tw_real r[3];
    for (int a = 0; a < 3; a++) {
        vel[a] = (tw_real)vc[a];
        r[a] = vi[a] - vel[a];
    }
    double vn = r[0] * nn[0] + r[1] * nn[1] + r[2] * nn[2];
    *fric = (tw_real)mu;
    *col = (unsigned char)k;
    for (int a = 0; a < 3; a++) nrm[a] = (tw_real)nn[a];
    *dist = (tw_real)d;
    return tw_contact_is_in(d, vn, d > touch && !(J > 0) ? touch : tw_contact_touch(touch, xi), heff);
}

/* A contact's prescribed normal velocity (the contact passes):
 * (reach - dist) / heff, so x + heff v lands on the surface (or leaves a
 * penetration) this step, where the surface has moved by reach along the
 * normal (tw_contact_reach; 0 for a static collider); the tangential part of
 * vi is kept. */
TW_HD void tw_contact_land(tw_real *vi, const tw_real *nn, tw_real dist, double heff, double reach)
{
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    double target = reach != 0 ? (reach - dist) / heff : -dist / heff;
    for (int c = 0; c < 3; c++) vi[c] += (tw_real)((target - vn) * nn[c]);
}

/* |v_t|, the tangential speed of vi on the plane of nn (m/s). */
TW_HD double tw_contact_tangential_speed(const tw_real *vi, const tw_real *nn)
{
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2], vt2 = 0;
    for (int a = 0; a < 3; a++) vt2 += (vi[a] - vn * nn[a]) * (vi[a] - vn * nn[a]);
    return sqrt(vt2);
}

/* Implicit friction: adds (cf_new - *cf) (I - n n^T) to the vertex's
 * diagonal block D, so that D holds the tangential damping cf_new (N s/m),
 * and stores cf_new in *cf. On a moving collider the damping acts on the
 * velocity relative to it, -cf (I - n n^T)(v - vc): its vc part goes to the
 * vertex's right-hand side bi. */
TW_HD void tw_contact_set_damping(tw_real *D, tw_real *bi, const tw_real *nn, const tw_real *vc, tw_real *cf,
                                  double cf_new)
{
    double dd = cf_new - *cf;
    *cf = (tw_real)cf_new;
    if (dd == 0) return;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) D[3 * r + c] += (tw_real)(dd * ((r == c) - nn[r] * nn[c]));
    if (!tw_contact_moving(vc)) return;
    double vcn = (double)vc[0] * nn[0] + (double)vc[1] * nn[1] + (double)vc[2] * nn[2];
    for (int r = 0; r < 3; r++) bi[r] += (tw_real)(dd * (vc[r] - vcn * nn[r]));
}

/* vi - vc: the velocity relative to the contact's collider (vi itself, to
 * the bit, for a static one). */
TW_HD void tw_contact_relative(const tw_real *vi, const tw_real *vc, tw_real r[3])
{
    if (!tw_contact_moving(vc)) {
        r[0] = vi[0]; r[1] = vi[1]; r[2] = vi[2];
        return;
    }
    for (int a = 0; a < 3; a++) r[a] = vi[a] - vc[a];
}

/* The first pass's implicit friction (tw_contact_friction_implicit): damping
 * d with d |v_t| = mu J, J the last step's normal impulse (N s), v_t the
 * tangential velocity relative to the collider (vc) at the start of the
 * step; |v_t| is at least vt_min (1e-6 size / heff: a stuck vertex gets a
 * very large d). Nothing unless J > 0. bi: the vertex's right-hand side. */
TW_HD void tw_contact_friction_block(tw_real *D, tw_real *bi, const tw_real *nn, const tw_real *vi,
                                     const tw_real *vc, tw_real mu, tw_real J, double vt_min, tw_real *cf)
{
    if (!(J > 0) || !(mu > 0)) return;
    tw_real r[3];
    tw_contact_relative(vi, vc, r);
    double vt = fmax(tw_contact_tangential_speed(r, nn), vt_min);
    tw_contact_set_damping(D, bi, nn, vc, cf, mu * J / vt);
}

/* An active contact with friction during the Newton iterations after the
 * contact passes (tw_contact_newton_hold): the filter holds all of its
 * velocity, as for a kinematic vertex, so that the Newton steps keep the
 * tangential velocity the passes' friction gave it. */
#define TW_CONTACT_HELD 4

/* A contact in static friction (stuck): the filter holds all three of its
 * velocity components, as for a kinematic vertex, at the collider's
 * tangential velocity and the landing normal velocity
 * (tw_contact_stick_velocity). Baraff and Witkin 1998, "Large steps in
 * cloth simulation", sec. 5: a constraint in the filtered CG prescribes the
 * vertex's velocity change (S = 0 on its three directions), and the force
 * the constraint needs is read back from the solve, (A v - b)_i. Its normal
 * part is the normal impulse J, its tangential part f_t the friction that
 * holds the vertex; the vertex slips (back to TW_FILTER_NORMAL, the normal
 * alone constrained, with kinetic friction) when |f_t| > mu J, and leaves
 * the contact when J pulls. Held by a constraint, a stuck vertex does not
 * move at all; a stuck vertex modelled as a very large tangential damping
 * instead moves at the small speed that its damping allows, and a body
 * resting just inside the friction cone creeps down a slope. Never set
 * without friction (mu > 0 and a normal impulse), so frictionless contact
 * is TW_FILTER_NORMAL alone. */
#define TW_CONTACT_STICK TW_FILTER_STICK

/* 1 for an active contact: normal-constrained or stuck. */
TW_HD int tw_contact_active(unsigned char fc) { return fc == TW_FILTER_NORMAL || fc == TW_CONTACT_STICK; }

/* A stuck contact's prescribed velocity: on the tangent plane, the one that
 * takes the vertex from xbase (x+ = xbase + heff v+) to where it started
 * the step, x_n, moved with the collider (vc) for the step h:
 * (x_n - xbase + h vc) / heff, vc itself for implicit Euler (back NULL:
 * xbase = x_n, heff = h); for BDF2 back = x_n - xbase. Along nn, the
 * landing normal velocity (tw_contact_land). */
TW_HD void tw_contact_stick_velocity(tw_real *vi, const tw_real *nn, const tw_real *vc, const tw_real *back,
                                     tw_real dist, double heff, double h, double reach)
{
    for (int a = 0; a < 3; a++) vi[a] = back ? (tw_real)((back[a] + h * (double)vc[a]) / heff) : vc[a];
    tw_contact_land(vi, nn, dist, heff, reach);
}

/* tw_contact_stick_velocity from the step's positions: xi = x_n, xbi the
 * step's base xbase where it is not x_n (BDF2 with its history, heff =
 * 2h/3), NULL where it is (implicit Euler, BDF2's first step or restart:
 * heff = h, back = 0). The CUDA kernels pass xbi by the step's history, not
 * by whether a separate base array exists: the device's BDF2 keeps one even
 * on its first step, where (0 + h vc) / h need not round back to vc. */
TW_HD void tw_contact_stick_velocity_at(tw_real *vi, const tw_real *nn, const tw_real *vc, const tw_real *xi,
                                        const tw_real *xbi, tw_real dist, double heff, double h)
{
    tw_real back[3];
    if (xbi)
        for (int a = 0; a < 3; a++) back[a] = xi[a] - xbi[a];
    tw_contact_stick_velocity(vi, nn, vc, xbi ? back : NULL, dist, heff, h, tw_contact_reach(vc, nn, h));
}

/* Does active contact vertex i start the step stuck (tw_contact_friction_implicit)?
 * When it has friction (mu > 0), the collider pressed it last step (J > 0,
 * its normal impulse then) and its tangential velocity relative to the
 * collider (vc) at the step's start is at most vt_min: it ended the last
 * step stuck, or slid slower than the threshold. */
TW_HD int tw_contact_starts_stuck(const tw_real *vi, const tw_real *vc, const tw_real *nn, tw_real mu, tw_real J,
                                  double vt_min)
{
    if (!(J > 0) || !(mu > 0)) return 0;
    tw_real r[3];
    tw_contact_relative(vi, vc, r);
    return tw_contact_tangential_speed(r, nn) <= vt_min;
}

/* Holds (on) or releases vertex fc's contact for the Newton iterations
 * (TW_FILTER_NORMAL with damping cf > 0 <-> TW_CONTACT_HELD); returns 1
 * when it changed. */
TW_HD int tw_contact_hold_vertex(unsigned char *fc, tw_real cf, int on)
{
    if (on && *fc == TW_FILTER_NORMAL && cf > 0) {
        *fc = TW_CONTACT_HELD;
        return 1;
    }
    if (!on && *fc == TW_CONTACT_HELD) {
        *fc = TW_FILTER_NORMAL;
        return 1;
    }
    return 0;
}

/* tw_contact_update_vertex's tolerances (host/contact.c, the CUDA kernels):
 * a pull below TW_CONTACT_JTOL x the vertex's weight impulse m g heff is noise
 * of the inexact solve, and so is a landing TW_CONTACT_GTOL x the body's size
 * inside; friction within TW_CONTACT_FTOL (relative) of Coulomb's is
 * Coulomb's; a stuck contact holds at most 1 + TW_CONTACT_STOL times
 * Coulomb's friction (tw_contact_update_stuck). */
#define TW_CONTACT_JTOL 1e-3
#define TW_CONTACT_GTOL 1e-5
#define TW_CONTACT_FTOL 0.02
#define TW_CONTACT_STOL 0.005

/* The contact set's sums for its sliding speed (tw_contact_patch_speed),
 * over the active contacts with friction after a solve: [0..2] the friction
 * impulses cf (I - n n^T)(v_i - vc) (N s), [3] Coulomb's bound, the sum of
 * mu J, [4..6] the tangential velocities weighted by J, [7] the sum of J,
 * [8] the tangential speeds weighted by J. */
#define TW_CONTACT_PATCH_SUMS 9

/* Adds active contact vertex vi (its damping cf, friction mu, normal
 * impulse J of this solve) to the sums s; nothing unless J > 0 and mu > 0. */
TW_HD void tw_contact_patch_add(double *s, const tw_real *vi, const tw_real *vc, const tw_real *nn, tw_real cf,
                                tw_real mu, double J)
{
    if (!(J > 0) || !(mu > 0)) return;
    tw_real r[3];
    tw_contact_relative(vi, vc, r);
    double rn = r[0] * nn[0] + r[1] * nn[1] + r[2] * nn[2], vt2 = 0;
    for (int a = 0; a < 3; a++) {
        double vt = r[a] - rn * nn[a];
        s[a] += cf * vt;
        s[4 + a] += J * vt;
        vt2 += vt * vt;
    }
    s[3] += mu * J;
    s[7] += J;
    s[8] += J * sqrt(vt2);
}

/* Adds a contact vertex whose friction is an impulse fr (N s, on the
 * vertex) rather than a damping to the sums s: a stuck one
 * (TW_CONTACT_STICK: fr the tangential part of its constraint impulse
 * (A v - b)_i, vi NULL: no velocity relative to the collider) or one
 * slipping from stuck (fr its slip friction); the sums hold the opposite
 * of the friction on the vertex, as for the damping's. Nothing unless
 * J > 0 and mu > 0. */
TW_HD void tw_contact_patch_add_impulse(double *s, const double *fr, const tw_real *vi, const tw_real *vc,
                                        const tw_real *nn, tw_real mu, double J)
{
    if (!(J > 0) || !(mu > 0)) return;
    double vt2 = 0;
    tw_real r[3] = {0, 0, 0};
    if (vi) tw_contact_relative(vi, vc, r);
    double rn = r[0] * nn[0] + r[1] * nn[1] + r[2] * nn[2];
    for (int a = 0; a < 3; a++) {
        double vt = r[a] - rn * nn[a];
        s[a] -= fr[a];
        s[4 + a] += J * vt;
        vt2 += vt * vt;
    }
    s[3] += mu * J;
    s[7] += J;
    s[8] += J * sqrt(vt2);
}

/* The speed the contact set slides at, from the body sliding as a whole;
 * 0 where that model does not apply or the set's friction is Coulomb's
 * within tol. By the body's tangential momentum, of mass M (its inertia in
 * A, m (1 + heff alpha) summed), friction |F| (the vector sum of the
 * contacts' friction impulses: internal stresses cancel) where Coulomb
 * allows C = sum mu J changes its speed along F by (|F| - C) / M: from
 * the solve's common speed (the J-weighted mean of the contacts' tangential
 * velocities along F) to
 *   - more, where |F| > C (1 + tol): the contacts held more than Coulomb
 *     allows (a stuck set whose load has left the cone breaks away);
 *   - less, where |F| < C (1 - tol) while the set slides as one (the
 *     J-weighted mean velocity at least 0.98 of the mean speed: not
 *     turning or spreading, as a body's feet do when it lands, where the
 *     contacts do not share one speed and the per-vertex model fits).
 * Each contact vertex alone sees only its own block (its mass and the stiff
 * springs to its neighbours), a response far stiffer than the mass over
 * the contacts that a sliding body gives each of them: from it alone a
 * stuck set under a load that has left the cone breaks away over several
 * steps instead of one, and a sliding one settles a few per cent off
 * Coulomb's friction (which, where the load only just exceeds Coulomb's
 * bound, is many per cent of the net force). A result at most vt_min, or
 * mass <= 0, is 0. */
TW_HD double tw_contact_patch_speed(const double *s, double mass, double tol, double vt_min)
{
    double F = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]), C = s[3];
    if (!(mass > 0) || !(C > 0) || !(s[7] > 0)) return 0;
    double common = F > 0 ? (s[4] * s[0] + s[5] * s[1] + s[6] * s[2]) / (F * s[7]) : 0, v = 0;
    double coherent = sqrt(s[4] * s[4] + s[5] * s[5] + s[6] * s[6]) >= 0.98 * s[8];
    if (F > C * (1 + tol)) v = fmax(common, 0.0) + (F - C) / mass;
    else if (F < C * (1 - tol) && coherent) v = common - (C - F) / mass;
    return v > vt_min ? v : 0;
}

/* The contact set comes to rest within the step (tw_contact_update's
 * patch speed TW_CONTACT_PATCH_STOPS): where tw_contact_patch_speed's
 * model applies to a set sliding as one with less friction than Coulomb's
 * (|F| < C (1 - tol), coherent) and Coulomb's friction would take its
 * common speed to vt_min or below in this step, its sliding speed would
 * turn back within the step: its contacts stick (where they may). */
#define TW_CONTACT_PATCH_STOPS -1.0
TW_HD int tw_contact_patch_stops(const double *s, double mass, double tol, double vt_min)
{
    double F = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]), C = s[3];
    if (!(mass > 0) || !(C > 0) || !(s[7] > 0) || !(F > 0)) return 0;
    double common = (s[4] * s[0] + s[5] * s[1] + s[6] * s[2]) / (F * s[7]);
    int coherent = sqrt(s[4] * s[4] + s[5] * s[5] + s[6] * s[6]) >= 0.98 * s[8];
    return F < C * (1 - tol) && coherent && !(common - (C - F) / mass > vt_min);
}

/* tw_contact_patch_speed's tolerance: tighter than TW_CONTACT_FTOL, as
 * the set's friction is off by the same fraction of its whole. */
#define TW_CONTACT_PTOL 0.005

/* Results of tw_contact_update_vertex, or-ed. */
#define TW_CONTACT_CHANGED 1  /* joined or released: the solve broke the normal conditions (pull, penetration) */
#define TW_CONTACT_FRICTION 2 /* its friction was off Coulomb's by more than ftol: the damping changed */

/* The tangential stiffness a vertex's block D shows on the plane of nn,
 * less its friction damping cf: half the trace of (I - n n^T) D (I - n n^T),
 * at least 0. */
TW_HD double tw_contact_tangential_block(const tw_real *D, const tw_real *nn, tw_real cf)
{
    double tr = D[0] + D[4] + D[8], dn = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) dn += nn[r] * D[3 * r + c] * nn[c];
    return fmax(0.5 * (tr - dn) - cf, 0.0);
}

/* A contact slipping from stuck: its friction is the impulse sl (N s, on
 * the vertex, in its right-hand side bi), Coulomb's mu J along the
 * direction the stick constraint held it in. Sets it to snew (NULL: none). */
TW_HD void tw_contact_set_slip(tw_real *bi, tw_real *sl, const double *snew)
{
    for (int a = 0; a < 3; a++) {
        double t = snew ? snew[a] : 0;
        bi[a] += (tw_real)(t - sl[a]);
        sl[a] = (tw_real)t;
    }
}

/* 1 when sl (tw_contact_set_slip) holds a slip friction. */
TW_HD int tw_contact_slipping(const tw_real *sl) { return sl && (sl[0] != 0 || sl[1] != 0 || sl[2] != 0); }

/* The active-set update of a stuck vertex (*fc == TW_CONTACT_STICK, no
 * damping) after a solve (tw_contact_update_vertex): p its constraint
 * impulse (A v - b)_i, J = p.n its normal part, the tangential part p_t
 * the friction holding it. J < -jtol: released (*fc = 0). Else it slips
 * (the normal alone constrained, TW_FILTER_NORMAL) when the contact set
 * breaks away (patch_v > 0: the damping mu J / patch_v, Coulomb's at the
 * set's speed) or when |p_t| > mu J (1 + TW_CONTACT_STOL) + a vt_round (a its
 * tangential block, tw_contact_tangential_block: a vt_round is the impulse
 * that would move it at vt_round, tw_contact_rounding_speed, by less than
 * its position's rounding in the step; 0 near the origin): with the friction Coulomb
 * allows along the direction it was held in, the impulse mu J p_t / |p_t|
 * in its right-hand side (sl: tw_contact_set_slip), so that the vertex
 * moves only as far as its load exceeds Coulomb's bound (at an edge of a
 * contact patch, until its neighbours hold the rest: a damping there would
 * let it creep on at the stuck damping's speed). A stuck contact's friction
 * is the one a body at rest keeps, so its tolerance is tighter than the
 * sliding friction's TW_CONTACT_FTOL: that one (2 %) lets a resting body's
 * floor hold tangential forces 1.6 % over mu J (the armadillo, green,
 * friction 0.5), and none at all lets contacts that a slip left at
 * Coulomb's bound flip between stuck and slipping every step (twice the
 * contact solves at rest). Far from the origin a stuck contact's impulse
 * carries the rounding of the forces on it (a vt_round), and without that
 * term the placed block 100 m away (float) flipped contacts between stuck
 * and slipping up to the pass cap, 7-8 solves a step. Returns
 * TW_CONTACT_* bits. */
TW_HD int tw_contact_update_stuck(unsigned char *fc, tw_real *D, tw_real *bi, tw_real *cf, tw_real *cimp,
                                  tw_real *prev, tw_real *sl, const tw_real *vc, const tw_real *nn, tw_real mu,
                                  const double *p, double jtol, double vt_min, double vt_round, double patch_v)
{
    double J = p[0] * nn[0] + p[1] * nn[1] + p[2] * nn[2], pt[3], ft = 0;
    for (int a = 0; a < 3; a++) {
        pt[a] = p[a] - J * nn[a];
        ft += pt[a] * pt[a];
    }
    ft = sqrt(ft);
    prev[1] = -1;
    if (J < -jtol) {
        *fc = 0;
        *cimp = 0;
        return TW_CONTACT_CHANGED;
    }
    *cimp = (tw_real)fmax(J, 0.0);
    double coulomb = mu * fmax(J, 0.0);
    if (patch_v > 0 && coulomb > 0) {
        *fc = TW_FILTER_NORMAL;
        tw_contact_set_damping(D, bi, nn, vc, cf, fmin(coulomb / patch_v, coulomb / vt_min));
        return TW_CONTACT_FRICTION;
    }
    if (!(ft > coulomb * (1 + TW_CONTACT_STOL) + tw_contact_tangential_block(D, nn, *cf) * vt_round)) return 0;
    *fc = TW_FILTER_NORMAL;
    for (int a = 0; a < 3; a++) pt[a] *= coulomb / ft;
    tw_contact_set_slip(bi, sl, pt);
    return TW_CONTACT_FRICTION;
}

/* The active-set update of a vertex slipping from stuck (its friction the
 * impulse sl: tw_contact_update_stuck): released when J < -jtol; the
 * damping of the set's speed when the set breaks away (patch_v > 0); stuck
 * again (TW_CONTACT_STICK) when its velocity relative to the collider goes
 * along sl faster than vt_min (the friction turned it back: Coulomb's
 * friction would have held it); else sl follows mu J of this solve (a
 * change beyond ftol is TW_CONTACT_FRICTION). One that barely moves keeps
 * Coulomb's friction: a contact whose load sits at Coulomb's bound moves
 * at the level of the solve's noise, and a test on the sign of that would
 * flip it between stuck and slipping up to the friction solves' cap in
 * every step of a body at rest. */
TW_HD int tw_contact_update_slip(unsigned char *fc, tw_real *D, tw_real *bi, tw_real *cf, tw_real *cimp,
                                 tw_real *prev, tw_real *sl, const tw_real *vi, const tw_real *vc, const tw_real *nn,
                                 tw_real mu, double J, double jtol, double vt_min, double ftol, double patch_v)
{
    prev[1] = -1;
    if (J < -jtol) {
        *fc = 0;
        *cimp = 0;
        tw_contact_set_slip(bi, sl, NULL);
        return TW_CONTACT_CHANGED;
    }
    *cimp = (tw_real)fmax(J, 0.0);
    double coulomb = mu * fmax(J, 0.0), l = sqrt((double)sl[0] * sl[0] + (double)sl[1] * sl[1] + (double)sl[2] * sl[2]);
    if (patch_v > 0 && coulomb > 0) {
        tw_contact_set_slip(bi, sl, NULL);
        tw_contact_set_damping(D, bi, nn, vc, cf, fmin(coulomb / patch_v, coulomb / vt_min));
        return TW_CONTACT_FRICTION;
    }
    tw_real r[3];
    tw_contact_relative(vi, vc, r);
    if (r[0] * sl[0] + r[1] * sl[1] + r[2] * sl[2] > vt_min * l) {
        tw_contact_set_slip(bi, sl, NULL);
        *fc = TW_CONTACT_STICK;
        return TW_CONTACT_FRICTION;
    }
    if (!(fabs(coulomb - l) > ftol * coulomb)) return 0;
    double snew[3];
    for (int a = 0; a < 3; a++) snew[a] = sl[a] * (coulomb / l);
    tw_contact_set_slip(bi, sl, snew);
    return TW_CONTACT_FRICTION;
}

/* A sliding vertex that sticks (tw_contact_update_vertex): constrained
 * whole, its damping removed. */
TW_HD int tw_contact_make_stuck(unsigned char *fc, tw_real *D, tw_real *bi, tw_real *cf, tw_real *prev,
                                const tw_real *vc, const tw_real *nn)
{
    *fc = TW_CONTACT_STICK;
    prev[1] = -1;
    tw_contact_set_damping(D, bi, nn, vc, cf, 0);
    return TW_CONTACT_FRICTION;
}

/* The active-set update of one free vertex after a contact pass's solve
 * (tw_contact_update): a primal-dual active-set step (Hintermueller, Ito and
 * Kunisch 2002) on the complementarity J >= 0, gap >= 0, J gap = 0, with the
 * linearised gap g = dist + heff v.n at the end of the step, and Coulomb's
 * law by stick constraints and a lagged kinetic damping.
 *   stuck (*fc == TW_CONTACT_STICK): tw_contact_update_stuck, ft the size of
 *     its tangential constraint impulse;
 *   active (*fc == TW_FILTER_NORMAL), J its impulse of this solve:
 *     J < -jtol (the collider pulls): released (*fc = 0, damping removed);
 *     else, when the friction impulse cf |v_t| is off Coulomb's mu J by more
 *     than ftol (relative), the damping is set again (see below);
 *   inactive: joins (*fc = TW_FILTER_NORMAL) when the solve puts it more
 *     than gtol inside (g < -gtol, the surface having moved by reach along
 *     the normal: tw_contact_reach); the caller lands it once every vertex's
 *     impulse has been read from the solve's velocities.
 * D: the vertex's diagonal block of A, bi its right-hand side, vc the
 * collider's velocity (friction acts on vi - vc), minert its inertia in A
 * (m (1 + heff alpha)), prev[0..1] the damping of an earlier solve of this
 * step and the tangential speed it gave (prev[1] < 0: none; the caller sets
 * that at the step's start), patch_v the contact set's breakaway speed
 * (tw_contact_patch_speed; 0: none), which sets an active vertex's damping
 * to mu J / patch_v: Coulomb's friction at the speed the body slides at;
 * TW_CONTACT_PATCH_STOPS: the set comes to rest in this step, and a
 * contact that may stick does.
 * stick: 1 where the contact may stick (a collider's, with friction): an
 * active vertex the model finds within Coulomb's cone, or whose tangential
 * speed is at most vt_min, is then stuck (tw_contact_make_stuck) instead of
 * given the stuck damping mu J / vt_min. (Its damping slows a sliding
 * vertex without turning it back within the solve, so the slip-to-stick
 * test is the speed, not a reversal; a vertex slipping from stuck has a
 * friction impulse instead, which can turn it back.) sl: the vertex's slip
 * friction (3; tw_contact_set_slip), p: a stuck vertex's constraint impulse
 * (A v - b)_i (NULL for the others; J is then p.n); vt_round: the
 * rounding's speed at the vertex (tw_contact_rounding_speed), which a
 * stuck vertex's slip must exceed (tw_contact_update_stuck).
 * Returns TW_CONTACT_* bits. */
TW_HD int tw_contact_update_vertex(unsigned char *fc, tw_real *D, tw_real *bi, tw_real *cf, tw_real *cimp,
                                   tw_real *prev, const tw_real *vi, const tw_real *vc, const tw_real *nn,
                                   tw_real dist, double reach, tw_real mu, double J, double heff, double minert,
                                   double jtol, double gtol, double vt_min, double vt_round, double ftol,
                                   double patch_v, int stick, tw_real *sl, const double *p)
{
    if (*fc == TW_CONTACT_STICK)
        return tw_contact_update_stuck(fc, D, bi, cf, cimp, prev, sl, vc, nn, mu, p, jtol, vt_min, vt_round, patch_v);
    if (*fc == TW_FILTER_NORMAL && tw_contact_slipping(sl))
        return tw_contact_update_slip(fc, D, bi, cf, cimp, prev, sl, vi, vc, nn, mu, J, jtol, vt_min, ftol, patch_v);
    if (*fc != TW_FILTER_NORMAL) {
        double g = dist + heff * (vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2]) - reach;
        if (!(g < -gtol)) return 0;
        *fc = TW_FILTER_NORMAL;
        *cimp = 0;
        prev[1] = -1;
        return TW_CONTACT_CHANGED;
    }
    if (J < -jtol) {
        *fc = 0;
        *cimp = 0;
        prev[1] = -1;
        tw_contact_set_damping(D, bi, nn, vc, cf, 0);
        return TW_CONTACT_CHANGED;
    }
    *cimp = (tw_real)fmax(J, 0.0);
    tw_real rv[3];
    tw_contact_relative(vi, vc, rv);
    double coulomb = mu * fmax(J, 0.0), vt = tw_contact_tangential_speed(rv, nn), fr = *cf * vt;
    if (patch_v > 0 && coulomb > 0) {
        prev[0] = *cf;
        prev[1] = (tw_real)vt;
        tw_contact_set_damping(D, bi, nn, vc, cf, fmin(coulomb / patch_v, coulomb / vt_min));
        return TW_CONTACT_FRICTION;
    }
    stick = stick && coulomb > 0;
    if (stick && (!(vt > vt_min) || patch_v == TW_CONTACT_PATCH_STOPS))
        return tw_contact_make_stuck(fc, D, bi, cf, prev, vc, nn);
    int too_strong = fr > coulomb * (1 + ftol) + 1e-300;
    int too_weak = vt > vt_min && fr < coulomb * (1 - ftol);
    if (!too_strong && !too_weak) return 0;
    /* The vertex's tangential speed under a damping d, modelled as
     * |v_t| = f / (a + d): f the impulse that moves it, a its tangential
     * inertia and stiffness. a is the secant through this solve (cf, |v_t|)
     * and the earlier one (prev) where they differ: the response with the
     * vertices around it moving as they do (a vertex of a patch that slides
     * as a whole has about its mass alone, m <= a); else its diagonal block
     * on the tangent plane less the damping (the vertices around it held; an
     * upper bound). f = |v_t| (a + cf): within Coulomb's cone (f <= mu J) it
     * sticks (stuck where stick allows, else the stuck damping); else it
     * slides with d f / (a + d) = mu J.
     * Sticking and sliding use the one model: a stuck vertex whose load has
     * left the cone (its normal impulse fell) slides in the next solve,
     * rather than creeping off at vt_min and speeding up by f / (mu J) a
     * solve. */
    double a = tw_contact_tangential_block(D, nn, *cf);
    if (prev[1] >= 0 && fabs(prev[1] - vt) > 1e-3 * fmax(vt, (double)prev[1])) {
        double as = (*cf * vt - prev[0] * prev[1]) / (prev[1] - vt);
        if (as > 0) a = fmin(fmax(as, minert), a);
    }
    double stuck = coulomb / vt_min, f = vt * (a + *cf);
    if (stick && !(f > coulomb)) return tw_contact_make_stuck(fc, D, bi, cf, prev, vc, nn);
    double d = f > coulomb ? coulomb * a / (f - coulomb) : stuck;
    prev[0] = *cf;
    prev[1] = (tw_real)vt;
    tw_contact_set_damping(D, bi, nn, vc, cf, fmin(d, stuck));
    return TW_CONTACT_FRICTION;
}

/* The contact's normal impulse after the solve (tw_contact_impulses):
 * J = (A v - b)_i . n, over the BSR row i of A. */
TW_HD double tw_contact_impulse(const int *row_ptr, const int *col, const tw_real *A, const tw_real *v,
                                const tw_real *b, const tw_real *nn, int i)
{
    double av[3] = {0, 0, 0};
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
        const tw_real *a = A + 9 * (size_t)k, *vj = v + 3 * (size_t)col[k];
        for (int r = 0; r < 3; r++) av[r] += a[3 * r] * vj[0] + a[3 * r + 1] * vj[1] + a[3 * r + 2] * vj[2];
    }
    double J = 0;
    for (int r = 0; r < 3; r++) J += (av[r] - b[3 * (size_t)i + r]) * nn[r];
    return J;
}

/* Did active contact vertex i hit its collider (vc its velocity): was its
 * velocity at the start of the step (vi) taking it towards it faster than
 * vtol? BDF2 restarts after a step with one (host/step.c). */
TW_HD int tw_contact_impact(const tw_real *vi, const tw_real *vc, const tw_real *nn, double vtol)
{
    tw_real r[3];
    tw_contact_relative(vi, vc, r);
    return r[0] * nn[0] + r[1] * nn[1] + r[2] * nn[2] < -vtol;
}

/* Coulomb: reduce the tangential velocity by up to dv_max (m/s). */
TW_HD void tw_contact_apply_friction(tw_real *v, const tw_real *n, double dv_max)
{
    double vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2], vt[3], lt = 0;
    for (int a = 0; a < 3; a++) {
        vt[a] = v[a] - vn * n[a];
        lt += vt[a] * vt[a];
    }
    lt = sqrt(lt);
    if (!(lt > 0) || !(dv_max > 0)) return;
    double scale = lt > dv_max ? 1 - dv_max / lt : 0;
    for (int a = 0; a < 3; a++) v[a] = (tw_real)(vn * n[a] + scale * vt[a]);
}

/* Projection of a free vertex after the step (tw_contact_project_positions):
 * inside a collider, xi moves onto its surface and 1 is returned with the
 * normal, friction, the collider's index and its surface velocity there;
 * else 0 and nothing changes. */
TW_HD int tw_contact_project_vertex(const tw_collider_def *cs, int nc, tw_real *xi, tw_real nrm[3], tw_real *fric,
                                    unsigned char *col, tw_real vel[3])
{
    double nn[3] = {0, 0, 1}, mu = 0, vc[3] = {0, 0, 0};
    int k = TW_CONTACT_NONE;
    double d = tw_contact_nearest(cs, nc, xi, nn, &mu, &k, vc);
    if (!(d < 0)) return 0;
    *fric = (tw_real)mu;
    *col = (unsigned char)k;
    for (int a = 0; a < 3; a++) vel[a] = (tw_real)vc[a];
    for (int a = 0; a < 3; a++) {
        xi[a] -= (tw_real)(d * nn[a]);
        nrm[a] = (tw_real)nn[a];
    }
    return 1;
}

/* Explicit Newmark's projection of a free vertex (tw_contact_project_positions):
 * tw_contact_project_vertex, and a vertex on the surface or just above it,
 * within tw_contact_touch's distance at xi, is in contact too (1 returned,
 * xi unchanged). A vertex the last step projected lies on the surface to
 * the last bit, often at d = 0 or a rounding above it; left out, it keeps
 * the step's acceleration into the collider, ends it with h/2 of it as
 * velocity (0.1 m/s at a resting tube's loaded vertices) and is projected
 * the step after from h^2 a_n inside: a loaded contact that alternates
 * between free and projected every step. In contact, only its approaching
 * velocity and acceleration are removed, so a separating vertex leaves. */
TW_HD int tw_contact_project_vertex_touching(const tw_collider_def *cs, int nc, double touch, tw_real *xi,
                                             tw_real nrm[3], tw_real *fric, unsigned char *col, tw_real vel[3])
{
    if (tw_contact_project_vertex(cs, nc, xi, nrm, fric, col, vel)) return 1;
    double nn[3] = {0, 0, 1}, mu = 0, vc[3] = {0, 0, 0};
    int k = TW_CONTACT_NONE;
    double d = tw_contact_nearest(cs, nc, xi, nn, &mu, &k, vc);
    if (!(d <= tw_contact_touch(touch, xi))) return 0;
    *fric = (tw_real)mu;
    *col = (unsigned char)k;
    for (int a = 0; a < 3; a++) {
        vel[a] = (tw_real)vc[a];
        nrm[a] = (tw_real)nn[a];
    }
    return 1;
}

/* A projected vertex's velocity (tw_contact_project_velocities): its
 * approaching normal velocity relative to the collider (vc) removed, and
 * friction on the relative tangential velocity in proportion to it. */
TW_HD void tw_contact_project_velocity(tw_real *vi, const tw_real *nn, tw_real mu, const tw_real *vc)
{
    int moving = tw_contact_moving(vc);
    if (moving)
        for (int a = 0; a < 3; a++) vi[a] -= vc[a];
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    if (vn < 0) {
        for (int a = 0; a < 3; a++) vi[a] -= (tw_real)(vn * nn[a]);
        tw_contact_apply_friction(vi, nn, mu * -vn);
    }
    if (moving)
        for (int a = 0; a < 3; a++) vi[a] += vc[a];
}

/* The impulse (N s) the collider gives active contact vertex i in a step:
 * what the body's own rows need at the solve's v, (A0 v - b0)_i, A0 and b0
 * without the friction damping: (A v - b)_i less the damping's
 * cf (I - n n^T)(v_i - vc). Its normal part is J; unlike J n plus the
 * damping alone it holds whatever damping the last update left (a damping
 * changed after the last solve changes A and b alike). */
TW_HD void tw_contact_vertex_impulse(const int *row_ptr, const int *col, const tw_real *A, const tw_real *v,
                                     const tw_real *b, const tw_real *nn, tw_real cf, const tw_real *vc, int i,
                                     double p[3])
{
    double av[3] = {0, 0, 0}, r[3], rn = 0;
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
        const tw_real *a = A + 9 * (size_t)k, *vj = v + 3 * (size_t)col[k];
        for (int q = 0; q < 3; q++) av[q] += a[3 * q] * vj[0] + a[3 * q + 1] * vj[1] + a[3 * q + 2] * vj[2];
    }
    const tw_real *vi = v + 3 * (size_t)i;
    for (int a = 0; a < 3; a++) {
        r[a] = (double)vi[a] - vc[a];
        rn += r[a] * nn[a];
    }
    for (int a = 0; a < 3; a++) p[a] = av[a] - b[3 * (size_t)i + a] - (double)cf * (r[a] - rn * nn[a]);
}

/* A projected vertex's acceleration (tw_contact_project_velocities, explicit
 * Newmark, after its velocity vi): its component into the collider removed,
 * and Coulomb friction on its tangential part: the removed -a_n is the
 * contact's normal force over the vertex's mass, mu (-a_n) the most friction
 * gives. A vertex sliding (its tangential velocity relative to the collider,
 * vc, more than the half step h/2 mu (-a_n) stops) gets all of it against
 * that velocity; else, stuck, the tangential acceleration loses up to it. A
 * resting vertex has no approaching velocity for
 * tw_contact_project_velocity's friction to act on; held here, its next
 * position update x + h v + h^2/2 a and velocity half h/2 a carry only the
 * tangential pull the contact does not hold. */
TW_HD void tw_contact_project_acceleration(tw_real *ai, const tw_real *nn, tw_real mu, const tw_real *vi,
                                           const tw_real *vc, double h)
{
    double an = ai[0] * nn[0] + ai[1] * nn[1] + ai[2] * nn[2];
    if (!(an < 0)) return;
    for (int a = 0; a < 3; a++) ai[a] -= (tw_real)(an * nn[a]);
    double fmax = mu * -an, r[3], rn = 0, lt = 0;
    for (int a = 0; a < 3; a++) {
        r[a] = (double)vi[a] - vc[a];
        rn += r[a] * nn[a];
    }
    for (int a = 0; a < 3; a++) {
        r[a] -= rn * nn[a];
        lt += r[a] * r[a];
    }
    lt = sqrt(lt);
    if (lt > 0.5 * h * fmax)
        for (int a = 0; a < 3; a++) ai[a] -= (tw_real)(fmax * r[a] / lt);
    else
        tw_contact_apply_friction(ai, nn, fmax);
}
#endif
