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
 * applied in proportion to that velocity change. */
#include <math.h>
#include <string.h>

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

/* The deepest collider at x: its distance, normal and friction coefficient;
 * +inf when none. */
static double nearest(const tw_world *w, const tw_real *xi, double n[3], double *mu)
{
    double x[3] = {xi[0], xi[1], xi[2]}, best = INFINITY, m[3];
    for (int k = 0; k < w->ncolliders; k++) {
        double d = tw_collider_distance(&w->colliders[k], x, m);
        if (d < best) {
            best = d;
            memcpy(n, m, sizeof m);
            *mu = w->colliders[k].friction;
        }
    }
    return best;
}

/* Coulomb: reduce the tangential velocity by up to dv_max (m/s). */
static void apply_friction(tw_real *v, const tw_real *n, double dv_max)
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

int tw_contact_detect(tw_world *w, const tw_real *x, double heff)
{
    int n = w->fem.n, count = 0;
    memcpy(w->fcons, w->cons, (size_t)n);
    if (!w->ncolliders) return 0;
    double touch = 1e-6 * w->size;
    for (int i = 0; i < n; i++) {
        if (w->cons[i]) continue;
        double nn[3] = {0, 0, 1}, mu = 0;
        double d = nearest(w, x + 3 * (size_t)i, nn, &mu);
        const tw_real *vi = w->v + 3 * (size_t)i;
        double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
        /* in contact: inside; touching and not separating; or about to
         * arrive within this step at the current velocity (a speculative
         * contact: its normal velocity is set to land exactly on the surface,
         * so no vertex is projected and no strain is injected) — the last two
         * unless the constraint pulled last step */
        int in = d < 0 || (!w->released[i] && ((d <= touch && vn <= 0) || (vn < 0 && d + heff * vn < 0)));
        w->released[i] = 0;
        if (!in) continue;
        w->fcons[i] = TW_FILTER_NORMAL;
        w->cmu[i] = (tw_real)mu;
        for (int a = 0; a < 3; a++) w->cnormal[3 * i + a] = (tw_real)nn[a];
        w->cdist[i] = (tw_real)d;
        count++;
    }
    return count;
}

void tw_contact_friction_implicit(tw_world *w, double heff)
{
    const tw_fem *f = &w->fem;
    for (int i = 0; i < f->n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL || !(w->cimpulse[i] > 0)) continue;
        const tw_real *nn = w->cnormal + 3 * (size_t)i, *vi = w->v + 3 * (size_t)i;
        double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2], vt2 = 0;
        for (int a = 0; a < 3; a++) vt2 += (vi[a] - vn * nn[a]) * (vi[a] - vn * nn[a]);
        /* tangential damping d (I - n n^T) with d |v_t| = mu J: the impulse
         * is mu J while sliding at the current speed and less as it slows */
        double vt = fmax(sqrt(vt2), 1e-6 * w->size / heff); /* a stuck vertex: very large d */
        double d = w->cmu[i] * w->cimpulse[i] / vt;
        tw_real *D = w->A + 9 * (size_t)f->diag[i];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) D[3 * r + c] += (tw_real)(d * ((r == c) - nn[r] * nn[c]));
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
        double av[3] = {0, 0, 0};
        for (int k = f->row_ptr[i]; k < f->row_ptr[i + 1]; k++) {
            const tw_real *a = w->A + 9 * (size_t)k, *vj = v + 3 * (size_t)f->col[k];
            for (int r = 0; r < 3; r++) av[r] += a[3 * r] * vj[0] + a[3 * r + 1] * vj[1] + a[3 * r + 2] * vj[2];
        }
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        double J = 0;
        for (int r = 0; r < 3; r++) J += (av[r] - b[3 * i + r]) * nn[r];
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
        tw_real *xi = x + 3 * (size_t)i;
        double nn[3] = {0, 0, 1}, mu = 0;
        double d = nearest(w, xi, nn, &mu);
        if (!(d < 0)) continue;
        w->cmu[i] = (tw_real)mu;
        for (int a = 0; a < 3; a++) {
            xi[a] -= (tw_real)(d * nn[a]);
            w->cnormal[3 * i + a] = (tw_real)nn[a];
        }
        w->fcons[i] = TW_FILTER_NORMAL;
        count++;
    }
    return count;
}

void tw_contact_project_velocities(tw_world *w, tw_real *v, tw_real *acc)
{
    for (int i = 0; i < w->fem.n; i++) {
        if (w->fcons[i] != TW_FILTER_NORMAL) continue;
        tw_real *vi = v + 3 * (size_t)i;
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
        if (vn < 0) {
            for (int a = 0; a < 3; a++) vi[a] -= (tw_real)(vn * nn[a]);
            apply_friction(vi, nn, w->cmu[i] * -vn);
        }
        if (acc) {
            tw_real *ai = acc + 3 * (size_t)i;
            double an = ai[0] * nn[0] + ai[1] * nn[1] + ai[2] * nn[2];
            if (an < 0)
                for (int a = 0; a < 3; a++) ai[a] -= (tw_real)(an * nn[a]);
        }
    }
}

void tw_contact_project(tw_world *w, tw_real *x, tw_real *v)
{
    if (tw_contact_project_positions(w, x)) tw_contact_project_velocities(w, v, NULL);
}
