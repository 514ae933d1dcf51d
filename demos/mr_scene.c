/* Debunne, Desbrun, Cani and Barr 2001's multiresolution liver (figs. 1
 * and 8) as a viewer scene: three non-nested levels of the liver
 * (data/meshes/liver_mr{0,1,2}: SOFA's smooth liver decimated by OpenMesh
 * and meshed by TetGen, bench/debunne_levels.sh; 181, 705 and 2,207 nodes),
 * the space- and time-adaptive simulation of host/multires.h, and a rigid
 * sphere pressing into the top.
 *
 * The body's world is made on the finest level's mesh only to be drawn (as
 * the tetra tree scenes do): each frame every finest vertex is placed where
 * the active representation puts it (tw_multires_probe), and --colors levels
 * paints the level that places it. The tool is scripted (down 9 mm over
 * 0.4 s and back, then still) until the viewer's tool (key t, a sphere
 * collider the mouse moves) is put into the liver's world: from then on
 * that sphere is the simulation's tool. A second body, never stepped, draws
 * the scripted sphere. */
#include "scenes.h"
#include "tree_scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hierarchy.h"
#include "multires.h"

#define MR_LEVELS 3
#define MR_SCALE 0.01 /* the files are in SOFA's units, cm */
#define MR_TOOL_SPEED 0.1 /* m/s: the viewer's tool is followed at most this fast */

int demo_mr_scene(const char *name) { return !strcmp(name, "mr-liver"); }

static tw_mesh *load_scaled(const demo_options *o, const char *file, const char *prog)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/meshes/%s", o->data_dir, file);
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(path, &ld, NULL);
    if (!m) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, tw_last_error());
        return NULL;
    }
    const int nv = tw_mesh_vertex_count(m);
    double *X = malloc(3 * sizeof *X * (size_t)nv);
    tw_mesh *s = NULL;
    if (X) {
        for (int i = 0; i < 3 * nv; i++) X[i] = MR_SCALE * tw_mesh_positions(m)[i];
        s = tw_mesh_create(X, nv, tw_mesh_tets(m), tw_mesh_tet_count(m), NULL, &ld, NULL);
        if (!s) fprintf(stderr, "%s: %s: %s\n", prog, path, tw_last_error());
    }
    free(X);
    tw_mesh_destroy(m);
    return s;
}

/* A ball of radius r around c: an icosahedron subdivided twice (162
 * vertices on the sphere), each face fanned to the centre, the last vertex. */
static tw_mesh *ball_mesh(const double c[3], double r)
{
    enum { MAXV = 163, MAXF = 320 };
    double X[3 * MAXV];
    int F[3 * MAXF], T[4 * MAXF], nv = 12, nf = 20;
    const double p = (1 + sqrt(5.0)) / 2;
    const double ico[12][3] = {{-1, p, 0}, {1, p, 0}, {-1, -p, 0}, {1, -p, 0}, {0, -1, p},  {0, 1, p},
                               {0, -1, -p}, {0, 1, -p}, {p, 0, -1}, {p, 0, 1}, {-p, 0, -1}, {-p, 0, 1}};
    static const int face[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                    {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                    {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                    {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    for (int i = 0; i < 12; i++) {
        const double n = sqrt(1 + p * p);
        for (int k = 0; k < 3; k++) X[3 * i + k] = ico[i][k] / n;
    }
    memcpy(F, face, sizeof face);
    for (int pass = 0; pass < 2; pass++) { /* each face into 4, midpoints pushed onto the sphere */
        int G[3 * MAXF], ng = 0;
        int ekey[3 * MAXF][2], emid[3 * MAXF], ne = 0;
        for (int f = 0; f < nf; f++) {
            int m[3];
            for (int e = 0; e < 3; e++) {
                int a = F[3 * f + e], b = F[3 * f + (e + 1) % 3], j;
                if (a > b) { int t = a; a = b; b = t; }
                for (j = 0; j < ne; j++)
                    if (ekey[j][0] == a && ekey[j][1] == b) break;
                if (j == ne) {
                    double mid[3], r = 0;
                    for (int k = 0; k < 3; k++) {
                        mid[k] = X[3 * a + k] + X[3 * b + k];
                        r += mid[k] * mid[k];
                    }
                    for (int k = 0; k < 3; k++) X[3 * nv + k] = mid[k] / sqrt(r);
                    ekey[ne][0] = a;
                    ekey[ne][1] = b;
                    emid[ne++] = nv++;
                }
                m[e] = emid[j];
            }
            const int *v = F + 3 * f;
            const int q[4][3] = {{v[0], m[0], m[2]}, {m[0], v[1], m[1]}, {m[2], m[1], v[2]}, {m[0], m[1], m[2]}};
            for (int k = 0; k < 4; k++, ng++) memcpy(G + 3 * ng, q[k], sizeof q[k]);
        }
        memcpy(F, G, 3 * sizeof(int) * (size_t)ng);
        nf = ng;
    }
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) X[3 * i + k] = c[k] + r * X[3 * i + k];
    for (int k = 0; k < 3; k++) X[3 * nv + k] = c[k]; /* the centre */
    for (int f = 0; f < nf; f++) { /* (centre, a, c, b): positive with outward faces (a, b, c) */
        T[4 * f] = nv;
        T[4 * f + 1] = F[3 * f];
        T[4 * f + 2] = F[3 * f + 2];
        T[4 * f + 3] = F[3 * f + 1];
    }
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    return tw_mesh_create(X, nv + 1, T, nf, NULL, &ld, NULL);
}

/* Every finest vertex where the active representation puts it, into the
 * body's world; the tool's ball where the tool is. */
static void sync(demo_scene *s, demo_body *b)
{
    const int l = tw_multires_levels(b->mr) - 1;
    const int nv = tw_mesh_vertex_count(b->mesh);
    tw_real *x = malloc(3 * sizeof *x * (size_t)nv);
    if (!x) return;
    for (int i = 0; i < nv; i++) {
        double p[3];
        tw_multires_probe(b->mr, l, i, p);
        for (int k = 0; k < 3; k++) x[3 * i + k] = (tw_real)p[k];
    }
    tw_world_set_positions(b->world, x);
    free(x);
    double c[3];
    if (b->mr_tool_body >= 0 && tw_multires_tool_center(b->mr, c)) {
        demo_body *t = &s->body[b->mr_tool_body];
        const int tn = tw_mesh_vertex_count(t->mesh);
        const double *X = tw_mesh_positions(t->mesh);
        tw_real *y = malloc(3 * sizeof *y * (size_t)tn);
        if (!y) return;
        const double *c0 = X + 3 * (tn - 1); /* the ball's centre at rest: the tool's start */
        const double r = tw_world_collider_count(b->world) > 0 ? 0 : 1; /* the viewer draws its own */
        for (int i = 0; i < tn; i++)
            for (int k = 0; k < 3; k++) y[3 * i + k] = (tw_real)(c[k] + r * (X[3 * i + k] - c0[k]));
        tw_world_set_positions(t->world, y);
        free(y);
    }
}

tw_status demo_mr_step(demo_scene *s, demo_body *b, int *cg_iterations)
{
    *cg_iterations = 0;
    if (tw_world_collider_count(b->world) > 0) { /* the viewer's tool */
        tw_collider_def c;
        if (tw_world_get_collider(b->world, 0, &c) == TW_OK && c.kind == TW_COLLIDER_SPHERE) {
            /* it follows the collider at most MR_TOOL_SPEED: the nodes it
             * holds are pushed out gradually, a jump deep into the liver
             * would throw them (the explicit steps diverge) */
            tw_mr_tool t;
            memset(&t, 0, sizeof t);
            double cur[3], d2 = 0;
            if (!tw_multires_tool_center(b->mr, cur)) memcpy(cur, c.center, sizeof cur);
            for (int k = 0; k < 3; k++) d2 += (c.center[k] - cur[k]) * (c.center[k] - cur[k]);
            const double step = MR_TOOL_SPEED * tw_multires_frame_dt(b->mr);
            const double f = d2 > step * step ? step / sqrt(d2) : 1;
            for (int k = 0; k < 3; k++) t.center0[k] = cur[k] + f * (c.center[k] - cur[k]);
            t.radius = c.radius;
            tw_multires_set_tool(b->mr, &t);
        }
    }
    tw_mr_frame_stats st;
    tw_status rc = tw_multires_frame(b->mr, &st);
    if (rc != TW_OK) return rc;
    sync(s, b);
    return TW_OK;
}

void demo_mr_render_colors(const demo_body *b, float *col)
{
    static const float palette[4][3] = {
        {0.25f, 0.45f, 0.95f}, {0.3f, 0.8f, 0.35f}, {0.95f, 0.3f, 0.25f}, {0.95f, 0.85f, 0.2f}};
    const int l = tw_multires_levels(b->mr) - 1;
    const int n = demo_body_render_vertices(b);
    for (int i = 0; i < n; i++) { /* render vertex i is finest vertex i (the boundary is drawn) */
        int k = tw_multires_point_level(b->mr, l, i);
        if (k > 3) k = 3;
        for (int c = 0; c < 3; c++) col[3 * i + c] = palette[k][c];
    }
}

int demo_mr_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    static const char *const files[MR_LEVELS] = {"liver_mr0.node", "liver_mr1.node", "liver_mr2.node"};
    tw_mesh *m[MR_LEVELS] = {NULL};
    for (int l = 0; l < MR_LEVELS; l++)
        if (!(m[l] = load_scaled(o, files[l], prog))) {
            for (int k = 0; k < l; k++) tw_mesh_destroy(m[k]);
            return -1;
        }
    tw_hierarchy *h = tw_hier_nonnested((const tw_mesh *const *)m, MR_LEVELS);
    /* the values of bench/debunne_liver.sh: a soft liver, its base fixed, no gravity */
    tw_multires_def d = tw_default_multires_def();
    d.youngs = 5e3;
    d.poisson = 0.3;
    d.density = 1060;
    d.gravity[2] = 0;
    d.frame_dt = 0.01;
    d.gamma_min = 1e-4;
    d.gamma_max = 5e-4;
    d.work_budget = 6e5;
    tw_multires *mr = h ? tw_multires_create(h, &d) : NULL;
    tw_mesh *fine = m[MR_LEVELS - 1];
    for (int l = 0; l < MR_LEVELS - 1; l++) tw_mesh_destroy(m[l]);
    if (!mr) {
        fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
        tw_mesh_destroy(fine);
        return -1;
    }
    const int pinned = tw_multires_fix(mr, 2, 1, -0.012);
    tw_mr_tool tool;
    memset(&tool, 0, sizeof tool);
    tool.center0[0] = -0.0144;
    tool.center0[1] = 0.0269;
    tool.center0[2] = 0.0363;
    tool.radius = 0.008;
    tool.move[2] = -0.009;
    tool.move_time = 0.4;
    tw_multires_set_tool(mr, &tool);
    tw_world_def wd = tw_default_world_def();
    wd.dt = d.frame_dt;
    wd.youngs_modulus = d.youngs;
    wd.density = d.density;
    wd.gravity[2] = 0;
    tw_world *w = tw_world_create(fine, &wd);
    if (!w) {
        fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
        tw_multires_destroy(mr);
        tw_mesh_destroy(fine);
        return -1;
    }
    tw_world_pin_where(w, 2, 1, -0.012);
    static const float liver_color[3] = {0.7f, 0.3f, 0.28f}, tool_color[3] = {0.75f, 0.75f, 0.75f};
    if (demo_scene_add(s, name, fine, w, NULL, NULL, liver_color, prog)) {
        tw_multires_destroy(mr);
        demo_scene_destroy(s);
        return -1;
    }
    demo_body *b = &s->body[0];
    b->mr = mr;
    b->mr_tool_body = -1;
    tw_mesh *ball = ball_mesh(tool.center0, tool.radius);
    tw_world *bw = NULL;
    if (ball) {
        tw_world_def bd = tw_default_world_def();
        bd.dt = d.frame_dt;
        bw = tw_world_create(ball, &bd);
    }
    if (!ball || !bw || demo_scene_add(s, "tool", ball, bw, NULL, NULL, tool_color, prog)) {
        fprintf(stderr, "%s: %s: the tool's ball: %s\n", prog, name, tw_last_error());
        demo_scene_destroy(s);
        return -1;
    }
    s->body[1].display_only = 1;
    b = &s->body[0];
    b->mr_tool_body = 1;
    b->mr_tool_radius = tool.radius;
    s->up = 2;
    printf("%s: %d levels (", name, MR_LEVELS);
    for (int l = 0; l < MR_LEVELS; l++)
        printf("%d%s", tw_mesh_vertex_count(tw_multires_mesh(mr, l)), l + 1 < MR_LEVELS ? ", " : " nodes)");
    printf(", %d nodes pinned (z < -12 mm), E %g Pa; a %g mm sphere presses 9 mm and back over 0.8 s\n", pinned,
           d.youngs, 1e3 * tool.radius);
    sync(s, b);
    demo_scene_frame(s);
    s->distance *= 0.7;
    s->pitch = 0.8; /* from above: the sphere's dent shows */
    return 0;
}
