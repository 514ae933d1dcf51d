/* tw_bench_cpu — CPU step time per method, mesh size, thread count and CG mode.
 *
 * The scene is the benchmark bar: 1 m long, about 0.15 m square, cut into
 * roughly cubic cells of 6 tets each, pinned at x < 1e-6, under gravity.
 * Each configuration (size x method x threads x CG mode) runs in its own
 * forked process, so that the OpenMP thread count (process-global) is set
 * fresh, the peak RSS (getrusage) belongs to that configuration alone, and a
 * crash or blow-up in one configuration does not end the run.
 *
 * A configuration takes one warm-up step (untimed), then enough timed steps
 * for about --time seconds (at least 3), or exactly --steps. Per step the
 * library's tw_step_stats split the time into rotations, assembly (elastic
 * force, right-hand side, system blocks), solve and other; the total is
 * wall-clock time around tw_world_step.
 *
 * CG modes: "fixed20" runs exactly 20 PCG iterations per step
 * (cg_fixed_iterations = 20), the GPU target's setting; "tol" stops at a
 * relative residual of 1e-4 with a cap of 500 iterations.
 *
 * Output: a table on stdout, progress on stderr, and a CSV (--csv) whose
 * '#' header lines record the machine, the real type and the command line.
 */
#define _POSIX_C_SOURCE 200809L
#include "tetwarp.h"

#include "bench_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

static const char PROG[] = "tw_bench_cpu"; /* in bench_common's messages */

/* ------------------------------------------------------------ the scenes */

typedef struct bench_size {
    const char *name;
    int nx, ny, nz; /* cells; the bar is 1 x ny/nx x nz/nx m, cubic cells */
} bench_size;

static const bench_size SIZES[] = {
    {"1k", 20, 3, 3},      /* 1080 tets: smoke test only */
    {"10k", 40, 6, 7},     /* 10080 tets, 1 x 0.150 x 0.175 m */
    {"100k", 90, 14, 13},  /* 98280 tets, 1 x 0.156 x 0.144 m */
    {"1m", 195, 29, 29},   /* 983970 tets, 1 x 0.149 x 0.149 m */
};
enum { SIZE_COUNT = sizeof SIZES / sizeof SIZES[0] };

typedef struct options {
    int sizes[SIZE_COUNT], size_count;
    int methods[TW_METHOD_COUNT], method_count;
    int threads[8], thread_count; /* 0 = all */
    int cg_modes[BENCH_CG_COUNT], cg_count;
    int steps;          /* 0: chosen from target_s */
    double target_s;    /* seconds of timed steps per configuration */
    double youngs;      /* Pa */
    const char *csv;
} options;

typedef struct result {
    int ok;
    int tets, vertices, steps, threads;
    double ms_wall, ms_rot, ms_asm, ms_solve, ms_other; /* per step */
    double cg_iterations;                               /* per step */
    double residual;                                    /* last step */
    double memory_bytes;                                /* tw_world_memory_bytes */
    double peak_rss_mb;
    double setup_s;                                     /* mesh + world creation */
    char error[240];
} result;

/* ------------------------------------------------- one configuration */

static void run_config(const options *o, int size, tw_method method, int threads, int cg, result *r)
{
    memset(r, 0, sizeof *r);
    const bench_size *s = &SIZES[size];
    double t0 = bench_now_s();
    tw_mesh *mesh = tw_mesh_bar(1.0, (double)s->ny / s->nx, (double)s->nz / s->nx, s->nx, s->ny, s->nz);
    if (!mesh) { snprintf(r->error, sizeof r->error, "mesh: %s", tw_last_error()); return; }
    tw_world_def d = tw_default_world_def();
    d.energy_check = 0; /* timings: the per-step energy comparison is a check, not the step */
    d.method = method;
    d.youngs_modulus = o->youngs;
    d.dt = 0.01;
    d.threads = threads > 0 ? threads : bench_cores(); /* set explicitly: omp threads are process-global */
    if (cg == BENCH_CG_FIXED20) {
        d.cg_fixed_iterations = 20;
    } else {
        d.cg_tolerance = 1e-4;
        d.cg_max_iterations = 500;
    }
    tw_world *w = tw_world_create(mesh, &d);
    if (!w) {
        snprintf(r->error, sizeof r->error, "world: %s", tw_last_error());
        tw_mesh_destroy(mesh);
        return;
    }
    tw_world_pin_where(w, 0, 1, 1e-6);
    r->setup_s = bench_now_s() - t0;
    r->tets = tw_world_tet_count(w);
    r->vertices = tw_world_vertex_count(w);
    r->threads = d.threads;
    r->memory_bytes = (double)tw_world_memory_bytes(w);

    tw_step_stats st;
    double tw = bench_now_s();
    if (tw_world_step(w, &st) != TW_OK) { /* warm-up */
        snprintf(r->error, sizeof r->error, "warm-up step: %s", tw_last_error());
        goto done;
    }
    double warm = bench_now_s() - tw;
    int steps = o->steps;
    if (steps <= 0) {
        steps = (int)ceil(o->target_s / (warm > 1e-6 ? warm : 1e-6));
        if (steps < 3) steps = 3;
        if (steps > 1000) steps = 1000;
    }
    double t_start = bench_now_s();
    for (int k = 0; k < steps; k++) {
        if (tw_world_step(w, &st) != TW_OK) {
            snprintf(r->error, sizeof r->error, "step %d: %s", k + 1, tw_last_error());
            goto done;
        }
        r->ms_rot += st.ms_rotations;
        r->ms_asm += st.ms_assembly;
        r->ms_solve += st.ms_solve;
        r->ms_other += st.ms_other;
        r->cg_iterations += st.cg_iterations;
        r->residual = st.residual;
    }
    double wall = bench_now_s() - t_start;
    r->steps = steps;
    r->ms_wall = 1e3 * wall / steps;
    r->ms_rot /= steps;
    r->ms_asm /= steps;
    r->ms_solve /= steps;
    r->ms_other /= steps;
    r->cg_iterations /= steps;
    r->ok = 1;
done:
    {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r->peak_rss_mb = ru.ru_maxrss / 1024.0; /* Linux: kB */
    }
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
}

/* One configuration, as bench_run_forked's child runs it. */
typedef struct config {
    const options *o;
    int size, threads, cg;
    tw_method method;
} config;

static void run_config_child(const void *ctx, void *out)
{
    const config *c = ctx;
    run_config(c->o, c->size, c->method, c->threads, c->cg, out);
}

/* Runs one configuration in a child process; the result comes back through a pipe. */
static void run_forked(const options *o, int size, tw_method method, int threads, int cg, result *r)
{
    config c = {o, size, threads, cg, method};
    int status = 0;
    char why[200];
    memset(r, 0, sizeof *r);
    int rc = bench_run_forked(run_config_child, &c, r, sizeof *r, &status, why, sizeof why);
    if (rc < 0) {
        snprintf(r->error, sizeof r->error, "%s", why);
    } else if (rc > 0) {
        memset(r, 0, sizeof *r);
        if (WIFSIGNALED(status))
            snprintf(r->error, sizeof r->error, "child died with signal %d (out of memory?)", WTERMSIG(status));
        else
            snprintf(r->error, sizeof r->error, "child exited with status %d and no result", WEXITSTATUS(status));
    }
}

/* ------------------------------------------------------------ reporting */

typedef struct derived {
    double steps_per_s, tet_steps_per_s, us_per_tet_ra, ns_per_dof_it, bytes_per_tet;
} derived;

static derived derive(const result *r)
{
    derived x;
    x.steps_per_s = r->ms_wall > 0 ? 1e3 / r->ms_wall : 0;
    x.tet_steps_per_s = x.steps_per_s * r->tets;
    x.us_per_tet_ra = r->tets ? 1e3 * (r->ms_rot + r->ms_asm) / r->tets : 0;
    x.ns_per_dof_it = r->cg_iterations > 0 ? 1e6 * r->ms_solve / r->cg_iterations / (3.0 * r->vertices) : 0;
    x.bytes_per_tet = r->tets ? r->memory_bytes / r->tets : 0;
    return x;
}

static void print_header(void)
{
    printf("%-5s %8s %7s %-14s %3s %-7s %5s %9s %8s %8s %9s %7s %7s %9s %10s %8s %8s %7s %8s\n", "size", "tets",
           "verts", "method", "thr", "cg", "steps", "ms/step", "rot", "asm", "solve", "other", "it/step",
           "steps/s", "Mtet-st/s", "us/tet", "ns/dofit", "B/tet", "RSS MB");
}

static void print_row(const char *size, const char *method, int cg, const result *r)
{
    if (!r->ok) {
        printf("%-5s %8d %7d %-14s %3d %-7s FAILED: %s\n", size, r->tets, r->vertices, method, r->threads,
               BENCH_CG_NAMES[cg], r->error);
        return;
    }
    derived x = derive(r);
    printf("%-5s %8d %7d %-14s %3d %-7s %5d %9.3f %8.3f %8.3f %9.3f %7.3f %7.1f %9.2f %10.3f %8.4f %8.2f %7.0f %8.1f\n",
           size, r->tets, r->vertices, method, r->threads, BENCH_CG_NAMES[cg], r->steps, r->ms_wall, r->ms_rot,
           r->ms_asm, r->ms_solve, r->ms_other, r->cg_iterations, x.steps_per_s, 1e-6 * x.tet_steps_per_s,
           x.us_per_tet_ra, x.ns_per_dof_it, x.bytes_per_tet, r->peak_rss_mb);
    fflush(stdout);
}

static void csv_row(FILE *f, const char *size, const char *method, int cg, const result *r)
{
    derived x = derive(r);
    fprintf(f, "%s,%d,%d,%s,%d,%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.3g,%.3f,%.4g,%.5f,%.4f,%.1f,%.1f,%.2f,%d,\"%s\"\n",
            size, r->tets, r->vertices, method, r->threads, BENCH_CG_NAMES[cg], r->steps, r->ms_wall, r->ms_rot,
            r->ms_asm, r->ms_solve, r->ms_other, r->cg_iterations, r->residual, x.steps_per_s, x.tet_steps_per_s,
            x.us_per_tet_ra, x.ns_per_dof_it, x.bytes_per_tet, r->peak_rss_mb, r->setup_s, r->ok, r->error);
    fflush(f);
}

/* ------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tw_bench_cpu [--sizes 10k,100k,1m] [--methods linear,warp-vertex,...] [--threads 1,all]\n"
            "                    [--cg fixed,tol] [--steps N] [--time SECONDS] [--youngs PA] [--csv PATH] [--quick]\n"
            "  sizes: 1k 10k 100k 1m (default 10k,100k); methods: all five by default;\n"
            "  threads: numbers or 'all' (default 1,all); cg: fixed (20 iterations) and/or tol (1e-4, cap 500);\n"
            "  steps: timed steps after one warm-up step (default: enough for --time s, default 1.5, at least 3);\n"
            "  --quick: 1k and 10k, 0.2 s per configuration.\n");
}

static int parse_size(const char *s)
{
    for (int i = 0; i < SIZE_COUNT; i++)
        if (strcmp(s, SIZES[i].name) == 0 || (strcmp(s, "1M") == 0 && i == SIZE_COUNT - 1)) return i;
    return -1;
}
static int parse_threads(const char *s)
{
    if (strcmp(s, "all") == 0) return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return (*end || v < 1 || v > 1024) ? -1 : (int)v;
}
int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.sizes[0] = 1, o.sizes[1] = 2, o.size_count = 2;
    for (int m = 0; m < TW_METHOD_COUNT; m++) o.methods[m] = m;
    o.method_count = TW_METHOD_COUNT;
    o.threads[0] = 1, o.threads[1] = 0, o.thread_count = 2;
    o.cg_modes[0] = BENCH_CG_FIXED20, o.cg_modes[1] = BENCH_CG_TOL, o.cg_count = 2;
    o.target_s = 1.5;
    o.youngs = 1e6;
    int sizes_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n = -1;
        if (strcmp(a, "--quick") == 0) {
            if (!sizes_given) o.sizes[0] = 0, o.sizes[1] = 1, o.size_count = 2;
            o.target_s = 0.2;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); return 0; }
        if (!v) { usage(stderr); return 2; }
        i++;
        if (strcmp(a, "--sizes") == 0) n = o.size_count = bench_parse_list(PROG, v, o.sizes, SIZE_COUNT, parse_size), sizes_given = 1;
        else if (strcmp(a, "--methods") == 0) n = o.method_count = bench_parse_list(PROG, v, o.methods, TW_METHOD_COUNT, tw_method_parse);
        else if (strcmp(a, "--threads") == 0) n = o.thread_count = bench_parse_list(PROG, v, o.threads, 8, parse_threads);
        else if (strcmp(a, "--cg") == 0) n = o.cg_count = bench_parse_list(PROG, v, o.cg_modes, BENCH_CG_COUNT, bench_parse_cg);
        else if (strcmp(a, "--steps") == 0) n = o.steps = atoi(v);
        else if (strcmp(a, "--time") == 0) n = (o.target_s = atof(v)) > 0;
        else if (strcmp(a, "--youngs") == 0) n = (o.youngs = atof(v)) > 0;
        else if (strcmp(a, "--csv") == 0) o.csv = v, n = 1;
        else { fprintf(stderr, "tw_bench_cpu: unknown option '%s'\n", a); usage(stderr); return 2; }
        if (n <= 0) { fprintf(stderr, "tw_bench_cpu: bad value '%s' for %s\n", v, a); return 2; }
    }

    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) { fprintf(stderr, "tw_bench_cpu: cannot write '%s': %s\n", o.csv, strerror(errno)); return 1; }
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        fprintf(csv, "# tw_bench_cpu %s\n# cpu: %s\n# cores: %d\n# real: %s\n# E: %g Pa, nu 0.3, rho 1000, dt 0.01, "
                     "damping_stiffness 0.01, warm start, bar 1 m pinned at x<1e-6, gravity -z\n# command:",
                date, cpu, bench_cores(), tw_real_name(), o.youngs);
        for (int i = 0; i < argc; i++) fprintf(csv, " %s", argv[i]);
        fprintf(csv, "\nsize,tets,vertices,method,threads,cg_mode,steps,ms_step,ms_rotations,ms_assembly,ms_solve,"
                     "ms_other,cg_iterations,last_residual,steps_per_s,tet_steps_per_s,us_per_tet_rot_asm,"
                     "ns_per_dof_cg_iter,bytes_per_tet,peak_rss_mb,setup_s,ok,error\n");
    }
    fprintf(stderr, "tw_bench_cpu: %s, %d cores, real %s\n", cpu, bench_cores(), tw_real_name());
    print_header();
    int failures = 0;
    for (int si = 0; si < o.size_count; si++)
        for (int mi = 0; mi < o.method_count; mi++)
            for (int ci = 0; ci < o.cg_count; ci++)
                for (int ti = 0; ti < o.thread_count; ti++) {
                    int size = o.sizes[si], cg = o.cg_modes[ci];
                    tw_method m = (tw_method)o.methods[mi];
                    int thr = o.threads[ti];
                    char tl[16];
                    if (thr) snprintf(tl, sizeof tl, "%d", thr);
                    else snprintf(tl, sizeof tl, "all");
                    fprintf(stderr, "  %s %s threads=%s %s ... ", SIZES[size].name, tw_method_name(m), tl,
                            BENCH_CG_NAMES[cg]);
                    double t0 = bench_now_s();
                    result r;
                    run_forked(&o, size, m, thr, cg, &r);
                    fprintf(stderr, "%s (%.1f s)\n", r.ok ? "ok" : r.error, bench_now_s() - t0);
                    if (!r.ok) failures++;
                    print_row(SIZES[size].name, tw_method_name(m), cg, &r);
                    if (csv) csv_row(csv, SIZES[size].name, tw_method_name(m), cg, &r);
                }
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
