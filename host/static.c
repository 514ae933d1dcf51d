/* Static equilibrium: find x with f_el(x) + f_ext = 0 on the free vertices.
 *
 * Newton's method on the residual r(x) = S(f_el(x) + s f_ext), s the load
 * fraction. Each iteration solves K'(x) dx = r by PCG (stopping at negative
 * curvature, which the StVK tangent can show under compression), then a
 * backtracking line search halves the step until the total potential energy
 * decreases enough (Armijo), or, where the energy cannot decide, |r| does. Load stepping is adaptive: `load_steps` equal
 * increments to start with, an increment that fails is retried at half the
 * size (one increment for linear, where one Newton iteration is exact).
 * Intermediate increments are solved to sqrt(tolerance); the last one to the
 * tolerance, on the relative residual or on the relative Newton update
 * (max |dx| / max |u|: the float build's forces have a rounding floor that a
 * stiff body's residual cannot pass). Where the residual stops falling, an
 * update within sqrt(tolerance) is accepted and reported as such
 * (tw_static_stats.stop). An update is only small where the residual is too:
 * no larger than at the start of the increment, so a displacement that is
 * already garbage (a singular K) never passes for converged. Every test is
 * written `!(x <= bound)`, so a NaN fails it.
 *
 * Precision: the iterate, the residual and the Newton system are double in
 * every build. In float, positions near 1 m resolve 6e-8 m, which on a stiff
 * fine mesh is an elastic force as large as gravity's (measured: relative
 * residual 2.7 at rest on an 80x8x8 bar at E = 1e8), and float CG's recursive
 * residual drifts far from the true one. The method's force and tangent
 * (corot-element, green) are still evaluated in tw_real at the rounded
 * iterate; linear's force is computed in double from the double rest mesh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh.h"
#include "world.h"

typedef struct tw_static_work {
    double *x, *r, *dx, *xt, *rt, *fe, *A;
    tw_real *xr, *fr; /* the iterate and a force, rounded to tw_real */
    tw_solver_work_d solver;
} tw_static_work;

static void work_free(tw_static_work *s)
{
    free(s->x); free(s->r); free(s->dx); free(s->xt); free(s->rt); free(s->fe); free(s->A);
    free(s->xr); free(s->fr);
    tw_solver_work_free_d(&s->solver);
}

static tw_status work_init(tw_static_work *s, const tw_world *w)
{
    memset(s, 0, sizeof *s);
    size_t n3 = 3 * (size_t)w->fem.n;
    double **d[] = {&s->x, &s->r, &s->dx, &s->xt, &s->rt, &s->fe};
    for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
        if (!(*d[k] = tw_malloc(sizeof(double) * n3, "static solve vectors"))) goto fail;
    if (!(s->A = tw_malloc(sizeof(double) * 9 * (size_t)w->fem.nnzb, "static system matrix"))) goto fail;
    if (!(s->xr = tw_malloc(sizeof(tw_real) * n3, "static solve vectors"))) goto fail;
    if (!(s->fr = tw_malloc(sizeof(tw_real) * n3, "static solve vectors"))) goto fail;
    if (tw_solver_work_init_d(&s->solver, w->fem.n) != TW_OK) goto fail;
    return TW_OK;
fail:
    work_free(s);
    return TW_ERR_NOMEM;
}

static double filtered_norm(const tw_world *w, const double *a)
{
    double s = 0;
    for (int i = 0; i < w->fem.n; i++)
        if (!w->cons[i])
            for (int c = 0; c < 3; c++) s += a[3 * i + c] * a[3 * i + c];
    return sqrt(s);
}

/* Linear elastic force -K u element by element in double, from the mesh's
 * double rest positions: f_p = -V sigma(eps) g_p, eps = sym(grad u). The
 * float build's K (rounded to float, summed with cancellation) cannot give the
 * residual to better than ~1e-2 of a small load; this can, so Newton refines
 * towards the double solution. Scattered serially (static solves are not the
 * hot path). */
static void linear_force_double(const tw_world *w, const double *x, double *fd)
{
    const tw_fem *f = &w->fem;
    const double *X = w->mesh->X;
    memset(fd, 0, sizeof(double) * 3 * (size_t)f->n);
    for (int e = 0; e < f->nt; e++) {
        const int *t = f->tets + 4 * (size_t)e;
        double g[4][3], H[9] = {0}, P[9];
        double det = tw_tet_gradients(X, t, g);
        for (int p = 0; p < 4; p++) /* grad u = sum_p u_p g_p^T */
            for (int r = 0; r < 3; r++) {
                double u = x[3 * t[p] + r] - X[3 * t[p] + r];
                for (int c = 0; c < 3; c++) H[3 * r + c] += u * g[p][c];
            }
        double lam = f->lam[e], mu = f->mu[e], V = det / 6, tr = H[0] + H[4] + H[8];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) P[3 * r + c] = mu * (H[3 * r + c] + H[3 * c + r]) + (r == c ? lam * tr : 0);
        for (int p = 0; p < 4; p++)
            for (int r = 0; r < 3; r++)
                fd[3 * t[p] + r] -= V * (P[3 * r] * g[p][0] + P[3 * r + 1] * g[p][1] + P[3 * r + 2] * g[p][2]);
    }
}

/* r = f_el(x) + load * f_ext(x) at the double iterate x; returns |S r|.
 * Leaves the method's rotations computed at x (for the tangent). */
static double residual(tw_world *w, tw_static_work *s, const double *x, double load, double *r)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    for (size_t i = 0; i < n3; i++) s->xr[i] = (tw_real)x[i];
    tw_compute_rotations(w, s->xr);
    if (w->def.method == TW_LINEAR) {
        linear_force_double(w, x, r);
    } else {
        tw_compute_elastic_force(w, s->xr, s->fr, 0);
        for (size_t i = 0; i < n3; i++) r[i] = s->fr[i];
    }
    tw_external_force(w, s->xr, s->fr);
    for (size_t i = 0; i < n3; i++) r[i] += load * s->fr[i];
    return filtered_norm(w, r);
}

/* Total potential energy at x: elastic energy minus the work of the (dead)
 * external load, load * f_ext . (x - X). */
static double potential(tw_world *w, tw_static_work *s, const double *x, double load)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    for (size_t i = 0; i < n3; i++) s->xr[i] = (tw_real)x[i];
    double e = tw_compute_elastic_energy(w, s->xr);
    tw_external_force(w, s->xr, s->fr);
    for (size_t i = 0; i < n3; i++)
        if (!w->cons[i / 3]) e -= load * s->fr[i] * (x[i] - w->mesh->X[i]);
    return e;
}

/* dx = K'^-1 r on the free vertices, K' assembled at the last rotations. */
static tw_solve_result newton_direction(tw_world *w, tw_static_work *s, const tw_static_def *d)
{
    size_t n3 = 3 * (size_t)w->fem.n, nv = 9 * (size_t)w->fem.nnzb;
    tw_assemble_system(w, 0, 1);
    for (size_t i = 0; i < nv; i++) s->A[i] = w->A[i];
    memset(s->dx, 0, sizeof(double) * n3);
    tw_bsr_d A = {w->fem.n, w->fem.nnzb, w->fem.row_ptr, w->fem.col, w->fem.diag, s->A, w->def.threads};
    tw_filter filter = {w->cons, NULL};
    return tw_pcg_d(&A, s->r, s->dx, &filter, d->cg_tolerance, d->cg_max_iterations, 0, &s->solver);
}

/* max(m, v) that keeps a NaN once seen (fmax drops it). */
static double max_nan(double m, double v) { return isnan(m) || isnan(v) || v > m ? (isnan(m) ? m : v) : m; }

/* Newton iterations at one load level. Returns 1 when converged to tol, with
 * st->stop and st->update saying on what; 0 when not (the iteration cap, no
 * progress, or a non-finite value). */
static int newton(tw_world *w, tw_static_work *s, const tw_static_def *d, double load, double tol, double ref,
                  double *rn, tw_static_stats *st)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    *rn = residual(w, s, s->x, load, s->r);
    double rn_start = *rn;
    st->stop = TW_STATIC_RESIDUAL;
    for (int it = 0; !(*rn <= tol * ref); it++) {
        if (it == d->max_newton || !isfinite(*rn)) return 0;
        tw_solve_result sr = newton_direction(w, s, d);
        st->cg_iterations += sr.iterations;
        st->newton_iterations++;
        double dmax = 0, umax = 0;
        for (size_t i = 0; i < n3; i++) {
            dmax = max_nan(dmax, fabs(s->dx[i]));
            umax = max_nan(umax, fabs(s->x[i] - w->mesh->X[i]));
        }
        /* backtracking line search: Armijo on the total potential energy
         * (elastic minus dead-load work; every static method has one, and
         * its gradient is -r), which accepts the long steps that a bending
         * body needs; where the energy cannot tell (float noise near the
         * solution, a spring) fall back to a decrease of |r| */
        double a = 1, best = INFINITY, best_a = 0;
        double slope = 0; /* dPi/da at a = 0: -r.dx */
        for (size_t i = 0; i < n3; i++) slope -= s->r[i] * s->dx[i];
        double pi0 = potential(w, s, s->x, load);
        if (w->spring_vertex < 0 && slope < 0 && isfinite(pi0)) {
            for (int ls = 0; ls < 20; ls++, a *= 0.5) {
                for (size_t i = 0; i < n3; i++) s->xt[i] = s->x[i] + a * s->dx[i];
                double pit = potential(w, s, s->xt, load);
                if (pit <= pi0 + 1e-4 * a * slope) { best_a = a; break; }
            }
            if (best_a > 0) best = residual(w, s, s->xt, load, s->rt);
        }
        if (best_a == 0) {
            a = 1;
            for (int ls = 0; ls < 12; ls++, a *= 0.5) {
                for (size_t i = 0; i < n3; i++) s->xt[i] = s->x[i] + a * s->dx[i];
                double rt = residual(w, s, s->xt, load, s->rt);
                if (rt < best) { best = rt; best_a = a; }
                if (rt <= (1 - 1e-4 * a) * *rn) break;
            }
        } else if (!(best < INFINITY)) {
            best_a = 0;
        } else {
            best = fmin(best, *rn * 0.999999); /* an energy decrease counts as progress */
        }
        /* no decrease: at the residual's floor (float forces) a small update
         * is convergence, a large one a failed increment */
        int small = dmax <= tol * umax;
        tw_static_stop stop = TW_STATIC_UPDATE;
        if (!isfinite(best) || best_a == 0 || !(best < *rn)) {
            if (!(isfinite(best) && dmax <= sqrt(tol) * umax)) return 0;
            best_a = 1;
            small = 1;
            if (!(dmax <= tol * umax)) stop = TW_STATIC_STALLED;
        }
        for (size_t i = 0; i < n3; i++) s->x[i] += best_a * s->dx[i];
        *rn = residual(w, s, s->x, load, s->r);
        st->update = umax > 0 ? dmax / umax : dmax;
        if (d->verbose)
            fprintf(stderr, "static: load %.4f newton %d: relative residual %.3g, update %.3g of |u| (CG %d its to %.2g, "
                            "step %.3g)\n", load, it + 1, *rn / ref, st->update, sr.iterations, sr.residual, best_a);
        if (small && best_a == 1 && *rn <= tol * ref) return 1; /* the residual test, met on the way */
        if (small && best_a == 1 && *rn <= rn_start) {
            st->stop = stop;
            return 1;
        }
    }
    return 1;
}

tw_status tw_world_solve_static(tw_world *w, const tw_static_def *def, tw_static_stats *stats)
{
    tw_static_def d = def ? *def : tw_default_static_def();
    tw_static_stats st;
    memset(&st, 0, sizeof st);
    if (d.load_steps < 1 || d.max_newton < 1 || !(d.tolerance > 0) || !(d.cg_tolerance > 0) || d.cg_max_iterations < 1)
        return tw_fail(TW_ERR_INVALID, "static solve: load_steps %d, max_newton %d, tolerance %g, cg_tolerance %g, "
                                       "cg_max_iterations %d: all must be positive",
                       d.load_steps, d.max_newton, d.tolerance, d.cg_tolerance, d.cg_max_iterations);
    if (w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE)
        return tw_fail(TW_ERR_UNSUPPORTED, "static equilibrium is solved for linear, corot-element, green and hybrid; %s has no "
                                           "consistent tangent for Newton (corot-element is the per-element form of the "
                                           "same warping)", tw_method_name(w->def.method));
    tw_static_work s;
    if (work_init(&s, w) != TW_OK) return TW_ERR_NOMEM;
    if (tw_world_fetch(w, 1, 1) != TW_OK) { /* it starts from the current state */
        work_free(&s);
        return TW_ERR_DEVICE;
    }
    w->host_dirty = 1; /* the result lands in w->x and w->v: a device copy re-uploads */
    /* and the steps start over from it, as after tw_world_set_positions:
     * BDF2's history, explicit Newmark's acceleration and carried rounding,
     * the contact impulses belong to the state it replaces */
    tw_world_restart(w);
    int n = w->fem.n;
    size_t n3 = 3 * (size_t)n;
    /* start from the current state; kinematic vertices sit at their targets */
    for (size_t i = 0; i < n3; i++) s.x[i] = w->cons[i / 3] == TW_KINEMATIC ? w->target[i] : w->x[i];
    memset(w->v, 0, sizeof(tw_real) * n3);
    /* the full load's norm is the yardstick for every increment */
    tw_external_force(w, w->x, s.fr);
    for (size_t i = 0; i < n3; i++) s.r[i] = s.fr[i];
    double ref = filtered_norm(w, s.r);
    if (!isfinite(ref)) {
        work_free(&s);
        return tw_fail(TW_ERR_INVALID, "static solve: the load is not finite (|f_ext| = %g N): density %g kg/m^3 and "
                                       "gravity (%g, %g, %g) m/s^2 exceed the %s range", ref, w->def.density,
                       w->def.gravity[0], w->def.gravity[1], w->def.gravity[2], tw_real_name());
    }
    if (ref == 0) ref = 1;
    double r0 = residual(w, &s, s.x, 1.0, s.r);
    if (!isfinite(r0)) {
        work_free(&s);
        return tw_fail(TW_ERR_INVALID, "static solve: the force at the start is not finite (|r| = %g N): Young's modulus "
                                       "%g Pa or the loads exceed the %s range", r0, w->def.youngs_modulus,
                       tw_real_name());
    }

    /* adaptive load stepping: after a failed increment, restart from the
     * last converged state with half the increment */
    double *xgood = s.fe;
    memcpy(xgood, s.x, sizeof(double) * n3);
    double done = 0, inc = w->def.method == TW_LINEAR ? 1.0 : 1.0 / d.load_steps, rn = 0;
    tw_status status = TW_OK;
    while (done < 1 - 1e-12) {
        double load = fmin(1.0, done + inc);
        double tol = load >= 1 - 1e-12 ? d.tolerance : sqrt(d.tolerance);
        if (newton(w, &s, &d, load, tol, ref, &rn, &st)) {
            done = load;
            memcpy(xgood, s.x, sizeof(double) * n3);
            if (d.verbose) fprintf(stderr, "static: load %.4f of the total reached\n", done);
            continue;
        }
        memcpy(s.x, xgood, sizeof(double) * n3);
        inc *= 0.5;
        if (d.verbose) fprintf(stderr, "static: increment failed at load %.4f; halving it to %.4g\n", load, inc);
        if (inc < 1.0 / (1024.0 * d.load_steps)) {
            status = tw_fail(TW_ERR_DIVERGED,
                             "static solve: no convergence at load %.4g of the total (relative residual %g, asked %g; "
                             "Newton stopped by %s) even with the load increment halved 10 times; the load may "
                             "exceed what the body can carry, or the fixed vertices do not hold it (a singular "
                             "stiffness: pin at least three vertices not on one line)",
                             load, rn / ref, tol,
                             !isfinite(rn) ? "a non-finite residual"
                                           : "its iteration cap or a step that made no progress");
            break;
        }
    }
    for (size_t i = 0; i < n3; i++) w->x[i] = (tw_real)s.x[i];
    st.residual = rn / ref;
    if (stats) *stats = st;
    work_free(&s);
    return status;
}
