/* The multigrid's smoother and hierarchy options on the same step systems
 * (tw_amg_def): per scene the world runs --steps steps (block-Jacobi;
 * corot-element, implicit Euler, dt 0.01, E 1e6), then the last step's
 * system A v = b is solved from v = 0 to the relative residual --tol by the
 * engine's PCG, block-Jacobi and each variant's V-cycle, one thread, --reps
 * times (the least time kept: the machine is shared). One CSV row per scene
 * and variant: iterations, the true relative residual (double), CPU ms of
 * the hierarchy's build (with its first Galerkin products), of a step's
 * update between Galerkin updates (tw_amg_update) and of the solve.
 *
 *   tw_bench_multigrid_smoothers [--steps N] [--tol T] [--reps R] [--no-jacobi]
 *                                --variant SPEC [--variant SPEC...] SCENE...
 * SPEC: NAME=KIND[,key=value...]; KIND jF or cF[/C]: block-Jacobi F sweeps
 * or Chebyshev of degree F on the finest level (C below it, default F);
 * keys: ratio (Chebyshev's lambda_max / lambda_min), pd (the prolongator's
 * damping w lambda), th (strength threshold), d2 (levels aggregated by
 * distance 2), gi (Galerkin interval), mc (coarsest size).
 * SCENE: bar:NX,NY,NZ (1 x NY/NX x NZ/NX m, x = 0 pinned) or a mesh file (free). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amg.h"
#include "bench_mg.h"
#include "tetwarp.h"
#include "world.h"

/* process CPU time (one thread runs): on a shared machine closer to an
 * idle machine's wall time than the wall time is */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

typedef struct variant {
    char name[64];
    tw_amg_def def;
} variant;

static int parse_variant(const char *spec, variant *v)
{
    v->def = tw_default_amg_def();
    const char *eq = strchr(spec, '=');
    if (!eq || eq - spec >= (int)sizeof v->name) return 0;
    memcpy(v->name, spec, (size_t)(eq - spec));
    v->name[eq - spec] = 0;
    const char *p = eq + 1;
    char kind;
    int f = 0, c = 0, n = 0;
    if (sscanf(p, "%c%d%n", &kind, &f, &n) < 2 || (kind != 'j' && kind != 'c') || f < 1) return 0;
    p += n;
    if (*p == '/' && sscanf(p + 1, "%d%n", &c, &n) == 1) p += 1 + n;
    v->def.smoother = kind == 'c' ? TW_AMG_CHEBYSHEV : TW_AMG_JACOBI;
    v->def.smooth_steps = f;
    v->def.coarse_smooth_steps = c;
    while (*p == ',') {
        char key[16];
        double val;
        if (sscanf(p + 1, "%15[a-z0-9]=%lf%n", key, &val, &n) != 2) return 0;
        p += 1 + n;
        if (!strcmp(key, "ratio")) v->def.cheb_ratio = val;
        else if (!strcmp(key, "pd")) v->def.prolong_damping = val;
        else if (!strcmp(key, "th")) v->def.strength = val;
        else if (!strcmp(key, "d2")) v->def.distance2_levels = (int)val;
        else if (!strcmp(key, "gi")) v->def.galerkin_interval = (int)val;
        else if (!strcmp(key, "mc")) v->def.max_coarse = (int)val;
        else return 0;
    }
    return *p == 0;
}

/* one solve from zero; iterations, ms and the true residual */
static double solve(const tw_bsr *A, const tw_real *b, const tw_filter *filter, tw_amg *m, tw_solver_work *work,
                    tw_real *v, double tol, int *iterations)
{
    memset(v, 0, sizeof(tw_real) * 3 * (size_t)A->n);
    work->precond = m ? tw_amg_apply : NULL;
    work->precond_ctx = m;
    work->spmv = m ? tw_amg_spmv : NULL;
    work->spmv_ctx = m;
    double t0 = now_ms();
    tw_solve_result s = tw_pcg(A, b, v, filter, tol, 10000, 0, work);
    *iterations = s.iterations;
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    int steps = 3, reps = 3, jacobi = 1, a = 1, nvar = 0;
    double tol = 1e-4;
    variant var[64];
    /* m[0]: block-Jacobi (no hierarchy), m[k + 1]: variant k */
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--tol") && a + 1 < argc) tol = atof(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--no-jacobi")) jacobi = 0;
        else if (!strcmp(argv[a], "--variant") && a + 1 < argc && nvar < 64) {
            if (!parse_variant(argv[++a], &var[nvar++])) {
                fprintf(stderr, "bad variant '%s'\n", argv[a]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [--steps N] [--tol T] [--reps R] [--no-jacobi] --variant SPEC... SCENE...\n",
                    argv[0]);
            return 2;
        }
    }
    if (steps < 1) steps = 1;
    if (reps < 1) reps = 1;
    printf("scene,tets,variant,iterations,rel_residual,ms_build,ms_update,ms_solve\n");
    for (; a < argc; a++) {
        int is_bar;
        tw_mesh *mesh = bench_mg_scene(argv[a], &is_bar);
        if (!mesh) { fprintf(stderr, "%s: %s\n", argv[a], tw_last_error()); return 1; }
        tw_world_def def = tw_default_world_def();
        def.precond = TW_PRECOND_JACOBI;
        def.threads = 1;
        tw_world *w = tw_world_create(mesh, &def);
        if (!w) { fprintf(stderr, "%s: %s\n", argv[a], tw_last_error()); return 1; }
        if (is_bar) tw_world_pin_where(w, 0, 1, 1e-6);
        for (int s = 0; s < steps; s++)
            if (tw_world_step(w, NULL) != TW_OK) { fprintf(stderr, "%s: %s\n", argv[a], tw_last_error()); return 1; }
        tw_bsr A = tw_world_bsr(w);
        A.threads = 1;
        const int nv = tw_world_vertex_count(w), nt = tw_world_tet_count(w);
        unsigned char *fixed = calloc((size_t)nv, 1);
        tw_real *v = calloc(3 * (size_t)nv, sizeof *v);
        double *vd = calloc(3 * (size_t)nv, sizeof *vd);
        tw_solver_work work;
        if (!fixed || !v || !vd || tw_solver_work_init(&work, nv) != TW_OK) { fprintf(stderr, "out of memory\n"); return 1; }
        for (int i = 0; i < nv; i++) fixed[i] = w->fcons[i] != 0 && w->fcons[i] != TW_FILTER_NORMAL;
        const tw_filter filter = {w->fcons, w->cnormal};
        /* all hierarchies first, then the solves round-robin, so that the
         * machine's load changes spread over the variants alike */
        tw_amg *m[65] = {NULL};
        double ms_build[65] = {0}, ms_update[65] = {0}, best[65];
        int it[65] = {0};
        for (int k = 0; k < nvar; k++) {
            double t0 = now_ms();
            m[k + 1] = tw_amg_create(&A, w->fem.X, &filter, &var[k].def);
            if (!m[k + 1] || tw_amg_update(m[k + 1], &A, &filter) != TW_OK) {
                fprintf(stderr, "%s\n", tw_last_error());
                return 1;
            }
            ms_build[k + 1] = now_ms() - t0;
            ms_update[k + 1] = tw_amg_update_ms(m[k + 1]); /* the update after a Galerkin one */
        }
        for (int k = 0; k <= nvar; k++) best[k] = INFINITY;
        for (int r = 0; r < reps; r++)
            for (int k = jacobi ? 0 : 1; k <= nvar; k++) {
                double ms = solve(&A, w->rhs, &filter, m[k], &work, v, tol, &it[k]);
                if (ms < best[k]) best[k] = ms;
            }
        for (int k = jacobi ? 0 : 1; k <= nvar; k++) {
            solve(&A, w->rhs, &filter, m[k], &work, v, tol, &it[k]);
            for (int q = 0; q < 3 * nv; q++) vd[q] = v[q]; /* the residual reads v in double anyway */
            printf("\"%s\",%d,%s,%d,%.2e,%.1f,%.1f,%.2f\n", argv[a], nt, k ? var[k - 1].name : "jacobi", it[k],
                   bench_mg_rel_residual(&A, w->rhs, vd, fixed), ms_build[k], ms_update[k], best[k]);
            fflush(stdout);
            tw_amg_free(m[k]);
        }
        tw_solver_work_free(&work);
        free(fixed);
        free(v);
        free(vd);
        tw_world_destroy(w);
        tw_mesh_destroy(mesh);
    }
    return 0;
}
