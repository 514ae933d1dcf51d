/* Imai et al. 2013 sec. 6, figs. 6-8: a box fixed on a wall (x = 0) sags
 * under gravity; the adaptive tetra front against the finest level of the
 * same tree, stepped side by side. Per step: the active tets, the position
 * error of every finest vertex (the adaptive front's interpolated) against
 * the finest run, normalised by the box's longest edge (mean and max), and
 * each run's CPU time per step (process CPU time, one thread), and the
 * adaptive step's parts (tw_front_profile) with its preconditioner (mg: 0
 * block-Jacobi, 1 a multigrid set up for the front, 2 one kept across a
 * switch; --mg-lag 0 sets it up anew after every switch).
 *
 *   tw_bench_imai_box [--cells NX,NY,NZ] [--size LX,LY,LZ] [--levels L] [--steps N]
 *                     [--E PA] [--nu NU] [--rho RHO] [--dt S] [--t1 T1] [--t2 T2]
 *                     [--t3 T3] [--margin M] [--hold N] [--damping ALPHA,BETA] [--threads N]
 *                     [--mg-lag 0|1]
 *
 * CSV on stdout, a summary on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mesh.h"
#include "tetra_front.h"
#include "tetra_tree.h"

/* Process CPU time: the machine is shared, and one thread's CPU time is
 * what a step costs whatever else runs beside it (runs use --threads 1). */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

static int three(const char *s, double v[3])
{
    return sscanf(s, "%lf,%lf,%lf", &v[0], &v[1], &v[2]) == 3;
}

int main(int argc, char **argv)
{
    double cells[3] = {3, 1, 1}, size[3] = {0.3, 0.1, 0.1};
    int levels = 3, steps = 1300, threads = 1, mg_lag = 1;
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    tw_front_def fd = tw_default_front_def();
    td.youngs_modulus = 1e5;
    td.poisson_ratio = 0.3;
    td.density = 1000;
    fd.dt = 0.01;
    for (int i = 1; i < argc; i += 2) { /* options and their values in pairs */
        const char *a = argv[i], *b = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = b != NULL;
        if (!strcmp(a, "--cells")) ok = ok && three(b, cells);
        else if (!strcmp(a, "--size")) ok = ok && three(b, size);
        else if (!strcmp(a, "--levels")) levels = atoi(b);
        else if (!strcmp(a, "--steps")) steps = atoi(b);
        else if (!strcmp(a, "--E")) td.youngs_modulus = atof(b);
        else if (!strcmp(a, "--nu")) td.poisson_ratio = atof(b);
        else if (!strcmp(a, "--rho")) td.density = atof(b);
        else if (!strcmp(a, "--dt")) fd.dt = atof(b);
        else if (!strcmp(a, "--damping")) ok = ok && sscanf(b, "%lf,%lf", &fd.damping_mass, &fd.damping_stiffness) == 2;
        else if (!strcmp(a, "--t1")) td.t1 = atof(b);
        else if (!strcmp(a, "--t2")) td.t2 = atof(b);
        else if (!strcmp(a, "--t3")) fd.t3 = atof(b);
        else if (!strcmp(a, "--margin")) fd.coarsen_margin = atof(b);
        else if (!strcmp(a, "--hold")) fd.hold_steps = atoi(b);
        else if (!strcmp(a, "--threads")) threads = atoi(b);
        else if (!strcmp(a, "--mg-lag")) mg_lag = atoi(b);
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "tw_bench_imai_box: bad option %s\n", a);
            return 2;
        }
    }
    fd.threads = threads;
    td.levels = levels;
    tw_mesh *base = tw_mesh_bar(size[0], size[1], size[2], (int)cells[0], (int)cells[1], (int)cells[2]);
    if (!base) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    tw_tetra_tree *t = tw_tetra_tree_build(base, &td);
    if (!t) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    const tw_mesh *fm = t->h->level[levels - 1];
    fprintf(stderr, "tree: %d levels, base %d tets, finest %d tets %d vertices, estimation %.2f s, %d samples failed\n",
            levels, base->nt, fm->nt, fm->nv, t->seconds, t->samples_failed);
    unsigned char *pin = calloc((size_t)fm->nv, 1);
    for (int v = 0; v < fm->nv; v++)
        pin[v] = fm->X[3 * v] <= 1e-9 * size[0];
    tw_front_def fa = fd, ff = fd;
    fa.adapt = 1;
    ff.adapt = 0;
    tw_front *A = tw_front_create(t, pin, &fa), *F = tw_front_create(t, pin, &ff);
    if (!A || !F) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    tw_front_set_mg_lag(A, mg_lag);
    double longest = size[0] > size[1] ? size[0] : size[1];
    if (size[2] > longest) longest = size[2];
    double *xa = malloc(3 * sizeof(double) * fm->nv);
    printf("step,time_s,active_tets,finest_tets,free_vertices,hanging_vertices,refined,coarsened,err_mean,err_max,"
           "tip_sag_m,ms_adapt,ms_finest,cg_adapt,cg_finest,energy_jump_J,ms_front_adapt,ms_system_adapt,"
           "ms_solve_adapt,cpu_decide,cpu_energy,cpu_rebuild,cpu_assemble,cpu_setup,cpu_update,cpu_pcg,"
           "cpu_setup_finest,cpu_update_finest,cpu_pcg_finest,mg\n");
    double sum_mean = 0, worst = 0, ms_a = 0, ms_f = 0, max_jump = 0;
    int tip = 0;
    for (int v = 0; v < fm->nv; v++)
        if (fm->X[3 * v] > fm->X[3 * tip] || (fm->X[3 * v] == fm->X[3 * tip] && fm->X[3 * v + 2] > fm->X[3 * tip + 2]))
            tip = v;
    for (int s = 0; s < steps; s++) {
        tw_front_stats sa, sf;
        double t0 = now_ms();
        if (tw_front_step(A, &sa) != TW_OK) {
            fprintf(stderr, "adaptive: %s\n", tw_last_error());
            return 1;
        }
        double t1 = now_ms();
        if (tw_front_step(F, &sf) != TW_OK) {
            fprintf(stderr, "finest: %s\n", tw_last_error());
            return 1;
        }
        double t2 = now_ms();
        double pa[TW_FRONT_MS_N], pf[TW_FRONT_MS_N];
        tw_front_profile(A, pa);
        tw_front_profile(F, pf);
        tw_front_positions(A, xa);
        const double *xf = tw_front_x(F);
        double mean = 0, mx = 0;
        for (int v = 0; v < fm->nv; v++) {
            double d2 = 0;
            for (int d = 0; d < 3; d++)
                d2 += (xa[3 * v + d] - xf[3 * v + d]) * (xa[3 * v + d] - xf[3 * v + d]);
            const double e = sqrt(d2) / longest;
            mean += e;
            if (!(e <= mx)) mx = e;
        }
        mean /= fm->nv;
        sum_mean += mean;
        if (!(mx <= worst)) worst = mx;
        ms_a += t1 - t0;
        ms_f += t2 - t1;
        if (sa.energy_jump > max_jump) max_jump = sa.energy_jump;
        printf("%d,%.4f,%d,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.4f,%.4f,%d,%d,%.4g,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%d\n", s + 1,
               (s + 1) * fd.dt, sa.active_tets, sf.active_tets, sa.free_vertices, sa.hanging_vertices, sa.refined,
               sa.coarsened, mean, mx, fm->X[3 * tip + 2] - xf[3 * tip + 2], t1 - t0, t2 - t1, sa.cg_iterations,
               sf.cg_iterations, sa.energy_jump, sa.ms_front, sa.ms_system, sa.ms_solve, pa[TW_FRONT_MS_DECIDE],
               pa[TW_FRONT_MS_ENERGY], pa[TW_FRONT_MS_REBUILD], pa[TW_FRONT_MS_ASSEMBLE], pa[TW_FRONT_MS_SETUP],
               pa[TW_FRONT_MS_UPDATE], pa[TW_FRONT_MS_PCG], pf[TW_FRONT_MS_SETUP], pf[TW_FRONT_MS_UPDATE],
               pf[TW_FRONT_MS_PCG], tw_front_mg_kind(A));
    }
    fprintf(stderr, "steps %d: error mean %.4g %% (over steps and vertices), max %.4g %%; ms/step adaptive %.4f, "
                    "finest %.4f (ratio %.2f); largest energy gain at a switch %.3g J\n",
            steps, 100 * sum_mean / steps, 100 * worst, ms_a / steps, ms_f / steps, ms_f / ms_a, max_jump);
    tw_front_destroy(A);
    tw_front_destroy(F);
    tw_tetra_tree_free(t);
    tw_mesh_destroy(base);
    free(pin);
    free(xa);
    return 0;
}
