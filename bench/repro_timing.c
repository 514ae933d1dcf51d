/* tw_repro_timing — Müller et al. 2002 §4.1: time per step of the sagging bar
 * for linear, stiffness warping and the non-linear (Green) model; the paper
 * reports 5 / 6 / 12 ms per 10 ms step (bar size unreadable in our copy of
 * the paper; the 2002 hardware was a ~1 GHz PC).
 *
 * Scenes: the fig. 6 bar 1 x 0.1 x 0.1 m in 20x2x2 cells (480 tets) and a
 * ~1k-tet bar 1 x 0.15 x 0.15 m in 20x3x3 cells (1080 tets), pinned at
 * x < 1e-6, gravity, E 1e6 Pa, nu 0.3, rho 1000, dt 0.01 s, damping (0, 0.02)
 * as bench/fig6.sh, CG tolerance 1e-4, one thread, 300 steps (3 s, the fig. 6
 * run) after one untimed step. corot-element is timed too, for comparison.
 * Per run: mean and median wall ms per step around tw_world_step, the
 * library's breakdown, CG iterations per step.
 *
 * usage: tw_repro_timing [--csv OUT.csv] [--steps N] [--threads N]
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bar { const char *name; double w; int nx, ny, nz; } bar;
static const bar BARS[] = {{"fig6-20x2x2", 0.1, 20, 2, 2}, {"1k-20x3x3", 0.15, 20, 3, 3}};
static const tw_method METHODS[] = {TW_LINEAR, TW_WARP_VERTEX, TW_GREEN, TW_COROT_ELEMENT};
static const double PAPER_MS[] = {5, 6, 12, NAN};

int main(int argc, char **argv)
{
    const char *csv = NULL;
    int steps = 300, threads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--csv OUT.csv] [--steps N] [--threads N]\n", argv[0]);
            return 2;
        }
    }
    FILE *out = csv ? fopen(csv, "w") : stdout;
    if (!out || steps < 1) return 1;
    fprintf(out, "# sagging bar, pinned x<1e-6, E 1e6, nu 0.3, rho 1000, dt 0.01, damping 0/0.02, CG tol 1e-4, "
                 "%d timed steps, %d thread(s), real %s\n",
            steps, threads, tw_real_name());
    fprintf(out, "bar,tets,vertices,method,ms_step_mean,ms_step_median,ms_rotations,ms_assembly,ms_solve,"
                 "cg_iterations,paper_ms,ok\n");
    double *ms = malloc(sizeof(double) * steps);
    for (size_t b = 0; b < sizeof BARS / sizeof BARS[0]; b++) {
        tw_mesh *m = tw_mesh_bar(1, BARS[b].w, BARS[b].w, BARS[b].nx, BARS[b].ny, BARS[b].nz);
        for (int a = 0; a < 4; a++) {
            tw_world_def d = tw_default_world_def();
            d.energy_check = 0; /* timings: the per-step energy comparison is a check, not the step */
            d.method = METHODS[a];
            d.damping_mass = 0;
            d.damping_stiffness = 0.02;
            d.threads = threads;
            tw_world *w = tw_world_create(m, &d);
            if (!w) {
                fprintf(stderr, "%s\n", tw_last_error());
                return 1;
            }
            tw_world_pin_where(w, 0, 1, 1e-6);
            tw_step_stats st;
            int ok = tw_world_step(w, &st) == TW_OK;
            double rot = 0, asmb = 0, sol = 0, it = 0, sum = 0;
            for (int k = 0; k < steps && ok; k++) {
                double t0 = now_ms();
                ok = tw_world_step(w, &st) == TW_OK;
                ms[k] = now_ms() - t0;
                sum += ms[k];
                rot += st.ms_rotations, asmb += st.ms_assembly, sol += st.ms_solve, it += st.cg_iterations;
            }
            qsort(ms, steps, sizeof(double), cmp_double);
            fprintf(out, "%s,%d,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f,%g,%d\n", BARS[b].name, tw_mesh_tet_count(m),
                    tw_mesh_vertex_count(m), tw_method_name(METHODS[a]), sum / steps, ms[steps / 2], rot / steps,
                    asmb / steps, sol / steps, it / steps, PAPER_MS[a], ok);
            if (!ok) fprintf(stderr, "%s %s: %s\n", BARS[b].name, tw_method_name(METHODS[a]), tw_last_error());
            tw_world_destroy(w);
        }
        tw_mesh_destroy(m);
    }
    free(ms);
    if (csv) fclose(out);
    return 0;
}
