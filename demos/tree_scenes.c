/* The adaptive tetra tree's scenes (Imai, Kanai, Yamaguchi and Hasegawa
 * 2013, "Adaptive inhomogeneous simulation of elastic bodies on a tetra
 * tree", sec. 6 and figs. 6-13).
 *
 * A tree body is a base mesh refined 1:8 into levels (tw_tetra_tree), the
 * finest level carrying Young's modulus per tet, and a front through the
 * tree (tw_front) that steps it. The body's world is made on a copy of the
 * finest level's mesh only so that the viewer's drawing, picking and
 * colouring code, which reads worlds, works unchanged: it is never
 * stepped; after every front step the front's positions (every finest
 * vertex, interpolated where the front is coarser) are written into it.
 *
 * The materials follow the paper's figures; where the paper gives no
 * number, the values are chosen so that the effect is visible (and said
 * in each builder's comment). */
#include "scenes.h"
#include "tree_scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "error.h"
#include "render_surface.h"
#include "tetra_front.h"

typedef struct tree_body_def {
    const char *name;
    int levels;
    double t2;                 /* the front's eq. 5 threshold */
    double poisson, density;   /* -, kg/m^3 */
    /* Young's modulus at a finest tet's centroid c, the finest level's
     * bounding box lo..hi, Pa */
    double (*youngs_at)(const double c[3], const double lo[3], const double hi[3]);
    /* 1 where finest vertex X is held fixed */
    int (*pinned_at)(const double X[3], const double lo[3], const double hi[3]);
    double region_youngs;      /* > 0: tets at least this stiff are region 2, the others region 1 */
    double gravity[3], dt, damping_mass, damping_stiffness;
    const char *render_file;   /* in data/meshes, embedded in the finest level; NULL: its boundary */
    float color[3];
    int up;
} tree_body_def;

static int fail_tree(const char *prog, const char *name)
{
    fprintf(stderr, "%s: %s: %s\n", prog, name, tw_last_error());
    return -1;
}

/* One tree body from `base` (owned from here on) into s. */
static int add_tree_body(demo_scene *s, const tree_body_def *d, tw_mesh *base, const demo_options *o,
                         const char *prog)
{
    tw_tetra_tree *t = tw_tetra_tree_create(base, d->levels);
    tw_mesh_destroy(base);
    if (!t) return fail_tree(prog, d->name);
    const tw_mesh *fm = tw_tetra_tree_mesh(t, d->levels - 1);
    const int nv = tw_mesh_vertex_count(fm), nt = tw_mesh_tet_count(fm);
    const double *X = tw_mesh_positions(fm);
    const int *T = tw_mesh_tets(fm);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], X[3 * i + k]);
            hi[k] = fmax(hi[k], X[3 * i + k]);
        }
    double *E = malloc(sizeof *E * (size_t)nt);
    int *region = d->region_youngs > 0 ? malloc(sizeof *region * (size_t)nt) : NULL;
    unsigned char *pinned = calloc((size_t)nv, 1);
    double *x = malloc(sizeof *x * 3 * (size_t)nv);
    if (!E || !pinned || !x || (d->region_youngs > 0 && !region)) {
        free(E);
        free(region);
        free(pinned);
        free(x);
        tw_tetra_tree_destroy(t);
        fprintf(stderr, "%s: %s: out of memory\n", prog, d->name);
        return -1;
    }
    double Emin = INFINITY, Emax = 0;
    int marked = 0, npinned = 0;
    for (int e = 0; e < nt; e++) {
        double c[3] = {0, 0, 0};
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++) c[k] += 0.25 * X[3 * T[4 * e + q] + k];
        E[e] = d->youngs_at(c, lo, hi);
        Emin = fmin(Emin, E[e]);
        Emax = fmax(Emax, E[e]);
        if (region) {
            region[e] = E[e] >= d->region_youngs ? 2 : 1;
            marked += region[e] == 2;
        }
    }
    for (int i = 0; i < nv; i++) {
        pinned[i] = (unsigned char)(d->pinned_at(X + 3 * i, lo, hi) != 0);
        npinned += pinned[i];
    }
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    td.levels = d->levels;
    td.t2 = d->t2;
    td.poisson_ratio = d->poisson;
    td.density = d->density;
    td.youngs_modulus = Emax;
    td.element_youngs = E;
    tw_front_def fd = tw_default_front_def();
    fd.dt = o->dt > 0 ? o->dt : d->dt;
    for (int k = 0; k < 3; k++) fd.gravity[k] = d->gravity[k];
    fd.damping_mass = d->damping_mass;
    fd.damping_stiffness = d->damping_stiffness;
    tw_front *f = NULL;
    tw_mesh *copy = NULL;
    tw_world *w = NULL;
    if (tw_tetra_tree_estimate(t, &td) != TW_OK || !(f = tw_front_create(t, pinned, &fd)) ||
        !(copy = tw_mesh_create(X, nv, T, nt, region, NULL, NULL))) {
        fail_tree(prog, d->name);
        goto fail;
    }
    tw_world_def wd = tw_default_world_def();
    wd.method = TW_COROT_ELEMENT;
    wd.dt = fd.dt;
    wd.youngs_modulus = Emax;
    wd.poisson_ratio = d->poisson;
    wd.density = d->density;
    for (int k = 0; k < 3; k++) wd.gravity[k] = d->gravity[k];
    if (!(w = tw_world_create(copy, &wd))) {
        fail_tree(prog, d->name);
        goto fail;
    }
    for (int i = 0; i < nv; i++)
        if (pinned[i]) tw_world_set_constraint(w, i, TW_PINNED);
    char path[4096];
    if (d->render_file) snprintf(path, sizeof path, "%s/meshes/%s", o->data_dir, d->render_file);
    printf("%s: tetra tree of %d levels, %d to %d tets (finest %d vertices, %d fixed), E %.3g to %.3g Pa%s",
           d->name, d->levels, tw_mesh_tet_count(tw_tetra_tree_mesh(t, 0)), nt, nv, npinned, Emin, Emax,
           region ? "" : "\n");
    if (region) printf(", %d tets of region 2 (E >= %.3g Pa)\n", marked, d->region_youngs);
    free(region);
    region = NULL;
    if (demo_scene_add(s, d->name, copy, w, NULL, d->render_file ? path : NULL, d->color, prog)) {
        copy = NULL; /* destroyed by demo_scene_add */
        w = NULL;
        goto fail;
    }
    demo_body *b = &s->body[s->body_count - 1];
    b->tree = t;
    b->front = f;
    b->front_def = fd;
    b->tree_pinned = pinned;
    b->tree_youngs = E;
    b->tree_x = x;
    s->up = d->up;
    demo_scene_frame(s);
    return 0;
fail:
    tw_world_destroy(w);
    tw_mesh_destroy(copy);
    tw_front_destroy(f);
    tw_tetra_tree_destroy(t);
    free(E);
    free(region);
    free(pinned);
    free(x);
    return -1;
}

void demo_tree_sync(demo_body *b)
{
    const int nv = tw_mesh_vertex_count(b->mesh);
    tw_front_positions(b->front, b->tree_x);
    /* the world's positions as tw_real, in place over the doubles' front half */
    tw_real *xr = (tw_real *)b->tree_x;
    for (int i = 0; i < 3 * nv; i++) xr[i] = (tw_real)b->tree_x[i];
    tw_world_set_positions(b->world, xr);
}

tw_status demo_tree_reset(demo_body *b)
{
    tw_front *f = tw_front_create(b->tree, b->tree_pinned, &b->front_def);
    if (!f) return TW_ERR_INVALID;
    if (b->tree_force && tw_front_set_forces(f, b->tree_force) != TW_OK) {
        tw_front_destroy(f);
        return TW_ERR_INVALID;
    }
    tw_front_destroy(b->front);
    b->front = f;
    demo_tree_sync(b);
    return TW_OK;
}

void demo_tree_vertex_levels(const demo_body *b, int *levels)
{
    const int L = tw_tetra_tree_levels(b->tree);
    int start[9] = {0};
    for (int l = 0; l < L; l++) start[l + 1] = start[l] + tw_mesh_tet_count(tw_tetra_tree_mesh(b->tree, l));
    const tw_mesh *fm = tw_tetra_tree_mesh(b->tree, L - 1);
    const int nv = tw_mesh_vertex_count(fm), nt = tw_mesh_tet_count(fm);
    const int *T = tw_mesh_tets(fm);
    for (int i = 0; i < nv; i++) levels[i] = 0;
    for (int e = 0; e < nt; e++) {
        int level = L - 1; /* the finest when no coarser ancestor is active */
        for (int l = 0; l < L; l++) /* tet e's ancestor on level l is e / 8^(L-1-l) */
            if (tw_front_is_active(b->front, start[l] + (e >> (3 * (L - 1 - l))))) {
                level = l;
                break;
            }
        for (int q = 0; q < 4; q++)
            if (level > levels[T[4 * e + q]]) levels[T[4 * e + q]] = level;
    }
}

void demo_tree_render_colors(const demo_body *b, float *col)
{
    static const float palette[5][3] = {
        {0.25f, 0.45f, 0.95f}, {0.3f, 0.8f, 0.35f}, {0.95f, 0.3f, 0.25f}, {0.95f, 0.85f, 0.2f}, {0.7f, 0.35f, 0.85f}};
    const tw_mesh *fm = b->mesh;
    const int nv = tw_mesh_vertex_count(fm), nt = tw_mesh_tet_count(fm);
    const int n = demo_body_render_vertices(b);
    const int *idx = b->embedding ? tw_embedding_indices(b->embedding) : NULL;
    double *value = calloc((size_t)nv, sizeof *value);
    int *level = malloc(sizeof *level * (size_t)nv), *count = calloc((size_t)nv, sizeof *count);
    if (!value || !level || !count) {
        free(value);
        free(level);
        free(count);
        return;
    }
    double lo = 0, hi = 1;
    if (b->color_mode == DEMO_COLOR_LEVELS) {
        demo_tree_vertex_levels(b, level);
        for (int i = 0; i < nv; i++) value[i] = level[i];
    } else { /* the largest log E of each vertex's tets, scaled to the body's range */
        const int *T = tw_mesh_tets(fm);
        lo = INFINITY;
        hi = -INFINITY;
        for (int e = 0; e < nt; e++) {
            const double le = log(b->tree_youngs[e]);
            lo = fmin(lo, le);
            hi = fmax(hi, le);
            for (int q = 0; q < 4; q++) {
                const int u = T[4 * e + q];
                value[u] = count[u]++ ? fmax(value[u], le) : le;
            }
        }
        for (int i = 0; i < nv; i++)
            if (!count[i]) value[i] = lo;
    }
    for (int i = 0; i < n; i++) {
        double v = 0;
        if (idx) {
            for (int k = 0; k < 4; k++) {
                const double vk = value[idx[4 * i + k]];
                v = k ? fmax(v, vk) : vk;
            }
        } else {
            v = value[i];
        }
        float c[3];
        if (b->color_mode == DEMO_COLOR_LEVELS) {
            const int l = (int)v < 4 ? (int)v : 4;
            memcpy(c, palette[l], sizeof c);
        } else { /* red stiff, yellow soft */
            const double s = hi > lo ? (v - lo) / (hi - lo) : 1;
            c[0] = 0.95f;
            c[1] = (float)(0.9 - 0.7 * s);
            c[2] = (float)(0.25 - 0.1 * s);
        }
        for (int k = 0; k < 3; k++) col[3 * i + k] = c[k];
    }
    free(value);
    free(level);
    free(count);
}

/* ---------------------------------------------------------------- scenes */

/* tree-box: Imai's box (sec. 6, figs. 6-8; bench/imai_box.sh), 0.3 x 0.1 x
 * 0.1 m, 3 x 1 x 1 cells (18 tets), 3 levels (1152 finest tets), fixed on
 * the wall x = 0 under gravity; E 1 MPa. */
static double box_youngs(const double c[3], const double lo[3], const double hi[3]) { return 1e6; }
static int box_pinned(const double X[3], const double lo[3], const double hi[3]) { return X[0] <= lo[0] + 1e-9; }

/* tree-bunny: fig. 10. A lattice of 2 cm cubes covering the closed bunny
 * (y up), 2 levels; E log-linear in height from 1 MPa at the feet to 3 kPa
 * at the ears (the paper gives no numbers; the ears' E is what lets them
 * hang); the lattice's lowest layer of vertices fixed (the ground it stands
 * on). tree-bunny-soft: the ears' 3 kPa everywhere, the comparison. */
#define BUNNY_FEET_YOUNGS 1e6
#define BUNNY_EARS_YOUNGS 3e3
static double bunny_youngs(const double c[3], const double lo[3], const double hi[3])
{
    const double s = (c[1] - lo[1]) / (hi[1] - lo[1]);
    return BUNNY_FEET_YOUNGS * pow(BUNNY_EARS_YOUNGS / BUNNY_FEET_YOUNGS, s);
}
static double bunny_soft_youngs(const double c[3], const double lo[3], const double hi[3]) { return BUNNY_EARS_YOUNGS; }
static int bunny_pinned(const double X[3], const double lo[3], const double hi[3]) { return X[1] <= lo[1] + 1e-4; }

/* tree-armadillo: figs. 11-12 on armadillo_4k (3717 tets, 2.5 m wide, y
 * up), 2 levels; E log-linear from 200 kPa at the left (-x) to 20 kPa at
 * the right (+x); the feet (vertices within 15 cm of the lowest) fixed; no
 * gravity; 500 N pulling each hand outward along x. */
#define ARMADILLO_HAND_FORCE 500.0
static double armadillo_youngs(const double c[3], const double lo[3], const double hi[3])
{
    const double s = (c[0] - lo[0]) / (hi[0] - lo[0]);
    return 2e5 * pow(0.1, s);
}
static int armadillo_pinned(const double X[3], const double lo[3], const double hi[3])
{
    return X[1] <= lo[1] + 0.15;
}

/* tree-liver: fig. 13 on SOFA's liver (596 tets, 6.5 m across in its file's
 * units, taken as metres; y up), 2 levels; tissue E 500 kPa; a synthetic
 * vessel tree, not a segmented one: capsules of radius 0.35 m along the
 * segments below (in the bounding box's unit coordinates), a trunk from the
 * hilum and its branches, whose tets have E 5 MPa (region 2); the top 8 % of
 * the height fixed; gravity -y. tree-liver-plain: without the vessels. */
static const double vessel[][6] = {
    {0.60, 0.30, 0.55, 0.45, 0.45, 0.50}, /* trunk */
    {0.45, 0.45, 0.50, 0.20, 0.55, 0.45}, {0.45, 0.45, 0.50, 0.35, 0.75, 0.55},
    {0.60, 0.30, 0.55, 0.80, 0.45, 0.50}, {0.80, 0.45, 0.50, 0.90, 0.65, 0.45},
    {0.20, 0.55, 0.45, 0.08, 0.50, 0.40}, {0.35, 0.75, 0.55, 0.30, 0.90, 0.50},
};
#define VESSEL_RADIUS 0.25
#define LIVER_YOUNGS 5e5
#define VESSEL_YOUNGS 5e6
static double liver_plain_youngs(const double c[3], const double lo[3], const double hi[3]) { return LIVER_YOUNGS; }
static double liver_youngs(const double c[3], const double lo[3], const double hi[3])
{
    for (size_t k = 0; k < sizeof vessel / sizeof vessel[0]; k++) {
        double a[3], ab[3], t = 0, ab2 = 0;
        for (int j = 0; j < 3; j++) {
            a[j] = lo[j] + vessel[k][j] * (hi[j] - lo[j]);
            ab[j] = (vessel[k][3 + j] - vessel[k][j]) * (hi[j] - lo[j]);
            t += (c[j] - a[j]) * ab[j];
            ab2 += ab[j] * ab[j];
        }
        t = fmin(fmax(t / ab2, 0), 1);
        double d2 = 0;
        for (int j = 0; j < 3; j++) d2 += (c[j] - a[j] - t * ab[j]) * (c[j] - a[j] - t * ab[j]);
        if (d2 <= VESSEL_RADIUS * VESSEL_RADIUS) return VESSEL_YOUNGS;
    }
    return LIVER_YOUNGS;
}
static int liver_pinned(const double X[3], const double lo[3], const double hi[3])
{
    return X[1] >= hi[1] - 0.08 * (hi[1] - lo[1]);
}

typedef struct face_key {
    int v[3];   /* sorted */
    int f[3];   /* as the tet orients it (outward) */
} face_key;

static int cmp_face(const void *a, const void *b)
{
    const face_key *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->v[k] != y->v[k]) return x->v[k] < y->v[k] ? -1 : 1;
    return 0;
}

/* The liver's cut-away (fig. 13's vessels inside): the drawn surface is the
 * boundary of the tets behind the plane z = mid-depth together with every
 * vessel tet (region 2), so the vessels in front of the cut stand out of it.
 * Only what is drawn changes; the whole body is simulated. */
static int liver_cutaway(demo_body *b, const char *prog)
{
    const tw_mesh *m = b->mesh;
    const int nt = tw_mesh_tet_count(m), nv = tw_mesh_vertex_count(m);
    const int *T = tw_mesh_tets(m), *reg = tw_mesh_regions(m);
    const double *X = tw_mesh_positions(m);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < nv; i++) {
        lo = fmin(lo, X[3 * i + 2]);
        hi = fmax(hi, X[3 * i + 2]);
    }
    face_key *fk = malloc(sizeof *fk * 4 * (size_t)nt);
    if (!fk) return -1;
    static const int face_of[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    int n = 0;
    for (int e = 0; e < nt; e++) {
        double cz = 0;
        for (int q = 0; q < 4; q++) cz += 0.25 * X[3 * T[4 * e + q] + 2];
        if (!(cz < 0.5 * (lo + hi) || (reg && reg[e] == 2))) continue;
        for (int s = 0; s < 4; s++) {
            face_key *k = &fk[n++];
            for (int j = 0; j < 3; j++) k->f[j] = k->v[j] = T[4 * e + face_of[s][j]];
            for (int i = 0; i < 2; i++) /* sort v */
                for (int j = 0; j < 2 - i; j++)
                    if (k->v[j] > k->v[j + 1]) {
                        int t = k->v[j];
                        k->v[j] = k->v[j + 1];
                        k->v[j + 1] = t;
                    }
        }
    }
    qsort(fk, (size_t)n, sizeof *fk, cmp_face);
    int *faces = malloc(sizeof *faces * 3 * (size_t)(n ? n : 1)), count = 0;
    if (!faces) {
        free(fk);
        return -1;
    }
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && !cmp_face(&fk[i], &fk[j])) j++;
        if (j == i + 1) memcpy(faces + 3 * count++, fk[i].f, sizeof fk[i].f);
        i = j;
    }
    free(fk);
    /* orientation: the tets' own orientation decides; the mesh is positive */
    tw_render_surface *r = tw_render_surface_create(nv, faces, count, NULL);
    if (!r) {
        free(faces);
        return fail_tree(prog, b->name);
    }
    tw_render_surface_destroy(b->render);
    free(b->faces);
    b->render = r;
    b->faces = faces;
    b->face_count = count;
    printf("%s: drawn cut away at z = %.3f m (the vessels in front of the cut stand out): %d triangles\n",
           b->name, 0.5 * (lo + hi), count);
    return 0;
}

static const char *const tree_names[] = {"tree-box",       "tree-bunny", "tree-bunny-soft",
                                         "tree-armadillo", "tree-liver", "tree-liver-plain"};

int demo_tree_scene(const char *name)
{
    for (size_t i = 0; i < sizeof tree_names / sizeof tree_names[0]; i++)
        if (!strcmp(name, tree_names[i])) return 1;
    return 0;
}

static tw_mesh *load_data_mesh(const demo_options *o, const char *file, const char *prog)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/meshes/%s", o->data_dir, file);
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(path, &ld, NULL);
    if (!m) fprintf(stderr, "%s: %s: %s\n", prog, path, tw_last_error());
    return m;
}

/* Forces on the armadillo's hands: ARMADILLO_HAND_FORCE N outward along x,
 * spread evenly over the finest vertices near each extreme. */
static int armadillo_hands(demo_body *b, const char *prog)
{
    const int nv = tw_mesh_vertex_count(b->mesh);
    const double *X = tw_mesh_positions(b->mesh);
    b->tree_force = calloc(3 * (size_t)nv, sizeof *b->tree_force);
    if (!b->tree_force) return -1;
    for (int side = 0; side < 2; side++) {
        int ext = 0;
        for (int i = 1; i < nv; i++)
            if (side ? X[3 * i] > X[3 * ext] : X[3 * i] < X[3 * ext]) ext = i;
        int n = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < nv; i++) {
                double d2 = 0;
                for (int k = 0; k < 3; k++) d2 += (X[3 * i + k] - X[3 * ext + k]) * (X[3 * i + k] - X[3 * ext + k]);
                if (d2 > DEMO_ARMADILLO_HAND_RADIUS * DEMO_ARMADILLO_HAND_RADIUS) continue;
                if (pass == 0) n++;
                else b->tree_force[3 * i] = (side ? 1 : -1) * ARMADILLO_HAND_FORCE / n;
            }
        printf("%s: %s hand: %d vertices near x = %.3f m, %g N along %sx\n", b->name, side ? "right (+x)" : "left (-x)",
               n, X[3 * ext], ARMADILLO_HAND_FORCE, side ? "+" : "-");
    }
    if (tw_front_set_forces(b->front, b->tree_force) != TW_OK) return fail_tree(prog, b->name);
    return 0;
}

int demo_tree_scene_build(demo_scene *s, const char *name, const demo_options *o, const char *prog)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    tree_body_def d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.poisson = 0.3;
    d.density = 1000;
    d.t2 = 1e-5;
    d.dt = 0.01;
    d.damping_stiffness = 0.01;
    tw_mesh *base = NULL;
    if (!strcmp(name, "tree-box")) {
        static const float c[3] = {0.3f, 0.55f, 0.9f};
        d.levels = 3;
        d.t2 = 3e-6;
        d.youngs_at = box_youngs;
        d.pinned_at = box_pinned;
        d.gravity[2] = -9.81;
        d.damping_mass = 1;
        memcpy(d.color, c, sizeof c);
        d.up = 2;
        base = tw_mesh_bar(0.3, 0.1, 0.1, 3, 1, 1);
    } else if (!strncmp(name, "tree-bunny", 10)) {
        static const float c[3] = {0.85f, 0.72f, 0.55f};
        d.levels = 2;
        d.youngs_at = strcmp(name, "tree-bunny-soft") ? bunny_youngs : bunny_soft_youngs;
        d.pinned_at = bunny_pinned;
        d.gravity[1] = -9.81;
        d.damping_mass = 2;
        d.t2 = 3e-6;
        d.render_file = "bunny_closed_3485v.off";
        memcpy(d.color, c, sizeof c);
        d.up = 1;
        base = demo_lattice_mesh(o, "bunny_closed_3485v.off", 1, 0.02, 1, prog);
        if (!base) return -1;
    } else if (!strcmp(name, "tree-armadillo")) {
        static const float c[3] = {0.8f, 0.65f, 0.5f};
        d.levels = 2;
        d.youngs_at = armadillo_youngs;
        d.pinned_at = armadillo_pinned;
        d.dt = 0.02;
        d.damping_mass = 2;
        memcpy(d.color, c, sizeof c);
        d.up = 1;
        base = load_data_mesh(o, "armadillo_4k.node", prog);
        if (!base) return -1;
    } else if (!strncmp(name, "tree-liver", 10)) {
        static const float c[3] = {0.7f, 0.3f, 0.28f};
        d.levels = 3;
        d.youngs_at = strcmp(name, "tree-liver-plain") ? liver_youngs : liver_plain_youngs;
        d.region_youngs = strcmp(name, "tree-liver-plain") ? VESSEL_YOUNGS : 0;
        d.pinned_at = liver_pinned;
        d.gravity[1] = -9.81;
        d.dt = 0.02;
        d.damping_mass = 2;
        memcpy(d.color, c, sizeof c);
        d.up = 1;
        base = load_data_mesh(o, "liver_sofa.msh", prog);
        if (!base) return -1;
    } else {
        fprintf(stderr, "%s: --scene '%s': not a tetra tree scene\n", prog, name);
        return -1;
    }
    if (!base) return fail_tree(prog, name);
    if (add_tree_body(s, &d, base, o, prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    if (!strcmp(name, "tree-armadillo") && armadillo_hands(&s->body[0], prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    if (!strcmp(name, "tree-box")) {
        s->yaw = -1.2;
        s->pitch = 0.3;
    }
    if (!strncmp(name, "tree-bunny", 10)) s->distance *= 0.6;
    if (!strcmp(name, "tree-armadillo")) s->yaw += M_PI; /* from the front */
    if (!strncmp(name, "tree-liver", 10)) { /* facing the cut */
        s->yaw = 0;
        s->pitch = 0.2;
        s->distance *= 0.6;
    }
    if (!strncmp(name, "tree-liver", 10) && liver_cutaway(&s->body[0], prog)) {
        demo_scene_destroy(s);
        return -1;
    }
    return 0;
}
