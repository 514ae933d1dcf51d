/* Block-Jacobi against the multigrid preconditioner (def.precond) on the
 * same scenes: CG iterations per step to the tolerance and ms per step, with
 * one thread and all threads. One CSV row per scene x preconditioner x
 * threads on stdout: means over the steps after the first (which builds the
 * multigrid hierarchy; its time is ms_first_step), cpu_ms_step the process's
 * CPU time (all threads), ms_mg_update the multigrid's per-step update:
 *
 *   tw_bench_multigrid [--steps N] [--threads-list 1,0] [--fixed N] [--only jacobi|mg] SCENE...
 *
 * --only runs one preconditioner (for a profiler); without it both run
 * back to back per scene and thread count, so their ratio is taken under
 * the same machine load.
 * --fixed N: the real-time mode, exactly N CG iterations a step (no
 * tolerance test); residual_mean and residual_max are then the relative
 * residual |r| / |b| those iterations leave, the step's distance from its
 * solution. The scene column is quoted: a bar's name has commas.
 *
 * SCENE: bar:NX,NY,NZ (the bar of bench/bench_cpu.c: 1 x NY/NX x NZ/NX m,
 * cubic cells of 6 tets, the end x = 0 pinned), or a mesh path (nothing pinned: a free fall). dt 0.01, E
 * 1e6, tolerance 1e-4 (the world def's defaults). Reads host/world.h and
 * host/amg.h for the multigrid's levels and per-step rebuild time. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amg.h"
#include "bench_mg.h"
#include "tetwarp.h"
#include "world.h"

/* process CPU time, ms: on a shared machine the one-thread runs' CPU time
 * is closer to an idle machine's wall time than their wall time is */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int run(const char *scene, tw_mesh *mesh, int is_bar, tw_preconditioner pc, int threads, int steps, int fixed)
{
    tw_world_def def = tw_default_world_def();
    def.precond = pc;
    def.threads = threads;
    def.cg_fixed_iterations = fixed;
    tw_world *w = tw_world_create(mesh, &def);
    if (!w) { fprintf(stderr, "%s: %s\n", scene, tw_last_error()); return 1; }
    if (is_bar) tw_world_pin_where(w, 0, 1, 1e-6);
    double it_sum = 0, ms_sum = 0, cpu_sum = 0, solve_sum = 0, amg_sum = 0, first_ms = 0, res_max = 0, res_sum = 0;
    int it_max = 0;
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        double c0 = cpu_ms();
        if (tw_world_step(w, &st) != TW_OK) { fprintf(stderr, "%s: %s\n", scene, tw_last_error()); tw_world_destroy(w); return 1; }
        if (s == 0) { first_ms = st.ms_total; continue; } /* the hierarchy's build is in step 0 */
        it_sum += st.cg_iterations;
        if (st.cg_iterations > it_max) it_max = st.cg_iterations;
        if (st.residual > res_max) res_max = st.residual;
        res_sum += st.residual;
        ms_sum += st.ms_total;
        cpu_sum += cpu_ms() - c0;
        solve_sum += st.ms_solve;
        if (w->amg) amg_sum += tw_amg_update_ms(w->amg);
    }
    int n = steps - 1;
    char levels[256] = "";
    if (w->amg)
        for (int l = 0; l < tw_amg_levels(w->amg); l++)
            snprintf(levels + strlen(levels), sizeof levels - strlen(levels), "%s%d", l ? "/" : "",
                     tw_amg_level_size(w->amg, l));
    printf("\"%s\",%d,%d,%s,%d,%.1f,%d,%.2e,%.1f,%.1f,%.1f,%.1f,%.1f,%s,%d,%.2e\n", scene, tw_world_vertex_count(w),
           tw_world_tet_count(w), pc == TW_PRECOND_MG ? "mg" : "jacobi", threads, it_sum / n, it_max, res_max,
           ms_sum / n, cpu_sum / n, solve_sum / n, amg_sum / n, first_ms, levels, fixed, res_sum / n);
    fflush(stdout);
    tw_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    int steps = 11, tl[8] = {1, 0}, ntl = 2, fixed = 0, only = -1;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--steps") && a + 1 < argc) steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--fixed") && a + 1 < argc) fixed = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = strcmp(argv[++a], "mg") ? TW_PRECOND_JACOBI : TW_PRECOND_MG;
        else if (!strcmp(argv[a], "--threads-list") && a + 1 < argc) {
            ntl = 0;
            for (char *p = argv[++a]; *p && ntl < 8;) {
                tl[ntl++] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
            }
        } else { fprintf(stderr, "usage: %s [--steps N] [--threads-list 1,0] [--fixed N] [--only jacobi|mg] SCENE...\n", argv[0]);
            return 2;
        }
    }
    if (steps < 2) steps = 2;
    printf("scene,vertices,tets,precond,threads,cg_mean,cg_max,residual_max,ms_step,cpu_ms_step,ms_solve,ms_mg_update,"
           "ms_first_step,mg_levels,cg_fixed,residual_mean\n");
    for (; a < argc; a++) {
        int is_bar;
        tw_mesh *m = bench_mg_scene(argv[a], &is_bar);
        if (!m) { fprintf(stderr, "%s: %s\n", argv[a], tw_last_error()); return 1; }
        for (int t = 0; t < ntl; t++)
            for (int pc = 0; pc < 2; pc++)
                if ((only < 0 || pc == only) && run(argv[a], m, is_bar, (tw_preconditioner)pc, tl[t], steps, fixed)) return 1;
        tw_mesh_destroy(m);
    }
    return 0;
}
