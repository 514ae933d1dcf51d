/* The hierarchical-basis corotated simulation (Hauth and Straßer 2004): the
 * basis change, rotation invariance on every level, one level equal to the
 * world's green and corot-element paths, a small load against the full
 * non-linear fine simulation, and a large step that stays bounded. */
#include <stdlib.h>
#include <string.h>

#include "hier_basis.h"
#include "hierarchy.h"
#include "mesh.h"
#include "tw_test.h"

/* A 1 x 0.2 x 0.2 m bar of 5x1x1 cells (30 tets) refined to `levels`. */
static tw_hierarchy *bar_levels(int levels)
{
    tw_mesh *b = tw_mesh_bar(1, 0.2, 0.2, 5, 1, 1);
    if (!b) return NULL;
    tw_hierarchy *h = tw_hier_nested(b, levels);
    tw_mesh_destroy(b);
    return h;
}

static tw_hb_def soft_def(void)
{
    tw_hb_def d = tw_default_hb_def();
    d.youngs_modulus = 1e5;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    d.damping_stiffness = 0.01;
    d.cg_tolerance = 1e-9;
    return d;
}

/* Nodal -> hierarchical -> nodal gives back the values to rounding; an affine
 * field has zero offsets (the parents' interpolation is exact for it) and a
 * field moved at one new vertex has exactly that offset. */
TW_TEST(transform_round_trip)
{
    tw_hierarchy *h = bar_levels(3);
    CHECK(h);
    const tw_mesh *m = h->level[2];
    const size_t n3 = 3 * (size_t)m->nv;
    double *x = malloc(n3 * sizeof *x), *y = malloc(n3 * sizeof *y), *z = malloc(n3 * sizeof *z);
    CHECK(x && y && z);
    srand(7);
    for (size_t k = 0; k < n3; k++) x[k] = m->X[k] + 0.1 * (rand() / (double)RAND_MAX - 0.5);
    tw_hb_to_hierarchical(h, x, y);
    tw_hb_to_nodal(h, y, z);
    double err = 0;
    for (size_t k = 0; k < n3; k++) err = tw_test_max(err, fabs(z[k] - x[k]));
    printf("round trip: %d vertices, max error %.3g m\n", m->nv, err);
    CHECK(!(err > 1e-14));
    /* an affine field x = A X + t: offsets zero, coarse coefficients the coarse values */
    const double A[9] = {1.1, 0.2, -0.3, 0.05, 0.9, 0.1, -0.2, 0.3, 1.2}, t[3] = {0.5, -0.1, 2};
    for (int i = 0; i < m->nv; i++)
        for (int r = 0; r < 3; r++)
            x[3 * i + r] = t[r] + A[3 * r] * m->X[3 * i] + A[3 * r + 1] * m->X[3 * i + 1] + A[3 * r + 2] * m->X[3 * i + 2];
    tw_hb_to_hierarchical(h, x, y);
    double off = 0, coarse = 0;
    for (int i = 0; i < m->nv; i++)
        for (int c = 0; c < 3; c++) {
            if (i < h->level[0]->nv) coarse = tw_test_max(coarse, fabs(y[3 * i + c] - x[3 * i + c]));
            else off = tw_test_max(off, fabs(y[3 * i + c]));
        }
    printf("affine field: largest offset %.3g m, coarse coefficients off by %.3g m\n", off, coarse);
    CHECK(!(off > 1e-14) && coarse == 0);
    const int v = m->nv - 1;
    x[3 * v + 1] += 0.25;
    tw_hb_to_hierarchical(h, x, y);
    CHECK_NEAR(y[3 * v + 1], 0.25, 1e-14);
    free(x); free(y); free(z);
    tw_hier_free(h);
    return 0;
}

/* A rigid rotation of the whole body gives zero elastic force and energy on
 * every level; a 1 % stretch does not. And a deformed state with offsets on
 * every level keeps its energy when rotated, its force rotating with it:
 * the finer levels' strains are measured in the coarse tets' rotated frames
 * (without the propagated rotation they would not be). */
TW_TEST(rigid_rotation_zero_force)
{
    tw_hierarchy *h = bar_levels(3);
    CHECK(h);
    tw_hb_def d = soft_def();
    tw_hb *hb = tw_hb_create(h, &d);
    CHECK(hb);
    const tw_mesh *m = h->level[2];
    const size_t n3 = 3 * (size_t)m->nv;
    double *x = malloc(n3 * sizeof *x), *f = malloc(n3 * sizeof *f);
    CHECK(x && f);
    for (int i = 0; i < m->nv; i++) x[3 * i] = 1.01 * m->X[3 * i], x[3 * i + 1] = m->X[3 * i + 1], x[3 * i + 2] = m->X[3 * i + 2];
    tw_hb_elastic_force(hb, x, f);
    double fs = 0;
    for (size_t k = 0; k < n3; k++) fs = tw_test_max(fs, fabs(f[k]));
    /* 120 degrees about (1,1,1)/sqrt 3 (a cyclic permutation of the axes) and a shift */
    const double Q[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0};
    for (int i = 0; i < m->nv; i++)
        for (int r = 0; r < 3; r++)
            x[3 * i + r] = 0.3 * (r + 1) + Q[3 * r] * m->X[3 * i] + Q[3 * r + 1] * m->X[3 * i + 1] + Q[3 * r + 2] * m->X[3 * i + 2];
    const double e = tw_hb_elastic_force(hb, x, f);
    double fr = 0;
    for (size_t k = 0; k < n3; k++) fr = tw_test_max(fr, fabs(f[k]));
    printf("rotated: max |f| %.3g N, energy %.3g J; 1 %% stretch: max |f| %.3g N\n", fr, e, fs);
    CHECK(fs > 1);
    CHECK(!(fr > 1e-5 * fs));
    CHECK(!(fabs(e) > 1e-9));
    /* deformed: a 5 % stretch and random offsets of 1 mm, then rotated */
    double *x1 = malloc(n3 * sizeof *x1), *f1 = malloc(n3 * sizeof *f1);
    CHECK(x1 && f1);
    srand(11);
    for (int i = 0; i < m->nv; i++)
        for (int r = 0; r < 3; r++)
            x1[3 * i + r] = m->X[3 * i + r] * (r == 0 ? 1.05 : 1) + 1e-3 * (rand() / (double)RAND_MAX - 0.5);
    const double e1 = tw_hb_elastic_force(hb, x1, f1);
    for (int i = 0; i < m->nv; i++)
        for (int r = 0; r < 3; r++)
            x[3 * i + r] = Q[3 * r] * x1[3 * i] + Q[3 * r + 1] * x1[3 * i + 1] + Q[3 * r + 2] * x1[3 * i + 2];
    const double e2 = tw_hb_elastic_force(hb, x, f);
    double df = 0, f1max = 0;
    for (int i = 0; i < m->nv; i++)
        for (int r = 0; r < 3; r++) {
            const double qf = Q[3 * r] * f1[3 * i] + Q[3 * r + 1] * f1[3 * i + 1] + Q[3 * r + 2] * f1[3 * i + 2];
            df = tw_test_max(df, fabs(f[3 * i + r] - qf));
            f1max = tw_test_max(f1max, fabs(qf));
        }
    printf("deformed: energy %.6g J, rotated %.6g J; force off by %.3g N of %.3g N\n", e1, e2, df, f1max);
    CHECK(e1 > 0);
    CHECK(!(fabs(e2 - e1) > 1e-4 * e1));
    CHECK(!(df > 1e-4 * f1max));
    free(x1); free(f1);
    free(x); free(f);
    tw_hb_destroy(hb);
    tw_hier_free(h);
    return 0;
}

/* One level (no hierarchy) against the world on the same mesh, 30 steps of
 * the bar sagging under gravity from its pinned end. */
static int one_level_against_world(int coarse_green, tw_method method)
{
    tw_hierarchy *h = bar_levels(1);
    if (!h) return 1;
    tw_hb_def d = soft_def();
    d.coarse_green = coarse_green;
    tw_hb *hb = tw_hb_create(h, &d);
    tw_world_def wd = tw_default_world_def();
    wd.method = method;
    wd.backend = TW_BACKEND_CPU;
    wd.youngs_modulus = d.youngs_modulus;
    wd.poisson_ratio = d.poisson_ratio;
    wd.density = d.density;
    for (int c = 0; c < 3; c++) wd.gravity[c] = d.gravity[c];
    wd.dt = d.dt;
    wd.damping_mass = d.damping_mass;
    wd.damping_stiffness = d.damping_stiffness;
    wd.cg_tolerance = d.cg_tolerance;
    wd.newton_iterations = 1;
    tw_world *w = tw_world_create(h->level[0], &wd);
    CHECK(hb && w);
    CHECK(tw_hb_pin_where(hb, 0, 1, 1e-6) == tw_world_pin_where(w, 0, 1, 1e-6));
    for (int s = 0; s < 30; s++) {
        CHECK_OK(tw_hb_step(hb, NULL));
        CHECK_OK(tw_world_step(w, NULL));
    }
    const tw_real *xw = tw_world_positions(w);
    const double *xh = tw_hb_x(hb), *X = h->level[0]->X;
    double err = 0, umax = 0;
    for (int k = 0; k < 3 * h->level[0]->nv; k++) {
        err = tw_test_max(err, fabs(xh[k] - (double)xw[k]));
        umax = tw_test_max(umax, fabs((double)xw[k] - X[k]));
    }
    printf("%s: one level vs the world after 30 steps: max |dx| %.3g m of a %.3g m deflection\n",
           tw_method_name(method), err, umax);
    CHECK(umax > 0.01);
    CHECK(!(err > 1e-4 * umax));
    tw_world_destroy(w);
    tw_hb_destroy(hb);
    tw_hier_free(h);
    return 0;
}

TW_TEST(one_level_equals_green) { return one_level_against_world(1, TW_GREEN); }
TW_TEST(one_level_equals_corot) { return one_level_against_world(0, TW_COROT_ELEMENT); }

/* A small load (the bar sags about 2 % of its length under gravity) settles
 * to within 0.5 % of the full non-linear fine simulation (green, the world on
 * the finest level, half the step, three Newton iterations). */
TW_TEST(small_sag_against_fine)
{
    tw_hierarchy *h = bar_levels(2);
    CHECK(h);
    tw_hb_def d = soft_def();
    d.youngs_modulus = 1e7;
    d.cg_tolerance = 1e-7;
    d.damping_stiffness = 0.02;
    d.dt = 0.01;
    tw_hb *hb = tw_hb_create(h, &d);
    tw_world_def wd = tw_default_world_def();
    wd.method = TW_GREEN;
    wd.backend = TW_BACKEND_CPU;
    wd.youngs_modulus = d.youngs_modulus;
    wd.poisson_ratio = d.poisson_ratio;
    wd.density = d.density;
    for (int c = 0; c < 3; c++) wd.gravity[c] = d.gravity[c];
    wd.dt = d.dt / 2;
    wd.damping_stiffness = d.damping_stiffness;
    wd.cg_tolerance = 1e-7;
    wd.newton_iterations = 3;
    const tw_mesh *m = h->level[1];
    tw_world *w = tw_world_create(m, &wd);
    CHECK(hb && w);
    tw_hb_pin_where(hb, 0, 1, 1e-6);
    tw_world_pin_where(w, 0, 1, 1e-6);
    for (int s = 0; s < 200; s++) {
        CHECK_OK(tw_hb_step(hb, NULL));
        CHECK_OK(tw_world_step(w, NULL));
        CHECK_OK(tw_world_step(w, NULL));
    }
    const tw_real *xw = tw_world_positions(w);
    const double *xh = tw_hb_x(hb);
    double err = 0, umax = 0;
    for (int i = 0; i < m->nv; i++) {
        double e2 = 0, u2 = 0;
        for (int c = 0; c < 3; c++) {
            e2 += (xh[3 * i + c] - xw[3 * i + c]) * (xh[3 * i + c] - xw[3 * i + c]);
            u2 += (xw[3 * i + c] - m->X[3 * i + c]) * (xw[3 * i + c] - m->X[3 * i + c]);
        }
        err = tw_test_max(err, sqrt(e2));
        umax = tw_test_max(umax, sqrt(u2));
    }
    printf("sag: fine green %.4g m at the tip, hierarchical basis off by %.3g m (%.2f %%)\n", umax, err,
           100 * err / umax);
    CHECK(umax > 0.005 && umax < 0.05);
    CHECK(!(err > 0.005 * umax));
    tw_world_destroy(w);
    tw_hb_destroy(hb);
    tw_hier_free(h);
    return 0;
}

/* A large step (0.2 s, undamped, the bar released from a 30 % stretch and
 * spinning): no NaN, and the mechanical energy never rises above its start
 * (implicit Euler only takes energy out). */
TW_TEST(large_step_bounded)
{
    tw_hierarchy *h = bar_levels(2);
    CHECK(h);
    tw_hb_def d = soft_def();
    d.gravity[2] = 0;
    d.damping_stiffness = 0;
    d.dt = 0.2;
    d.cg_tolerance = 1e-6;
    tw_hb *hb = tw_hb_create(h, &d);
    CHECK(hb);
    const tw_mesh *m = h->level[1];
    double *x = tw_hb_x(hb), *v = tw_hb_v(hb);
    for (int i = 0; i < m->nv; i++) {
        x[3 * i] = 1.3 * m->X[3 * i];
        v[3 * i] = -2 * (m->X[3 * i + 1] - 0.1); /* a spin about z */
        v[3 * i + 1] = 2 * (m->X[3 * i] - 0.5);
    }
    double k0, e0, g0;
    tw_hb_energy(hb, &k0, &e0, &g0);
    const double E0 = k0 + e0 + g0;
    double worst = -INFINITY;
    for (int s = 0; s < 100; s++) {
        CHECK_OK(tw_hb_step(hb, NULL));
        double k, e, g;
        tw_hb_energy(hb, &k, &e, &g);
        worst = fmax(worst, k + e + g);
        CHECK(isfinite(k + e + g));
    }
    printf("dt 0.2 s: energy at the start %.4g J, the largest after a step %.4g J\n", E0, worst);
    CHECK(E0 > 1);
    CHECK(!(worst > E0 * (1 + 1e-6)));
    tw_hb_destroy(hb);
    tw_hier_free(h);
    return 0;
}

/* The preconditioners: the first step of a three-level bar solved to 1e-8
 * takes fewer CG iterations with the hierarchical-basis and the two-level
 * preconditioner than with block-Jacobi on the finest level (iteration
 * counts, not timings), and all three reach the tolerance. */
TW_TEST(preconditioners_converge)
{
    tw_hierarchy *h = bar_levels(3);
    CHECK(h);
    int iters[3];
    for (int pc = 0; pc < 3; pc++) {
        tw_hb_def d = soft_def();
        d.cg_tolerance = 1e-8;
        d.dt = 0.05;
        d.precond = pc;
        tw_hb *hb = tw_hb_create(h, &d);
        CHECK(hb);
        tw_hb_pin_where(hb, 0, 1, 1e-6);
        tw_hb_stats st;
        CHECK_OK(tw_hb_step(hb, &st));
        printf("preconditioner %d: %d CG iterations (residual %.3g)\n", pc, st.cg_iterations, st.residual);
        CHECK(!(st.residual > 1e-8));
        iters[pc] = st.cg_iterations;
        tw_hb_destroy(hb);
    }
    CHECK(iters[TW_HB_PRECOND_HIERARCHICAL] < iters[TW_HB_PRECOND_JACOBI]);
    CHECK(iters[TW_HB_PRECOND_TWO_LEVEL] < iters[TW_HB_PRECOND_JACOBI]);
    tw_hier_free(h);
    return 0;
}
