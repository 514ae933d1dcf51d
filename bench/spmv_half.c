/* The symmetric-half SpMV (host/bsr_half.h) against the full 3x3-BSR
 * product on the CPU: the corot-element bar of tw_bench_cpu (pinned at x = 0,
 * one implicit step taken so the matrix holds real rotations) at the sizes
 * asked for, 1 and 2 threads, three forms: full (tw_bsr_spmv), half in
 * place (the full arrays, only the diagonal and upper blocks read) and half
 * compact (only the half stored). The forms are timed in turns within each
 * round, so a change in the machine's load hits them alike; the ratio to
 * full at the same thread count is the figure that matters on a shared
 * machine, and the process CPU time per product (cpu_ms_median: time
 * descheduled does not count, memory stalls do; all threads summed) the
 * steadier one. Bytes per product are a streaming model (each value, index and
 * vector entry moved once: x's gathers and the upper blocks' second read,
 * by column, assumed to hit the cache).
 *
 * Then the PCG as a step runs it (block-Jacobi, exactly 20 iterations, 2
 * threads), two worlds, def.spmv full and half, stepped in turns: rows
 * pcg20-full and pcg20-half with the median ms_solve per step in ms_median.
 *
 * Prints one CSV row per (size, form, threads) and, as '#' lines, the
 * products' agreement, the compact form's refresh time and the model of a
 * CG iteration's bytes (bench/README.md's, full vs half) with its floor at
 * 2.8 TB/s: a model, not a measurement.
 *
 *   tw_bench_spmv_half [--sizes 10k,100k,1m] [--seconds S]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsr_half.h"
#include "solver.h"
#include "tetwarp.h"
#include "world.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

typedef struct bar_size {
    const char *name;
    int nx, ny, nz;
} bar_size;

/* tw_bench_cpu's bars */
static const bar_size SIZES[] = {{"10k", 40, 6, 7}, {"100k", 90, 14, 13}, {"1m", 195, 29, 29}};

/* CPU seconds of the process (all its threads): time descheduled on a
 * shared machine does not count, time stalled on memory does */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { FULL, HALF, COMPACT, FORMS };
static const char *const FORM_NAMES[FORMS] = {"full", "half", "half-compact"};

static void product(int form, const tw_bsr *A, const tw_bsr_half *in_place, const tw_bsr_half *compact,
                    const tw_real *x, tw_real *y, int threads)
{
    tw_bsr B = *A;
    B.threads = threads;
    if (form == FULL) tw_bsr_spmv(&B, x, y);
    else if (form == HALF) tw_bsr_half_spmv(&in_place->index, A->n, A->val, x, y, threads);
    else tw_bsr_half_spmv(&compact->index, A->n, compact->val, x, y, threads);
}

/* bytes of one product (the streaming model) */
static double product_bytes(int form, const tw_bsr *A, const tw_bsr_half *h)
{
    double r = sizeof(tw_real), n = A->n, b = A->nnzb;
    if (form == FULL) return 9 * b * r + 4 * b + 4 * (n + 1) + 6 * n * r;
    return tw_bsr_half_bytes(h, sizeof(tw_real));
}

static double matrix_bytes(int form, const tw_bsr *A)
{
    double r = sizeof(tw_real), n = A->n, b = A->nnzb, u = (b - n) / 2;
    return form == FULL ? 9 * b * r : 9 * (n + u) * r;
}

static int run_size(const bar_size *s, double seconds)
{
    tw_mesh *m = tw_mesh_bar(1.0, (double)s->ny / s->nx, (double)s->nz / s->nx, s->nx, s->ny, s->nz);
    if (!m) { fprintf(stderr, "tw_bench_spmv_half: %s: %s\n", s->name, tw_last_error()); return 1; }
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU;
    d.method = TW_COROT_ELEMENT;
    d.precond = TW_PRECOND_JACOBI;
    d.cg_fixed_iterations = 2; /* the matrix is what is measured, not the solve */
    tw_world *w = tw_world_create(m, &d);
    if (!w || tw_world_pin_where(w, 0, 1, 1e-6) <= 0 || tw_world_step(w, NULL) != TW_OK) {
        fprintf(stderr, "tw_bench_spmv_half: %s: %s\n", s->name, tw_last_error());
        return 1;
    }
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_half in_place, compact;
    if (tw_bsr_half_init(&in_place, A.n, A.nnzb, A.row_ptr, A.col, A.diag) != TW_OK ||
        tw_bsr_half_init_compact(&compact, A.n, A.nnzb, A.row_ptr, A.col, A.diag, A.val) != TW_OK) {
        fprintf(stderr, "tw_bench_spmv_half: %s: %s\n", s->name, tw_last_error());
        return 1;
    }
    size_t n3 = 3 * (size_t)A.n;
    tw_real *x = malloc(sizeof(tw_real) * n3), *y[FORMS];
    for (int f = 0; f < FORMS; f++) y[f] = malloc(sizeof(tw_real) * n3);
    unsigned seed = 1;
    for (size_t k = 0; k < n3; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (tw_real)((double)(seed >> 8) / (double)(1u << 23) - 1);
    }
    /* agreement (corot's full matrix is stored exactly symmetric: the same bits) */
    for (int f = 0; f < FORMS; f++) product(f, &A, &in_place, &compact, x, y[f], 2);
    double worst = 0, scale = 0;
    for (size_t k = 0; k < n3; k++) {
        for (int f = 1; f < FORMS; f++) worst = fmax(worst, fabs((double)y[f][k] - (double)y[0][k]));
        scale = fmax(scale, fabs((double)y[0][k]));
    }
    printf("# %s: %d tets, %d vertices, %d blocks; max |y_half - y_full| / max |y_full| = %.3g (%s bits)\n", s->name,
           tw_mesh_tet_count(m), A.n, A.nnzb, worst / scale,
           memcmp(y[0], y[1], sizeof(tw_real) * n3) == 0 && memcmp(y[0], y[2], sizeof(tw_real) * n3) == 0 ? "the same"
                                                                                                             : "other");
    for (int threads = 1; threads <= 2; threads++) {
        /* rounds of one product per form, until `seconds` (at least 5 rounds, at most 2000) */
        int cap = 2000, rounds = 0;
        double *t[FORMS], *c[FORMS];
        for (int f = 0; f < FORMS; f++) {
            t[f] = malloc(sizeof(double) * cap);
            c[f] = malloc(sizeof(double) * cap);
        }
        for (int f = 0; f < FORMS; f++) product(f, &A, &in_place, &compact, x, y[f], threads); /* warm */
        double start = now_s();
        while (rounds < cap && (rounds < 5 || now_s() - start < seconds)) {
            for (int f = 0; f < FORMS; f++) {
                double t0 = now_s(), c0 = cpu_s();
                product(f, &A, &in_place, &compact, x, y[f], threads);
                t[f][rounds] = now_s() - t0;
                c[f][rounds] = cpu_s() - c0;
            }
            rounds++;
        }
        double med[FORMS], cmed[FORMS];
        for (int f = 0; f < FORMS; f++) {
            qsort(t[f], (size_t)rounds, sizeof(double), cmp_double);
            qsort(c[f], (size_t)rounds, sizeof(double), cmp_double);
            med[f] = t[f][rounds / 2];
            cmed[f] = c[f][rounds / 2];
        }
        for (int f = 0; f < FORMS; f++) {
            double bytes = product_bytes(f, &A, f == COMPACT ? &compact : &in_place);
            printf("%s,%d,%d,%d,%s,%d,%.0f,%.0f,%d,%.4f,%.4f,%.2f,%.3f,%.4f,%.3f\n", s->name, tw_mesh_tet_count(m), A.n,
                   A.nnzb, FORM_NAMES[f], threads, matrix_bytes(f, &A), bytes, rounds, 1e3 * med[f], 1e3 * t[f][0],
                   bytes / med[f] / 1e9, med[f] / med[FULL], 1e3 * cmed[f], cmed[f] / cmed[FULL]);
            free(t[f]);
            free(c[f]);
        }
        fflush(stdout);
    }
    /* the PCG (block-Jacobi, exactly 20 iterations, 2 threads) of two worlds,
     * full and half (def.spmv), stepped in turns: ms_solve per step */
    {
        tw_world *pw[2] = {NULL, NULL};
        double *ts[2] = {malloc(sizeof(double) * 64), malloc(sizeof(double) * 64)};
        int steps = 0;
        for (int k = 0; k < 2; k++) {
            tw_world_def pd = d;
            pd.cg_fixed_iterations = 20;
            pd.threads = 2;
            pd.spmv = k ? TW_SPMV_HALF : TW_SPMV_FULL;
            pw[k] = tw_world_create(m, &pd);
            if (!pw[k] || tw_world_pin_where(pw[k], 0, 1, 1e-6) <= 0 || tw_world_step(pw[k], NULL) != TW_OK) {
                fprintf(stderr, "tw_bench_spmv_half: %s: pcg world: %s\n", s->name, tw_last_error());
                return 1;
            }
        }
        double start = now_s();
        while (steps < 64 && (steps < 5 || now_s() - start < 3 * seconds)) {
            for (int k = 0; k < 2; k++) {
                tw_step_stats st;
                if (tw_world_step(pw[k], &st) != TW_OK) {
                    fprintf(stderr, "tw_bench_spmv_half: %s: step: %s\n", s->name, tw_last_error());
                    return 1;
                }
                ts[k][steps] = st.ms_solve;
            }
            steps++;
        }
        double med[2];
        for (int k = 0; k < 2; k++) {
            qsort(ts[k], (size_t)steps, sizeof(double), cmp_double);
            med[k] = ts[k][steps / 2];
        }
        int same = memcmp(tw_world_positions(pw[0]), tw_world_positions(pw[1]),
                          sizeof(tw_real) * 3 * (size_t)tw_world_vertex_count(pw[0])) == 0;
        for (int k = 0; k < 2; k++)
            printf("%s,%d,%d,%d,pcg20-%s,2,%.0f,,%d,%.4f,%.4f,,%.3f,,\n", s->name, tw_mesh_tet_count(m), A.n, A.nnzb,
                   k ? "half" : "full", matrix_bytes(k ? HALF : FULL, &A), steps, med[k], ts[k][0], med[k] / med[0]);
        printf("# %s: PCG steps (ms_solve per step, 20 iterations, block-Jacobi, 2 threads; the half's compact copy "
               "included): positions after %d steps %s\n", s->name, steps + 1, same ? "the same bits" : "differ");
        for (int k = 0; k < 2; k++) { tw_world_destroy(pw[k]); free(ts[k]); }
    }
    /* the compact form's cost per solve: copying the upper half out of the full matrix */
    double best = 1e300;
    for (int k = 0; k < 5; k++) {
        double t0 = now_s();
        tw_bsr_half_refresh(&compact, A.val, 2);
        best = fmin(best, now_s() - t0);
    }
    printf("# %s: compact refresh (2 threads, best of 5) %.3f ms\n", s->name, 1e3 * best);
    /* the model of one CG iteration (bench/README.md's, kernels/cuda_pcg.cu's passes) */
    double r = sizeof(tw_real), n = A.n, b = A.nnzb, u = (b - n) / 2, nb = fmin(ceil(n / 256), 1024);
    double rest = 2 * n + 51 * n * r + 48 * nb;
    double full = 9 * b * r + 4 * b + 4 * (n + 1) + rest;
    double half = 9 * (n + u) * r + 4 * (n + u) + 8 * u + 8 * n + rest;
    printf("# %s model (not a measurement), %s: bytes per CG iteration full %.1f MB, half %.1f MB (%.3f); floor at "
           "2.8 TB/s %.1f us vs %.1f us per iteration, %.3f ms vs %.3f ms per step of 20 iterations\n",
           s->name, sizeof(tw_real) == 4 ? "float" : "double", full / 1e6, half / 1e6, half / full, full / 2.8e12 * 1e6,
           half / 2.8e12 * 1e6, 20 * full / 2.8e12 * 1e3, 20 * half / 2.8e12 * 1e3);
    fflush(stdout);
    for (int f = 0; f < FORMS; f++) free(y[f]);
    free(x);
    tw_bsr_half_free(&in_place);
    tw_bsr_half_free(&compact);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

int main(int argc, char **argv)
{
    const char *sizes = "10k,100k,1m";
    double seconds = 2;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc) sizes = argv[++a];
        else if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc) seconds = atof(argv[++a]);
        else {
            fprintf(stderr, "usage: %s [--sizes 10k,100k,1m] [--seconds S per size and thread count]\n", argv[0]);
            return 2;
        }
    }
    printf("size,tets,vertices,blocks,form,threads,matrix_bytes,spmv_bytes_model,rounds,ms_median,ms_min,"
           "gbps_model_median,ratio_vs_full,cpu_ms_median,cpu_ratio_vs_full\n");
    int fails = 0;
    for (size_t k = 0; k < sizeof SIZES / sizeof SIZES[0]; k++) {
        char list[256];
        snprintf(list, sizeof list, ",%s,", sizes);
        char key[32];
        snprintf(key, sizeof key, ",%s,", SIZES[k].name);
        if (strstr(list, key)) fails += run_size(&SIZES[k], seconds);
    }
    return fails ? 1 : 0;
}
