#include "tw_test_scenes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "scenes.h"
#include "tw_test.h"

const char *tw_test_mesh_path(const char *file)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/meshes/%s", TW_DATA_DIR, file);
    return buf[k];
}

/* The tree of a tw_mesh_bar of nx x 1 x 1 cells (the bar freed after). */
static tw_tetra_tree *bar_tree(double length, double width, double height, int nx, const tw_tetra_tree_def *d)
{
    tw_mesh *b = tw_mesh_bar(length, width, height, nx, 1, 1);
    if (!b)
        return NULL;
    tw_tetra_tree *t = tw_tetra_tree_build(b, d);
    tw_mesh_destroy(b);
    return t;
}

tw_tetra_tree *tw_test_box_tree(double t2, unsigned char **pin)
{
    *pin = NULL;
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    td.levels = 3;
    td.t2 = t2;
    tw_tetra_tree *t = bar_tree(0.3, 0.1, 0.1, 3, &td);
    if (!t)
        return NULL;
    const tw_mesh *m = t->h->level[2];
    *pin = tw_calloc((size_t)m->nv, 1, "box pins");
    if (!*pin) {
        tw_tetra_tree_free(t);
        return NULL;
    }
    for (int i = 0; i < m->nv; i++)
        (*pin)[i] = m->X[3 * i] < 1e-12;
    return t;
}

tw_tetra_tree *tw_test_cube_tree(double t1)
{
    tw_tetra_tree_def d = tw_default_tetra_tree_def();
    d.levels = 3;
    d.t1 = t1;
    return bar_tree(1, 1, 1, 1, &d);
}

tw_front *tw_test_box_front_create(tw_test_box_front *b, const tw_front_def *d)
{
    b->f = NULL;
    b->t = tw_test_box_tree(TW_TEST_BOX_T2, &b->pin);
    if (!b->t)
        return NULL;
    const tw_front_def def = d ? *d : tw_default_front_def();
    b->f = tw_front_create(b->t, b->pin, &def);
    return b->f;
}

void tw_test_box_front_free(tw_test_box_front *b)
{
    tw_front_destroy(b->f);
    tw_tetra_tree_free(b->t);
    free(b->pin);
    b->f = NULL;
    b->t = NULL;
    b->pin = NULL;
}

int tw_test_front_checkpoints(tw_front *f, int (*check)(tw_front *f, const char *what, void *ctx), void *ctx,
                              int *switches, int *hanging)
{
    *switches = *hanging = 0;
    if (!check(f, "start", ctx))
        return -1;
    int checked = 1;
    for (int k = 0; k < 100; k++) {
        tw_front_stats s;
        if (tw_front_step(f, &s) != TW_OK) {
            fprintf(stderr, "step %d: %s\n", k, tw_last_error());
            return -1;
        }
        *switches += s.rebuilt;
        *hanging = s.hanging_vertices > *hanging ? s.hanging_vertices : *hanging;
        if (!s.rebuilt && k % 10)
            continue;
        char what[64];
        snprintf(what, sizeof what, "step %d%s", k, s.rebuilt ? " (a switch)" : "");
        if (!check(f, what, ctx))
            return -1;
        checked++;
    }
    return checked;
}

/* Sets f's front (tw_front_set) to the tets of t with ids in [lo[k],
 * hi[k]) for k < n. */
static tw_status front_set_ranges(tw_front *f, const tw_tetra_tree *t, int n, const int *lo, const int *hi)
{
    unsigned char *act = tw_calloc((size_t)t->nt, 1, "front");
    if (!act)
        return TW_ERR_NOMEM;
    for (int k = 0; k < n; k++)
        for (int id = lo[k]; id < hi[k]; id++)
            act[id] = 1;
    tw_status s = tw_front_set(f, act);
    free(act);
    return s;
}

tw_status tw_test_front_set_level(tw_front *f, const tw_tetra_tree *t, int level)
{
    return front_set_ranges(f, t, 1, &t->level_start[level], &t->level_start[level + 1]);
}

tw_status tw_test_front_set_mixed(tw_front *f, const tw_tetra_tree *t)
{
    const int c0 = t->level_start[1], g0 = t->level_start[2]; /* the children of base tet 0, of level-1 tet 0 */
    const int lo[3] = {1, c0 + 1, g0}, hi[3] = {c0, c0 + 8, g0 + 8};
    return front_set_ranges(f, t, 3, lo, hi);
}

double tw_test_hanging_error(const tw_world *w, const tw_graded_mesh *g)
{
    const tw_real *x = tw_world_positions(w);
    double worst = 0;
    for (int k = 0; k < g->hanging_count; k++)
        for (int c = 0; c < 3; c++) {
            double p = 0;
            for (int j = g->hanging_ptr[k]; j < g->hanging_ptr[k + 1]; j++)
                p += g->hanging_weights[j] * x[3 * g->hanging_idx[j] + c];
            worst = tw_test_max(worst, fabs(x[3 * g->hanging_vertex[k] + c] - p));
        }
    return worst;
}

double tw_test_jitter(unsigned *state, double a)
{
    return a * (2.0 * tw_test_uniform(state) - 1);
}

tw_mesh *tw_test_jittered_cube(double edge, int n, double amount, double shift, unsigned seed)
{
    tw_mesh *bar = tw_mesh_bar(edge, edge, edge, n, n, n);
    if (!bar)
        return NULL;
    double *X = tw_malloc(sizeof *X * 3 * (size_t)bar->nv, "jittered cube");
    if (!X) {
        tw_mesh_destroy(bar);
        return NULL;
    }
    memcpy(X, bar->X, sizeof *X * 3 * (size_t)bar->nv);
    unsigned state = seed;
    for (int i = 0; i < bar->nv; i++) {
        int interior = 1;
        for (int d = 0; d < 3; d++)
            if (X[3 * i + d] <= 1e-12 || X[3 * i + d] >= edge - 1e-12)
                interior = 0;
        for (int d = 0; d < 3; d++) {
            const double j = tw_test_jitter(&state, amount * edge / n);
            if (interior)
                X[3 * i + d] += j;
        }
        X[3 * i] += shift;
    }
    tw_mesh_load_def def = tw_default_mesh_load_def();
    def.quiet = 1;
    def.strict = 1;
    tw_mesh *m = tw_mesh_create(X, bar->nv, bar->tets, bar->nt, NULL, &def, NULL);
    free(X);
    tw_mesh_destroy(bar);
    return m;
}

tw_hierarchy *tw_test_mr_cubes(const int n[3], const double amount[3])
{
    tw_mesh *m[3];
    for (int l = 0; l < 3; l++)
        m[l] = tw_test_jittered_cube(0.1, n[l], amount[l], 0, 777u);
    tw_hierarchy *h = m[0] && m[1] && m[2] ? tw_hier_nonnested((const tw_mesh *const *)m, 3) : NULL;
    for (int l = 0; l < 3; l++)
        tw_mesh_destroy(m[l]);
    return h;
}

tw_mr_tool tw_test_mr_tool(double radius, double x, double y, double depth, double dz, double move_time)
{
    tw_mr_tool tool;
    memset(&tool, 0, sizeof tool);
    tool.radius = radius;
    tool.center0[0] = x;
    tool.center0[1] = y;
    tool.center0[2] = 0.1 + radius - depth;
    tool.move[2] = dz;
    tool.move_time = move_time;
    return tool;
}

tw_surface *tw_test_icosphere(int levels)
{
    const double t = (1.0 + sqrt(5.0)) / 2;
    double v0[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                        {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    int f0[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                     {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                     {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    int nv = 12, nt = 20, cap_v = 12, cap_t = 20;
    for (int l = 0; l < levels; l++) {
        cap_v += 3 * cap_t;
        cap_t *= 4;
    }
    double *X = malloc(sizeof(double) * 3 * cap_v);
    int *T = malloc(sizeof(int) * 3 * cap_t);
    if (!X || !T)
        goto fail;
    memcpy(X, v0, sizeof v0);
    memcpy(T, f0, sizeof f0);
    for (int l = 0; l < levels; l++) {
        int *N = malloc(sizeof(int) * 12 * nt);
        if (!N)
            goto fail;
        for (int f = 0; f < nt; f++) {
            int m[3];
            for (int e = 0; e < 3; e++) { /* a new midpoint per triangle edge, merged by search */
                int a = T[3 * f + e], b = T[3 * f + (e + 1) % 3];
                double p[3];
                for (int k = 0; k < 3; k++) p[k] = 0.5 * (X[3 * a + k] + X[3 * b + k]);
                m[e] = -1;
                for (int q = 0; q < nv && m[e] < 0; q++)
                    if (fabs(X[3 * q] - p[0]) + fabs(X[3 * q + 1] - p[1]) + fabs(X[3 * q + 2] - p[2]) < 1e-12)
                        m[e] = q;
                if (m[e] < 0) {
                    memcpy(X + 3 * nv, p, sizeof p);
                    m[e] = nv++;
                }
            }
            int *o = N + 12 * f, *c = T + 3 * f;
            int tri[4][3] = {{c[0], m[0], m[2]}, {c[1], m[1], m[0]}, {c[2], m[2], m[1]}, {m[0], m[1], m[2]}};
            memcpy(o, tri, sizeof tri);
        }
        memcpy(T, N, sizeof(int) * 12 * nt);
        free(N);
        nt *= 4;
    }
    for (int v = 0; v < nv; v++) {
        double *p = X + 3 * v, r = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        for (int k = 0; k < 3; k++) p[k] /= r;
    }
    tw_surface *s = malloc(sizeof *s);
    if (!s)
        goto fail;
    s->vertex_count = nv;
    s->triangle_count = nt;
    s->positions = X;
    s->triangles = T;
    return s;
fail:
    fprintf(stderr, "tw_test_icosphere: out of memory\n");
    free(X);
    free(T);
    return NULL;
}

tw_graded_mesh *tw_test_graded_sphere(int levels)
{
    tw_surface *s = tw_test_icosphere(3);
    if (!s)
        return NULL;
    tw_graded_def d = tw_default_graded_def();
    d.fine_size = 0.1;
    d.levels = levels;
    tw_graded_mesh *g = tw_mesh_graded(s, &d);
    if (!g) fprintf(stderr, "tw_mesh_graded: %s\n", tw_last_error());
    tw_surface_destroy(s);
    return g;
}

const tw_test_graded_path tw_test_graded_paths[TW_TEST_GRADED_PATHS] = {
    {TW_COROT_ELEMENT, TW_IMPLICIT_EULER, 0, TW_PRECOND_JACOBI},
    {TW_COROT_ELEMENT, TW_IMPLICIT_EULER, 0, TW_PRECOND_MG},
    {TW_COROT_ELEMENT, TW_BDF2, 0, TW_PRECOND_JACOBI},
    {TW_GREEN, TW_IMPLICIT_EULER, 0, TW_PRECOND_JACOBI},
    {TW_WARP_VERTEX, TW_IMPLICIT_EULER, 1, TW_PRECOND_JACOBI},
};

tw_world_def tw_test_graded_drop_def(const tw_test_graded_path *p)
{
    tw_world_def d = tw_default_world_def();
    d.method = p->method;
    d.integrator = p->integrator;
    d.warp_system = p->bicgstab ? TW_WARP_SYSTEM_BICGSTAB : TW_WARP_SYSTEM_SYMMETRIC;
    d.precond = p->precond;
    d.newton_iterations = p->method == TW_GREEN ? 2 : 0;
    d.youngs_modulus = 1e6;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    return d;
}

tw_graded_mesh *tw_test_graded_bunny(double fine_size, int levels)
{
    tw_surface *s = tw_surface_load(tw_test_mesh_path("bunny_closed_3485v.off"));
    if (!s)
        return NULL;
    tw_graded_def d = tw_default_graded_def();
    d.fine_size = fine_size;
    d.levels = levels;
    tw_graded_mesh *g = tw_mesh_graded(s, &d);
    tw_surface_destroy(s);
    return g;
}

tw_mesh *tw_test_bunny_lattice(tw_mesh **bunny)
{
    *bunny = tw_mesh_load(tw_test_mesh_path("bunny_closed_3485v.tet.node"), NULL, NULL);
    demo_options o = demo_default_options();
    tw_mesh *lattice = *bunny ? demo_lattice_mesh(&o, "bunny_closed_3485v.off", 1, 0.008, 1, "tw_test") : NULL;
    if (!lattice) {
        tw_mesh_destroy(*bunny);
        *bunny = NULL;
    }
    return lattice;
}

tw_world_def tw_test_bar_def(tw_method method, tw_backend backend)
{
    tw_world_def d = demo_bar_def(method);
    d.backend = backend;
    d.dt = 0.01;
    d.damping_stiffness = 0.02;
    return d;
}

tw_world *tw_test_slope_world(const tw_mesh *m, const tw_world_def *d, double theta, double off, double mu,
                              const tw_real *at)
{
    tw_world *w = tw_world_create(m, d);
    if (!w) return NULL;
    int n = tw_world_vertex_count(w);
    const double *X = tw_mesh_positions(m);
    double c = cos(theta), s = sin(theta);
    tw_real *x = malloc(sizeof(tw_real) * 3 * (size_t)n);
    for (int i = 0; x && i < n; i++) {
        x[3 * i] = (tw_real)(off + X[3 * i] * c - X[3 * i + 2] * s);
        x[3 * i + 1] = (tw_real)X[3 * i + 1];
        x[3 * i + 2] = (tw_real)(X[3 * i] * s + X[3 * i + 2] * c);
    }
    tw_collider_def pl = tw_default_collider_def();
    pl.point[0] = off;
    pl.normal[0] = -s;
    pl.normal[2] = c;
    pl.friction = mu;
    tw_status st = x ? tw_world_set_positions(w, at ? at : x) : tw_fail(TW_ERR_NOMEM, "slope world: no host memory");
    if (st == TW_OK) st = tw_world_add_collider(w, &pl);
    free(x);
    if (st != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

static int bits_apart(const tw_real *a, const tw_real *b, int n)
{
    int count = 0;
    for (int i = 0; i < 3 * n; i++) count += memcmp(a + i, b + i, sizeof(tw_real)) != 0;
    return count;
}

int tw_test_steps_apart(tw_world *w, tw_world *f, int steps, int *contacts)
{
    int n = tw_world_vertex_count(w), apart = 0;
    *contacts = 0;
    for (int k = 0; k < steps; k++) {
        tw_step_stats sw, sf;
        if (tw_world_step(w, &sw) != TW_OK || tw_world_step(f, &sf) != TW_OK) {
            fprintf(stderr, "step %d: %s\n", k + 1, tw_last_error());
            return -1;
        }
        int d = bits_apart(tw_world_positions(w), tw_world_positions(f), n) +
                bits_apart(tw_world_velocities(w), tw_world_velocities(f), n);
        if (d && !apart)
            printf("step %d after the replacement: %d coordinates apart; contacts %d / %d, contact solves %d / %d, "
                   "CG iterations %d / %d (replaced / new)\n",
                   k + 1, d, sw.contacts, sf.contacts, sw.contact_passes, sf.contact_passes, sw.cg_iterations,
                   sf.cg_iterations);
        apart += d + (sw.contacts != sf.contacts) + (sw.contact_passes != sf.contact_passes) +
                 (sw.cg_iterations != sf.cg_iterations);
        *contacts += sf.contacts;
    }
    return apart;
}
