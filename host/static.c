/* Static equilibrium: find x with f_el(x) + f_ext = 0 on the free vertices.
 * Converged when the relative residual or the relative Newton update is below
 * the tolerance (the update criterion is what float can meet, see below).
 *
 * Newton's method on the residual r(x) = S(f_el(x) + s f_ext), s the load
 * fraction raised in `load_steps` equal steps (one step for linear, where one
 * Newton iteration from any x is exact). Each iteration solves K'(x) dx = r by
 * PCG (stopping at negative curvature, which the StVK tangent can show under
 * compression), then a backtracking line search halves the step until |r|
 * decreases (Armijo on the residual norm). Intermediate load steps are solved
 * loosely (sqrt of the tolerance); the last one to the tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "world.h"

static double filtered_norm(const tw_world *w, const tw_real *a)
{
    double s = 0;
    for (int i = 0; i < w->fem.n; i++)
        if (!w->cons[i])
            for (int c = 0; c < 3; c++) s += (double)a[3 * i + c] * a[3 * i + c];
    return sqrt(s);
}

/* Linear elastic force -K u element by element in double, from the mesh's
 * double rest positions: f_p = -V sigma(eps) g_p, eps = sym(grad u). The
 * float build's K (rounded to float, summed with cancellation) cannot give the
 * residual to better than ~1e-2 of a small load; this can, so Newton refines
 * the float PCG solution towards the double one. Scattered serially into a
 * double array (static solves are not the hot path). */
static void linear_force_double(tw_world *w, const tw_real *x, tw_real *out)
{
    const tw_fem *f = &w->fem;
    const double *X = w->mesh->X;
    double *fd = calloc(3 * (size_t)f->n, sizeof(double));
    if (!fd) {
        tw_compute_elastic_force(w, x, out, 0);
        return;
    }
    for (int e = 0; e < f->nt; e++) {
        const int *t = f->tets + 4 * (size_t)e;
        double Dm[9], B[9], g[4][3], H[9] = {0}, P[9];
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) Dm[3 * r + c] = X[3 * t[c + 1] + r] - X[3 * t[0] + r];
        double det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) +
                     Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
        double id = 1 / det;
        B[0] = (Dm[4] * Dm[8] - Dm[5] * Dm[7]) * id; B[1] = (Dm[2] * Dm[7] - Dm[1] * Dm[8]) * id;
        B[2] = (Dm[1] * Dm[5] - Dm[2] * Dm[4]) * id; B[3] = (Dm[5] * Dm[6] - Dm[3] * Dm[8]) * id;
        B[4] = (Dm[0] * Dm[8] - Dm[2] * Dm[6]) * id; B[5] = (Dm[2] * Dm[3] - Dm[0] * Dm[5]) * id;
        B[6] = (Dm[3] * Dm[7] - Dm[4] * Dm[6]) * id; B[7] = (Dm[1] * Dm[6] - Dm[0] * Dm[7]) * id;
        B[8] = (Dm[0] * Dm[4] - Dm[1] * Dm[3]) * id;
        for (int k = 0; k < 3; k++) {
            g[0][k] = -(B[k] + B[3 + k] + B[6 + k]);
            for (int p = 0; p < 3; p++) g[p + 1][k] = B[3 * p + k];
        }
        for (int p = 0; p < 4; p++) /* grad u = sum_p u_p g_p^T */
            for (int r = 0; r < 3; r++) {
                double u = (double)x[3 * t[p] + r] - X[3 * t[p] + r];
                for (int c = 0; c < 3; c++) H[3 * r + c] += u * g[p][c];
            }
        double lam = f->lam[e], mu = f->mu[e], V = det / 6, tr = H[0] + H[4] + H[8];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) P[3 * r + c] = mu * (H[3 * r + c] + H[3 * c + r]) + (r == c ? lam * tr : 0);
        for (int p = 0; p < 4; p++)
            for (int r = 0; r < 3; r++)
                fd[3 * t[p] + r] -= V * (P[3 * r] * g[p][0] + P[3 * r + 1] * g[p][1] + P[3 * r + 2] * g[p][2]);
    }
    for (size_t i = 0; i < 3 * (size_t)f->n; i++) out[i] = (tw_real)fd[i];
    free(fd);
}

/* r = f_el(x) + load * f_ext(x); returns |S r|. */
static double residual(tw_world *w, const tw_real *x, double load, tw_real *r, tw_real *fext)
{
    tw_compute_rotations(w, x);
    if (w->def.method == TW_LINEAR) linear_force_double(w, x, r);
    else tw_compute_elastic_force(w, x, r, 0);

    tw_external_force(w, x, fext);
    size_t n3 = 3 * (size_t)w->fem.n;
    for (size_t i = 0; i < n3; i++) r[i] += (tw_real)load * fext[i];
    return filtered_norm(w, r);
}

tw_status tw_world_solve_static(tw_world *w, const tw_static_def *def, tw_static_stats *stats)
{
    tw_static_def d = def ? *def : tw_default_static_def();
    tw_static_stats st = {0, 0, 0};
    if (d.load_steps < 1 || d.max_newton < 1 || !(d.tolerance > 0) || !(d.cg_tolerance > 0) || d.cg_max_iterations < 1)
        return tw_fail(TW_ERR_INVALID, "static solve: load_steps %d, max_newton %d, tolerance %g, cg_tolerance %g, "
                                       "cg_max_iterations %d: all must be positive",
                       d.load_steps, d.max_newton, d.tolerance, d.cg_tolerance, d.cg_max_iterations);
    if (w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE)
        return tw_fail(TW_ERR_UNSUPPORTED, "static equilibrium is solved for linear, corot-element and green; %s has no "
                                           "consistent tangent for Newton (corot-element is the per-element form of the "
                                           "same warping)", tw_method_name(w->def.method));
    int n = w->fem.n;
    size_t n3 = 3 * (size_t)n;
    tw_real *x = w->x, *r = w->rhs, *dx = w->vnew, *fext = w->f;
    tw_real *xtrial = w->work.t; /* free while no solve runs: the line search's trial point */
    tw_real *rtrial = w->work.s;
    /* kinematic vertices sit at their targets; pinned ones stay */
    for (int i = 0; i < n; i++)
        if (w->cons[i] == TW_KINEMATIC) memcpy(x + 3 * (size_t)i, w->target + 3 * (size_t)i, 3 * sizeof(tw_real));
    memset(w->v, 0, sizeof(tw_real) * n3);

    /* the full load's norm is the yardstick for every load step */
    double ref = 0;
    tw_external_force(w, x, fext);
    ref = filtered_norm(w, fext);
    if (ref == 0) ref = 1;
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    tw_bsr A = tw_world_bsr(w);
    /* adaptive load stepping: on a failed increment, go back to the last
     * converged state and halve the increment */
    tw_real *xgood = w->work.rhat;
    memcpy(xgood, x, sizeof(tw_real) * n3);
    double done = 0, inc = w->def.method == TW_LINEAR ? 1.0 : 1.0 / d.load_steps;
    double rn = 0;
    while (done < 1 - 1e-12) {
        double load = fmin(1.0, done + inc);
        int last = load >= 1 - 1e-12;
        double tol = last ? d.tolerance : sqrt(d.tolerance);
        rn = residual(w, x, load, r, fext);
        int it = 0, failed = 0;
        while (rn > tol * ref && !failed) {
            if (it == d.max_newton) { failed = 1; break; }
            tw_assemble_system(w, 0, 1);
            memset(dx, 0, sizeof(tw_real) * n3);
            tw_solve_result sr = vertex_method && w->def.warp_system == TW_WARP_SYSTEM_BICGSTAB
                                     ? tw_bicgstab(&A, r, dx, w->cons, d.cg_tolerance, d.cg_max_iterations, &w->work)
                                     : tw_pcg(&A, r, dx, w->cons, d.cg_tolerance, d.cg_max_iterations, 0, &w->work);
            st.cg_iterations += sr.iterations;
            /* converged when the Newton update is negligible beside the
             * displacement: in float the residual of a slender soft body
             * cannot be evaluated much below 1e-2 of the load (K's rounding
             * times |K||u|), while the displacement is still good to 1e-4 */
            double dmax = 0, umax = 0;
            for (size_t i = 0; i < n3; i++) {
                dmax = fmax(dmax, fabs((double)dx[i]));
                umax = fmax(umax, fabs((double)x[i] - w->fem.X[i]));
            }
            if (dmax <= tol * umax) {
                for (size_t i = 0; i < n3; i++) x[i] += dx[i];
                rn = residual(w, x, load, r, fext);
                it++;
                st.newton_iterations++;
                break;
            }
            /* backtracking line search on |r| */
            double a = 1, best = INFINITY, best_a = 0;
            for (int ls = 0; ls < 12; ls++, a *= 0.5) {
                for (size_t i = 0; i < n3; i++) xtrial[i] = x[i] + (tw_real)a * dx[i];
                double rt = residual(w, xtrial, load, rtrial, fext);
                if (rt < best) { best = rt; best_a = a; }
                if (rt <= (1 - 1e-4 * a) * rn) break;
            }
            if (!isfinite(best) || best_a == 0 || best >= rn) {
                /* no decrease: at float's residual floor a small update is
                 * convergence; a large one is a failed increment */
                if (isfinite(best) && dmax <= sqrt(tol) * umax) {
                    for (size_t i = 0; i < n3; i++) x[i] += dx[i];
                    rn = residual(w, x, load, r, fext);
                    break;
                }
                failed = 1;
                break;
            }
            for (size_t i = 0; i < n3; i++) x[i] += (tw_real)best_a * dx[i];
            rn = residual(w, x, load, r, fext);
            it++;
            st.newton_iterations++;
            if (d.verbose)
                fprintf(stderr, "static: load %.4f newton %d: relative residual %.3g (CG %d its to %.2g, step %.3g)\n",
                        load, it, rn / ref, sr.iterations, sr.residual, best_a);
        }
        if (!failed) {
            done = load;
            memcpy(xgood, x, sizeof(tw_real) * n3);
            if (d.verbose) fprintf(stderr, "static: load %.4f of the total reached\n", done);
            continue;
        }
        memcpy(x, xgood, sizeof(tw_real) * n3);
        inc *= 0.5;
        if (d.verbose) fprintf(stderr, "static: increment failed at load %.4f; halving it to %.4g\n", load, inc);
        if (inc < 1.0 / (1024.0 * d.load_steps))
            return tw_fail(TW_ERR_DIVERGED,
                           "static solve: no convergence at load %.4g of the total (relative residual %g, asked %g) even "
                           "with the load increment halved 10 times; the load may exceed what the body can carry",
                           load, rn / ref, tol);
    }
    st.residual = rn / ref;
    if (stats) *stats = st;
    return TW_OK;
}
