/* The integrators' per-vertex arithmetic: the loop bodies host/step.c runs
 * for BDF2 and explicit Newmark, and the CUDA kernels
 * (kernels/cuda_integrators.cu) run on one thread each. TW_HD inline, C11 and
 * nvcc alike (see hd.h); the integrators themselves are described at the top
 * of host/step.c and above its newmark_step.
 *
 * Each function is one component (or one vertex) of a loop and keeps the
 * CPU's exact expression and types (tw_real sums, double where the CPU
 * widened), so the CPU's results are those it had before these were shared. */
#ifndef TW_INTEGRATOR_HD_H
#define TW_INTEGRATOR_HD_H
#include <math.h>

#include "hd/hd.h"
#include "hd/bsr_row_real.h" /* tw_filter_block */

/* BDF2's base term of one component from the current and the previous
 * value: xbase = (4 x_n - x_n-1) / 3, vbase = (4 v_n - v_n-1) / 3. */
TW_HD tw_real tw_bdf2_base(tw_real now, tw_real prev) { return (tw_real)((4.0 * now - prev) / 3); }

/* BDF2's right-hand side correction of one component (implicit_solve, when
 * xbase is not x): rhs - heff K' d with d = xbase - x and
 * K' d = (A d - cm M d) / ck, Ad the component of A d. */
TW_HD tw_real tw_bdf2_rhs_corrected(tw_real rhs, tw_real Ad, tw_real d, tw_real mass, double heff, double cm, double ck)
{
    return rhs - (tw_real)(heff * (Ad - cm * mass * d) / ck);
}

/* Explicit Newmark's acceleration at the start (no previous step) of one
 * component: M^-1 F - alpha v, F = f_el + f_ext; 0 when the vertex does not
 * move freely (constrained, or massless: moving = 0). */
TW_HD tw_real tw_newmark_start_acc(tw_real force, tw_real mass, tw_real v, double alpha, int moving)
{
    return moving ? (tw_real)(force / mass - alpha * v) : 0;
}

/* Explicit Newmark's new position of one component: pinned stays, kinematic
 * goes to its target, free by Taylor x + h v + h^2/2 a. */
TW_HD tw_real tw_newmark_position(unsigned char cons, tw_real x, tw_real v, tw_real a, tw_real target, double h)
{
    if (cons == TW_PINNED) return x;
    if (cons == TW_KINEMATIC) return target;
    return x + (tw_real)h * v + (tw_real)(0.5 * h * h) * a;
}

/* tw_newmark_position with the rounding carried (compensated summation):
 * a free vertex moves by its increment h v + h^2/2 a plus res, the part of
 * the last increment that rounding left out of x, and *res_next is what
 * rounding leaves out this time (0 when the vertex is not free). At explicit
 * steps |h v| is near a coordinate's rounding (|x| FLT_EPSILON: 3.6e-8 m at
 * 0.3 m), and a rounding dropped every step moves the position without
 * the velocity: a random walk whose strain energy keeps a damped body
 * trembling at rest. Carried, the position keeps to the sum of its
 * increments within one rounding. */
TW_HD tw_real tw_newmark_position_carried(unsigned char cons, tw_real x, tw_real v, tw_real a, tw_real target,
                                          double h, tw_real res, tw_real *res_next)
{
    if (cons == TW_PINNED || cons == TW_KINEMATIC) {
        *res_next = 0;
        return tw_newmark_position(cons, x, v, a, target, h);
    }
    tw_real inc = (tw_real)h * v + (tw_real)(0.5 * h * h) * a + res;
    tw_real xn = x + inc;
    *res_next = inc - (xn - x);
    return xn;
}

/* A vertex the contact projection placed on its collider (normal nn): its
 * normal coordinate is the collider's, so the rounding its position update
 * left along nn is not carried; the tangential part is. */
TW_HD void tw_newmark_residual_projected(tw_real r[3], const tw_real nn[3])
{
    double rn = (double)r[0] * nn[0] + (double)r[1] * nn[1] + (double)r[2] * nn[2];
    for (int a = 0; a < 3; a++) r[a] -= (tw_real)(rn * nn[a]);
}

/* Explicit Newmark's new velocity and acceleration of one component of a
 * free vertex, from the force F at the new positions (mass-proportional
 * damping alpha): fa = F / m, v+ = (v + h/2 (a + fa)) / (1 + h alpha / 2),
 * a+ = fa - alpha v+. */
TW_HD void tw_newmark_velocity(tw_real force, tw_real mass, tw_real v, tw_real a, double h, double alpha,
                               tw_real *vnew, tw_real *anew)
{
    double fa = force / mass;
    double vn = (v + 0.5 * h * (a + fa)) / (1 + 0.5 * h * alpha);
    *vnew = (tw_real)vn;
    *anew = (tw_real)(fa - alpha * vn);
}

/* A constrained vertex's velocity of one component in explicit Newmark: the
 * step's displacement over h (its acceleration is 0). */
TW_HD tw_real tw_newmark_constrained_velocity(tw_real xnew, tw_real x, double h) { return (tw_real)((xnew - x) / h); }
/* Vertex i's kinetic energy and gravity potential, added to *kinetic and
 * *gravity (host/step.c mechanical_energy's loop body): 1/2 m |v|^2 and
 * -m g . (x - X), in double. */
TW_HD void tw_vertex_mechanical_energy(tw_real mass, const tw_real *v, const tw_real *x, const tw_real *X,
                                       const double *gravity, double *kinetic, double *gravity_potential)
{
    for (int c = 0; c < 3; c++) {
        *kinetic += 0.5 * mass * (double)v[c] * v[c];
        *gravity_potential -= mass * gravity[c] * ((double)x[c] - X[c]);
    }
}

/* warp-vertex under BDF2's energy projection (host/step.c
 * bdf2_energy_projection): the factor on the velocities relative to vc that
 * takes excess out of their kinetic energy k (> 0): sqrt(1 - excess / k),
 * 0 (to rest) when the excess is larger. */
TW_HD double tw_energy_projection_scale(double excess, double k) { return excess < k ? sqrt(1 - excess / k) : 0; }

/* ... and one component of a free vertex's velocity after it: vc + scale (v - vc). */
TW_HD tw_real tw_energy_projection_velocity(tw_real v, double vc, double scale)
{
    return (tw_real)(vc + scale * ((double)v - vc));
}
/* The implicit step's residual at velocity v, one vertex (host/step.c
 * step_residual's loop body; newton_refine and the CUDA Newton loop):
 *   G = M (v - vbase) + heff alpha M v + heff beta K' v - heff (f + f_ext)
 * with K' v = (Av - cm M v) / ck from the A assembled last; G holds f_ext on
 * entry (at the positions f was taken at). */
TW_HD void tw_newton_residual_vertex(tw_real mass, const tw_real *v, const tw_real *vbase, const tw_real *Av,
                                     const tw_real *f, double heff, double alpha, double beta, double cm, double ck,
                                     tw_real *G)
{
    for (int c = 0; c < 3; c++) {
        double mv = mass * (double)v[c];
        double Kv = (Av[c] - cm * mv) / ck;
        G[c] = (tw_real)(mv - mass * (double)vbase[c] + heff * alpha * mv + heff * beta * Kv -
                         heff * ((double)f[c] + G[c]));
    }
}

/* S G of one vertex (the solvers' filter, tw_filter_block, with the
 * vertex's own normal nn); returns |S G|^2 */
TW_HD double tw_newton_filter_vertex(unsigned char fc, const tw_real *nn, tw_real *gi)
{
    tw_filter_block(fc, nn, 0, gi);
    return (double)gi[0] * gi[0] + (double)gi[1] * gi[1] + (double)gi[2] * gi[2];
}

/* newton_refine's decisions on the residual norms |S G| (host/step.c and
 * the device's host-driven loop, kernels/cuda_world.cu): */

/* halvings of the line search's step, from a = 1 */
#define TW_NEWTON_LINE_STEPS 8

/* the first iteration's norm g as the reference g0 (1 when it is 0); g0 < 0:
 * not set yet */
TW_HD double tw_newton_reference(double g0, double g) { return g0 < 0 ? (g > 0 ? g : 1) : g0; }

/* converged at iteration it (from 1): below tol of the reference, never at
 * the first (which follows the first solve) */
TW_HD int tw_newton_converged(double g, double g0, double tol, int it) { return g <= tol * g0 && it > 1; }

/* the line search accepts step a with norm gt against g (Armijo, c = 1e-4) */
TW_HD int tw_newton_accepts(double gt, double g, double a) { return gt <= (1 - 1e-4 * a) * g; }

/* the step's reported Newton residual g / g0 (0 when none was taken) */
TW_HD double tw_newton_ratio(double g, double g0) { return g0 > 0 ? g / g0 : 0; }
#endif
