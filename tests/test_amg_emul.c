/* The device multigrid's algorithm (kernels/cuda_amg.cu) replayed on the
 * CPU in the device's order: the per-step update (block inverses, the power
 * iteration, P, A P and P^T A P one output block at a time from the
 * product lists of host/amg_lists.h, the coarsest level's dense
 * pseudo-inverse) and the V-cycle (full-row gathers instead of amg.c's
 * upper-half scatter, the coarsest solve as a matrix-vector product), each
 * step through the TW_HD bodies the kernels run (host/hd/amg_cycle.h,
 * amg_galerkin.h). Checked against host/amg.c, the CPU's multigrid:
 *  - with amg.c's own inputs, the lists give amg.c's P, A P and P^T A P to
 *    the bit (the same products in the same order, in double);
 *  - the whole update from the same starting state, and then the V-cycle,
 *    equal amg.c's to rounding (the power iteration's and the sweeps' sums
 *    run in another order) on a pinned bar, a bar resting on a floor
 *    (contact rows in the filter) and the shipped bunny.
 * What this cannot check is the device itself: the kernels' launches,
 * their indexing of these bodies, the reductions' trees. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "amg_lists.h"
#include "hd/amg_galerkin.h"
#include "hd/pcg_fused.h" /* the lanes of TW_CUDA_MG_SWEEP=warp */
#include "tw_test.h"
#include "world.h"

#define EMU_MAX_LEVELS 16
#define EMU_POWER_ITERATIONS 6 /* amg.c's level_lambda at an update */

typedef struct emu_level {
    tw_amg_level_view v; /* the CPU's patterns (read only) */
    int nnode, bs, n;
    double lambda, omega;
    double *dinv;
    float *fdinv;
    tw_real *eig;
    double *acv; /* this level's operator (below the finest): the Galerkin values and the cycle's copy */
    float *acf;
    /* to the next level */
    double *p0, *p, *ap;
    float *pf, *ptf;
    tw_amg_lists lists;
    tw_real *x, *t, *b, *r, *y;
    tw_real *cd; /* the Chebyshev smoother's direction (NULL: block-Jacobi) */
} emu_level;

typedef struct emu {
    int nlev, nv, since, interval, smooth, coarse_smooth;
    double damp, cheb_ratio, prolong;
    emu_level lev[EMU_MAX_LEVELS];
    unsigned char *contact;
    const double *p0_rest;
    int nc;
    double *inv; /* the coarsest level's dense pseudo-inverse */
    tw_amg_fine fine;
    int lanes; /* the finest sweeps' products as TW_CUDA_MG_SWEEP=warp sums them */
} emu;

static void *dup(const void *s, size_t bytes)
{
    void *d = malloc(bytes + 1);
    if (d && s) memcpy(d, s, bytes);
    else if (d) memset(d, 0, bytes);
    return d;
}

/* the coarsest level's pseudo-inverse from its operator's values (the
 * device: one block factors column by column, then a thread per column
 * solves for a unit vector) */
static void emu_coarsest(emu *e)
{
    emu_level *c = &e->lev[e->nlev - 1];
    int n = c->n, bs = c->bs;
    double *a = calloc((size_t)n * n + 1, sizeof(double)), *u = malloc(sizeof(double) * (2 * (size_t)n + 1));
    for (int i = 0; i < c->nnode; i++)
        for (int k = c->v.ptr[i]; k < c->v.ptr[i + 1]; k++)
            for (int r = 0; r < bs; r++)
                for (int q = 0; q < bs; q++)
                    a[((size_t)bs * i + r) * n + (size_t)bs * c->v.col[k] + q] = c->acv[(size_t)bs * bs * k + r * bs + q];
    tw_amg_dense_cholesky(n, a);
    for (int col = 0; col < n; col++) {
        for (int r = 0; r < n; r++) u[r] = r == col;
        tw_amg_dense_cholesky_solve(n, a, u, u + n);
        for (int r = 0; r < n; r++) e->inv[(size_t)r * n + col] = u[n + r];
    }
    free(a);
    free(u);
}

static void emu_free(emu *e)
{
    for (int li = 0; li < EMU_MAX_LEVELS; li++) {
        emu_level *l = &e->lev[li];
        free(l->dinv); free(l->fdinv); free(l->eig); free(l->acv); free(l->acf);
        free(l->p0); free(l->p); free(l->ap); free(l->pf); free(l->ptf);
        free(l->x); free(l->t); free(l->b); free(l->r); free(l->y); free(l->cd);
        tw_amg_lists_free(&l->lists);
    }
    free(e->contact);
    free(e->inv);
}

/* The device's copy of g as the set-up uploads it (g as it is now), for the
 * finest operator A with filter f */
static int emu_init(emu *e, const tw_amg *g, const tw_bsr *A, const tw_filter *f)
{
    memset(e, 0, sizeof *e);
    tw_amg_view gv;
    tw_amg_view_of(g, &gv);
    e->nlev = gv.nlev;
    e->nv = gv.nv;
    e->since = gv.since_galerkin;
    e->interval = gv.galerkin_interval;
    e->smooth = gv.smooth_steps;
    e->damp = gv.smooth_damping;
    e->coarse_smooth = gv.coarse_smooth_steps;
    e->cheb_ratio = gv.cheb_ratio;
    e->prolong = gv.prolong_damping;
    e->p0_rest = gv.p0_rest;
    e->contact = dup(gv.contact, (size_t)gv.nv);
    e->fine.row_ptr = A->row_ptr;
    e->fine.col = A->col;
    e->fine.val = A->val;
    e->fine.cons = f->cons;
    e->fine.normal = f->normal;
    if (e->nlev < 2) return 1;
    for (int li = 0; li < e->nlev; li++) {
        emu_level *l = &e->lev[li];
        if (tw_amg_level_view_of(g, li, &l->v) != TW_OK) return 1;
        const tw_amg_level_view *v = &l->v;
        int bb = v->bs * v->bs;
        l->nnode = v->nnode; l->bs = v->bs; l->n = v->nnode * v->bs;
        l->lambda = v->lambda; l->omega = v->omega;
        l->dinv = dup(v->dinv, sizeof(double) * bb * l->nnode);
        l->fdinv = dup(v->fdinv, sizeof(float) * bb * l->nnode);
        l->eig = dup(v->eig, sizeof(tw_real) * l->n);
        if (li) {
            l->acv = dup(v->val, sizeof(double) * 36 * v->nnzb);
            l->acf = dup(v->fval, sizeof(float) * 36 * v->nnzb);
        }
        size_t nvec = sizeof(tw_real) * (size_t)l->n;
        l->x = dup(NULL, nvec); l->t = dup(NULL, nvec); l->b = dup(NULL, nvec); l->r = dup(NULL, nvec);
        if (gv.chebyshev && li + 1 < e->nlev) l->cd = dup(NULL, nvec);
        l->y = dup(NULL, nvec);
        if (li + 1 < e->nlev) {
            size_t pb = (size_t)v->bs * 6;
            l->p0 = dup(v->p0_val, sizeof(double) * pb * v->p0_nnzb);
            l->p = dup(v->p_val, sizeof(double) * pb * v->p_nnzb);
            l->pf = dup(v->p_fval, sizeof(float) * pb * v->p_nnzb);
            l->ptf = dup(v->pt_fval, sizeof(float) * pb * v->p_nnzb);
            l->ap = dup(v->ap_val, sizeof(double) * pb * v->ap_nnzb);
        }
    }
    for (int li = 0; li + 1 < e->nlev; li++) {
        emu_level *l = &e->lev[li], *c = &e->lev[li + 1];
        const int *gptr = li ? l->v.ptr : A->row_ptr, *gcol = li ? l->v.col : A->col;
        if (tw_amg_lists_build(gptr, gcol, &l->v, &c->v, &l->lists) != TW_OK) return 1;
    }
    emu_level *c = &e->lev[e->nlev - 1];
    e->nc = c->n;
    e->inv = calloc((size_t)c->n * c->n + 1, sizeof(double));
    if (!e->inv) return 1;
    emu_coarsest(e);
    return 0;
}

/* y = row i of level li's operator times x (the device's gather) */
static void emu_row(const emu *e, int li, const tw_real *x, int i, tw_real *yi)
{
    const emu_level *l = &e->lev[li];
    if (!li) tw_amg_fine_row(e->fine.row_ptr, e->fine.col, e->fine.val, x, i, yi);
    else tw_amg_block_row(l->v.ptr, l->v.col, l->acf, x, i, 6, 6, 0, yi);
}

/* row i of the finest operator times x by TW_ROW_LANES lanes and their
 * butterfly (sweep_fine_lanes_kernel) */
static void emu_row_lanes(const emu *e, const tw_real *x, int i, tw_real *yi)
{
    tw_real v[TW_ROW_LANES][3];
    for (int lane = 0; lane < TW_ROW_LANES; lane++)
        tw_amg_fine_row_lane(e->fine.row_ptr, e->fine.col, e->fine.val, x, i, lane, TW_ROW_LANES, v[lane]);
    tw_row_butterfly(v);
    for (int c = 0; c < 3; c++) yi[c] = v[0][c];
}

/* one sweep (amg.c level_sweep): x NULL: no product; out NULL: the residual
 * into r; step >= 0: the smoother's step (Chebyshev's coefficients as the
 * device kernels compute them), -1: the residual sweep */
static void emu_sweep(const emu *e, int li, const tw_real *b, const tw_real *x, tw_real *r, tw_real *out, int step)
{
    const emu_level *l = &e->lev[li];
    tw_real ca = 0, cc = 0, *cd = step >= 0 ? l->cd : NULL;
    if (cd) tw_amg_cheb_coeffs(l->lambda, e->damp, e->cheb_ratio, step, &ca, &cc);
    const unsigned char *cons = li ? NULL : e->fine.cons;
    for (int i = 0; i < l->nnode; i++) {
        tw_real yi[6] = {0, 0, 0, 0, 0, 0};
        if (x && !li && e->lanes) emu_row_lanes(e, x, i, yi);
        else if (x) emu_row(e, li, x, i, yi);
        tw_amg_sweep_finish(l->bs, i, yi, b, x, l->fdinv, cons, e->fine.normal, r, out, cd, ca, cc);
    }
}

/* lambda by the power iteration from the level's vector (the device's
 * kernels: sweep, per-node step with the block sums, scale) */
static void emu_power(emu *e, int li)
{
    emu_level *l = &e->lev[li];
    tw_real *x = l->eig, *y = l->y;
    double ratio = 1;
    if (!li && e->fine.cons)
        for (int i = 0; i < l->nnode; i++) tw_amg_filter3v(e->fine.cons[i], e->fine.normal + 3 * (size_t)i, x + 3 * (size_t)i);
    int lanes = e->lanes;
    e->lanes = 0; /* the power iteration's sweep is a thread per row in either mode */
    for (int it = 0; it < EMU_POWER_ITERATIONS; it++) {
        emu_sweep(e, li, NULL, x, y, NULL, -1);
        double xx = 0, yy = 0;
        for (int i = 0; i < l->nnode; i++) tw_amg_power_node(l->bs, i, l->dinv, x, y, &xx, &yy);
        if (!(xx > 0) || !(yy > 0)) break;
        ratio = sqrt(yy / xx);
        double s = 1 / sqrt(yy);
        for (int q = 0; q < l->n; q++) x[q] = (tw_real)(y[q] * s);
    }
    e->lanes = lanes;
    l->lambda = 1.1 * ratio;
    l->omega = e->prolong / l->lambda;
}

static void emu_inverses(emu *e, int li)
{
    emu_level *l = &e->lev[li];
    int bb = l->bs * l->bs;
    for (int i = 0; i < l->nnode; i++) {
        int kd = li ? l->v.diag[i] : -1;
        if (!li) { /* the step's BSR diagonal block */
            for (int k = e->fine.row_ptr[i]; k < e->fine.row_ptr[i + 1]; k++)
                if (e->fine.col[k] == i) kd = k;
        }
        tw_amg_node_inverse(&e->fine, li ? l->acv : NULL, l->bs, i, kd, l->dinv + (size_t)bb * i);
    }
}

static void emu_scale(emu *e, int li)
{
    emu_level *l = &e->lev[li];
    size_t nb = (size_t)l->bs * l->bs * l->nnode;
    for (size_t k = 0; k < nb; k++) l->fdinv[k] = (float)(e->damp / l->lambda * l->dinv[k]);
}

/* P, A P, P^T A P below level li from the lists, with the level's dinv
 * and omega as they are */
static void emu_products(emu *e, int li)
{
    emu_level *l = &e->lev[li], *c = &e->lev[li + 1];
    const tw_amg_lists *t = &l->lists;
    const double *cval = li ? l->acv : NULL;
    int bs = l->bs, pb = bs * 6;
    for (int q = 0; q < l->v.p_nnzb; q++) {
        int i = t->p_row[q], u0 = t->pl_ptr[q];
        const double *p0i = t->p0_self[q] >= 0 ? l->p0 + (size_t)pb * t->p0_self[q] : NULL;
        tw_amg_prolongator_block(&e->fine, cval, bs, i, t->pl_ptr[q + 1] - u0, t->pl_k + u0, t->pl_j + u0,
                                 l->v.p0_ptr, l->p0, l->dinv + (size_t)bs * bs * i, l->omega, p0i,
                                 l->p + (size_t)pb * q);
    }
    for (size_t k = 0; k < (size_t)pb * l->v.p_nnzb; k++) l->pf[k] = (float)l->p[k];
    for (int kt = 0; kt < l->v.p_nnzb; kt++) {
        const float *s = l->pf + (size_t)pb * l->v.pt_map[kt];
        float *o = l->ptf + (size_t)pb * kt;
        for (int r = 0; r < 6; r++)
            for (int q = 0; q < bs; q++) o[r * bs + q] = s[q * 6 + r];
    }
    for (int b = 0; b < l->v.ap_nnzb; b++) {
        int u0 = t->apl_ptr[b];
        tw_amg_ap_block(&e->fine, cval, bs, t->ap_row[b], t->apl_ptr[b + 1] - u0, t->apl_k + u0, t->apl_kb + u0,
                        l->p, l->ap + (size_t)pb * b);
    }
    for (int b = 0; b < c->v.nnzb; b++) {
        if (c->v.col[b] < t->ac_row[b]) continue;
        int u0 = t->acl_ptr[b];
        tw_amg_coarse_block(bs, t->acl_ptr[b + 1] - u0, t->acl_p + u0, t->acl_ap + u0, l->p, l->ap,
                            c->acv + 36 * (size_t)b);
    }
    for (int b = 0; b < c->v.nnzb; b++) {
        if (c->v.col[b] >= t->ac_row[b]) continue;
        const double *s = c->acv + 36 * (size_t)c->v.mirror[b];
        double *o = c->acv + 36 * (size_t)b;
        for (int r = 0; r < 6; r++)
            for (int q = 0; q < 6; q++) o[r * 6 + q] = s[q * 6 + r];
    }
    for (size_t k = 0; k < 36 * (size_t)c->v.nnzb; k++) c->acf[k] = (float)c->acv[k];
}

/* tw_amg_update's order: the finest inverses every update, the rest every
 * interval updates or when the contact set changed */
static void emu_update(emu *e)
{
    int changed = 0;
    for (int i = 0; i < e->nv; i++)
        changed |= ((e->fine.cons ? e->fine.cons[i] : 0) == TW_FILTER_NORMAL) != (e->contact[i] != 0);
    if (++e->since < e->interval && !changed) {
        emu_inverses(e, 0);
        emu_scale(e, 0);
        return;
    }
    e->since = 0;
    emu_level *l0 = &e->lev[0];
    for (int i = 0; i < e->nv; i++) { /* the contact projection of the finest P0 */
        unsigned char c = e->fine.cons ? e->fine.cons[i] : 0;
        e->contact[i] = c == TW_FILTER_NORMAL;
        int k = l0->v.p0_ptr[i];
        if (k == l0->v.p0_ptr[i + 1]) continue;
        double *v = l0->p0 + 18 * (size_t)k;
        memcpy(v, e->p0_rest + 18 * (size_t)k, sizeof(double) * 18);
        if (!e->contact[i]) continue;
        for (int q = 0; q < 6; q++) {
            double col[3] = {v[q], v[6 + q], v[12 + q]};
            tw_amg_filter3(c, e->fine.normal + 3 * (size_t)i, col);
            v[q] = col[0]; v[6 + q] = col[1]; v[12 + q] = col[2];
        }
    }
    for (int li = 0; li + 1 < e->nlev; li++) {
        emu_inverses(e, li);
        emu_power(e, li);
        emu_scale(e, li);
        emu_products(e, li);
    }
    emu_coarsest(e);
}

/* x = V b on level li from x = 0 (amg.c vcycle in the device's order) */
static const tw_real *emu_vcycle(emu *e, int li)
{
    emu_level *l = &e->lev[li];
    tw_real *x = l->x, *t = l->t;
    if (li == e->nlev - 1) {
        for (int i = 0; i < l->n; i++) x[i] = tw_amg_coarsest_row(l->n, e->inv, l->b, i);
        return x;
    }
    emu_level *c = &e->lev[li + 1];
    int steps = li && e->coarse_smooth > 0 ? e->coarse_smooth : e->smooth;
    emu_sweep(e, li, l->b, NULL, NULL, x, 0);
    for (int s = 1; s < steps; s++) {
        emu_sweep(e, li, l->b, x, NULL, t, s);
        tw_real *u = x; x = t; t = u;
    }
    emu_sweep(e, li, l->b, x, l->r, NULL, -1);
    for (int a = 0; a < c->nnode; a++)
        tw_amg_block_row(l->v.pt_ptr, l->v.pt_col, l->ptf, l->r, a, 6, l->bs, 0, c->b + 6 * (size_t)a);
    const tw_real *xc = emu_vcycle(e, li + 1);
    for (int i = 0; i < l->nnode; i++)
        tw_amg_block_row(l->v.p_ptr, l->v.p_col, l->pf, xc, i, l->bs, 6, 1, x + (size_t)l->bs * i);
    for (int s = 0; s < steps; s++) {
        emu_sweep(e, li, l->b, x, NULL, t, s);
        tw_real *u = x; x = t; t = u;
    }
    return x;
}

static void emu_apply(emu *e, const tw_real *r, tw_real *z)
{
    emu_level *l = &e->lev[0];
    for (int i = 0; i < e->nv; i++) {
        tw_real *bi = l->b + 3 * (size_t)i;
        for (int q = 0; q < 3; q++) bi[q] = r[3 * (size_t)i + q];
        if (e->fine.cons) tw_amg_filter3v(e->fine.cons[i], e->fine.normal + 3 * (size_t)i, bi);
    }
    const tw_real *x = emu_vcycle(e, 0);
    memcpy(z, x, sizeof(tw_real) * (size_t)l->n);
}

/* ---- comparisons ---- */

/* name(n, a, b): max |a - b| / max |b| over n values of type T, in double
 * (NaN: infinite); one per precision compared below */
#define REL_DIFF(name, T)                                                                  \
    static double name(size_t n, const T *a, const T *b)                                   \
    {                                                                                      \
        double e = 0, s = 0;                                                               \
        for (size_t k = 0; k < n; k++) {                                                   \
            double d = fabs((double)a[k] - (double)b[k]);                                  \
            if (!(d <= e)) e = d;                                                          \
            s = fmax(s, fabs((double)b[k]));                                               \
        }                                                                                  \
        return isnan(e) ? INFINITY : s > 0 ? e / s : e;                                    \
    }
REL_DIFF(rel_diff_d, double)
REL_DIFF(rel_diff_f, float)
REL_DIFF(rel_diff_r, tw_real)

/* scenes: 0 the bar pinned at x = 0, 1 the bar on a floor (contacts), 2 the bunny */
static tw_world *scene(int which, tw_mesh **mesh)
{
    if (which == 2) {
        tw_mesh_load_def ld = tw_default_mesh_load_def();
        ld.quiet = 1;
        *mesh = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet.node"), &ld, NULL);
    } else {
        *mesh = tw_mesh_bar(1, 0.15, 0.15, 20, 3, 3);
    }
    if (!*mesh) return NULL;
    tw_world_def d = tw_default_world_def();
    d.precond = TW_PRECOND_JACOBI; /* the hierarchies here are the test's own */
    tw_world *w = tw_world_create(*mesh, &d);
    if (!w) return NULL;
    if (which == 0) tw_world_pin_where(w, 0, 1, 1e-6);
    if (which == 1) {
        tw_collider_def floor = tw_default_collider_def();
        tw_world_add_collider(w, &floor);
    }
    return w;
}

static const char *scene_name[] = {"pinned bar", "bar on a floor", "bunny"};

static void step_and_mark(tw_world *w, int which)
{
    tw_step_stats st;
    tw_world_step(w, &st);
    if (which == 1) tw_contact_detect(w, w->x, w->def.dt); /* the resting contacts as the next solve sees them */
}

/* A scene stepped once (step_and_mark), amg.c's hierarchy on its matrix
 * (def: NULL for the defaults) and the device order's emulation of it */
typedef struct fixture {
    tw_mesh *m;
    tw_world *w;
    tw_bsr A;
    tw_filter f;
    tw_amg *g;
    emu e;
} fixture;

static int fixture_init(fixture *x, int which, const tw_amg_def *def)
{
    memset(x, 0, sizeof *x);
    x->w = scene(which, &x->m);
    if (!x->w) return 1;
    step_and_mark(x->w, which);
    x->A = tw_world_bsr(x->w);
    x->f.cons = x->w->fcons;
    x->f.normal = x->w->cnormal;
    x->g = tw_amg_create(&x->A, x->w->fem.X, &x->f, def);
    if (!x->g) return 1;
    return emu_init(&x->e, x->g, &x->A, &x->f);
}

static void fixture_free(fixture *x)
{
    emu_free(&x->e);
    tw_amg_free(x->g);
    tw_world_destroy(x->w);
    tw_mesh_destroy(x->m);
}

/* With amg.c's own dinv, omega and P0 (after an update), the lists give
 * its P, A P and P^T A P to the bit on every level pair */
static int lists_exact(int which)
{
    fixture x;
    CHECK(fixture_init(&x, which, NULL) == 0);
    double worst = 0;
    for (int li = 0; li + 1 < x.e.nlev; li++) {
        emu_level *l = &x.e.lev[li], *c = &x.e.lev[li + 1];
        size_t pb = (size_t)l->bs * 6;
        emu_products(&x.e, li); /* from the copies of amg.c's dinv, omega, P0 and (li > 0) operator */
        double dp = rel_diff_d(pb * l->v.p_nnzb, l->p, l->v.p_val);
        double dap = rel_diff_d(pb * l->v.ap_nnzb, l->ap, l->v.ap_val);
        double dac = rel_diff_d(36 * (size_t)c->v.nnzb, c->acv, c->v.val);
        printf("%s level %d -> %d (%d -> %d nodes, %ld list entries): P %.3g, AP %.3g, P^T A P %.3g\n",
               scene_name[which], li, li + 1, l->nnode, c->nnode, l->lists.entries, dp, dap, dac);
        worst = tw_test_max(worst, tw_test_max(dp, tw_test_max(dap, dac)));
    }
    CHECK(worst <= 0);
    fixture_free(&x);
    return 0;
}

TW_TEST(lists_exact_bar) { return lists_exact(0); }
TW_TEST(lists_exact_contact) { return lists_exact(1); }
TW_TEST(lists_exact_bunny) { return lists_exact(2); }

/* From the same state, `updates` updates of the device's order against
 * amg.c's (the last one a Galerkin update when galerkin is set), then the
 * V-cycle on random vectors */
static int update_and_cycle(int which, int galerkin)
{
    tw_amg_def def = tw_default_amg_def();
    if (galerkin) def.galerkin_interval = 1;
    fixture x;
    CHECK(fixture_init(&x, which, &def) == 0);
    /* the next step's matrix (a state the hierarchy was not built at) */
    step_and_mark(x.w, which);
    x.A = tw_world_bsr(x.w);
    x.e.fine.val = x.A.val;
    CHECK(tw_amg_update(x.g, &x.A, &x.f) == TW_OK);
    emu_update(&x.e);
    double worst = 0;
    for (int li = 0; li < x.e.nlev - 1 + !galerkin; li++) {
        emu_level *l = &x.e.lev[li];
        tw_amg_level_view v;
        CHECK(tw_amg_level_view_of(x.g, li, &v) == TW_OK);
        double dl = fabs(l->lambda - v.lambda) / v.lambda;
        double dd = rel_diff_f((size_t)l->bs * l->bs * l->nnode, l->fdinv, v.fdinv);
        printf("%s level %d: lambda %.6g (amg.c %.6g, %.2g), damped D^-1 %.3g", scene_name[which], li, l->lambda,
               v.lambda, dl, dd);
        worst = tw_test_max(worst, tw_test_max(dl, dd));
        if (galerkin) {
            tw_amg_level_view cv;
            CHECK(tw_amg_level_view_of(x.g, li + 1, &cv) == TW_OK);
            double dp = rel_diff_d((size_t)l->bs * 6 * v.p_nnzb, l->p, v.p_val);
            double dac = rel_diff_d(36 * (size_t)cv.nnzb, x.e.lev[li + 1].acv, cv.val);
            printf(", P %.3g, P^T A P %.3g", dp, dac);
            worst = tw_test_max(worst, tw_test_max(dp, dac));
        }
        printf("\n");
        if (!galerkin) break; /* only the finest level changes */
    }
    /* the V-cycle: amg.c's against the device order's */
    int n3 = 3 * x.w->fem.n;
    tw_real *r = malloc(sizeof(tw_real) * n3), *zc = malloc(sizeof(tw_real) * n3), *ze = malloc(sizeof(tw_real) * n3);
    CHECK(r && zc && ze);
    unsigned s = 99;
    double vworst = 0;
    for (int trial = 0; trial < 4; trial++) {
        for (int i = 0; i < n3; i++) {
            r[i] = (tw_real)(tw_test_uniform(&s) - 0.5);
        }
        tw_amg_apply(x.g, r, zc);
        emu_apply(&x.e, r, ze);
        vworst = tw_test_max(vworst, rel_diff_r((size_t)n3, ze, zc));
    }
    printf("%s, %s update: %d levels, the V-cycle max |z_device - z_cpu| / max |z_cpu| = %.3g\n", scene_name[which],
           galerkin ? "a Galerkin" : "a finest-only", x.e.nlev, vworst);
    /* float's in both builds: the cycle reads float copies of its
     * coefficients (amg.c's design), and the double build's near-symmetric
     * blocks round to floats an ulp apart where amg.c mirrors one of them */
    const double tol_values = 1e-4, tol_cycle = 1e-3;
    CHECK(worst <= tol_values);
    CHECK(vworst <= tol_cycle);
    free(r); free(zc); free(ze);
    fixture_free(&x);
    return 0;
}

TW_TEST(galerkin_update_bar) { return update_and_cycle(0, 1); }
TW_TEST(galerkin_update_contact) { return update_and_cycle(1, 1); }
TW_TEST(galerkin_update_bunny) { return update_and_cycle(2, 1); }
TW_TEST(fine_update_bar) { return update_and_cycle(0, 0); }
TW_TEST(fine_update_bunny) { return update_and_cycle(2, 0); }

/* The V-cycle right after the set-up (the device's first step: the host's
 * hierarchy uploaded, the coarsest pseudo-inverse made on the device) */
TW_TEST(cycle_after_setup_bunny)
{
    fixture x;
    CHECK(fixture_init(&x, 2, NULL) == 0);
    int n3 = 3 * x.w->fem.n;
    tw_real *r = malloc(sizeof(tw_real) * n3), *zc = malloc(sizeof(tw_real) * n3), *ze = malloc(sizeof(tw_real) * n3);
    CHECK(r && zc && ze);
    for (int i = 0; i < n3; i++) r[i] = (tw_real)sin(0.37 * i);
    tw_amg_apply(x.g, r, zc);
    emu_apply(&x.e, r, ze);
    double d = rel_diff_r((size_t)n3, ze, zc);
    printf("bunny after set-up: %d levels (coarsest %d unknowns), V-cycle relative difference %.3g\n", x.e.nlev,
           x.e.nc, d);
    CHECK(d <= 1e-3); /* float's in both builds (see update_and_cycle) */
    free(r); free(zc); free(ze);
    fixture_free(&x);
    return 0;
}

/* Twelve solves in a row (the Galerkin update at the 8th, the finest level
 * alone in between; on the floor also when the contact set changes): the
 * device order's decision follows amg.c's at every update, and its V-cycle
 * stays within rounding of amg.c's (the differences do not build up) */
static int updates_track(int which)
{
    fixture x;
    CHECK(fixture_init(&x, which, NULL) == 0);
    int n3 = 3 * x.w->fem.n, galerkins = 0;
    tw_real *r = malloc(sizeof(tw_real) * n3), *zc = malloc(sizeof(tw_real) * n3), *ze = malloc(sizeof(tw_real) * n3);
    CHECK(r && zc && ze);
    double worst = 0;
    for (int u = 0; u < 12; u++) {
        step_and_mark(x.w, which);
        x.A = tw_world_bsr(x.w);
        x.e.fine.val = x.A.val;
        CHECK(tw_amg_update(x.g, &x.A, &x.f) == TW_OK);
        emu_update(&x.e);
        tw_amg_view gv;
        tw_amg_view_of(x.g, &gv);
        CHECK(gv.since_galerkin == x.e.since);
        galerkins += x.e.since == 0;
        for (int i = 0; i < n3; i++) r[i] = (tw_real)cos(0.11 * i + u);
        tw_amg_apply(x.g, r, zc);
        emu_apply(&x.e, r, ze);
        double d = rel_diff_r((size_t)n3, ze, zc);
        worst = tw_test_max(worst, d);
        if (x.e.since == 0 || u == 11) printf("  update %d%s: V-cycle relative difference %.3g\n", u + 1,
                                              x.e.since == 0 ? " (Galerkin)" : "", d);
    }
    printf("%s: 12 updates, %d of them Galerkin, worst V-cycle relative difference %.3g\n", scene_name[which],
           galerkins, worst);
    CHECK(galerkins >= 1);
    CHECK(worst <= 1e-3); /* float's in both builds (see update_and_cycle) */
    free(r); free(zc); free(ze);
    fixture_free(&x);
    return 0;
}

TW_TEST(updates_track_bar) { return updates_track(0); }
TW_TEST(updates_track_contact) { return updates_track(1); }

/* The V-cycle with the finest sweeps' rows summed by lanes
 * (TW_CUDA_MG_SWEEP=warp), after a Galerkin update, on the bunny and the bar
 * on a floor */
static int lanes_cycle(int which)
{
    tw_amg_def def = tw_default_amg_def();
    def.galerkin_interval = 1;
    fixture x;
    CHECK(fixture_init(&x, which, &def) == 0);
    x.e.lanes = 1;
    step_and_mark(x.w, which);
    x.A = tw_world_bsr(x.w);
    x.e.fine.val = x.A.val;
    CHECK(tw_amg_update(x.g, &x.A, &x.f) == TW_OK);
    emu_update(&x.e);
    int n3 = 3 * x.w->fem.n;
    tw_real *r = malloc(sizeof(tw_real) * n3), *zc = malloc(sizeof(tw_real) * n3), *ze = malloc(sizeof(tw_real) * n3);
    CHECK(r && zc && ze);
    for (int i = 0; i < n3; i++) r[i] = (tw_real)sin(0.29 * i);
    tw_amg_apply(x.g, r, zc);
    emu_apply(&x.e, r, ze);
    double d = rel_diff_r((size_t)n3, ze, zc);
    printf("%s, lanes of %d per finest row: V-cycle relative difference %.3g\n", scene_name[which], TW_ROW_LANES, d);
    CHECK(d <= 1e-3); /* float's in both builds (see update_and_cycle) */
    free(r); free(zc); free(ze);
    fixture_free(&x);
    return 0;
}

TW_TEST(lanes_cycle_bunny) { return lanes_cycle(2); }
TW_TEST(lanes_cycle_contact) { return lanes_cycle(1); }
