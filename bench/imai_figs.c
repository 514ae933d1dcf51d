/* Imai et al. 2013 figs. 10-13 as numbers: the tetra tree scenes of the
 * viewer (demos/tree_scenes.c) stepped without drawing, one CSV row per
 * step. bench/imai_figs.sh runs it and renders the stills.
 *
 *   tree-bunny, tree-bunny-soft   the ear tip's (highest finest vertex) and
 *                                 the centroid's vertical displacement, m
 *   tree-armadillo                the mean displacement along x of the left
 *                                 (stiff) and the right (soft) hand's
 *                                 vertices, m, outward positive
 *   tree-liver, tree-liver-plain  the lowest vertex's and the centroid's
 *                                 vertical displacement, m
 *
 * usage: tw_bench_imai_figs SCENE STEPS DATA_DIR CSV; the scene's lines on
 * stdout, the summary line on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenes.h"
#include "tetwarp.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s SCENE STEPS DATA_DIR CSV\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    const int steps = atoi(argv[2]);
    demo_options o = demo_default_options();
    o.data_dir = argv[3];
    FILE *csv = fopen(argv[4], "w");
    if (!csv) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[4]);
        return 1;
    }
    demo_scene s;
    if (!demo_tree_scene(name) || steps < 1) {
        fprintf(stderr, "%s: '%s' is not a tetra tree scene, or STEPS %d < 1\n", argv[0], name, steps);
        return 2;
    }
    if (demo_scene_build(&s, name, &o, argv[0])) return 1;
    demo_body *b = &s.body[0];
    const int nv = tw_mesh_vertex_count(b->mesh), nt = tw_mesh_tet_count(b->mesh);
    const double *X = tw_mesh_positions(b->mesh);
    double *x = malloc(3 * sizeof *x * (size_t)nv);
    int *group = calloc((size_t)nv, sizeof *group); /* 1, 2: the two probe groups */
    if (!x || !group) return 1;
    const int arm = !strcmp(name, "tree-armadillo"), bunny = !strncmp(name, "tree-bunny", 10);
    int top = 0, low = 0, n1 = 0, n2 = 0;
    for (int i = 1; i < nv; i++) {
        if (X[3 * i + 1] > X[3 * top + 1]) top = i;
        if (X[3 * i + 1] < X[3 * low + 1]) low = i;
    }
    if (arm) /* the hands: the vertices the scene pulls */
        for (int i = 0; i < nv; i++) {
            if (b->tree_force[3 * i] < 0) group[i] = 1, n1++;
            if (b->tree_force[3 * i] > 0) group[i] = 2, n2++;
        }
    const char *c1 = arm ? "left_hand_dx_m" : bunny ? "ear_tip_dy_m" : "lowest_dy_m";
    const char *c2 = arm ? "right_hand_dx_m" : "centroid_dy_m";
    fprintf(csv, "step,time_s,active_tets,cg_iterations,step_ms,%s,%s\n", c1, c2);
    const double dt = b->front_def.dt;
    double ms_sum = 0, p1 = 0, p2 = 0;
    long active_sum = 0;
    int active = 0;
    for (int n = 1; n <= steps; n++) {
        int cg = 0;
        const double t0 = now_ms();
        if (demo_scene_step(&s, &cg) != TW_OK) {
            fprintf(stderr, "%s: %s: step %d: %s\n", argv[0], name, n, tw_last_error());
            return 1;
        }
        const double ms = now_ms() - t0;
        ms_sum += ms;
        active = tw_front_active_tets(b->front);
        active_sum += active;
        tw_front_positions(b->front, x);
        if (arm) {
            p1 = p2 = 0;
            for (int i = 0; i < nv; i++) {
                if (group[i] == 1) p1 -= (x[3 * i] - X[3 * i]) / n1;
                if (group[i] == 2) p2 += (x[3 * i] - X[3 * i]) / n2;
            }
        } else {
            double c = 0;
            for (int i = 0; i < nv; i++) c += (x[3 * i + 1] - X[3 * i + 1]) / nv;
            const int p = bunny ? top : low;
            p1 = x[3 * p + 1] - X[3 * p + 1];
            p2 = c;
        }
        fprintf(csv, "%d,%.4f,%d,%d,%.3f,%.6g,%.6g\n", n, n * dt, active, cg, ms, p1, p2);
    }
    fprintf(stderr, "%s: %d steps of %g s: finest %d tets, active mean %.0f, end %d; %s %.4g m, %s %.4g m", name,
            steps, dt, nt, (double)active_sum / steps, active, c1, p1, c2, p2);
    if (arm) fprintf(stderr, "; soft/stiff hand ratio %.3f", p2 / p1);
    fprintf(stderr, "; %.1f ms/step\n", ms_sum / steps);
    free(x);
    free(group);
    demo_scene_destroy(&s);
    return fclose(csv) == 0 ? 0 : 1;
}
