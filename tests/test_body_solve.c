/* The CUDA backend's coupled body-contact solve, emulated on the CPU:
 * kernels/cuda_bodies.cu's coupled_solve with each kernel's launch a loop
 * over its items calling the same hd/body_solve.h functions (the gather
 * form: incidence lists, chain levels, per-contact terms), in the
 * launches' order, against contact_bodies.c's tw_bodies_solve on the same
 * system: the three-cube stack's last pass after it has landed (active
 * body contacts, held vertices' springs, the floor's contacts). It checks
 * the device's arithmetic and its lists without a GPU; what it cannot
 * check is the launches themselves (grids, streams, copies). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact_bodies.h"
#include "hd/body_solve.h"
#include "scenes.h"
#include "solver.h"
#include "tw_test.h"
#include "world.h"

#include "hd/bsr_row_real.h"

/* coupled_solve's ops_expand: the levels, then each vertex */
static void emu_expand(const tw_body_ops *o, const tw_real *y, tw_real *v)
{
    for (int c = 0; c < o->nact; c++) tw_body_ops_first(o, c, y);
    for (int r = 1; r < o->depth; r++)
        for (int c = 0; c < o->nact; c++) tw_body_ops_chain(o, r, c);
    for (int i = 0; i < o->n; i++) tw_body_ops_expand(o, i, y, v);
}

/* ops_restrict: S P^T r in place */
static void emu_restrict(const tw_body_ops *o, tw_real *r)
{
    for (int c = 0; c < o->nact; c++) tw_body_ops_normal_residual(o, c, r);
    for (int q = 0; q < o->depth; q++) {
        for (int k = 0; k < o->n; k++) tw_body_ops_restrict(o, q, k, r);
        if (q + 1 < o->depth)
            for (int k = 0; k < o->nact; k++) tw_body_ops_restrict_chain(o, q, k);
    }
    for (int i = 0; i < o->n; i++) tw_body_ops_filter(o, i, r);
}

/* ops_apply: q = A' p */
static void emu_apply(const tw_body_ops *o, const tw_bsr *A, const tw_real *p, tw_real *q)
{
    tw_bsr_spmv(A, p, q);
    int m = o->nact > o->npen ? o->nact : o->npen;
    for (int k = 0; k < m; k++) {
        if (k < o->nact) tw_body_ops_friction(o, k, p);
        if (k < o->npen) tw_body_ops_spring(o, k, p);
    }
    for (int k = 0; k < o->n; k++) tw_body_ops_apply(o, k, q);
}

static double dot(size_t n3, const tw_real *a, const tw_real *b)
{
    double s = 0;
    for (size_t k = 0; k < n3; k++) s += (double)a[k] * b[k];
    return s;
}

static void precondition(const tw_body_ops *o, const tw_real *dinv, const tw_real *r, tw_real *z)
{
    for (int i = 0; i < o->n; i++) {
        const tw_real *d = dinv + 9 * (size_t)i, *ri = r + 3 * (size_t)i;
        tw_real *zi = z + 3 * (size_t)i;
        zi[0] = d[0] * ri[0] + d[1] * ri[1] + d[2] * ri[2];
        zi[1] = d[3] * ri[0] + d[4] * ri[1] + d[5] * ri[2];
        zi[2] = d[6] * ri[0] + d[7] * ri[1] + d[8] * ri[2];
        tw_body_ops_filter(o, i, z);
    }
}

/* coupled_solve, serially: v in (warm start) and out; the iterations */
static int emu_solve(const tw_world *w, const tw_body_lists *l, int depth, const tw_real *rhs, tw_real *v)
{
    int n = w->fem.n;
    size_t n3 = 3 * (size_t)n;
    tw_bsr A = tw_world_bsr((tw_world *)w);
    double *scratch = calloc((size_t)(2 * TW_BODY_CHAIN + 9) * (size_t)(n > 0 ? n : 1), sizeof(double));
    tw_real *buf = calloc(9 * n3 + 9 * (size_t)n, sizeof(tw_real));
    if (!scratch || !buf) return -1;
    tw_body_ops o;
    o.n = n;
    o.nact = l->nact;
    o.npen = l->npen;
    o.depth = depth;
    o.act = l->act; o.tri = l->tri; o.cidx = l->cidx; o.inc_ptr = l->inc_ptr; o.inc = l->inc;
    o.cw = l->cw; o.cd = l->cd;
    o.pen = l->pen; o.ptri = l->ptri; o.pidx = l->pidx; o.pinc_ptr = l->pinc_ptr; o.pinc = l->pinc;
    o.pw = l->pw; o.pd = l->pd;
    o.cnormal = w->cnormal; o.cfric = w->cfric; o.fcons = w->fcons;
    o.t = scratch;
    o.s = o.t + TW_BODY_CHAIN * (size_t)n;
    o.an = o.s + TW_BODY_CHAIN * (size_t)n;
    o.fr = o.an + n;
    o.pk = o.fr + 6 * (size_t)n;
    o.su = o.pk + n;
    o.heff = w->def.dt;
    o.slack = TW_BODY_SLACK * w->size;
    tw_real *y = buf, *s0 = y + n3, *rb = s0 + n3, *dir = rb + n3, *p = dir + n3, *q = p + n3, *r = q + n3,
            *z = r + n3, *zb = z + n3, *dinv = zb + n3;
    for (int i = 0; i < n; i++) tw_body_ops_split(&o, i, v, y, s0);
    int m = o.nact > o.npen ? o.nact : o.npen;
    for (int k = 0; k < m; k++) {
        if (k < o.nact) tw_body_ops_contact_diag(&o, k, A.diag, A.val);
        if (k < o.npen) tw_body_ops_spring_stiffness(&o, k, A.diag, A.val, TW_BODY_SPRING);
    }
    for (int k = 0; k < n; k++) {
        tw_real D[9];
        tw_body_ops_precond_block(&o, k, A.diag, A.val, D);
        tw_block_jacobi_inverse(D, dinv + 9 * (size_t)k);
    }
    const tw_real *b = rhs;
    if (o.npen) {
        for (int k = 0; k < n; k++) tw_body_ops_rhs(&o, k, rhs, rb);
        b = rb;
    }
    for (size_t k = 0; k < n3; k++) z[k] = y[k] + s0[k];
    emu_expand(&o, z, p);
    emu_apply(&o, &A, p, q);
    for (size_t k = 0; k < n3; k++) r[k] = b[k] - q[k];
    emu_restrict(&o, r);
    memcpy(zb, b, sizeof(tw_real) * n3);
    emu_restrict(&o, zb);
    double bnorm = sqrt(dot(n3, zb, zb));
    if (bnorm < 1e-300) bnorm = 1;
    precondition(&o, dinv, r, z);
    memcpy(dir, z, sizeof(tw_real) * n3);
    double rz = dot(n3, r, z), rnorm = sqrt(dot(n3, r, r)), tol = w->def.cg_tolerance;
    int it = 0, limit = w->def.cg_max_iterations;
    while (it < limit) {
        if (rnorm <= tol * bnorm || !(rz > 0)) break;
        emu_expand(&o, dir, p);
        emu_apply(&o, &A, p, q);
        emu_restrict(&o, q);
        double pq = dot(n3, dir, q);
        if (!(pq > 0)) break;
        tw_real alpha = (tw_real)(rz / pq);
        for (size_t k = 0; k < n3; k++) {
            y[k] += alpha * dir[k];
            r[k] -= alpha * q[k];
        }
        precondition(&o, dinv, r, z);
        double rz_new = dot(n3, r, z);
        tw_real beta = (tw_real)(rz_new / rz);
        rz = rz_new;
        for (size_t k = 0; k < n3; k++) dir[k] = z[k] + beta * dir[k];
        rnorm = sqrt(dot(n3, r, r));
        it++;
    }
    for (size_t k = 0; k < n3; k++) z[k] = y[k] + s0[k];
    emu_expand(&o, z, v);
    free(scratch);
    free(buf);
    return it;
}

/* The stack of three cubes after 40 steps of 1/60 s (landed, resting):
 * the last pass's lists (tw_bodies_lists), its active set restored in the
 * filter (the end-of-step projection cleared it), and the step's own A and
 * rhs; the CPU's coupled solve and the emulated device's from the same
 * warm start, both to a relative residual of 1e-6. Velocities within 1e-3
 * of the largest (two PCGs on the same system in other float orders,
 * stopped at the same tolerance), iterations within 10 %. */
TW_TEST(gather_form_matches_cpu_solve)
{
    demo_scene s;
    demo_options opt = demo_default_options();
    CHECK(demo_scene_build(&s, "stack", &opt, "test_body_solve") == 0);
    tw_world *w = s.body[0].world;
    CHECK_OK(tw_world_set_solver(w, 1e-6, w->def.cg_max_iterations, 0));
    for (int k = 0; k < 40; k++) CHECK_OK(tw_world_step(w, NULL));
    tw_body_lists l;
    memset(&l, 0, sizeof l);
    int depth = 0;
    CHECK_OK(tw_bodies_lists(w, &l, &depth));
    int chained = 0;
    for (int c = 0; c < l.nact; c++)
        for (int j = 0; j < 3; j++) chained += l.cidx[l.tri[3 * c + j]] >= 0;
    printf("stack after 40 steps: %d active body contacts, %d springs, chain depth %d (%d held corners)\n", l.nact,
           l.npen, depth, chained);
    CHECK(l.nact > 0);
    int n = w->fem.n;
    size_t n3 = 3 * (size_t)n;
    for (int c = 0; c < l.nact; c++) w->fcons[l.act[c]] = TW_FILTER_NORMAL;
    tw_real *v0 = malloc(sizeof(tw_real) * n3), *va = malloc(sizeof(tw_real) * n3), *vb = malloc(sizeof(tw_real) * n3);
    tw_real *rhs = malloc(sizeof(tw_real) * n3);
    CHECK(v0 && va && vb && rhs);
    memcpy(rhs, w->rhs, sizeof(tw_real) * n3);
    for (size_t k = 0; k < n3; k++) v0[k] = w->v[k]; /* a warm start with landed normals */
    for (int c = 0; c < l.nact; c++) {
        int i = l.act[c];
        const tw_real *nn = w->cnormal + 3 * (size_t)i;
        double vn = tw_body_normal_of(v0 + 3 * (size_t)i, nn);
        for (int a = 0; a < 3; a++) v0[3 * (size_t)i + a] -= (tw_real)(vn * nn[a]);
    }
    memcpy(va, v0, sizeof(tw_real) * n3);
    memcpy(vb, v0, sizeof(tw_real) * n3);
    tw_solve_result cpu = tw_bodies_solve(w, rhs, va, w->def.dt);
    int it = emu_solve(w, &l, depth, rhs, vb);
    CHECK(it >= 0);
    double worst = 0, scale = 0;
    for (size_t k = 0; k < n3; k++) {
        double e = fabs((double)va[k] - vb[k]);
        if (!(e <= worst)) worst = e;
        scale = fmax(scale, fabs((double)va[k]));
    }
    printf("CPU solve: %d iterations, residual %.3g; emulated device solve: %d iterations; max |dv| %.3g m/s of "
           "max |v| %.3g m/s\n",
           cpu.iterations, cpu.residual, it, worst, scale);
    CHECK(scale > 0);
    CHECK(worst <= 1e-3 * scale);
    CHECK(abs(it - cpu.iterations) <= 2 + cpu.iterations / 10);
    free(v0); free(va); free(vb); free(rhs);
    tw_body_lists_free(&l);
    demo_scene_destroy(&s);
    return 0;
}
