/* How fast the force on a tool can be computed (the haptic rate): the block
 * of demos/tool_press.h (cells^2 x ceil(cells/2) cells of 6 tets; 15: 10,800
 * tets, 1,536 vertices), fixed at its base, a sphere (3 cm, friction 0.5)
 * pressed 5 mm into its top over 0.05 s, then moved: 2 mm up and down at
 * 5 Hz and 1 cm sideways at 2 Hz. Each step is tw_world_move_collider +
 * tw_world_step + tw_world_collider_force, timed together (wall clock and
 * process CPU time) over the steps after the press (the first `warm`), with
 * the step's own split (rotations, assembly, solve with the contact passes).
 *
 * The force's accuracy: the same run with block-Jacobi CG to 1e-6 (about
 * what float allows: tighter stalls) is the reference; the error is the RMS
 * over the timed steps of |F - F_ref|, relative to the RMS of |F_ref|.
 *
 *   tw_bench_tool_rate --header
 *   tw_bench_tool_rate CELLS METHOD THREADS DT STEPS WARM CONFIG...
 *
 * METHOD: corot-element or linear; THREADS: OpenMP threads (0: the
 * default); CONFIG: PRECOND:CG_FIXED[:PASSES], PRECOND jacobi or mg,
 * CG_FIXED 0 (to the tolerance 1e-4) or a fixed iteration count per solve,
 * PASSES the contact solves per step at most (tw_world_def.contact_passes;
 * 0 or none: 8). One CSV row per CONFIG on stdout. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tetwarp.h"
#include "tool_press.h"

#define PI 3.14159265358979323846

static double now_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* the tool's centre at time t (m) */
static void tool_path(const tw_collider_def *c0, double t, double p[3])
{
    double press = 0.005 * fmin(t / 0.05, 1.0), after = fmax(t - 0.05, 0.0);
    p[0] = c0->center[0] + 0.01 * sin(2 * PI * 2 * after);
    p[1] = c0->center[1];
    p[2] = c0->center[2] - press - 0.002 * sin(2 * PI * 5 * after);
}

typedef struct run_result {
    double ms_mean, ms_median, ms_p95, ms_max, cpu_ms_mean, cg_mean, passes_mean, contacts_mean, f_rms;
    double ms_rot, ms_asm, ms_solve; /* the step's own split (tw_step_stats), means */
    double *force; /* 3 per timed step */
} run_result;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const tw_mesh *m, tw_method method, tw_preconditioner pc, int fixed, int passes, double tol, int threads,
               double dt, int steps, int warm, run_result *r)
{
    tw_world_def d = tw_default_world_def();
    d.method = method;
    d.youngs_modulus = 5e4;
    d.dt = dt;
    d.precond = pc;
    d.cg_fixed_iterations = fixed;
    d.cg_tolerance = tol;
    d.cg_max_iterations = 5000;
    d.threads = threads;
    d.energy_check = 0; /* a check, not the step */
    d.contact_passes = passes;
    tw_world *w = demo_tool_block_world(m, &d, 1);
    if (!w) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_collider_def tool = demo_tool_sphere(0.03, 0, 0.5);
    if (tw_world_add_collider(w, &tool) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    int timed = steps - warm;
    double *ms = malloc(sizeof(double) * (size_t)timed);
    r->force = malloc(sizeof(double) * 3 * (size_t)timed);
    if (!ms || !r->force) return 1;
    double cpu = 0, cg = 0, npass = 0, contacts = 0, f2 = 0, rot = 0, as = 0, so = 0;
    for (int s = 0; s < steps; s++) {
        double p[3], f[3];
        tool_path(&tool, (s + 1) * dt, p);
        tw_step_stats st;
        double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        tw_status status = tw_world_move_collider(w, 0, p, NULL);
        if (status == TW_OK) status = tw_world_step(w, &st);
        if (status == TW_OK) status = tw_world_collider_force(w, 0, f);
        double t1 = now_ms(CLOCK_MONOTONIC), c1 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (status != TW_OK) { fprintf(stderr, "step %d: %s\n", s, tw_last_error()); return 1; }
        if (s < warm) continue;
        int k = s - warm;
        ms[k] = t1 - t0;
        cpu += c1 - c0;
        cg += st.cg_iterations;
        npass += st.contact_passes;
        contacts += st.contacts;
        rot += st.ms_rotations;
        as += st.ms_assembly;
        so += st.ms_solve;
        for (int a = 0; a < 3; a++) r->force[3 * k + a] = f[a];
        f2 += f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
    }
    double sum = 0;
    for (int k = 0; k < timed; k++) sum += ms[k];
    qsort(ms, (size_t)timed, sizeof(double), cmp);
    r->ms_mean = sum / timed;
    r->ms_median = ms[timed / 2];
    r->ms_p95 = ms[(int)(0.95 * (timed - 1))];
    r->ms_max = ms[timed - 1];
    r->cpu_ms_mean = cpu / timed;
    r->cg_mean = cg / timed;
    r->passes_mean = npass / timed;
    r->contacts_mean = contacts / timed;
    r->f_rms = sqrt(f2 / timed);
    r->ms_rot = rot / timed;
    r->ms_asm = as / timed;
    r->ms_solve = so / timed;
    free(ms);
    tw_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--header") == 0) {
        printf("cells,tets,vertices,method,precond,cg_fixed,max_passes,threads,dt,timed_steps,ms_step_mean,ms_step_median,"
               "ms_step_p95,ms_step_max,cpu_ms_step,rate_hz_median,cg_iterations,contact_passes,contacts,"
               "force_rms_n,force_error_rel,ms_rotations,ms_assembly,ms_solve\n");
        return 0;
    }
    if (argc < 8) {
        fprintf(stderr, "usage: %s CELLS METHOD THREADS DT STEPS WARM PRECOND:CG_FIXED... | --header\n", argv[0]);
        return 2;
    }
    int cells = atoi(argv[1]), method = tw_method_parse(argv[2]), threads = atoi(argv[3]);
    double dt = atof(argv[4]);
    int steps = atoi(argv[5]), warm = atoi(argv[6]);
    if (cells < 2 || method < 0 || !(dt > 0) || warm < 0 || warm >= steps) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    tw_mesh *m = demo_tool_block_mesh(cells);
    if (!m) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    run_result ref;
    if (run(m, (tw_method)method, TW_PRECOND_JACOBI, 0, 0, 1e-6, threads, dt, steps, warm, &ref)) return 1;
    int timed = steps - warm;
    for (int c = 7; c < argc; c++) {
        char pcname[16];
        int fixed, passes = 0;
        int got = sscanf(argv[c], "%15[a-z]:%d:%d", pcname, &fixed, &passes);
        if (got < 2 || fixed < 0 || passes < 0) {
            fprintf(stderr, "%s: bad config '%s' (PRECOND:CG_FIXED[:PASSES])\n", argv[0], argv[c]);
            return 2;
        }
        tw_preconditioner pc = strcmp(pcname, "mg") == 0 ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
        run_result r;
        if (run(m, (tw_method)method, pc, fixed, passes, 1e-4, threads, dt, steps, warm, &r)) return 1;
        double e2 = 0, n2 = 0;
        for (int k = 0; k < 3 * timed; k++) {
            e2 += (r.force[k] - ref.force[k]) * (r.force[k] - ref.force[k]);
            n2 += ref.force[k] * ref.force[k];
        }
        printf("%d,%d,%d,%s,%s,%d,%d,%d,%g,%d,%.4g,%.4g,%.4g,%.4g,%.4g,%.1f,%.2f,%.2f,%.1f,%.4g,%.3g,%.4g,%.4g,%.4g\n", cells,
               tw_mesh_tet_count(m), tw_mesh_vertex_count(m), tw_method_name((tw_method)method),
               pc == TW_PRECOND_MG ? "mg" : "jacobi", fixed, passes ? passes : 8, threads, dt, timed, r.ms_mean, r.ms_median, r.ms_p95,
               r.ms_max, r.cpu_ms_mean, 1e3 / r.ms_median, r.cg_mean, r.passes_mean, r.contacts_mean, r.f_rms,
               sqrt(e2 / n2), r.ms_rot, r.ms_asm, r.ms_solve);
        fflush(stdout);
        free(r.force);
    }
    free(ref.force);
    tw_mesh_destroy(m);
    return 0;
}
