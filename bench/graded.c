/* Graded vs uniform lattice meshes of a closed surface:
 * for each fine size, the counts and build time of the uniform lattice
 * (levels 1) and the graded one (levels 4), and, where asked, the sag under
 * gravity (y up): the vertices within `pin` of the lowest y are pinned, the
 * body settles with corot-element, implicit Euler and mass damping until its
 * largest speed has stayed below 1e-5 m/s for 30 steps (or 1500 steps), and the top vertex's drop
 * and the mean drop of the vertices in the top 1 cm are reported. The
 * graded mesh's hanging vertices are rows of the step's reduced system
 * (host/hanging.c): its steps to rest are to match the uniform mesh's.
 *
 *   tw_bench_graded SURFACE [SAG_FINE_SIZES...] [--counts FINE_SIZES...] [--trace FILE]
 *
 * CSV on stdout, progress on stderr; --trace writes every step's largest
 * speed and CG iterations (fine_size_m,levels,step,max_speed,cg_iterations). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tetwarp.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

typedef struct sag_result {
    double top_sag, top_band_sag, seconds, ms_per_step, hang_err, max_speed, cg_mean;
    int steps, pinned, max_row;
} sag_result;

static int sag(const tw_graded_mesh *g, double h, int levels, FILE *trace, sag_result *r)
{
    const tw_mesh *m = g->mesh;
    tw_mesh_stats st = tw_mesh_compute_stats(m);
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.integrator = TW_IMPLICIT_EULER;
    d.youngs_modulus = 1e5;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.gravity[0] = d.gravity[2] = 0;
    d.gravity[1] = -9.81;
    d.dt = 0.01;
    d.damping_mass = 20;
    d.cg_tolerance = 1e-7;
    d.cg_max_iterations = 2000;
    tw_world *w = tw_world_create(m, &d);
    if (!w) {
        fprintf(stderr, "tw_world_create: %s\n", tw_last_error());
        return 1;
    }
    memset(r, 0, sizeof *r);
    r->pinned = tw_world_pin_where(w, 1, 1, st.bbox_min[1] + 0.004);
    if (g->hanging_count &&
        tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                             g->hanging_weights) != TW_OK) {
        fprintf(stderr, "tw_world_set_hanging: %s\n", tw_last_error());
        return 1;
    }
    int n = tw_mesh_vertex_count(m), top = 0;
    const double *X = tw_mesh_positions(m);
    for (int i = 1; i < n; i++)
        if (X[3 * i + 1] > X[3 * top + 1]) top = i;
    double t0 = now_s();
    int max_steps = 1500, quiet_steps = 0;
    for (r->steps = 0; r->steps < max_steps;) {
        tw_step_stats ss;
        if (tw_world_step(w, &ss) != TW_OK) {
            fprintf(stderr, "step %d: %s\n", r->steps, tw_last_error());
            return 1;
        }
        r->steps++;
        const tw_real *v = tw_world_velocities(w);
        double vmax = 0;
        for (int i = 0; i < 3 * n; i++)
            if (fabs(v[i]) > vmax) vmax = fabs(v[i]);
        r->max_speed = vmax;
        r->cg_mean += ss.cg_iterations;
        if (trace) fprintf(trace, "%g,%d,%d,%.6g,%d\n", h, levels, r->steps, vmax, ss.cg_iterations);
        quiet_steps = vmax < 1e-5 ? quiet_steps + 1 : 0;
        if (quiet_steps >= 30) break; /* not a turning point of an oscillation */
    }
    r->seconds = now_s() - t0;
    r->ms_per_step = 1e3 * r->seconds / r->steps;
    r->cg_mean /= r->steps;
    for (int k = 0; k < g->hanging_count; k++)
        if (g->hanging_ptr[k + 1] - g->hanging_ptr[k] > r->max_row) r->max_row = g->hanging_ptr[k + 1] - g->hanging_ptr[k];
    const tw_real *x = tw_world_positions(w);
    r->top_sag = X[3 * top + 1] - x[3 * top + 1];
    double sum = 0;
    int cnt = 0;
    for (int i = 0; i < n; i++)
        if (X[3 * i + 1] > X[3 * top + 1] - 0.01) {
            sum += X[3 * i + 1] - x[3 * i + 1];
            cnt++;
        }
    r->top_band_sag = sum / cnt;
    for (int k = 0; k < g->hanging_count; k++)
        for (int c = 0; c < 3; c++) {
            double p = 0;
            for (int j = g->hanging_ptr[k]; j < g->hanging_ptr[k + 1]; j++)
                p += g->hanging_weights[j] * x[3 * g->hanging_idx[j] + c];
            double e = fabs(x[3 * g->hanging_vertex[k] + c] - p);
            if (e > r->hang_err) r->hang_err = e;
        }
    tw_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SURFACE [SAG_FINE_SIZES...] [--counts FINE_SIZES...]\n", argv[0]);
        return 2;
    }
    tw_surface *s = tw_surface_load(argv[1]);
    if (!s) {
        fprintf(stderr, "%s\n", tw_last_error());
        return 1;
    }
    printf("fine_size_m,levels,tets,vertices,hanging,leaves_l0,leaves_l1,leaves_l2,leaves_l3,volume_m3,build_s,"
           "pinned,steps,ms_per_step,cg_iterations_mean,top_sag_m,top_1cm_mean_sag_m,max_speed_end,max_hanging_err_m,"
           "max_constrainers\n");
    FILE *trace = NULL;
    for (int a = 2; a + 1 < argc; a++)
        if (!strcmp(argv[a], "--trace")) {
            if (!(trace = fopen(argv[a + 1], "w"))) {
                fprintf(stderr, "cannot write %s\n", argv[a + 1]);
                return 1;
            }
            fprintf(trace, "fine_size_m,levels,step,max_speed,cg_iterations\n");
        }
    int counts_only = 0;
    for (int a = 2; a < argc; a++) {
        if (!strcmp(argv[a], "--counts")) {
            counts_only = 1;
            continue;
        }
        if (!strcmp(argv[a], "--trace")) {
            a++;
            continue;
        }
        double h = atof(argv[a]);
        for (int levels = 1; levels <= 4; levels += 3) {
            tw_graded_def d = tw_default_graded_def();
            d.fine_size = h;
            d.levels = levels;
            tw_graded_mesh *g = tw_mesh_graded(s, &d);
            if (!g) {
                fprintf(stderr, "tw_mesh_graded: %s\n", tw_last_error());
                return 1;
            }
            tw_mesh_stats st = tw_mesh_compute_stats(g->mesh);
            sag_result r;
            memset(&r, 0, sizeof r);
            fprintf(stderr, "fine %g m, levels %d: %d tets, %d vertices, %d hanging, built in %.3f s\n", h, levels,
                    st.tets, st.vertices, g->hanging_count, g->seconds);
            if (!counts_only) {
                if (sag(g, h, levels, trace, &r)) return 1;
                fprintf(stderr, "  %d pinned, %d steps (%.1f ms/step, %.1f CG iterations), top sag %.4g mm, top-1cm "
                        "mean %.4g mm, end speed %.2g m/s, hanging err %.2g m, up to %d constrainers\n", r.pinned,
                        r.steps, r.ms_per_step, r.cg_mean, 1e3 * r.top_sag, 1e3 * r.top_band_sag, r.max_speed,
                        r.hang_err, r.max_row);
            }
            printf("%g,%d,%d,%d,%d,%d,%d,%d,%d,%.9g,%.4f,%d,%d,%.2f,%.2f,%.6g,%.6g,%.3g,%.3g,%d\n", h, levels,
                   st.tets, st.vertices, g->hanging_count, g->leaves[0], g->leaves[1], g->leaves[2], g->leaves[3],
                   st.volume, g->seconds, r.pinned, r.steps, r.ms_per_step, r.cg_mean, r.top_sag, r.top_band_sag,
                   r.max_speed, r.hang_err, r.max_row);
            fflush(stdout);
            tw_graded_mesh_destroy(g);
        }
    }
    tw_surface_destroy(s);
    if (trace) fclose(trace);
    return 0;
}
