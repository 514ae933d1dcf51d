/* tw_bench_warp_system — how warp-vertex's non-symmetric system should be solved.
 *
 * Stiffness warping per vertex (Müller et al. 2002) gives system blocks
 * R_i K_ij R_i^T, which are not symmetric: CG does not apply. tetwarp has two
 * answers (tw_warp_system):
 *   SYMMETRIC  PCG on R_i K_ij R_j^T (symmetric, the matrix is an
 *              approximation, the force keeps eq. 12);
 *   BICGSTAB   BiCGStab on the exact blocks R_i K_ij R_i^T.
 * This program runs both on the Müller fig. 6 bar (1 x 0.1 x 0.1 m, 20x2x2
 * cells) and a finer one (40x4x4), pinned at x < 1e-6, under gravity, E 1e6 Pa,
 * dt 0.01 s, 200 steps, both at a relative tolerance of 1e-4, plus a reference
 * run of BICGSTAB at 1e-8. Per run: ms/step, iterations/step, the final tip
 * position, the largest relative volume change; between runs: the largest
 * distance over all steps between the tips, divided by the bar length.
 *
 * The tip is the vertex nearest (L, W/2, H/2) at rest.
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bar_spec { const char *name; int nx, ny, nz; } bar_spec;
static const bar_spec BARS[] = {{"fig6-20x2x2", 20, 2, 2}, {"fine-40x4x4", 40, 4, 4}};

typedef struct run_spec { const char *name; tw_warp_system system; double tol; } run_spec;
static const run_spec RUNS[] = {
    {"symmetric-1e-4", TW_WARP_SYSTEM_SYMMETRIC, 1e-4},
    {"bicgstab-1e-4", TW_WARP_SYSTEM_BICGSTAB, 1e-4},
    {"bicgstab-1e-8-ref", TW_WARP_SYSTEM_BICGSTAB, 1e-8},
};
enum { RUN_COUNT = 3, REF = 2 };

typedef struct run_result {
    int ok, steps_done;
    double ms_step, it_step, max_it, max_residual, max_vol_change;
    double *tip; /* 3 per step */
    char error[240];
} run_result;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

static int tip_vertex(const tw_mesh *m, double L, double W, double H)
{
    const double *X = tw_mesh_positions(m);
    int best = 0;
    double bd = INFINITY;
    for (int i = 0; i < tw_mesh_vertex_count(m); i++) {
        double dx = X[3 * i] - L, dy = X[3 * i + 1] - W / 2, dz = X[3 * i + 2] - H / 2;
        double d = dx * dx + dy * dy + dz * dz;
        if (d < bd) bd = d, best = i;
    }
    return best;
}

static void run_one(const tw_mesh *mesh, int tip, const run_spec *rs, int steps, int threads, int cap, run_result *r)
{
    tw_world_def d = tw_default_world_def();
    d.method = TW_WARP_VERTEX;
    d.youngs_modulus = 1e6;
    d.dt = 0.01;
    d.warp_system = rs->system;
    d.cg_tolerance = rs->tol;
    d.cg_max_iterations = cap;
    d.threads = threads;
    tw_world *w = tw_world_create(mesh, &d);
    if (!w) { snprintf(r->error, sizeof r->error, "world: %s", tw_last_error()); return; }
    tw_world_pin_where(w, 0, 1, 1e-6);
    double v0 = tw_world_volume(w), t_ms = 0;
    for (int k = 0; k < steps; k++) {
        tw_step_stats st;
        double t0 = now_ms();
        tw_status s = tw_world_step(w, &st);
        t_ms += now_ms() - t0;
        if (s != TW_OK) {
            snprintf(r->error, sizeof r->error, "step %d: %s", k + 1, tw_last_error());
            break;
        }
        r->it_step += st.cg_iterations;
        if (st.cg_iterations > r->max_it) r->max_it = st.cg_iterations;
        if (st.residual > r->max_residual) r->max_residual = st.residual;
        double dv = fabs(tw_world_volume(w) / v0 - 1);
        if (dv > r->max_vol_change) r->max_vol_change = dv;
        const tw_real *x = tw_world_positions(w);
        for (int c = 0; c < 3; c++) r->tip[3 * k + c] = x[3 * tip + c];
        r->steps_done = k + 1;
    }
    if (r->steps_done > 0) {
        r->ms_step = t_ms / r->steps_done;
        r->it_step /= r->steps_done;
    }
    r->ok = r->steps_done == steps;
    tw_world_destroy(w);
}

/* Largest |a_k - b_k| over the steps both runs completed, and the last one. */
static void tip_diff(const run_result *a, const run_result *b, double L, double *max_d, double *final_d)
{
    int n = a->steps_done < b->steps_done ? a->steps_done : b->steps_done;
    *max_d = *final_d = NAN;
    if (n == 0) return;
    double m = 0, last = 0;
    for (int k = 0; k < n; k++) {
        double s = 0;
        for (int c = 0; c < 3; c++) s += (a->tip[3 * k + c] - b->tip[3 * k + c]) * (a->tip[3 * k + c] - b->tip[3 * k + c]);
        last = sqrt(s) / L;
        if (last > m) m = last;
    }
    *max_d = m;
    *final_d = last;
}

int main(int argc, char **argv)
{
    int steps = 200, threads = 1, cap = 2000;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cap") == 0 && i + 1 < argc) cap = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else {
            fprintf(stderr, "usage: tw_bench_warp_system [--steps 200] [--threads 1] [--cap 2000] [--csv PATH]\n");
            return 2;
        }
    }
    if (steps < 1 || threads < 0 || cap < 1) { fprintf(stderr, "tw_bench_warp_system: bad option value\n"); return 2; }
    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) { fprintf(stderr, "tw_bench_warp_system: cannot write '%s': %s\n", csv_path, strerror(errno)); return 1; }
        fprintf(csv, "# tw_bench_warp_system: warp-vertex, E 1e6 Pa, nu 0.3, rho 1000, dt 0.01, %d steps, threads %d, "
                     "iteration cap %d, real %s\n", steps, threads, cap, tw_real_name());
        fprintf(csv, "# tip_diff_*: max (or final) over steps of |tip - tip_other| / bar length\n");
        fprintf(csv, "mesh,tets,vertices,run,system,tolerance,steps_done,ms_step,iterations_step,max_iterations,"
                     "max_residual,tip_x,tip_y,tip_z,max_volume_change,tip_diff_vs_ref_max,tip_diff_vs_ref_final,"
                     "tip_diff_sym_vs_bicgstab_max,ok,error\n");
    }
    printf("warp-vertex system: %d steps, dt 0.01, E 1e6, threads %d, real %s\n", steps, threads, tw_real_name());
    printf("%-12s %-18s %8s %8s %8s %8s %10s %10s %10s %10s %11s %11s %11s\n", "mesh", "run", "ms/step", "it/step",
           "max it", "max res", "tip x", "tip y", "tip z", "max dV/V", "dRef max/L", "dRef end/L", "dSymBi/L");
    int failures = 0;
    for (int b = 0; b < 2; b++) {
        const bar_spec *bs = &BARS[b];
        double L = 1, W = 0.1, H = 0.1;
        tw_mesh *mesh = tw_mesh_bar(L, W, H, bs->nx, bs->ny, bs->nz);
        if (!mesh) { fprintf(stderr, "mesh: %s\n", tw_last_error()); return 1; }
        int tip = tip_vertex(mesh, L, W, H);
        run_result r[RUN_COUNT];
        memset(r, 0, sizeof r);
        for (int k = 0; k < RUN_COUNT; k++) {
            r[k].tip = calloc(3 * (size_t)steps, sizeof(double));
            if (!r[k].tip) { fprintf(stderr, "out of memory\n"); return 1; }
            fprintf(stderr, "  %s %s ...\n", bs->name, RUNS[k].name);
            run_one(mesh, tip, &RUNS[k], steps, threads, cap, &r[k]);
            if (!r[k].ok) failures++;
        }
        double sym_bi_max, sym_bi_final;
        tip_diff(&r[0], &r[1], L, &sym_bi_max, &sym_bi_final);
        for (int k = 0; k < RUN_COUNT; k++) {
            double dmax, dfin;
            tip_diff(&r[k], &r[REF], L, &dmax, &dfin);
            int n = r[k].steps_done;
            const double *t = n ? &r[k].tip[3 * (n - 1)] : (const double[3]){NAN, NAN, NAN};
            double sb = k < 2 ? sym_bi_max : NAN;
            printf("%-12s %-18s %8.3f %8.1f %8.0f %8.1e %10.5f %10.5f %10.5f %10.2e %11.2e %11.2e %11.2e%s%s\n",
                   bs->name, RUNS[k].name, r[k].ms_step, r[k].it_step, r[k].max_it, r[k].max_residual, t[0], t[1],
                   t[2], r[k].max_vol_change, dmax, dfin, sb, r[k].ok ? "" : "  FAILED: ", r[k].error);
            if (csv)
                fprintf(csv, "%s,%d,%d,%s,%s,%g,%d,%.4f,%.2f,%.0f,%.3g,%.6f,%.6f,%.6f,%.4g,%.4g,%.4g,%.4g,%d,\"%s\"\n",
                        bs->name, tw_mesh_tet_count(mesh), tw_mesh_vertex_count(mesh), RUNS[k].name,
                        RUNS[k].system == TW_WARP_SYSTEM_SYMMETRIC ? "symmetric" : "bicgstab", RUNS[k].tol,
                        r[k].steps_done, r[k].ms_step, r[k].it_step, r[k].max_it, r[k].max_residual, t[0], t[1],
                        t[2], r[k].max_vol_change, dmax, dfin, sb, r[k].ok, r[k].error);
        }
        for (int k = 0; k < RUN_COUNT; k++) free(r[k].tip);
        tw_mesh_destroy(mesh);
    }
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
