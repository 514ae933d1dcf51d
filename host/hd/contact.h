/* Contact with static colliders, per vertex: the math host/contact.c runs in
 * its loops and the CUDA kernels (kernels/cuda_contact.cu) run on one thread
 * each. TW_HD inline, C11 and nvcc alike (see hd.h); the design is at the top
 * of host/contact.c.
 *
 * Distances, normals and the speculative test are in double (the colliders
 * are double); what is stored per contact (normal, distance, friction) is
 * tw_real, and every expression here keeps the CPU's exact types, so the
 * CPU's results are those it had before these were shared. */
#ifndef TW_CONTACT_HD_H
#define TW_CONTACT_HD_H
#include <math.h>

#include "hd/hd.h"
#include "solver.h" /* TW_FILTER_NORMAL */

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

/* The deepest of the nc colliders at xi: its distance, normal and friction
 * coefficient; +inf (n and mu untouched) when there is none. */
TW_HD double tw_contact_nearest(const tw_collider_def *cs, int nc, const tw_real *xi, double n[3], double *mu)
{
    double x[3] = {xi[0], xi[1], xi[2]}, best = INFINITY, m[3];
    for (int k = 0; k < nc; k++) {
        double d = tw_collider_distance_hd(&cs[k], x, m);
        if (d < best) {
            best = d;
            n[0] = m[0]; n[1] = m[1]; n[2] = m[2];
            *mu = cs[k].friction;
        }
    }
    return best;
}

/* Is a free vertex in contact this step (tw_contact_detect)? Inside; or,
 * unless its constraint pulled last step (released), touching (d <= touch)
 * and not separating, or arriving within heff at its normal velocity vn (a
 * speculative contact). */
TW_HD int tw_contact_is_in(double d, double vn, double touch, double heff, int released)
{
    return d < 0 || (!released && ((d <= touch && vn <= 0) || (vn < 0 && d + heff * vn < 0)));
}

/* Marks vertex i (free) of a step from x: writes the contact's normal,
 * distance and friction and returns 1 when it is in contact; clears
 * released either way (the body of tw_contact_detect's loop). */
TW_HD int tw_contact_mark_vertex(const tw_collider_def *cs, int nc, const tw_real *xi, const tw_real *vi,
                                 double touch, double heff, unsigned char *released, tw_real nrm[3], tw_real *dist,
                                 tw_real *fric)
{
    double nn[3] = {0, 0, 1}, mu = 0;
    double d = tw_contact_nearest(cs, nc, xi, nn, &mu);
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    int in = tw_contact_is_in(d, vn, touch, heff, *released);
    *released = 0;
    if (!in) return 0;
    *fric = (tw_real)mu;
    for (int a = 0; a < 3; a++) nrm[a] = (tw_real)nn[a];
    *dist = (tw_real)d;
    return 1;
}

/* A contact's prescribed normal velocity (implicit_solve): -dist / heff, so
 * x + heff v lands on the surface (or leaves a penetration) this step; the
 * tangential part of vi is kept. */
TW_HD void tw_contact_land(tw_real *vi, const tw_real *nn, tw_real dist, double heff)
{
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    double target = -dist / heff;
    for (int c = 0; c < 3; c++) vi[c] += (tw_real)((target - vn) * nn[c]);
}

/* Implicit friction (tw_contact_friction_implicit): adds d (I - n n^T) to the
 * vertex's diagonal block D with d |v_t| = mu J (J the last step's normal
 * impulse, N s; v the velocity at the start of the step); |v_t| is at least
 * vt_min (1e-6 size / heff: a stuck vertex gets a very large d). Nothing
 * unless J > 0. */
TW_HD void tw_contact_friction_block(tw_real *D, const tw_real *nn, const tw_real *vi, tw_real mu, tw_real J,
                                     double vt_min)
{
    if (!(J > 0)) return;
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2], vt2 = 0;
    for (int a = 0; a < 3; a++) vt2 += (vi[a] - vn * nn[a]) * (vi[a] - vn * nn[a]);
    double vt = fmax(sqrt(vt2), vt_min);
    double d = mu * J / vt;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) D[3 * r + c] += (tw_real)(d * ((r == c) - nn[r] * nn[c]));
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
 * normal and friction; else 0 and nothing changes. */
TW_HD int tw_contact_project_vertex(const tw_collider_def *cs, int nc, tw_real *xi, tw_real nrm[3], tw_real *fric)
{
    double nn[3] = {0, 0, 1}, mu = 0;
    double d = tw_contact_nearest(cs, nc, xi, nn, &mu);
    if (!(d < 0)) return 0;
    *fric = (tw_real)mu;
    for (int a = 0; a < 3; a++) {
        xi[a] -= (tw_real)(d * nn[a]);
        nrm[a] = (tw_real)nn[a];
    }
    return 1;
}

/* A projected vertex's velocity (tw_contact_project_velocities): its
 * approaching normal velocity removed, and friction in proportion to it. */
TW_HD void tw_contact_project_velocity(tw_real *vi, const tw_real *nn, tw_real mu)
{
    double vn = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    if (vn < 0) {
        for (int a = 0; a < 3; a++) vi[a] -= (tw_real)(vn * nn[a]);
        tw_contact_apply_friction(vi, nn, mu * -vn);
    }
}

/* A projected vertex's acceleration (tw_contact_project_velocities, explicit
 * Newmark): its component into the collider removed. */
TW_HD void tw_contact_project_acceleration(tw_real *ai, const tw_real *nn)
{
    double an = ai[0] * nn[0] + ai[1] * nn[1] + ai[2] * nn[2];
    if (an < 0)
        for (int a = 0; a < 3; a++) ai[a] -= (tw_real)(an * nn[a]);
}

/* The PCG filter on one contact vertex (host/solver_impl.h's filter for
 * TW_FILTER_NORMAL): v loses its component along n. */
TW_HD void tw_contact_filter_normal(tw_real *vi, const tw_real *nn)
{
    tw_real d = vi[0] * nn[0] + vi[1] * nn[1] + vi[2] * nn[2];
    vi[0] -= d * nn[0]; vi[1] -= d * nn[1]; vi[2] -= d * nn[2];
}
#endif
