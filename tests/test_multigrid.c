/* The smoothed-aggregation multigrid preconditioner (host/amg.c): its
 * prolongators carry the rigid-body modes, its V-cycle is SPD, and the PCG
 * it preconditions reaches the tolerance in few iterations. */
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "tw_test.h"
#include "world.h"

#include "hd/bsr_row_real.h" /* tw_filter_block */

/* a world after one implicit step, so w->A holds a step's system */
static tw_world *stepped_world(tw_mesh *m, tw_preconditioner pc, int pin_bar)
{
    tw_world_def d = tw_default_world_def();
    d.precond = pc;
    tw_world *w = tw_world_create(m, &d);
    if (!w) return NULL;
    if (pin_bar == 1) tw_world_pin_where(w, 0, 1, 1e-6);
    if (pin_bar == 2) { /* resting on a floor instead: the bottom layer in contact */
        tw_collider_def floor = tw_default_collider_def();
        tw_world_add_collider(w, &floor);
    }
    tw_step_stats st;
    if (tw_world_step(w, &st) != TW_OK) { tw_world_destroy(w); return NULL; }
    /* the end of a step keeps only the projected vertices in the filter:
     * mark the resting contacts as the next step's solve sees them */
    if (pin_bar == 2) tw_contact_detect(w, w->x, w->def.dt);
    return w;
}

static double rnd(unsigned *s)
{
    return tw_test_uniform(s) - 0.5;
}

/* x = S x: the PCG's filter (pinned vertices zeroed, contacts lose their
 * normal component) */
static void filter(tw_world *w, tw_real *x)
{
    for (int i = 0; i < w->fem.n; i++) tw_filter_block(w->fcons[i], w->cnormal, i, x + 3 * i);
}

static void random_filtered(tw_world *w, tw_real *x, unsigned *seed)
{
    for (int i = 0; i < 3 * w->fem.n; i++) x[i] = (tw_real)rnd(seed);
    filter(w, x);
}

static double dotr(int n3, const tw_real *a, const tw_real *b)
{
    double s = 0;
    for (int i = 0; i < n3; i++) s += (double)a[i] * b[i];
    return s;
}

/* P0 B_{l+1} == B_l on every level pair, with more levels than the default
 * (a small coarsest size), on a free bar and on a pinned one */
TW_TEST(rigid_modes_reproduced)
{
    for (int pin = 0; pin < 2; pin++) {
        tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 20, 3, 3);
        tw_world *w = stepped_world(m, TW_PRECOND_JACOBI, pin);
        CHECK(w);
        tw_amg_def def = tw_default_amg_def();
        def.max_coarse = 12;
        tw_bsr A = tw_world_bsr(w);
        tw_filter f = {w->fcons, w->cnormal};
        tw_amg *g = tw_amg_create(&A, w->fem.X, &f, &def);
        CHECK(g);
        int levels = tw_amg_levels(g);
        printf("pinned %d: %d levels:", pin, levels);
        for (int l = 0; l < levels; l++) printf(" %d", tw_amg_level_size(g, l));
        printf("\n");
        CHECK(levels >= 3);
        for (int l = 0; l + 1 < levels; l++) {
            double e = tw_amg_rigid_mode_error(g, l);
            printf("  level %d: |P0 B_c - B| / |B| = %.3g\n", l, e);
            CHECK(e <= 1e-12);
        }
        tw_amg_free(g);
        tw_world_destroy(w);
        tw_mesh_destroy(m);
    }
    return 0;
}

/* x^T V y == y^T V x and x^T V x > 0 for random filtered vectors, V the
 * filtered V-cycle S V S as the PCG applies it */
static int check_spd(tw_world *w, tw_amg *g, const char *what)
{
    int n3 = 3 * w->fem.n;
    tw_real *x = malloc(sizeof(tw_real) * n3), *y = malloc(sizeof(tw_real) * n3);
    tw_real *vx = malloc(sizeof(tw_real) * n3), *vy = malloc(sizeof(tw_real) * n3);
    if (!x || !y || !vx || !vy) return 1;
    unsigned seed = 7;
    double worst_sym = 0, min_pos = INFINITY;
    for (int t = 0; t < 8; t++) {
        random_filtered(w, x, &seed);
        random_filtered(w, y, &seed);
        tw_amg_apply(g, x, vx);
        tw_amg_apply(g, y, vy);
        filter(w, vx); /* S V S: the filter after the cycle too */
        filter(w, vy);
        double xy = dotr(n3, x, vy), yx = dotr(n3, y, vx);
        double scale = sqrt(dotr(n3, x, vx) * dotr(n3, y, vy));
        worst_sym = tw_test_max(worst_sym, fabs(xy - yx) / scale);
        double q = dotr(n3, x, vx) / dotr(n3, x, x);
        if (!(q >= min_pos)) min_pos = q; /* NaN stays */
    }
    printf("%s: symmetry error %.3g (relative), min x^T V x / x^T x %.3g\n", what, worst_sym, min_pos);
    free(x); free(y); free(vx); free(vy);
    CHECK(worst_sym <= 1e-5); /* float vectors in and out */
    CHECK(min_pos > 0);
    return 0;
}

TW_TEST(vcycle_spd)
{
    tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 20, 3, 3);
    tw_world *w = stepped_world(m, TW_PRECOND_MG, 1);
    CHECK(w && w->amg);
    CHECK(tw_amg_levels(w->amg) >= 2);
    if (check_spd(w, w->amg, "pinned bar")) return 1;
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* PCG iterations from v = 0 to 1e-4 on w's step system with g */
static int pcg_iterations(tw_world *w, tw_amg *g)
{
    tw_bsr A = tw_world_bsr(w);
    tw_filter f = {w->fcons, w->cnormal};
    tw_solver_work work;
    tw_real *v = calloc(3 * (size_t)w->fem.n, sizeof(tw_real));
    if (!v || tw_solver_work_init(&work, w->fem.n) != TW_OK) return -1;
    work.precond = tw_amg_apply;
    work.precond_ctx = g;
    tw_solve_result r = tw_pcg(&A, w->rhs, v, &f, 1e-4, 1000, 0, &work);
    tw_solver_work_free(&work);
    free(v);
    return r.residual <= 1e-4 ? r.iterations : -1;
}

/* every smoother the def offers keeps the cycle SPD (block-Jacobi, the
 * Chebyshev polynomials of the default and of a higher degree and ratio,
 * another degree below the finest level), on one thread and on two (the
 * sweeps' thread buffers); the default Chebyshev cycle takes fewer PCG
 * iterations than one block-Jacobi sweep (a wrong polynomial would not) */
TW_TEST(vcycle_spd_smoothers)
{
    tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 24, 4, 4);
    tw_world *w = stepped_world(m, TW_PRECOND_JACOBI, 1);
    CHECK(w);
    struct { const char *name; int smoother, steps, coarse; double ratio; } v[4] = {
        {"block-Jacobi 1", TW_AMG_JACOBI, 1, 0, 0},
        {"block-Jacobi 2/1", TW_AMG_JACOBI, 2, 1, 0},
        {"Chebyshev 2 (default)", TW_AMG_CHEBYSHEV, 2, 0, 10},
        {"Chebyshev 3/2, ratio 30", TW_AMG_CHEBYSHEV, 3, 2, 30},
    };
    int its[4] = {0};
    for (int k = 0; k < 4; k++)
        for (int threads = 1; threads <= 2; threads++) {
            tw_amg_def def = tw_default_amg_def();
            def.max_coarse = 30; /* three levels or more on this small bar */
            def.smoother = v[k].smoother;
            def.smooth_steps = v[k].steps;
            def.coarse_smooth_steps = v[k].coarse;
            if (v[k].ratio > 0) def.cheb_ratio = v[k].ratio;
            tw_bsr A = tw_world_bsr(w);
            A.threads = threads;
            tw_filter f = {w->fcons, w->cnormal};
            tw_amg *g = tw_amg_create(&A, w->fem.X, &f, &def);
            CHECK(g);
            CHECK(tw_amg_levels(g) >= 3);
            CHECK(tw_amg_update(g, &A, &f) == TW_OK);
            char what[96];
            snprintf(what, sizeof what, "%s, %d thread(s)", v[k].name, threads);
            if (check_spd(w, g, what)) return 1;
            its[k] = pcg_iterations(w, g);
            printf("  %d PCG iterations to 1e-4\n", its[k]);
            CHECK(its[k] > 0);
            tw_amg_free(g);
        }
    tw_amg_def d = tw_default_amg_def();
    CHECK(d.smoother == TW_AMG_CHEBYSHEV && d.smooth_steps == 2);
    CHECK(its[2] < its[0]);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* with contacts: the bar resting on the floor, its bottom vertices
 * constrained along the normal */
TW_TEST(vcycle_spd_contact)
{
    tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 20, 3, 3);
    tw_world *w = stepped_world(m, TW_PRECOND_MG, 2);
    CHECK(w && w->amg);
    int contacts = 0;
    for (int i = 0; i < w->fem.n; i++) contacts += w->fcons[i] == TW_FILTER_NORMAL;
    printf("%d contact vertices\n", contacts);
    CHECK(contacts > 0);
    if (check_spd(w, w->amg, "bar on the floor")) return 1;
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(vcycle_spd_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet.node"), &ld, NULL);
    CHECK(m);
    tw_world *w = stepped_world(m, TW_PRECOND_MG, 0);
    CHECK(w && w->amg);
    if (check_spd(w, w->amg, "bunny")) return 1;
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* CG iterations per step with mg on a scene (each step must reach the
 * tolerance) and the worst over steps; jacobi's mean too unless
 * jacobi_mean is NULL */
static int mg_iterations(tw_mesh *m, int pin_bar, int steps, double *mean, int *worst, double *jacobi_mean)
{
    for (int pc = jacobi_mean ? 0 : 1; pc < 2; pc++) {
        tw_world_def d = tw_default_world_def();
        d.precond = pc ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
        tw_world *w = tw_world_create(m, &d);
        if (!w) return 1;
        if (pin_bar) tw_world_pin_where(w, 0, 1, 1e-6);
        double sum = 0;
        for (int s = 0; s < steps; s++) {
            tw_step_stats st;
            if (tw_world_step(w, &st) != TW_OK) { tw_world_destroy(w); return 1; }
            sum += st.cg_iterations;
            if (pc && st.cg_iterations > *worst) *worst = st.cg_iterations;
            if (pc && !(st.residual <= d.cg_tolerance)) {
                printf("step %d: residual %g after %d iterations\n", s, st.residual, st.cg_iterations);
                tw_world_destroy(w);
                return 1;
            }
        }
        *(pc ? mean : jacobi_mean) = sum / steps;
        tw_world_destroy(w);
    }
    return 0;
}

/* the 10k-tet bar of bench/bench_cpu.c, pinned at x = 0: <= 25 per step */
TW_TEST(pcg_bar_10k)
{
    tw_mesh *m = tw_mesh_bar(1, 6.0 / 40, 7.0 / 40, 40, 6, 7);
    double mean = 0, jmean = 0;
    int worst = 0;
    CHECK(m);
    CHECK(mg_iterations(m, 1, 6, &mean, &worst, &jmean) == 0);
    printf("bar 10k: mg %.1f CG iterations per step (max %d), jacobi %.1f\n", mean, worst, jmean);
    CHECK(worst <= 25);
    tw_mesh_destroy(m);
    return 0;
}

/* the shipped sliver bunny in free fall: <= 40 per step */
TW_TEST(pcg_bunny)
{
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet.node"), &ld, NULL);
    double mean = 0;
    int worst = 0;
    CHECK(m);
    CHECK(mg_iterations(m, 0, 4, &mean, &worst, NULL) == 0);
    printf("bunny: mg %.1f CG iterations per step (max %d); block-Jacobi hits the cap of 1000 here\n", mean, worst);
    CHECK(worst <= 40);
    tw_mesh_destroy(m);
    return 0;
}

/* The energy check's pass at a step's end leaves the next step's rotations
 * and element forces (tw_compute_rotations_energy): its energy is
 * tw_compute_elastic_energy's to the bit, its R, packs and element forces
 * those tw_compute_rotations and tw_compute_elastic_force make at the same
 * positions, for every element method. */
TW_TEST(energy_pass_leaves_rotations)
{
    tw_method methods[3] = {TW_COROT_ELEMENT, TW_HYBRID, TW_GREEN};
    tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 10, 2, 2);
    CHECK(m);
    for (int k = 0; k < 3; k++) {
        tw_world_def d = tw_default_world_def();
        d.method = methods[k];
        d.threads = 1;
        tw_world *w = tw_world_create(m, &d);
        CHECK(w);
        tw_world_pin_where(w, 0, 1, 1e-6);
        for (int s = 0; s < 3; s++) CHECK_OK(tw_world_step(w, NULL));
        CHECK(tw_rotations_cached(w, w->x)); /* the energy check ran */
        size_t nr = 9 * (size_t)w->fem.nt, ns = TW_GREEN_PACK * (size_t)w->fem.nt, nf = 12 * (size_t)w->fem.nt;
        size_t n3 = 3 * (size_t)w->fem.n;
        tw_real *R = malloc(sizeof(tw_real) * nr), *S = malloc(sizeof(tw_real) * ns);
        tw_real *fe = malloc(sizeof(tw_real) * nf), *f = malloc(sizeof(tw_real) * n3);
        CHECK(R && S && fe && f);
        memcpy(R, w->R, sizeof(tw_real) * nr);
        memcpy(S, w->S, sizeof(tw_real) * ns);
        memcpy(fe, w->fe, sizeof(tw_real) * nf);
        tw_compute_elastic_force(w, w->x, f, 0); /* gathers the cached fe */
        double e_fused = tw_compute_rotations_energy(w, w->x);
        tw_compute_rotations(w, w->x);
        CHECK(!tw_rotations_cached(w, w->x)); /* any other rotation pass clears the cache */
        tw_compute_elastic_force(w, w->x, w->f, 0);
        CHECK(!memcmp(fe, w->fe, sizeof(tw_real) * nf));
        CHECK(!memcmp(f, w->f, sizeof(tw_real) * n3));
        double e = tw_compute_elastic_energy(w, w->x);
        printf("method %d: elastic energy %.9g J (fused pass %.9g)\n", (int)methods[k], e, e_fused);
        CHECK(e_fused == e && e > 0);
        CHECK(!memcmp(R, w->R, sizeof(tw_real) * nr));
        CHECK(!memcmp(S, w->S, sizeof(tw_real) * ns));
        free(R);
        free(S);
        free(fe);
        free(f);
        tw_world_destroy(w);
    }
    tw_mesh_destroy(m);
    return 0;
}

/* tw_amg_spmv (the PCG's product on the mg path: the step matrix's upper
 * half) equals tw_bsr_spmv to float rounding, on one thread and on two
 * (the threads' buffers), the last vertex included */
TW_TEST(amg_spmv_matches_bsr)
{
    tw_mesh *m = tw_mesh_bar(1, 0.15, 0.15, 30, 4, 4);
    tw_world *w = stepped_world(m, TW_PRECOND_MG, 1);
    CHECK(w && w->amg);
    int n3 = 3 * w->fem.n;
    tw_real *x = malloc(sizeof(tw_real) * n3), *y0 = malloc(sizeof(tw_real) * n3), *y1 = malloc(sizeof(tw_real) * n3);
    CHECK(x && y0 && y1);
    unsigned seed = 3;
    for (int threads = 1; threads <= 2; threads++) {
        tw_bsr A = tw_world_bsr(w);
        A.threads = threads;
        tw_filter f = {w->fcons, w->cnormal};
        CHECK(tw_amg_update(w->amg, &A, &f) == TW_OK);
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < n3; i++) x[i] = (tw_real)rnd(&seed);
            tw_bsr_spmv(&A, x, y0);
            tw_amg_spmv(w->amg, x, y1);
            double err = 0, ymax = 0;
            for (int i = 0; i < n3; i++) {
                err = tw_test_max(err, fabs((double)y1[i] - y0[i]));
                ymax = tw_test_max(ymax, fabs((double)y0[i]));
            }
            printf("threads %d: max |amg - bsr| / max |bsr| = %.3g\n", threads, err / ymax);
            CHECK(err <= 1e-5 * ymax);
        }
    }
    free(x); free(y0); free(y1);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}
