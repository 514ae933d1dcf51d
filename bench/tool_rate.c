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
 * 0 or none: 8). One CSV row per CONFIG on stdout.
 *
 * The multirate scheme (run_multirate below): the simulation at a slower
 * step RATIO x DT with the collider models (tw_world_def.collider_models,
 * their solves to 0.1), the force at every DT tick from a step's model:
 *
 *   tw_bench_tool_rate --multirate --header
 *   tw_bench_tool_rate --multirate CELLS METHOD THREADS DT STEPS WARM RATIO:PRECOND:CG_FIXED... */
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

/* The block with the tool (collider 0, where *tool says) for one run; NULL
 * on failure (said on stderr). */
static tw_world *tool_world(const tw_mesh *m, tw_method method, tw_preconditioner pc, int fixed, int passes,
                            double tol, int threads, double dt, int models, tw_collider_def *tool)
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
    d.collider_models = models;
    d.collider_model_tolerance = 0.1; /* the force's error moved by < 1 % from 1e-4 to 0.1: tool_rate.md */
    tw_world *w = demo_tool_block_world(m, &d, 1);
    *tool = demo_tool_sphere(0.03, 0, 0.5);
    if (w && tw_world_add_collider(w, tool) == TW_OK) return w;
    fprintf(stderr, "%s\n", tw_last_error());
    tw_world_destroy(w);
    return NULL;
}

static int run(const tw_mesh *m, tw_method method, tw_preconditioner pc, int fixed, int passes, double tol, int threads,
               double dt, int steps, int warm, run_result *r)
{
    tw_collider_def tool;
    tw_world *w = tool_world(m, method, pc, fixed, passes, tol, threads, dt, 0, &tool);
    if (!w) return 1;
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

/* RMS |a - b| / RMS |b| over count 3-vectors */
static double rel_rms(const double *a, const double *b, int count)
{
    double e2 = 0, n2 = 0;
    for (int k = 0; k < 3 * count; k++) {
        e2 += (a[k] - b[k]) * (a[k] - b[k]);
        n2 += b[k] * b[k];
    }
    return sqrt(e2 / n2);
}

/* The multirate scheme: the simulation steps at slow_dt with
 * tw_world_def.collider_models, and at each timed tick of the reference
 * (every dt) the force on the tool comes from a step's model at the tool's
 * position then (tw_collider_model_force). Lag 0: the model of the last step
 * that ends at or before the tick, as if that step took no time; lag 1: the
 * one before it, the schedule a haptic loop keeps while the simulation runs
 * in its own thread (the step ending at T starts when the tool's position at
 * T is known and its model is ready at T + slow_dt). Also the force held
 * from that step (no model) and the slow steps' own forces at their ends. */
typedef struct mr_result {
    double cpu_ms, cpu_ms_plain, ms_median, model_cg, contacts, ns_eval, f_rms;
    double err_slow, err_lag0, err_lag1, err_hold1;
    int timed;
} mr_result;

static int run_multirate(const tw_mesh *m, tw_method method, tw_preconditioner pc, int fixed, int threads, double dt,
                         int steps, int warm, int ratio, const run_result *ref, mr_result *r)
{
    int slow_steps = steps / ratio, ticks = steps - warm;
    double slow_dt = ratio * dt;
    tw_collider_model *model = calloc((size_t)slow_steps, sizeof *model);
    double *ms = malloc(sizeof(double) * (size_t)slow_steps), *F = malloc(sizeof(double) * 3 * 4 * (size_t)ticks);
    double *slowF = malloc(sizeof(double) * 3 * (size_t)slow_steps), *slowR = malloc(sizeof(double) * 3 * (size_t)slow_steps);
    if (!model || !ms || !F || !slowF || !slowR) return 1;
    tw_collider_def tool;
    for (int with = 1; with >= 0; with--) { /* with the models, then without (their cost) */
        tw_world *w = tool_world(m, method, pc, fixed, 0, 1e-4, threads, slow_dt, with, &tool);
        if (!w) return 1;
        double cpu = 0, cg = 0, contacts = 0;
        int timed = 0;
        for (int j = 0; j < slow_steps; j++) {
            double p[3];
            tool_path(&tool, (j + 1) * slow_dt, p);
            tw_step_stats st;
            double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
            tw_status status = tw_world_move_collider(w, 0, p, NULL);
            if (status == TW_OK) status = tw_world_step(w, &st);
            if (status == TW_OK && with) status = tw_world_collider_model(w, 0, &model[j]);
            double t1 = now_ms(CLOCK_MONOTONIC), c1 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
            if (status != TW_OK) { fprintf(stderr, "slow step %d: %s\n", j, tw_last_error()); return 1; }
            if ((j + 1) * ratio <= warm) continue;
            ms[timed++] = t1 - t0;
            cpu += c1 - c0;
            cg += model[j].cg_iterations;
            contacts += st.contacts;
        }
        tw_world_destroy(w);
        if (!with) { r->cpu_ms_plain = cpu / timed; continue; }
        qsort(ms, (size_t)timed, sizeof(double), cmp);
        r->cpu_ms = cpu / timed;
        r->ms_median = ms[timed / 2];
        r->model_cg = cg / timed;
        r->contacts = contacts / timed;
        r->timed = timed;
    }
    /* the haptic ticks: F holds lag 0, lag 1, hold (lag 1) and the reference */
    double *lag0 = F, *lag1 = F + 3 * ticks, *hold = F + 6 * ticks, *refF = F + 9 * ticks, f2 = 0;
    int count = 0, nslow = 0;
    for (int s = warm; s < steps; s++) {
        int j0 = (s + 1) / ratio - 1, j1 = j0 - 1;
        if (j1 < 0) continue;
        double p[3], p0[3], v[3]; /* the tool's velocity as the device gives it: over the last tick */
        tool_path(&tool, (s + 1) * dt, p);
        tool_path(&tool, s * dt, p0);
        for (int a = 0; a < 3; a++) v[a] = (p[a] - p0[a]) / dt;
        tw_collider_model_force(&model[j0], p, v, lag0 + 3 * count);
        tw_collider_model_force(&model[j1], p, v, lag1 + 3 * count);
        for (int a = 0; a < 3; a++) {
            hold[3 * count + a] = model[j1].force[a];
            refF[3 * count + a] = ref->force[3 * (s - warm) + a];
            f2 += refF[3 * count + a] * refF[3 * count + a];
        }
        if ((s + 1) % ratio == 0) {
            for (int a = 0; a < 3; a++) {
                slowF[3 * nslow + a] = model[j0].force[a];
                slowR[3 * nslow + a] = refF[3 * count + a];
            }
            nslow++;
        }
        count++;
    }
    r->f_rms = sqrt(f2 / count);
    r->err_lag0 = rel_rms(lag0, refF, count);
    r->err_lag1 = rel_rms(lag1, refF, count);
    r->err_hold1 = rel_rms(hold, refF, count);
    r->err_slow = rel_rms(slowF, slowR, nslow);
    /* the haptic loop's evaluation: a million at positions along the path */
    int evals = 1000000;
    double acc = 0, c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    for (int e = 0; e < evals; e++) {
        double p[3] = {tool.center[0] + 1e-9 * (e & 1023), tool.center[1], tool.center[2]}, v[3] = {1e-6 * (e & 511), 0, 0}, f[3];
        tw_collider_model_force(&model[slow_steps - 1], p, v, f);
        acc += f[0] + f[2];
    }
    r->ns_eval = (now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / evals;
    if (!(acc == acc)) fprintf(stderr, "(non-finite model force)\n");
    free(model);
    free(ms);
    free(F);
    free(slowF);
    free(slowR);
    return 0;
}

/* CELLS METHOD THREADS DT STEPS WARM (a[0..5]), the block and the
 * reference run (block-Jacobi CG to 1e-6) */
typedef struct bench_args {
    int cells, method, threads, steps, warm;
    double dt;
    tw_mesh *m;
    run_result ref;
} bench_args;

/* 0, or the exit status (the message said) */
static int bench_setup(char **a, const char *prog, bench_args *b)
{
    b->cells = atoi(a[0]), b->method = tw_method_parse(a[1]), b->threads = atoi(a[2]);
    b->dt = atof(a[3]);
    b->steps = atoi(a[4]), b->warm = atoi(a[5]);
    if (b->cells < 2 || b->method < 0 || !(b->dt > 0) || b->warm < 0 || b->warm >= b->steps) {
        fprintf(stderr, "%s: bad arguments\n", prog);
        return 2;
    }
    if (!(b->m = demo_tool_block_mesh(b->cells))) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    return run(b->m, (tw_method)b->method, TW_PRECOND_JACOBI, 0, 0, 1e-6, b->threads, b->dt, b->steps, b->warm, &b->ref);
}

/* tw_bench_tool_rate --multirate CELLS METHOD THREADS DT STEPS WARM RATIO:PRECOND:CG_FIXED... */
static int multirate_main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[2], "--header") == 0) {
        printf("cells,tets,vertices,method,precond,cg_fixed,threads,haptic_dt,slow_dt,slow_steps_timed,cpu_ms_slow_step,"
               "cpu_ms_slow_step_no_model,ms_slow_step_median,model_cg_iterations,contacts,ns_force_eval,"
               "force_eval_rate_hz,force_rms_n,err_slow_steps,err_model_lag0,err_model_lag1,err_hold_lag1\n");
        return 0;
    }
    if (argc < 9) {
        fprintf(stderr, "usage: %s --multirate CELLS METHOD THREADS DT STEPS WARM RATIO:PRECOND:CG_FIXED...\n", argv[0]);
        return 2;
    }
    bench_args b;
    int rc = bench_setup(argv + 2, argv[0], &b);
    if (rc) return rc;
    for (int c = 8; c < argc; c++) {
        char pcname[16];
        int ratio, fixed;
        if (sscanf(argv[c], "%d:%15[a-z]:%d", &ratio, pcname, &fixed) != 3 || ratio < 1 || fixed < 0) {
            fprintf(stderr, "%s: bad config '%s' (RATIO:PRECOND:CG_FIXED)\n", argv[0], argv[c]);
            return 2;
        }
        tw_preconditioner pc = strcmp(pcname, "mg") == 0 ? TW_PRECOND_MG : TW_PRECOND_JACOBI;
        mr_result r = {0};
        if (run_multirate(b.m, (tw_method)b.method, pc, fixed, b.threads, b.dt, b.steps, b.warm, ratio, &b.ref, &r))
            return 1;
        printf("%d,%d,%d,%s,%s,%d,%d,%g,%g,%d,%.4g,%.4g,%.4g,%.1f,%.1f,%.3g,%.3g,%.4g,%.3g,%.3g,%.3g,%.3g\n", b.cells,
               tw_mesh_tet_count(b.m), tw_mesh_vertex_count(b.m), tw_method_name((tw_method)b.method),
               pc == TW_PRECOND_MG ? "mg" : "jacobi", fixed, b.threads, b.dt, ratio * b.dt, r.timed, r.cpu_ms, r.cpu_ms_plain,
               r.ms_median, r.model_cg, r.contacts, r.ns_eval, 1e9 / r.ns_eval, r.f_rms, r.err_slow, r.err_lag0,
               r.err_lag1, r.err_hold1);
        fflush(stdout);
    }
    free(b.ref.force);
    tw_mesh_destroy(b.m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--multirate") == 0) return multirate_main(argc, argv);
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
    bench_args b;
    int rc = bench_setup(argv + 1, argv[0], &b);
    if (rc) return rc;
    int cells = b.cells, method = b.method, threads = b.threads, steps = b.steps, warm = b.warm;
    double dt = b.dt;
    tw_mesh *m = b.m;
    run_result ref = b.ref;
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
        printf("%d,%d,%d,%s,%s,%d,%d,%d,%g,%d,%.4g,%.4g,%.4g,%.4g,%.4g,%.1f,%.2f,%.2f,%.1f,%.4g,%.3g,%.4g,%.4g,%.4g\n", cells,
               tw_mesh_tet_count(m), tw_mesh_vertex_count(m), tw_method_name((tw_method)method),
               pc == TW_PRECOND_MG ? "mg" : "jacobi", fixed, passes ? passes : 8, threads, dt, timed, r.ms_mean, r.ms_median, r.ms_p95,
               r.ms_max, r.cpu_ms_mean, 1e3 / r.ms_median, r.cg_mean, r.passes_mean, r.contacts_mean, r.f_rms,
               rel_rms(r.force, ref.force, timed), r.ms_rot, r.ms_asm, r.ms_solve);
        fflush(stdout);
        free(r.force);
    }
    free(ref.force);
    tw_mesh_destroy(m);
    return 0;
}
