/* The time step. Implicit Euler (velocity form,
 * Baraff-Witkin), the default; BDF2 and explicit Newmark below:
 *
 *   (M + h C + h^2 K') v+ = M v + h (f_el(x) + f_ext),   C = alpha M + beta K'
 *   x+ = x + h v+
 *
 * K' is the method's system stiffness at x (constant K, warped K, corotated K,
 * or the StVK tangent — one Newton step per time step, or more: tw_world_newton_iterations,
 * and warp-vertex's second on a step that turns its rotations far: warp_turn_iterations; corot-element's
 * and hybrid's such step is taken as shorter ones: element_turn_substeps). Pinned and kinematic
 * vertices get their velocity prescribed and are filtered out of the solve. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_MONOTONIC */
#include "world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amg.h"
#include "contact_bodies.h"
#include "hd/contact.h"
#include "hd/element.h"
#include "error.h"
#include "hd/integrator.h"
#include "hd/math3.h"
#ifdef TW_HAVE_CUDA
#include "cuda_world.h"
#endif

double tw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int tw_first_nonfinite(const tw_real *a, size_t n3)
{
    for (size_t i = 0; i < n3; i++)
        if (!isfinite(a[i])) return (int)(i / 3);
    return -1;
}

/* Ghost forces, second half: a warped system matrix (warp-edge's blocks
 * R_i K_ij R_j^T) need not have zero column sums, so even with the net elastic force removed the implicit
 * term moves a free body's centre of mass. When nothing can push back (no
 * pinned, kinematic or contact vertex this step), set the momentum of v+ to
 * exactly M vbase + heff sum f_ext(x+) by a uniform velocity shift
 * (x+ = xbase + heff v+; implicit Euler: vbase = v, heff = h). */
static void conserve_momentum(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase)
{
    const tw_fem *f = &w->fem;
    double p[3] = {0, 0, 0}, mt = 0;
    for (int i = 0; i < f->n; i++)
        if (w->fcons[i]) return;
    for (int i = 0; i < f->n; i++) {
        for (int c = 0; c < 3; c++) {
            p[c] += f->mass[i] * ((double)w->vnew[3 * i + c] - vbase[3 * i + c]) -
                    heff * (f->mass[i] * w->def.gravity[c] + w->fext[3 * i + c]);
        }
        mt += f->mass[i];
    }
    if (w->spring_vertex >= 0) {
        size_t k = 3 * (size_t)w->spring_vertex;
        for (int c = 0; c < 3; c++)
            p[c] -= heff * w->spring_k * (w->spring_anchor[c] - xbase[k + c] - heff * w->vnew[k + c]);
    }
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) w->vnew[3 * i + c] -= (tw_real)(p[c] / mt);
}

/* Prescribed velocities of the constrained vertices for positions
 * x+ = xbase + heff v+: pinned 0, kinematic onto their targets. */
static void prescribe_constrained(tw_world *w, const tw_real *xbase, double heff, tw_real *v)
{
    const tw_step_view s = tw_world_view(w);
    for (int i = 0; i < s.n; i++) tw_prescribe_vertex(&s, i, xbase, heff, v);
}

/* The multigrid preconditioner for this solve: the hierarchy built at the
 * first solve (again when the constrained vertices change), its operators
 * from this A (X: the unknowns' rest positions). On failure (out of memory)
 * the solve falls back to block-Jacobi. */
static tw_status mg_prepare(struct tw_amg **amg, const tw_bsr *A, const tw_real *X, const tw_filter *filter)
{
    if (*amg && !tw_amg_matches(*amg, filter)) { tw_amg_free(*amg); *amg = NULL; }
    if (!*amg) return (*amg = tw_amg_create(A, X, filter, NULL)) ? TW_OK : TW_ERR_NOMEM;
    return tw_amg_update(*amg, A, filter);
}

/* A x = b on the filtered directions: PCG, or BiCGStab for warp-vertex's
 * exact non-symmetric system when the world def asks for it. */
static tw_solve_result solve_on(const tw_world *w, const tw_bsr *A, const tw_real *X, struct tw_amg **amg,
                                tw_solver_work *work, const tw_real *b, tw_real *x, const tw_filter *filter)
{
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    if (vertex_method && w->def.warp_system == TW_WARP_SYSTEM_BICGSTAB)
        return tw_bicgstab(A, b, x, filter, w->def.cg_tolerance, w->def.cg_max_iterations, work);
    if (w->def.precond == TW_PRECOND_MG && mg_prepare(amg, A, X, filter) == TW_OK) {
        work->precond = tw_amg_apply;
        work->precond_ctx = *amg;
        work->spmv = tw_amg_spmv;
        work->spmv_ctx = *amg;
    }
    tw_solve_result r = tw_pcg(A, b, x, filter, w->def.cg_tolerance, w->def.cg_max_iterations,
                               w->def.cg_fixed_iterations, work);
    work->precond = NULL;
    work->spmv = NULL;
    return r;
}

/* w->A x = b on the filtered directions; with hanging vertices, the reduced
 * system P^T A P x_r = P^T b and x = P x_r (hanging.c). */
static tw_solve_result solve_system(tw_world *w, const tw_real *b, tw_real *x, const tw_filter *filter)
{
    if (!w->hsys) {
        tw_bsr A = tw_world_bsr(w);
        return solve_on(w, &A, w->fem.X, &w->amg, &w->work, b, x, filter);
    }
    tw_filter reduced;
    if (tw_hanging_reduce(w, b, x, filter, &reduced) != TW_OK) {
        tw_solve_result failed = {0, NAN, 0}; /* out of memory: the step fails on the non-finite residual */
        return failed;
    }
    tw_hanging_system *r = w->hsys;
    tw_bsr Ar = tw_hier_matrix_bsr(&r->Ar);
    Ar.threads = w->def.threads;
    tw_solve_result sr = solve_on(w, &Ar, r->X, &r->amg, &r->work, r->b, r->x, &reduced);
    tw_hanging_expand(w, x);
    return sr;
}

/* A contact pass's solve of w->A v = b: with active body contacts, the
 * coupled solve of contact_bodies.c; else solve_system, for v - s when a
 * contact is on a moving collider (tw_contact_shift; s in w->newton, free
 * until newton_refine). */
static tw_solve_result solve_contacts(tw_world *w, const tw_real *b, tw_real *v, const tw_filter *filter, double heff)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    tw_real *s = w->newton, *bs = w->newton + n3;
    if (w->bodies && tw_bodies_coupled(w)) return tw_bodies_solve(w, b, v, heff);
    if (!w->ncolliders || !tw_colliders_moving(w) || !tw_contact_shift(w, s)) return solve_system(w, b, v, filter);
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_spmv(&A, s, bs);
    for (size_t i = 0; i < n3; i++) {
        bs[i] = b[i] - bs[i];
        v[i] -= s[i];
    }
    tw_solve_result r = solve_system(w, bs, v, filter);
    for (size_t i = 0; i < n3; i++) v[i] += s[i];
    return r;
}

/* NaN or a blow-up in the new velocities (hd/step.h tw_divergence, found
 * by the loop below or by the CUDA world's device reduction): the verdict is
 * tw_divergence_ok's for both backends, and the message says which step and
 * why. */
static tw_status divergence_status(tw_world *w, const tw_divergence *d, int iterations, double residual,
                                   double h)
{
    if (tw_divergence_ok(d, residual, h, 10 * w->size)) {
        /* a step that moves a vertex a quarter of the body's size linearises
         * a large rotation in one go (volume and energy errors) and resolves
         * neither the motion nor a contact: said once per world */
        if (d->vmax * h > 0.25 * w->size && !w->warned_large_step) {
            w->warned_large_step = 1;
            fprintf(stderr,
                    "tetwarp: warning: step %ld (t = %g s): vertex %d moves %.3g m in one step, %.2g times the "
                    "body's size; a step this large is not resolved (volume and energy errors): reduce dt\n",
                    w->step + 1, w->time + h, d->vmax_vertex, d->vmax * h, d->vmax * h / w->size);
        }
        return TW_OK;
    }
    if (d->nonfinite_vertex < 0 && !isfinite(residual))
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): the %s's residual is not finite (%g after %d CG iterations); reduce dt or "
                       "check the material",
                       w->step + 1, w->time + h, w->def.integrator == TW_EXPLICIT_NEWMARK ? "explicit update" : "solve",
                       residual, iterations);
    if (d->nonfinite_vertex >= 0)
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): the %s produced a non-finite velocity at vertex %d (CG: %d iterations, "
                       "residual %g); reduce dt or check the material",
                       w->step + 1, w->time + h, w->def.integrator == TW_EXPLICIT_NEWMARK ? "explicit update" : "solve",
                       d->nonfinite_vertex, iterations, residual);
    return tw_fail(TW_ERR_DIVERGED,
                   "step %ld (t = %g s): vertex %d would move %g m in one step, %g times the object's size; the "
                   "simulation is unstable — reduce dt, add damping or check the material",
                   w->step + 1, w->time + h, d->vmax_vertex, d->vmax * h, d->vmax * h / w->size);
}

static tw_status check_velocities(tw_world *w, const tw_real *v, double h, const tw_solve_result *sr)
{
    tw_divergence d = tw_divergence_none();
    for (int i = 0; i < w->fem.n; i++) tw_divergence_add(&d, v, i);
    return divergence_status(w, &d, sr->iterations, sr->residual, h);
}

/* One linearised implicit solve, shared by implicit Euler and BDF2:
 *
 *   x+ = xbase + heff v+,   f(x+) ~ f(x) - K'(x+ - x)
 *   (M (1 + heff alpha) + (heff^2 + heff beta) K') v+
 *        = M vbase + heff (f(x) + f_ext) - heff K' (xbase - x)
 *
 * Implicit Euler: heff = h, xbase = x, vbase = v. BDF2: heff = 2h/3,
 * xbase = (4 x_n - x_n-1)/3, vbase = (4 v_n - v_n-1)/3. Leaves v+ in w->vnew. */
static tw_status implicit_solve(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, double h,
                                tw_step_stats *st, int *impacts)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    double alpha = w->def.damping_mass, beta = w->def.damping_stiffness;
    double cm = 1 + heff * alpha, ck = heff * heff + heff * beta;
    double t0 = tw_now_ms();
    /* else the energy check's (element methods) or the turn test's (warp-vertex), at this x */
    if (!tw_rotations_cached(w, w->x)) tw_compute_rotations(w, w->x);
    double t1 = tw_now_ms();
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    tw_compute_elastic_force(w, w->x, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, w->x, w->rhs);
#pragma omp parallel for if (TW_PAR(n)) num_threads(tw_world_threads(w)) schedule(static)
    for (int i = 0; i < n; i++) {
        size_t k = 3 * (size_t)i;
        tw_rhs_vertex(f->mass[i], vbase + k, heff, w->f + k, w->rhs + k, w->rhs + k); /* rhs held f_ext */
    }
    tw_assemble_system(w, cm, ck);
    tw_bsr A = tw_world_bsr(w);
    if (xbase != w->x) {
        /* - heff K' d with d = xbase - x, K' d = (A d - cm M d) / ck */
        tw_real *d = w->work.s, *Ad = w->work.t;
        for (size_t i = 0; i < n3; i++) d[i] = xbase[i] - w->x[i];
        tw_bsr_spmv(&A, d, Ad);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                size_t k = 3 * (size_t)i + c;
                w->rhs[k] = tw_bdf2_rhs_corrected(w->rhs[k], Ad[k], d[k], f->mass[i], heff, cm, ck);
            }
    }
    double t2 = tw_now_ms();
    if (w->def.warm_start) memcpy(w->vnew, w->v, sizeof(tw_real) * n3);
    else memset(w->vnew, 0, sizeof(tw_real) * n3);
    prescribe_constrained(w, xbase, heff, w->vnew);
    /* contacts (contact.c): an active set, solved again while a solve
     * changes it; an active vertex's normal velocity lands it on the surface */
    st->contacts = tw_contact_detect(w, xbase, heff);
    if (w->bodies) st->contacts = tw_bodies_detect(w, xbase, heff, st->contacts);
    if (st->contacts) {
        tw_contact_land_all(w, w->vnew, heff);
        tw_contact_friction_implicit(w, heff);
    }
    tw_filter filter = {w->fcons, w->cnormal};
    tw_solve_result sr = solve_contacts(w, w->rhs, w->vnew, &filter, heff);
    int capped = sr.iterations >= w->def.cg_max_iterations && !(sr.residual <= w->def.cg_tolerance);
    if (w->ncolliders || w->bodies) {
        /* again while the normal set changes, and while friction is off
         * Coulomb's, at most TW_CONTACT_FRICTION_PASSES times for friction
         * alone (it can cycle between sticking and sliding; its damping
         * dissipates either way) */
        int iterations = sr.iterations, changed, friction = 0, friction_passes = 0;
        st->contact_passes = 1;
        for (;;) {
            /* the body contacts' gaps at this solve, which the update reads, and
             * their springs' active set (a change is solved again) */
            int springs = tw_bodies_pass(w, heff);
            changed = tw_contact_update(w, w->rhs, w->vnew, heff, &friction) + springs;
            if (!tw_contact_solve_again(changed, friction, friction_passes, st->contact_passes,
                                        w->def.contact_passes > 0 ? w->def.contact_passes : TW_CONTACT_PASSES))
                break;
            friction_passes += !changed;
            sr = solve_contacts(w, w->rhs, w->vnew, &filter, heff);
            capped |= sr.iterations >= w->def.cg_max_iterations && !(sr.residual <= w->def.cg_tolerance);
            iterations += sr.iterations;
            st->contact_passes++;
            changed = 0;
        }
        sr.iterations = iterations;
        st->contacts_unresolved = changed;
        st->contacts = 0;
        for (int i = 0; i < n; i++) st->contacts += tw_contact_active(w->fcons[i]);
        tw_contact_forces(w, w->rhs, w->vnew, heff);
        if (w->def.collider_models && w->ncolliders && !w->bodies && !w->nhang && tw_contact_model(w, heff) != TW_OK)
            return TW_ERR_NOMEM;
        /* BDF2's impacts: contacts the step's start velocity (v_n) took
         * towards their collider faster than gravity adds in a step */
        double vtol = h * sqrt(w->def.gravity[0] * w->def.gravity[0] + w->def.gravity[1] * w->def.gravity[1] +
                               w->def.gravity[2] * w->def.gravity[2]);
        for (int i = 0; w->def.integrator == TW_BDF2 && i < n; i++) {
            size_t k = 3 * (size_t)i;
            if (tw_contact_active(w->fcons[i]) && !w->cons[i])
                *impacts += tw_contact_impact(w->v + k, w->cvel + k, w->cnormal + k, vtol);
        }
    }
    st->cg_capped = capped && w->def.cg_fixed_iterations <= 0;
    double t3 = tw_now_ms();
    st->cg_iterations = sr.iterations;
    st->residual = sr.residual;
    st->ms_rotations = t1 - t0;
    st->ms_assembly = t2 - t1;
    st->ms_solve = t3 - t2;
    tw_status s = check_velocities(w, w->vnew, h, &sr);
    if (s == TW_OK && vertex_method && w->def.ghost_force_correction) conserve_momentum(w, heff, xbase, vbase);
    return s;
}

/* The step's residual at velocity v (positions xk = xbase + heff v):
 *   G = M (v - vbase) + heff alpha M v + heff beta K' v - heff (f(xk) + f_ext(xk))
 * with K' v = (A v - cm M v) / ck from the A assembled last. Returns |S G|. */
static double step_residual(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, const tw_real *v,
                            double cm, double ck, tw_real *xk, tw_real *G, tw_real *Av)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_spmv(&A, v, Av);
    for (size_t i = 0; i < n3; i++) xk[i] = xbase[i] + (tw_real)heff * v[i];
    tw_compute_rotations(w, xk);
    tw_compute_elastic_force(w, xk, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, xk, G);
    double alpha = w->def.damping_mass, beta = w->def.damping_stiffness, g2 = 0;
    for (int i = 0; i < n; i++) {
        size_t k = 3 * (size_t)i;
        tw_newton_residual_vertex(f->mass[i], v + k, vbase + k, Av + k, w->f + k, heff, alpha, beta, cm, ck, G + k);
    }
    for (int i = 0; i < n; i++) /* S G */
        g2 += tw_newton_filter_vertex(w->fcons[i], w->cnormal + 3 * (size_t)i, G + 3 * (size_t)i);
    return sqrt(g2);
}

/* Newton iterations after the first linearised solve (non-linear methods,
 * tw_world_newton_iterations > 1): A(xk) dv = -G(v), then a backtracking line
 * search on |G| (K' of the damping term held at xk). The contact passes'
 * friction is not in A or G: the contacts that have it are held whole
 * (tw_contact_newton_hold), else a Newton step would undo it (a block on a
 * slope slid as if frictionless). Refines w->vnew. */
static tw_status newton_refine(tw_world *w, double heff, const tw_real *xbase, const tw_real *vbase, tw_step_stats *st,
                               int nit)
{
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    double cm = 1 + heff * w->def.damping_mass, ck = heff * heff + heff * w->def.damping_stiffness;
    tw_real *xk = w->newton, *G = w->newton + n3, *dv = w->newton + 2 * n3, *vt = w->newton + 3 * n3;
    tw_real *scratch = w->work.rhat; /* free outside BiCGStab */
    tw_filter filter = {w->fcons, w->cnormal};
    double g0 = -1, g = 0;
    int held = w->ncolliders ? tw_contact_newton_hold(w, 1) : 0;
    for (int it = 1; it < nit; it++) {
        /* A at the current iterate, then G there */
        for (size_t i = 0; i < n3; i++) xk[i] = xbase[i] + (tw_real)heff * w->vnew[i];
        tw_compute_rotations(w, xk);
        tw_assemble_system(w, cm, ck);
        g = step_residual(w, heff, xbase, vbase, w->vnew, cm, ck, xk, G, scratch);
        g0 = tw_newton_reference(g0, g);
        if (tw_newton_converged(g, g0, w->def.newton_tolerance, it)) break;
        for (size_t i = 0; i < n3; i++) G[i] = -G[i];
        memset(dv, 0, sizeof(tw_real) * n3);
        tw_solve_result sr = solve_system(w, G, dv, &filter);
        st->cg_iterations += sr.iterations;
        st->newton_iterations++;
        double a = 1, best = INFINITY, best_a = 0;
        for (int ls = 0; ls < TW_NEWTON_LINE_STEPS; ls++, a *= 0.5) {
            for (size_t i = 0; i < n3; i++) vt[i] = w->vnew[i] + (tw_real)a * dv[i];
            double gt = step_residual(w, heff, xbase, vbase, vt, cm, ck, xk, G, scratch);
            if (gt < best) { best = gt; best_a = a; }
            if (tw_newton_accepts(gt, g, a)) break;
        }
        if (!(best < g)) break; /* no progress: keep the iterate */
        for (size_t i = 0; i < n3; i++) w->vnew[i] += (tw_real)best_a * dv[i];
        g = best;
    }
    if (held) tw_contact_newton_hold(w, 0);
    st->newton_residual = tw_newton_ratio(g, g0);
    tw_solve_result none = {0, 0, 0};
    return check_velocities(w, w->vnew, w->def.dt, &none);
}

/* The turn of the step's first solve: the smallest cos of the angle by
 * which a rotation (warp-vertex: per vertex; corot-element, hybrid: per
 * element) turned from w->R, the step's start, to the rotations at the
 * solve's positions xbase + heff v+, which it leaves in w->R (the element
 * methods' system packs in w->S too). 1 (no turn) when out of memory. */
static double turn_cos(tw_world *w, double heff, const tw_real *xbase)
{
    const tw_fem *f = &w->fem;
    int count = w->def.method == TW_WARP_VERTEX ? f->n : f->nt;
    size_t n3 = 3 * (size_t)f->n, rn = (size_t)(f->n > f->nt ? f->n : f->nt);
    if (!w->turn_R && !(w->turn_R = malloc(sizeof(tw_real) * 9 * rn))) return 1;
    memcpy(w->turn_R, w->R, sizeof(tw_real) * 9 * (size_t)count);
    tw_real *xk = w->newton; /* free until newton_refine */
    for (size_t i = 0; i < n3; i++) xk[i] = xbase[i] + (tw_real)heff * w->vnew[i];
    tw_compute_rotations(w, xk);
    double cmin = 1;
#pragma omp parallel for if (TW_PAR(count)) num_threads(tw_world_threads(w)) reduction(min : cmin) schedule(static)
    for (int i = 0; i < count; i++) cmin = fmin(cmin, tw_rotation_turn_cos(w->turn_R, w->R, i));
    return cmin;
}

/* The Newton count of a warp-vertex step whose count is automatic
 * (newton_iterations 0) and comes to one linearisation: 2 when the vertex
 * rotations at the first solve's positions xbase + heff v+ turned by more
 * than TW_WARP_TURN at some vertex from w->R, the start's (hd/step.h says
 * why), else 1. Leaves w->R at those positions, marked cached there
 * (rot_x), so that a step ending at them starts without computing them
 * again. Out of memory: 1, as without the test. */
static int warp_turn_iterations(tw_world *w, double heff, const tw_real *xbase)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    if (!w->rot_x && !(w->rot_x = malloc(sizeof(tw_real) * n3))) return 1;
    double cmin = turn_cos(w, heff, xbase);
    memcpy(w->rot_x, w->newton, sizeof(tw_real) * n3);
    w->rot_cached = 1;
    w->rot_method = w->def.method;
    return cmin < cos(TW_WARP_TURN) ? 2 : 1;
}

/* With tw_world_def.turn_substeps (off by default), corot-element and
 * hybrid under implicit Euler, one linearisation a step (the automatic
 * count), CPU backend: a step whose solve turned an element
 * rotation by more than TW_ELEMENT_TURN (rad) is taken again from its start
 * as k = ceil(2 turn / TW_ELEMENT_TURN) steps of h / k, at most
 * TW_TURN_SUBSTEPS, each one linearisation: about half the threshold a
 * substep, since the first solve's turn only estimates the substeps' own
 * (the tipping over's steps split at the threshold still gained 0.06 of
 * the drop's energy).
 *
 * Why: the step holds each element's rotation R_e at its start and
 * linearises the force there; an element that turns by theta in the step
 * meets at its end a force rotated by theta that the solve did not see, an
 * error of order theta^2 times its stress. Where a stressed body turns fast
 * the step gains energy: the armadillo tipping over on a frictionless floor
 * at 1/30 s turns elements by 0.5-0.8 rad a step and one step gains 0.4 of
 * the drop's energy (bench/results/cpu-2core-amd-epyc/contact_report.md,
 * "The tipping over's energy"). Shorter steps shrink the turn and the
 * error with it. A Newton iteration at the end positions (warp-vertex's
 * answer, TW_WARP_TURN) removes the gain too but converges to implicit
 * Euler's own step, which changes a free body's angular momentum by
 * -h^2 sum v+ x f(x+): it set the same armadillo spinning about the
 * vertical, a spin nothing damps on a frictionless floor. A single
 * linearisation changes it only by its system matrix's moment (R K R^T's on
 * the deformed body; none with a matrix built on the element's current
 * shape, contact_report.md "The frictionless armadillo's spin"), and its
 * substeps alike. Not taken where something moves within the step that the
 * substeps would have to follow (a kinematic or hanging vertex, a moving
 * collider, body contact). Below the threshold the step is the single
 * linearisation, to the bit. Off by default: contact_report.md says what it
 * changes in the contact tables. */
#define TW_ELEMENT_TURN 0.25
#define TW_TURN_SUBSTEPS 8

static int element_turn_test(const tw_world *w)
{
    if (!w->def.turn_substeps || (w->def.method != TW_COROT_ELEMENT && w->def.method != TW_HYBRID) ||
        w->def.integrator != TW_IMPLICIT_EULER || w->def.newton_iterations != 0 || tw_world_newton_iterations(w) != 1 ||
        w->bodies || w->nhang || tw_colliders_moving(w))
        return 0;
    for (int i = 0; i < w->fem.n; i++)
        if (w->cons[i] == TW_KINEMATIC) return 0;
    return 1;
}

/* The substeps of a step whose first solve (in w->vnew) turned too far:
 * their count k (1: the step stands), from the start x, v; on k > 1 the
 * substeps are taken, each an implicit Euler step of h / k committed to x,
 * v with its end projection, their stats summed into st. The contacts'
 * impulses at the step's start (w->cimpulse_start) are put back for the
 * first; a failed substep leaves x, v as at the start. */
static tw_status element_turn_substeps(tw_world *w, double h, tw_step_stats *st, int *k)
{
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    double c = turn_cos(w, h, w->x), turn = acos(fmax(-1, fmin(1, c)));
    *k = 1;
    if (!(turn > TW_ELEMENT_TURN)) return TW_OK;
    *k = (int)fmin(TW_TURN_SUBSTEPS, ceil(2 * turn / TW_ELEMENT_TURN));
    double hs = h / *k;
    tw_real *x0 = w->newton + n3, *v0 = w->newton + 2 * n3; /* free outside newton_refine */
    memcpy(x0, w->x, sizeof(tw_real) * n3);
    memcpy(v0, w->v, sizeof(tw_real) * n3);
    memcpy(w->cimpulse, w->cimpulse_start, sizeof(tw_real) * (size_t)f->n);
    memset(w->cforce, 0, sizeof w->cforce);
    w->def.dt = hs; /* the contact code reads the step's length there */
    tw_status s = TW_OK;
    int impacts = 0;
    for (int j = 0; j < *k && s == TW_OK; j++) {
        tw_step_stats ss;
        memset(&ss, 0, sizeof ss);
        s = implicit_solve(w, hs, w->x, w->v, hs, &ss, &impacts);
        st->cg_iterations += ss.cg_iterations;
        st->contact_passes += ss.contact_passes;
        st->cg_capped |= ss.cg_capped;
        st->contacts_unresolved += ss.contacts_unresolved;
        st->contacts = ss.contacts;
        st->residual = ss.residual;
        st->ms_rotations += ss.ms_rotations;
        st->ms_assembly += ss.ms_assembly;
        st->ms_solve += ss.ms_solve;
        st->newton_iterations++;
        if (s != TW_OK) break;
        memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
        for (size_t i = 0; i < n3; i++) w->x[i] += (tw_real)hs * w->v[i];
        st->contacts_unresolved += tw_contact_project(w, w->x, w->v, hs);
    }
    w->def.dt = h;
    for (int i = 0; i < TW_MAX_COLLIDERS; i++) /* the mean force over the step */
        for (int a = 0; a < 3; a++) w->cforce[i][a] /= *k;
    if (s != TW_OK) {
        memcpy(w->x, x0, sizeof(tw_real) * n3);
        memcpy(w->v, v0, sizeof(tw_real) * n3);
    }
    return s;
}

/* Explicit Newmark (Zhuang & Canny eq. 7-10; beta = 0, gamma = 1/2) with
 * lumped mass and mass-proportional damping alpha:
 *   x+ = x + h v + h^2/2 a
 *   v+ = (v + h/2 a + h/2 M^-1 F(x+)) / (1 + h alpha / 2),  a+ = M^-1 F(x+) - alpha v+
 * F = f_el + f_ext. Stiffness-proportional damping is not used here. */
static tw_status newmark_step(tw_world *w, double h, tw_step_stats *st)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    double alpha = w->def.damping_mass;
    int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
    double t0 = tw_now_ms();
    if (!w->xres && !(w->xres = malloc(sizeof(tw_real) * n3))) return TW_ERR_NOMEM;
    if (!w->xres_next && !(w->xres_next = malloc(sizeof(tw_real) * n3))) return TW_ERR_NOMEM;
    if (!w->has_acc) { /* a at the start: from the current state */
        memset(w->xres, 0, sizeof(tw_real) * n3);
        tw_compute_rotations(w, w->x);
        tw_compute_elastic_force(w, w->x, w->f, vertex_method && w->def.ghost_force_correction);
        tw_external_force(w, w->x, w->rhs);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                size_t k = 3 * (size_t)i + c;
                w->acc[k] = tw_newmark_start_acc(w->f[k] + w->rhs[k], f->mass[i], w->v[k], alpha,
                                                 f->mass[i] > 0 && !w->cons[i]);
            }
        w->has_acc = 1;
    }
    /* positions: free vertices by Taylor, constrained ones prescribed */
    tw_real *xnew = w->work.s;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            xnew[k] = tw_newmark_position_carried(w->cons[i], w->x[k], w->v[k], w->acc[k], w->target[k], h,
                                                  w->xres[k], &w->xres_next[k]);
        }
    /* contact: project the predicted positions first, so the forces below
     * are those of the configuration the step ends in */
    st->contacts = tw_contact_project_positions(w, xnew);
    if (st->contacts)
        for (int i = 0; i < n; i++)
            if (w->fcons[i] == TW_FILTER_NORMAL)
                tw_newmark_residual_projected(w->xres_next + 3 * (size_t)i, w->cnormal + 3 * (size_t)i);
    double t1 = tw_now_ms();
    tw_compute_rotations(w, xnew);
    double t2 = tw_now_ms();
    tw_compute_elastic_force(w, xnew, w->f, vertex_method && w->def.ghost_force_correction);
    tw_external_force(w, xnew, w->rhs);
    tw_real *anew = w->work.t;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            size_t k = 3 * (size_t)i + c;
            if (w->cons[i]) {
                w->vnew[k] = tw_newmark_constrained_velocity(xnew[k], w->x[k], h);
                anew[k] = 0;
                continue;
            }
            tw_newmark_velocity(w->f[k] + w->rhs[k], f->mass[i], w->v[k], w->acc[k], h, alpha, &w->vnew[k], &anew[k]);
        }
    if (st->contacts) tw_contact_project_velocities(w, w->vnew, anew, h);
    double t3 = tw_now_ms();
    st->ms_rotations = t2 - t1;
    st->ms_assembly = t3 - t2 + (t1 - t0);
    tw_solve_result none = {0, 0, 0};
    tw_status s = check_velocities(w, w->vnew, h, &none);
    if (s != TW_OK) return s;
    memcpy(w->x, xnew, sizeof(tw_real) * n3);
    memcpy(w->acc, anew, sizeof(tw_real) * n3);
    tw_real *r = w->xres;
    w->xres = w->xres_next;
    w->xres_next = r;
    return TW_OK;
}

#ifdef TW_HAVE_CUDA
static int work_done(const tw_world *w, int hanging_drive);
static double energy_scale(const tw_world *w, double k, double e, double m);
static void energy_run_start(tw_world *w, double e0, double scale);
static tw_status energy_verdict(tw_world *w, double e0, double scale, double e1, double scale1, tw_step_stats *st);

/* The device's (kinetic, elastic, gravity) as mechanical_energy sums them,
 * and their scale */
static double device_energy(const tw_world *w, const double *parts, double *scale)
{
    *scale = energy_scale(w, parts[0], parts[1], tw_world_total_mass(w));
    return parts[0] + parts[1] + parts[2];
}

/* Body contact on the CUDA backend (kernels/cuda_bodies.cu): the device
 * step calls these at implicit_solve's points, with what they read
 * downloaded into the world's arrays first and what they wrote uploaded
 * after; contact.c's and contact_bodies.c's functions run as on the CPU. */
static int body_detect(void *ctx, double heff)
{
    tw_world *w = ctx;
    int contacts = tw_contact_detect(w, w->xbase, heff);
    return tw_bodies_detect(w, w->xbase, heff, contacts);
}

static int body_coupled(void *ctx, struct tw_body_lists *lists, int *depth)
{
    tw_world *w = ctx;
    /* its damping release writes the host's A and rhs, unused with the
     * device's (the device does the same to its own: cuda_bodies.cu) */
    int rows = tw_bodies_coupled(w);
    if (!rows) return 0;
    return tw_bodies_lists(w, lists, depth) == TW_OK ? rows : -1;
}

static int body_pass(void *ctx, double heff) { return tw_bodies_pass(ctx, heff); }

static int body_project(void *ctx)
{
    tw_world *w = ctx;
    return tw_bodies_project(w, w->x, w->v);
}

static tw_cuda_body_hooks body_hooks(tw_world *w)
{
    tw_cuda_body_hooks h;
    h.ctx = w;
    h.fcons = w->fcons;
    h.ccol = w->ccol;
    h.cnormal = w->cnormal;
    h.cdist = w->cdist;
    h.cmu = w->cmu;
    h.cimpulse = w->cimpulse;
    h.cfric = w->cfric;
    h.cvel = w->cvel;
    h.xbase = w->xbase;
    h.v = w->v;
    h.vnew = w->vnew;
    h.x = w->x;
    h.slack = TW_BODY_SLACK * w->size;
    h.detect = body_detect;
    h.coupled = body_coupled;
    h.pass = body_pass;
    h.project = body_project;
    return h;
}

/* The step on the device (kernels/cuda_world.h): the world's numbers and the
 * state a setter changed go in, and what comes back is applied here as the
 * CPU step applies its own: the divergence check, the counters, the flags. */
static tw_status cuda_step(tw_world *w, tw_step_stats *stats)
{
    tw_cuda_step_in in;
    memset(&in, 0, sizeof in);
    in.def = &w->def;
    in.step = w->step;
    in.has_history = w->has_history;
    in.has_acc = w->has_acc;
    in.spring_vertex = w->spring_vertex;
    for (int c = 0; c < 3; c++) in.spring_anchor[c] = w->spring_anchor[c];
    in.spring_k = w->spring_k;
    in.size = w->size;
    in.newton_iterations = tw_world_newton_iterations(w);
    in.warp_turn_test = tw_world_warp_turn_test(w);
    in.patch_mass = tw_contact_patch_mass(w);
    in.nhang = w->nhang;
    in.hang_vertex = w->hang_vertex;
    in.hang_ptr = w->hang_ptr;
    in.hang_idx = w->hang_idx;
    in.hang_w = w->hang_w;
    in.dirty = w->host_dirty;
    in.zero_impulses = w->impulses_zeroed;
    in.x = w->host_x_stale ? NULL : w->x; /* the device's copy is newer */
    in.v = w->host_v_stale ? NULL : w->v;
    in.fext = w->fext;
    in.target = w->target;
    in.cons = w->cons;
    in.colliders = w->colliders;
    in.ncolliders = w->ncolliders;
    tw_collider_def end[TW_MAX_COLLIDERS];
    tw_colliders_advanced(w, w->def.dt, end);
    in.colliders_end = end;
    in.colliders_moving = tw_colliders_moving(w);
    /* tw_world_step's projection and energy check, on the device: the
     * energies come back as scalars, the rule is applied here. The last
     * step's end energy still holds as this one's start while no setter
     * touched the state (host_dirty) and the method is the same: the
     * device's state is not read here for state_key. */
    int no_work = !work_done(w, 0);
    in.energy_projection = w->def.method == TW_WARP_VERTEX && w->def.integrator == TW_BDF2 && !work_done(w, 1);
    in.energy_check = no_work && w->def.energy_check;
    int cached = in.energy_check && w->energy_step == w->step && !w->host_dirty &&
                 w->energy_key == (double)w->def.method;
    in.energy_snapshot = cached && w->energy_above == w->step; /* only such a step can fail */
    in.energy_start_known = cached;
    int has_acc = w->has_acc;
    tw_cuda_body_hooks hooks = body_hooks(w);
    in.bodies = w->bodies ? &hooks : NULL;
    tw_cuda_step_out out;
    double t0 = tw_now_ms();
    tw_status s = tw_cuda_world_step(w->cuda, &in, &out);
    if (out.uploaded) w->host_dirty = w->impulses_zeroed = 0;
    if (out.acc_computed) w->has_acc = 1; /* as on the CPU, whether the step then passes or not */
    if (s == TW_OK) { /* failed: the device kept the state as it was */
        tw_divergence d = tw_divergence_none();
        d.nonfinite_vertex = out.nonfinite_vertex;
        d.vmax_vertex = out.vmax_vertex;
        d.vmax = out.vmax;
        s = divergence_status(w, &d, out.stats.cg_iterations, out.stats.residual, w->def.dt);
    }
    if (s == TW_OK && in.energy_check) {
        double scale = 0, scale1;
        double e0 = cached ? w->energy_last : device_energy(w, out.energy0, &scale);
        if (!cached) energy_run_start(w, e0, scale);
        double e1 = device_energy(w, out.energy1, &scale1);
        s = energy_verdict(w, e0, scale, e1, scale1, &out.stats);
        if (s == TW_OK) {
            w->energy_key = (double)w->def.method;
        } else { /* the state at the step's start back on the device, as energy_snapshot does */
            tw_status r = tw_cuda_world_restore(w->cuda);
            if (r != TW_OK) s = r;
            w->has_acc = has_acc;
        }
    }
    if (s == TW_OK) {
        memcpy(w->cforce, out.collider_force, sizeof w->cforce);
        tw_colliders_advance(w, w->def.dt);
        w->host_x_stale = w->host_v_stale = 1;
        /* the device kept x, v in its history; after an impact the next step
         * is implicit Euler, as on the CPU (tw_world_step) */
        if (w->def.integrator == TW_BDF2) w->has_history = !out.impacts;
        w->step++;
        w->time += w->def.dt;
    } else if (s != TW_ERR_DIVERGED && out.started) {
        /* a device error: whatever the host holds goes up again next step
         * (x or v the device alone held may be lost with the device), and
         * the steps start over from it (BDF2's history, Newmark's
         * acceleration, the contact impulses) */
        w->host_dirty = 1;
        tw_world_restart(w);
    }
    tw_step_stats st = out.stats;
    st.ms_total = tw_now_ms() - t0;
    st.ms_other = st.ms_total - st.ms_rotations - st.ms_assembly - st.ms_solve;
    if (stats) *stats = st;
    return s;
}
#endif

/* A fingerprint of the state (x, v) and the method: the energy check's
 * cached energy holds only while no setter changed them. */
static double state_key(const tw_world *w)
{
    double k = w->def.method;
    size_t n3 = 3 * (size_t)w->fem.n;
    for (size_t i = 0; i < n3; i++) k += (double)w->x[i] * (double)(1 + i % 7) + (double)w->v[i] * (double)(1 + i % 5);
    return k;
}

/* The mechanical energy's scale: kinetic k + |elastic e| + the weight (mass
 * m, kg) times the body's size. */
static double energy_scale(const tw_world *w, double k, double e, double m)
{
    double gn = sqrt(w->def.gravity[0] * w->def.gravity[0] + w->def.gravity[1] * w->def.gravity[1] +
                     w->def.gravity[2] * w->def.gravity[2]);
    return k + fabs(e) + m * gn * w->size;
}

/* Kinetic + elastic + gravity energy (J), and its scale: kinetic + elastic +
 * the weight times the body's size. The elastic energy's pass leaves the
 * rotations at w->x (element methods), which the next implicit step uses. */
static double mechanical_energy(tw_world *w, double *scale)
{
    double k = 0, g = 0, m = 0;
    const tw_fem *f = &w->fem;
    for (int i = 0; i < f->n; i++) {
        m += f->mass[i];
        size_t q = 3 * (size_t)i;
        tw_vertex_mechanical_energy(f->mass[i], w->v + q, w->x + q, f->X + q, w->def.gravity, &k, &g);
    }
    double e = tw_compute_rotations_energy(w, w->x);
    *scale = energy_scale(w, k, e, m);
    return k + e + g;
}

/* warp-vertex under BDF2: a step that ends with more mechanical energy than
 * it began with, while nothing did work on the body, gives the excess back
 * from the kinetic energy (the free vertices' velocities scaled by
 * sqrt(1 - excess / kinetic), to rest when the excess is larger; on a body
 * with no constrained vertex, the velocities relative to the centre of mass
 * and its kinetic energy, so that its momentum stays).
 *
 * Why: warp-vertex's force -R_i sum_j K_ij (R_i^T x_j - X_j) (Müller et al.
 * 2002, eq. 12) is not the gradient of an energy (its rotations differ from
 * row to row), and the ghost-force correction that removes its net force as
 * a uniform body force does work whenever the centre of mass moves. The
 * converged trajectory of the undamped bar therefore gains energy, under any
 * integrator as the step shrinks (bench/results/cpu-2core-intel-xeon/
 * soak.md); implicit Euler's first-order damping hides it at the usual
 * steps, BDF2's weaker damping does not. The projection acts only on steps
 * that gained energy and takes out exactly the gain. The other methods'
 * forces are gradients of their energies (with Newton iterations for the
 * rotated ones their BDF2 does not gain energy) and are left alone. Returns
 * 1 when it scaled. */
static int bdf2_energy_projection(tw_world *w, double excess)
{
    const tw_fem *f = &w->fem;
    if (!(excess > 0)) return 0;
    /* a body nothing holds keeps its momentum: only the motion relative to
     * the centre of mass is scaled */
    double vc[3] = {0, 0, 0}, mt = 0, k = 0;
    int held = 0;
    for (int i = 0; i < f->n; i++) held |= w->cons[i] != 0;
    if (!held) {
        for (int i = 0; i < f->n; i++) {
            for (int c = 0; c < 3; c++) vc[c] += f->mass[i] * (double)w->v[3 * i + c];
            mt += f->mass[i];
        }
        for (int c = 0; c < 3; c++) vc[c] = mt > 0 ? vc[c] / mt : 0;
    }
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < 3; c++) {
            double u = (double)w->v[3 * i + c] - vc[c];
            k += 0.5 * f->mass[i] * u * u;
        }
    if (!(k > 0)) return 0;
    double scale = tw_energy_projection_scale(excess, k);
    for (int i = 0; i < f->n; i++)
        if (!w->cons[i])
            for (int c = 0; c < 3; c++) {
                size_t q = 3 * (size_t)i + c;
                w->v[q] = tw_energy_projection_velocity(w->v[q], vc[c], scale);
            }
    return 1;
}

/* Does anything do work on the body this step: a point force, the spring, a
 * kinematic (driven) vertex, a moving collider? Gravity is in the energy,
 * Rayleigh damping and static colliders take energy out. A hanging vertex
 * (hanging.c) is kinematic only to the world's constraint flags: it follows
 * its constrainers and drives nothing, so for the energy check a graded
 * mesh's hanging vertices do no work (hanging_drive 0); warp-vertex's BDF2
 * energy projection keeps counting them as driven (hanging_drive 1), as it
 * always has, and stays off on graded meshes. */
static int work_done(const tw_world *w, int hanging_drive)
{
    if (w->spring_vertex >= 0 || tw_colliders_moving(w)) return 1;
    int kinematic = 0, hanging = 0;
    for (int i = 0; i < w->fem.n; i++) kinematic += w->cons[i] == TW_KINEMATIC;
    for (int k = 0; k < w->nhang && !hanging_drive; k++) hanging += w->cons[w->hang_vertex[k]] == TW_KINEMATIC;
    if (kinematic > hanging) return 1;
    for (size_t i = 0; i < 3 * (size_t)w->fem.n; i++)
        if (w->fext[i] != 0) return 1;
    return 0;
}

/* The energy check's blow-up test: a step that gains energy and leaves the
 * body with more mechanical energy than the run of steps nothing did work on
 * began with, by more than that start's scale (kinetic + |elastic| + weight
 * x size, at least the elastic energy of a 1 % strain over the body), right
 * after a step that did the same, fails as diverged. The body has doubled
 * its energy out of nothing and the next step made it worse: no integrator
 * here does that while it is stable (each dissipates, or with warp-vertex
 * under BDF2 gives its gain back), and it is the sign of an instability whose
 * single steps stay below the velocity test's 10 sizes (a mesh turning
 * itself inside out over a few steps, or slowly over many). One such step
 * alone is not: a step far too large for its motion (a cantilever's first
 * step of 10 s) linearises a large rotation and can end with many times the
 * scale, which the next implicit step takes out again. The state at the
 * start of a step that can fail (the one after such a step) is kept so the
 * step can fail as a diverged one does, leaving it as it was. */
static double energy_floor(const tw_world *w)
{
    double e = 0;
    for (int t = 0; t < w->fem.nt; t++) e += 1e-4 * (double)w->fem.mu[t] * w->fem.vol[t];
    return e;
}

static tw_status energy_snapshot(tw_world *w, int save)
{
    size_t n3 = 3 * (size_t)w->fem.n;
    if (!w->energy_snap && !(w->energy_snap = tw_malloc(sizeof(tw_real) * 4 * n3, "energy check snapshot")))
        return TW_ERR_NOMEM;
    tw_real *s = w->energy_snap;
    int bdf2 = w->def.integrator == TW_BDF2, newmark = w->def.integrator == TW_EXPLICIT_NEWMARK;
    if (save) {
        memcpy(s, w->x, sizeof(tw_real) * n3);
        memcpy(s + n3, w->v, sizeof(tw_real) * n3);
        if (bdf2) memcpy(s + 2 * n3, w->xprev, sizeof(tw_real) * n3);
        if (bdf2) memcpy(s + 3 * n3, w->vprev, sizeof(tw_real) * n3);
        if (newmark) memcpy(s + 2 * n3, w->acc, sizeof(tw_real) * n3);
        if (newmark && w->xres) memcpy(s + 3 * n3, w->xres, sizeof(tw_real) * n3);
        return TW_OK;
    }
    memcpy(w->x, s, sizeof(tw_real) * n3);
    memcpy(w->v, s + n3, sizeof(tw_real) * n3);
    if (bdf2) memcpy(w->xprev, s + 2 * n3, sizeof(tw_real) * n3);
    if (bdf2) memcpy(w->vprev, s + 3 * n3, sizeof(tw_real) * n3);
    if (newmark) memcpy(w->acc, s + 2 * n3, sizeof(tw_real) * n3);
    if (newmark && w->xres) memcpy(w->xres, s + 3 * n3, sizeof(tw_real) * n3);
    return TW_OK;
}

/* A run of steps nothing does work on begins at energy e0 (J; scale: its
 * scale): the blow-up test's reference. */
static void energy_run_start(tw_world *w, double e0, double scale)
{
    w->energy_ref = e0;
    w->energy_ref_scale = fmax(scale, energy_floor(w));
    w->energy_above = -1;
}

/* The energy check on a step that ran (both backends): e0 and e1 the
 * mechanical energy at its start and end, scale and scale1 their scales
 * (scale 0 when e0 is the last step's end). Sets st->energy_rise; the
 * blow-up test's second step in a row fails as diverged (the caller puts
 * the state back), any other moves the run's bookkeeping to the step's end
 * (the caller sets energy_key, the end state's fingerprint). */
static tw_status energy_verdict(tw_world *w, double e0, double scale, double e1, double scale1, tw_step_stats *st)
{
    double h = w->def.dt;
    st->energy_rise = w->def.energy_check && e1 - e0 > 1e-4 * fmax(scale, scale1);
    int above = w->def.energy_check && e1 > e0 && e1 - w->energy_ref > w->energy_ref_scale;
    if (above && w->energy_above == w->step)
        /* energy_last, energy_step and energy_above still describe the
         * restored state: the same step taken again fails again */
        return tw_fail(TW_ERR_DIVERGED,
                       "step %ld (t = %g s): the mechanical energy rose from %g J to %g J, a second step in a "
                       "row above its start (%g J) by more than its scale (%g J: kinetic + elastic + weight "
                       "x size) with nothing doing work on the body; the simulation is unstable — reduce dt, "
                       "add damping, or try another method",
                       w->step + 1, w->time + h, e0, e1, w->energy_ref, w->energy_ref_scale);
    w->energy_last = e1;
    w->energy_step = w->step + 1;
    w->energy_above = above ? w->step + 1 : -1;
    return TW_OK;
}

tw_status tw_world_step(tw_world *w, tw_step_stats *stats)
{
#ifdef TW_HAVE_CUDA
    if (w->cuda) return cuda_step(w, stats);
#endif
    tw_step_stats st;
    memset(&st, 0, sizeof st);
    const tw_fem *f = &w->fem;
    size_t n3 = 3 * (size_t)f->n;
    double h = w->def.dt;
    double t0 = tw_now_ms();
    tw_status s;
    double scale = 0, e0 = 0;
    /* warp-vertex under BDF2 takes its energy projection whether or not the
     * energy check reports (the check is a diagnostic; the projection is
     * part of the step) */
    int no_work = !work_done(w, 0);
    int project = !work_done(w, 1) && w->def.method == TW_WARP_VERTEX && w->def.integrator == TW_BDF2;
    int check_energy = (no_work && w->def.energy_check) || project;
    int history = w->has_history, has_acc = w->has_acc;
    if (check_energy) {
        if (w->energy_step == w->step && w->energy_key == state_key(w)) e0 = w->energy_last;
        else {
            e0 = mechanical_energy(w, &scale);
            energy_run_start(w, e0, scale);
        }
        /* only a step right after one that rose above its start can fail,
         * so only then is the state at its start kept */
        if (w->def.energy_check && w->energy_above == w->step && energy_snapshot(w, 1) != TW_OK)
            return TW_ERR_NOMEM;
    }
    tw_hanging_before_step(w, h);
    tw_collider_def start[TW_MAX_COLLIDERS]; /* restored when the step fails */
    unsigned char moved[TW_MAX_COLLIDERS];
    double cforce[TW_MAX_COLLIDERS][3];
    memcpy(start, w->colliders, sizeof(tw_collider_def) * (size_t)w->ncolliders);
    memcpy(moved, w->cmoved, sizeof moved);
    memcpy(cforce, w->cforce, sizeof cforce);
    /* the contact passes update the impulses the next step starts from
     * (its first active set, stuck contacts, friction): a failed step puts
     * them back with the state */
    memcpy(w->cimpulse_start, w->cimpulse, sizeof(tw_real) * (size_t)f->n);
    memset(w->cforce, 0, sizeof w->cforce);
    if (w->def.integrator == TW_EXPLICIT_NEWMARK) {
        /* the projection of the predicted positions meets the colliders
         * where the step leaves them */
        tw_colliders_advance(w, h);
        s = newmark_step(w, h, &st);
        if (s == TW_OK) memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
    } else {
        int bdf2 = w->def.integrator == TW_BDF2 && w->has_history;
        tw_real *xbase = w->x, *vbase = w->v;
        double heff = h;
        if (bdf2) { /* (4 x_n - x_n-1)/3, (4 v_n - v_n-1)/3 */
            xbase = w->xbase;
            vbase = w->vbase;
            for (size_t i = 0; i < n3; i++) {
                xbase[i] = tw_bdf2_base(w->x[i], w->xprev[i]);
                vbase[i] = tw_bdf2_base(w->v[i], w->vprev[i]);
            }
            heff = 2 * h / 3;
        }
        int impacts = 0, substeps = 1, turn_test = element_turn_test(w);
        s = implicit_solve(w, heff, xbase, vbase, h, &st, &impacts);
        st.newton_iterations = 1;
        if (s == TW_OK && turn_test) s = element_turn_substeps(w, h, &st, &substeps);
        int nit = tw_world_newton_iterations(w); /* 1 where the substeps were tested */
        if (s == TW_OK && nit == 1 && tw_world_warp_turn_test(w)) nit = warp_turn_iterations(w, heff, xbase);
        if (s == TW_OK && nit > 1 && w->def.method != TW_LINEAR) {
            s = newton_refine(w, heff, xbase, vbase, &st, nit);
            /* the Newton updates solve with the same warped matrix, which
             * moves a free body's centre of mass as the first solve's did */
            int vertex_method = w->def.method == TW_WARP_VERTEX || w->def.method == TW_WARP_EDGE;
            if (s == TW_OK && vertex_method && w->def.ghost_force_correction)
                conserve_momentum(w, heff, xbase, vbase);
        }
        if (s == TW_OK && substeps > 1) { /* committed, projected */
            tw_colliders_advance(w, h);
        } else if (s == TW_OK) {
            if (w->def.integrator == TW_BDF2) {
                memcpy(w->xprev, w->x, sizeof(tw_real) * n3);
                memcpy(w->vprev, w->v, sizeof(tw_real) * n3);
                /* after an impact the next step is implicit Euler: BDF2's
                 * base (4 v_n - v_n-1)/3 would still hold the approach
                 * velocity v_n-1 that the contact has just stopped, and send
                 * the body back out of the contact with energy it never had */
                w->has_history = !impacts;
            }
            memcpy(w->v, w->vnew, sizeof(tw_real) * n3);
#pragma omp parallel for if (TW_PAR(n3)) num_threads(tw_world_threads(w)) schedule(static)
            for (size_t i = 0; i < n3; i++) w->x[i] = xbase[i] + (tw_real)heff * w->v[i];
            tw_colliders_advance(w, h);
            st.contacts_unresolved += tw_contact_project(w, w->x, w->v, h);
            if (w->bodies) st.contacts_unresolved += tw_bodies_project(w, w->x, w->v);
        }
    }
    if (s == TW_OK) {
        tw_hanging_after_step(w);
        if (check_energy) {
            double scale1, e1 = mechanical_energy(w, &scale1);
            if (project && bdf2_energy_projection(w, e1 - e0)) e1 = mechanical_energy(w, &scale1);
            s = energy_verdict(w, e0, scale, e1, scale1, &st);
            if (s == TW_OK) {
                w->energy_key = state_key(w);
            } else {
                energy_snapshot(w, 0);
                w->has_history = history;
                w->has_acc = has_acc;
            }
        }
    }
    if (s != TW_OK) { /* the state is as before the step */
        memcpy(w->colliders, start, sizeof(tw_collider_def) * (size_t)w->ncolliders);
        memcpy(w->cmoved, moved, sizeof moved);
        memcpy(w->cforce, cforce, sizeof cforce);
        memcpy(w->cimpulse, w->cimpulse_start, sizeof(tw_real) * (size_t)f->n);
    } else {
        w->step++;
        w->time += h;
        if (w->cmodel_step == w->step) tw_contact_model_commit(w);
    }
    st.ms_total = tw_now_ms() - t0;
    st.ms_other = st.ms_total - st.ms_rotations - st.ms_assembly - st.ms_solve;
    if (stats) *stats = st;
    return s;
}
