/* The local linear model of the force on a collider (a haptic tool), for a
 * loop that needs the force at a higher rate than the simulation steps
 * (multirate haptics: Cavusoglu & Tendick 2000; Mark et al. 1996's
 * intermediate representation): between steps
 *
 *   F(c, v) = F + K (c - c0) + B (v - v0),
 *
 * F the step's force on the collider, c0 and v0 where the step left it and
 * its velocity in the step, K the body's stiffness at the contacts
 * condensed onto the collider's position, B = beta K the Rayleigh damping's
 * share of it.
 *
 * K is the static stiffness K' (the method's system stiffness at the step's
 * linearisation) seen through the step's contacts, their set and friction
 * state held: a contact of the collider moves with it along its normal
 * (sliding) or whole (stuck), the other constrained vertices stay, and the
 * free directions follow from K' dx = 0 there. Per axis a of dc, one solve
 * on the step's own matrix with its mass and friction damping taken out,
 * A' = A - cm M - cf P_t = ck K' (A = cm M + ck K' + friction, implicit
 * Euler ck = h^2 + h beta; in velocity units, dv = dx / heff): dv = d0 + u,
 * d0 the prescribed part (zero on the free directions), u on the free
 * directions from A' u = db - A' d0 (its right-hand side carries the load,
 * so the relative tolerance means what it does in a step). Each solve
 * starts from the last step's response on this collider: the contact patch
 * moves little from one step to the next. The force's change is what the
 * contacts' rows then need, as tw_contact_forces reads them:
 * dF = -sum_i (A' dv - db)_i heff / ck over the collider's contacts.
 *
 * Two terms the step's own linearisation does not have:
 *   - a sliding contact with friction keeps Coulomb's friction -mu J t (t
 *     along its velocity relative to the collider) whatever it slides at, so
 *     its friction changes with J alone, not as the step's viscous damping
 *     cf (A' has no cf: the free tangential directions slide without it);
 *   - a sliding contact on a sphere or a capsule (radius R) sees the
 *     surface's curvature: the normal turns by C (dx - dc) / R as the
 *     vertex slides, and the normal force f n with it, a tangential
 *     stiffness -f / R C at the vertex (it pushes a point off the top of
 *     a ball) and the force's change -f C (dx - dc) / R; C = P_t on a
 *     sphere and a capsule's caps, P_t less the axis a a^T on a capsule's
 *     side (straight along its axis). Without it a frictionless contact
 *     would have no sideways stiffness but the body's.
 * The inertia of the contact region is left out (M / dt^2 against K': a
 * step's linearisation would make the tool feel stiffer the shorter the
 * step), and so is the contact set's change, which the next step brings. */
#include <math.h>
#include <string.h>

#include "hd/contact.h"
#include "error.h"
#include "world.h"

/* Is vertex i an active contact of collider k? */
static int contact_of(const tw_world *w, int i, int k)
{
    return tw_contact_active(w->fcons[i]) && !w->cons[i] && w->ccol[i] == k;
}

/* The curvature stiffness f / R of sliding contact i (the normal alone
 * constrained) on a sphere or a capsule, N/m (f its normal force in the
 * step); 0 for a stuck one, a plane's or a box's. On a capsule's side (the
 * normal square to its axis) the axis's unit vector into ax, where the
 * surface is straight; else ax = 0. */
static double curvature(const tw_world *w, int i, double heff, double ax[3])
{
    ax[0] = ax[1] = ax[2] = 0;
    if (w->fcons[i] != TW_FILTER_NORMAL || w->cons[i] || w->ccol[i] >= w->ncolliders) return 0;
    const tw_collider_def *c = &w->colliders[w->ccol[i]];
    if (c->kind != TW_COLLIDER_SPHERE && c->kind != TW_COLLIDER_CAPSULE) return 0;
    const tw_fem *f = &w->fem;
    const tw_real *nn = w->cnormal + 3 * (size_t)i;
    double J = tw_contact_impulse(f->row_ptr, f->col, w->A, w->vnew, w->rhs, nn, i);
    if (!(J > 0)) return 0;
    double a[3] = {c->end[0] - c->center[0], c->end[1] - c->center[1], c->end[2] - c->center[2]};
    double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    /* the normal from a point inside the segment is square to it; a cap's
     * is not, but at its rim (the tolerance: the normal's rounding) */
    if (c->kind == TW_COLLIDER_CAPSULE && len > 0 && fabs(a[0] * nn[0] + a[1] * nn[1] + a[2] * nn[2]) < 1e-4 * len)
        for (int k = 0; k < 3; k++) ax[k] = a[k] / len;
    return J / heff / c->radius;
}

/* The response to collider k moved by the unit vector along axis a: the
 * velocity change into dv (which holds the last step's as the start), the
 * force's change into dF. A: A' (the header). Returns the CG iterations. */
static int respond(tw_world *w, const tw_bsr *A, double heff, double ck, int k, int a, tw_real *dv, double dF[3])
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n;
    tw_real *d0 = w->cmodel_scratch, *b = w->cmodel_scratch + n3, *rhs = w->cmodel_scratch + 2 * n3;
    tw_filter filter = {w->fcons, w->cnormal};
    memset(d0, 0, sizeof(tw_real) * n3);
    memset(b, 0, sizeof(tw_real) * n3);
    for (int i = 0; i < n; i++) {
        if (!contact_of(w, i, k)) continue;
        size_t q = 3 * (size_t)i;
        const tw_real *nn = w->cnormal + q;
        if (w->fcons[i] == TW_CONTACT_STICK) {
            d0[q + a] = (tw_real)(1 / heff);
            continue;
        }
        /* the curvature's force -g C (dx - dc), its dc part on the right */
        double g = w->cmodel_curv[i];
        const double *ax = w->cmodel_curv + n + 3 * (size_t)i;
        for (int c = 0; c < 3; c++) {
            d0[q + c] = (tw_real)(nn[a] * nn[c] / heff);
            b[q + c] = (tw_real)(-ck * g * ((c == a) - nn[a] * nn[c] - ax[a] * ax[c]) / heff);
        }
    }
    tw_filter_apply(n, &filter, dv, w->def.threads); /* u's start: the last response's free part */
    tw_bsr_spmv(A, d0, rhs);
    for (size_t i = 0; i < n3; i++) rhs[i] = b[i] - rhs[i];
    double tol = w->def.collider_model_tolerance > 0 ? w->def.collider_model_tolerance : w->def.cg_tolerance;
    tw_solve_result r = tw_pcg(A, rhs, dv, &filter, tol, w->def.cg_max_iterations, 0, &w->work);
    for (size_t i = 0; i < n3; i++) dv[i] += d0[i];
    const tw_real zero[3] = {0, 0, 0};
    dF[0] = dF[1] = dF[2] = 0;
    for (int i = 0; i < n; i++) {
        if (!contact_of(w, i, k)) continue;
        size_t q = 3 * (size_t)i;
        const tw_real *nn = w->cnormal + q;
        double p[3];
        tw_contact_vertex_impulse(f->row_ptr, f->col, A->val, dv, b, nn, 0, zero, i, p);
        if (w->fcons[i] == TW_FILTER_NORMAL) {
            /* sliding: the normal impulse's change, Coulomb's friction with
             * it, and the normal's turn on a curved collider */
            const tw_real *vi = w->vnew + q, *vc = w->cvel + q;
            double t[3], rn = 0, rt = 0, dd = 0, J = p[0] * nn[0] + p[1] * nn[1] + p[2] * nn[2], dx[3];
            double fric = w->cfric[i] > 0 ? w->cmu[i] : 0, g = w->cmodel_curv[i], da = 0;
            const double *ax = w->cmodel_curv + n + 3 * (size_t)i;
            for (int c = 0; c < 3; c++) rn += ((double)vi[c] - vc[c]) * nn[c];
            for (int c = 0; c < 3; c++) {
                t[c] = (double)vi[c] - vc[c] - rn * nn[c];
                rt += t[c] * t[c];
                dx[c] = heff * dv[q + c] - (c == a);
                dd += dx[c] * nn[c];
                da += dx[c] * ax[c];
            }
            rt = sqrt(rt);
            for (int c = 0; c < 3; c++)
                p[c] = J * nn[c] - (rt > 0 ? fric * J * t[c] / rt : 0) +
                       g * ck / heff * (dx[c] - dd * nn[c] - da * ax[c]);
        }
        for (int c = 0; c < 3; c++) dF[c] -= p[c] * heff / ck;
    }
    return r.iterations;
}

tw_status tw_contact_model(tw_world *w, double heff)
{
    const tw_fem *f = &w->fem;
    int n = f->n;
    size_t n3 = 3 * (size_t)n, nv = 9 * (size_t)f->nnzb;
    double ck = heff * heff + heff * w->def.damping_stiffness, cm = 1 + heff * w->def.damping_mass;
    w->cmodel_step = w->step + 1;
    int any = 0;
    for (int k = 0; k < w->ncolliders; k++) {
        w->cmodel_valid[k] = 1;
        memset(w->cstiff[k], 0, sizeof w->cstiff[k]);
        w->cmodel_iterations[k] = 0;
        w->cmodel_contacts[k] = 0;
        for (int i = 0; i < n; i++) w->cmodel_contacts[k] += contact_of(w, i, k);
        any |= w->cmodel_contacts[k] > 0;
    }
    if (!any) return TW_OK;
    if (!w->cmodel_scratch && !(w->cmodel_scratch = tw_calloc(3 * n3, sizeof(tw_real), "collider model scratch")))
        return TW_ERR_NOMEM;
    if (!w->cmodel_A && !(w->cmodel_A = tw_malloc(sizeof(tw_real) * nv, "collider model matrix"))) return TW_ERR_NOMEM;
    if (!w->cmodel_curv && !(w->cmodel_curv = tw_malloc(sizeof(double) * 4 * (size_t)n, "collider model curvature")))
        return TW_ERR_NOMEM;
    /* A' = A - cm M - cf P_t - ck g C (the curvature's, sliding contacts) */
    memcpy(w->cmodel_A, w->A, sizeof(tw_real) * nv);
    for (int i = 0; i < n; i++) {
        tw_real *D = w->cmodel_A + 9 * (size_t)f->diag[i];
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        double *ax = w->cmodel_curv + n + 3 * (size_t)i;
        double g = w->cmodel_curv[i] = curvature(w, i, heff, ax);
        double cf = tw_contact_active(w->fcons[i]) ? w->cfric[i] : 0;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double pt = (r == c) - nn[r] * nn[c];
                D[3 * r + c] -= (tw_real)((r == c) * cm * f->mass[i] + (cf + ck * g) * pt - ck * g * ax[r] * ax[c]);
            }
    }
    tw_bsr A = tw_world_bsr(w);
    A.val = w->cmodel_A;
    for (int k = 0; k < w->ncolliders; k++) {
        if (!w->cmodel_contacts[k]) continue;
        if (!w->cmodel_resp[k] && !(w->cmodel_resp[k] = tw_calloc(3 * n3, sizeof(tw_real), "collider model responses")))
            return TW_ERR_NOMEM;
        for (int a = 0; a < 3; a++) {
            double dF[3];
            w->cmodel_iterations[k] += respond(w, &A, heff, ck, k, a, w->cmodel_resp[k] + a * n3, dF);
            for (int r = 0; r < 3; r++) w->cstiff[k][3 * r + a] = dF[r];
        }
    }
    return TW_OK;
}

void tw_contact_model_commit(tw_world *w)
{
    for (int k = 0; k < w->ncolliders; k++) {
        const tw_collider_def *c = &w->colliders[k];
        const double *p = c->kind == TW_COLLIDER_PLANE ? c->point : c->center;
        for (int a = 0; a < 3; a++) {
            w->cmodel_at[k][a] = p[a];
            w->cmodel_at[k][3 + a] = c->velocity[a];
        }
    }
}

void tw_contact_model_drop(tw_world *w, int k)
{
    w->cmodel_valid[k] = 0;
}

tw_status tw_world_collider_model(const tw_world *w, int index, tw_collider_model *m)
{
    if (index < 0 || index >= w->ncolliders)
        return tw_fail(TW_ERR_INVALID, "collider %d: no such collider (the world has %d)", index, w->ncolliders);
    if (!w->def.collider_models || w->cuda || w->def.integrator == TW_EXPLICIT_NEWMARK || w->bodies || w->nhang)
        return tw_fail(TW_ERR_UNSUPPORTED,
                       "collider %d: its force model needs tw_world_def.collider_models = 1, an implicit integrator, "
                       "the CPU backend and a world of one body without hanging vertices",
                       index);
    const tw_collider_def *c = &w->colliders[index];
    const double *p = c->kind == TW_COLLIDER_PLANE ? c->point : c->center;
    memset(m, 0, sizeof *m);
    for (int a = 0; a < 3; a++) {
        m->center[a] = p[a];
        m->velocity[a] = c->velocity[a];
        m->force[a] = w->cforce[index][a];
    }
    /* no step yet, the last one computed none, or the collider was replaced since */
    if (w->cmodel_step != w->step || !w->cmodel_valid[index]) return TW_OK;
    for (int a = 0; a < 3; a++) { /* where the step left it: a move since sets the next step's velocity */
        m->center[a] = w->cmodel_at[index][a];
        m->velocity[a] = w->cmodel_at[index][3 + a];
    }
    memcpy(m->stiffness, w->cstiff[index], sizeof m->stiffness);
    for (int k = 0; k < 9; k++) m->damping[k] = w->def.damping_stiffness * m->stiffness[k];
    m->contacts = w->cmodel_contacts[index];
    m->cg_iterations = w->cmodel_iterations[index];
    return TW_OK;
}

void tw_collider_model_force(const tw_collider_model *m, const double c[3], const double v[3], double f[3])
{
    double d[3] = {c[0] - m->center[0], c[1] - m->center[1], c[2] - m->center[2]};
    double e[3] = {v ? v[0] - m->velocity[0] : 0, v ? v[1] - m->velocity[1] : 0, v ? v[2] - m->velocity[2] : 0};
    for (int r = 0; r < 3; r++) {
        const double *K = m->stiffness + 3 * r, *B = m->damping + 3 * r;
        f[r] = m->force[r] + K[0] * d[0] + K[1] * d[1] + K[2] * d[2] + B[0] * e[0] + B[1] * e[1] + B[2] * e[2];
    }
}
