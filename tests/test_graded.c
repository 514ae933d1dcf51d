/* Graded lattice meshes and hanging vertices: a unit
 * icosphere meshed uniformly and graded at the same fine size. */
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"
#include "tw_test_scenes.h"
#include "world.h" /* the step's system (A, b) for the reduced-system check */

static double tet_volume(const double *X, const int *t)
{
    const double *a = X + 3 * t[0], *b = X + 3 * t[1], *c = X + 3 * t[2], *d = X + 3 * t[3];
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) / 6;
}

/* Sum of volumes; 0 when any tet is not positive. */
static double mesh_volume(const tw_mesh *m)
{
    double vol = 0;
    for (int e = 0; e < tw_mesh_tet_count(m); e++) {
        double v = tet_volume(tw_mesh_positions(m), tw_mesh_tets(m) + 4 * e);
        if (!(v > 0)) {
            fprintf(stderr, "tet %d has volume %g\n", e, v);
            return 0;
        }
        vol += v;
    }
    return vol;
}

TW_TEST(sphere_graded_has_fewer_tets_and_the_same_volume)
{
    tw_graded_mesh *u = tw_test_graded_sphere(1), *g = tw_test_graded_sphere(4);
    CHECK(u && g);
    int nu = tw_mesh_tet_count(u->mesh), ng = tw_mesh_tet_count(g->mesh);
    double vu = mesh_volume(u->mesh), vg = mesh_volume(g->mesh);
    printf("uniform: %d tets, %d vertices, volume %.6f; graded: %d tets, %d vertices, %d hanging, volume %.6f "
           "(leaves %d %d %d %d)\n", nu, tw_mesh_vertex_count(u->mesh), vu, ng, tw_mesh_vertex_count(g->mesh),
           g->hanging_count, vg, g->leaves[0], g->leaves[1], g->leaves[2], g->leaves[3]);
    CHECK(u->hanging_count == 0);
    CHECK(ng < 0.6 * nu);
    CHECK(g->leaves[1] > 0 && g->leaves[2] > 0);
    CHECK(vu > 0 && vg > 0);                    /* every tet positive */
    CHECK_NEAR(vg, vu, 1e-9 * vu);              /* coarse leaves cover exactly the uniform cells */
    CHECK_NEAR(vu, 4.0 / 3.0 * 3.14159265358979, 0.05 * vu); /* and they approximate the sphere */
    tw_graded_mesh_destroy(u);
    tw_graded_mesh_destroy(g);
    return 0;
}

TW_TEST(sphere_hanging_vertices_rest_at_their_averages)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    const double *X = tw_mesh_positions(g->mesh);
    int nv = tw_mesh_vertex_count(g->mesh);
    char *hanging = calloc(nv, 1);
    CHECK(g->hanging_count > 0);
    for (int k = 0; k < g->hanging_count; k++) hanging[g->hanging_vertex[k]] = 1;
    int edges = 0, faces = 0;
    for (int k = 0; k < g->hanging_count; k++) {
        int v = g->hanging_vertex[k], n = g->hanging_ptr[k + 1] - g->hanging_ptr[k];
        double p[3] = {0, 0, 0}, sum = 0;
        edges += n == 2;
        faces += n == 4;
        for (int j = g->hanging_ptr[k]; j < g->hanging_ptr[k + 1]; j++) {
            CHECK(!hanging[g->hanging_idx[j]]);
            CHECK(g->hanging_weights[j] > 0);
            sum += g->hanging_weights[j];
            for (int c = 0; c < 3; c++) p[c] += g->hanging_weights[j] * X[3 * g->hanging_idx[j] + c];
        }
        CHECK_NEAR(sum, 1, 1e-12);
        for (int c = 0; c < 3; c++) CHECK_NEAR(X[3 * v + c], p[c], 1e-12);
        /* on the lattice: the constrainers are 2 (edge) or 4 (face) corners at least one fine cell away */
        double far = 0;
        for (int j = g->hanging_ptr[k]; j < g->hanging_ptr[k + 1]; j++) {
            double d = 0;
            for (int c = 0; c < 3; c++) d += fabs(X[3 * g->hanging_idx[j] + c] - X[3 * v + c]);
            far = tw_test_max(far, d);
        }
        CHECK(far >= 0.1 - 1e-9);
    }
    printf("%d hanging vertices: %d on edges, %d on faces, %d on chains\n", g->hanging_count, edges, faces,
           g->hanging_count - edges - faces);
    CHECK(edges > 0 && faces > 0);
    free(hanging);
    tw_graded_mesh_destroy(g);
    return 0;
}

TW_TEST(sphere_hanging_vertices_stay_on_their_edges_and_faces)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.youngs_modulus = 2e4; /* soft: a visible sag */
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    d.threads = 2;
    tw_world *w = tw_world_create(g->mesh, &d);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 2, 1, -0.8) > 0);
    CHECK_OK(tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                  g->hanging_weights));
    CHECK(tw_world_get_constraint(w, g->hanging_vertex[0]) == TW_KINEMATIC);
    double worst = tw_test_hanging_error(w, g);
    for (int s = 0; s < 50; s++) {
        CHECK_OK(tw_world_step(w, NULL));
        double e = tw_test_hanging_error(w, g);
        worst = tw_test_max(worst, e);
        if (e > 1e-5) fprintf(stderr, "step %d: a hanging vertex is %g off its edge/face\n", s, e);
        CHECK(e <= 1e-5);
    }
    /* not vacuous: the top moved */
    const tw_real *x = tw_world_positions(w);
    const double *X = tw_mesh_positions(g->mesh);
    double sag = 0;
    for (int i = 0; i < tw_mesh_vertex_count(g->mesh); i++)
        if (X[3 * i + 2] - x[3 * i + 2] > sag) sag = X[3 * i + 2] - x[3 * i + 2];
    printf("max hanging error %.3g m over 50 steps, max sag %.4g m\n", worst, sag);
    CHECK(sag > 1e-3);
    tw_world_destroy(w);
    tw_graded_mesh_destroy(g);
    return 0;
}

TW_TEST(set_hanging_rejects_bad_input)
{
    tw_mesh *m = tw_mesh_bar(1, 0.2, 0.2, 4, 1, 1);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    tw_world *w = tw_world_create(m, &d);
    CHECK(w);
    int n = tw_world_vertex_count(w);
    int vertex[1] = {1}, ptr[2] = {0, 2}, idx[2] = {0, 2};
    double bad_w[2] = {0.5, 0.4}, good_w[2] = {0.5, 0.5};
    CHECK(tw_world_set_hanging(w, 1, vertex, ptr, idx, bad_w) == TW_ERR_INVALID);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "sum to 0.9"));
    int far_idx[2] = {0, n};
    CHECK(tw_world_set_hanging(w, 1, vertex, ptr, far_idx, good_w) == TW_ERR_INVALID);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "out of range"));
    int self_idx[2] = {0, 1};
    CHECK(tw_world_set_hanging(w, 1, vertex, ptr, self_idx, good_w) == TW_ERR_INVALID);
    CHECK(strstr(tw_last_error(), "its own constrainers"));
    CHECK(tw_world_get_constraint(w, 1) == TW_FREE); /* nothing was set */
    /* a valid one: kinematic, and placed at its average at once */
    CHECK_OK(tw_world_set_hanging(w, 1, vertex, ptr, idx, good_w));
    CHECK(tw_world_get_constraint(w, 1) == TW_KINEMATIC);
    const tw_real *x = tw_world_positions(w);
    for (int c = 0; c < 3; c++) CHECK_NEAR(x[3 + c], 0.5 * (x[c] + x[6 + c]), 1e-6);
    CHECK_OK(tw_world_set_hanging(w, 0, NULL, NULL, NULL, NULL)); /* clears */
    CHECK(tw_world_get_constraint(w, 1) == TW_FREE);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(graded_rejects_bad_sizes)
{
    tw_surface *s = tw_test_icosphere(1);
    CHECK(s != NULL);
    tw_graded_def d = tw_default_graded_def();
    CHECK(tw_mesh_graded(s, &d) == NULL); /* fine_size unset */
    CHECK(strstr(tw_last_error(), "fine_size 0"));
    d.fine_size = 0.1;
    d.grading = 0.5;
    CHECK(tw_mesh_graded(s, &d) == NULL);
    CHECK(strstr(tw_last_error(), "grading 0.5"));
    d.grading = 1;
    d.fine_size = 10; /* no cell centre inside */
    CHECK(tw_mesh_graded(s, &d) == NULL);
    printf("%s\n", tw_last_error());
    CHECK(strstr(tw_last_error(), "inside"));
    tw_surface_destroy(s);
    return 0;
}

/* 2:1 balance: the leaves around any vertex differ by at most one level
 * (each Kuhn tet's shortest edge is its leaf's edge). */
TW_TEST(sphere_graded_is_balanced)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    const tw_mesh *m = g->mesh;
    const double *X = tw_mesh_positions(m);
    int nv = tw_mesh_vertex_count(m);
    double *lo = malloc(sizeof(double) * nv), *hi = calloc(nv, sizeof(double));
    for (int i = 0; i < nv; i++) lo[i] = 1e30;
    for (int e = 0; e < tw_mesh_tet_count(m); e++) {
        const int *t = tw_mesh_tets(m) + 4 * e;
        double a = 1e30;
        for (int p = 0; p < 4; p++)
            for (int q = p + 1; q < 4; q++) {
                double d = 0;
                for (int c = 0; c < 3; c++) d += pow(X[3 * t[p] + c] - X[3 * t[q] + c], 2);
                if (sqrt(d) < a) a = sqrt(d);
            }
        for (int p = 0; p < 4; p++) {
            if (a < lo[t[p]]) lo[t[p]] = a;
            if (a > hi[t[p]]) hi[t[p]] = a;
        }
    }
    double worst = 1;
    for (int i = 0; i < nv; i++)
        worst = tw_test_max(worst, hi[i] / lo[i]);
    printf("largest leaf-size ratio around a vertex: %g\n", worst);
    CHECK(worst <= 2 + 1e-9);
    CHECK(worst > 2 - 1e-9); /* and it is graded */
    free(lo);
    free(hi);
    tw_graded_mesh_destroy(g);
    return 0;
}

/* cover = 1 (a fine surface embedded in a coarse lattice, the dane scene):
 * every sphere vertex lies inside a kept tet, where the centre-inside
 * lattice leaves most of them outside; uniform and graded alike. */
static int cover_embeds(int levels)
{
    tw_surface *s = tw_test_icosphere(3);
    CHECK(s != NULL);
    tw_graded_def d = tw_default_graded_def();
    d.fine_size = 0.15;
    d.levels = levels;
    tw_embed_report plain, cover;
    tw_graded_mesh *g = tw_mesh_graded(s, &d);
    d.cover = 1;
    tw_graded_mesh *gc = tw_mesh_graded(s, &d);
    tw_embedding *e = g ? tw_embed_surface(g->mesh, s, 0.5, &plain) : NULL;
    tw_embedding *ec = gc ? tw_embed_surface(gc->mesh, s, 0.5, &cover) : NULL;
    if (e && ec)
        printf("levels %d: centre inside %d tets, %d of %d vertices outside; cover %d tets, %d outside\n", levels,
               tw_mesh_tet_count(g->mesh), plain.outside, plain.vertices, tw_mesh_tet_count(gc->mesh),
               cover.outside);
    int ok = e && ec && plain.outside > 0 && cover.outside == 0 && cover.inside == s->vertex_count;
    tw_embedding_destroy(e);
    tw_embedding_destroy(ec);
    tw_graded_mesh_destroy(g);
    tw_graded_mesh_destroy(gc);
    tw_surface_destroy(s);
    CHECK(ok);
    return 0;
}

TW_TEST(sphere_cover_puts_every_surface_vertex_in_a_tet) { return cover_embeds(1); }
TW_TEST(sphere_graded_cover_puts_every_surface_vertex_in_a_tet) { return cover_embeds(3); }

/* Steps until every speed stays below 1e-4 m/s for 20 steps (at most 1500):
 * a sphere of fine size `fine` and `levels` levels, pinned at the bottom,
 * sagging under gravity with mass damping. */
static int steps_to_rest(double fine, int levels, int *hanging)
{
    tw_surface *s = tw_test_icosphere(2);
    if (!s) return -1;
    tw_graded_def gd = tw_default_graded_def();
    gd.fine_size = fine;
    gd.levels = levels;
    tw_graded_mesh *g = tw_mesh_graded(s, &gd);
    tw_surface_destroy(s);
    if (!g) return -1;
    tw_world_def d = tw_default_world_def();
    d.method = TW_COROT_ELEMENT;
    d.youngs_modulus = 1e6;
    d.poisson_ratio = 0.3;
    d.density = 1000;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    d.damping_mass = 20;
    d.cg_tolerance = 1e-7;
    d.threads = 2;
    tw_world *w = tw_world_create(g->mesh, &d);
    int steps = -1, quiet = 0, n = tw_mesh_vertex_count(g->mesh);
    *hanging = g->hanging_count;
    if (w && tw_world_pin_where(w, 2, 1, -0.75) > 0 &&
        (!g->hanging_count || tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr,
                                                   g->hanging_idx, g->hanging_weights) == TW_OK)) {
        for (steps = 0; steps < 1500 && quiet < 20;) {
            if (tw_world_step(w, NULL) != TW_OK) {
                steps = -1;
                break;
            }
            steps++;
            const tw_real *v = tw_world_velocities(w);
            double vmax = 0;
            for (int i = 0; i < 3 * n; i++) vmax = tw_test_max(vmax, fabs(v[i]));
            quiet = vmax < 1e-4 ? quiet + 1 : 0;
        }
    }
    tw_world_destroy(w);
    tw_graded_mesh_destroy(g);
    return steps;
}

/* The hanging vertices are rows of the step's reduced system: the graded
 * sphere comes to rest in as many steps as the uniform one (within 20 %). */
TW_TEST(sphere_graded_settles_like_uniform)
{
    int hu, hg;
    int uniform = steps_to_rest(0.2, 1, &hu), graded = steps_to_rest(0.2, 3, &hg);
    printf("steps to rest: uniform %d, graded %d (%d hanging vertices)\n", uniform, graded, hg);
    CHECK(uniform > 0 && uniform < 1500 && graded > 0 && hu == 0 && hg > 0);
    CHECK(abs(graded - uniform) <= uniform / 5);
    return 0;
}

/* The implicit step solves the reduced system: after a step, the residual
 * A v - b of the step's system, restricted by P^T (a hanging vertex's row
 * passed to its constrainers), vanishes on the free non-hanging vertices;
 * a hanging vertex moved kinematically would leave its row's residual out.
 * By the PCG (corot-element), or by BiCGStab (warp-vertex's exact,
 * non-symmetric system). */
static int reduced_system_solved(tw_method method, int bicgstab)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    tw_world_def d = tw_default_world_def();
    d.method = method;
    d.warp_system = bicgstab ? TW_WARP_SYSTEM_BICGSTAB : TW_WARP_SYSTEM_SYMMETRIC;
    d.youngs_modulus = 1e5;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.dt = 0.01;
    d.cg_tolerance = 1e-9;
    d.cg_max_iterations = 5000;
    d.precond = TW_PRECOND_JACOBI;
    tw_world *w = tw_world_create(g->mesh, &d);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 2, 1, -0.8) > 0);
    CHECK_OK(tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                  g->hanging_weights));
    for (int s = 0; s < 3; s++) CHECK_OK(tw_world_step(w, NULL));
    int n = w->fem.n;
    tw_real *Av = malloc(sizeof(tw_real) * 3 * n);
    double *r = calloc(3 * n, sizeof(double)), *pb = calloc(3 * n, sizeof(double));
    tw_bsr A = tw_world_bsr(w);
    tw_bsr_spmv(&A, w->v, Av); /* v is the solve's v+ (no contact, one Newton step) */
    char *hanging = calloc(n, 1);
    for (int k = 0; k < g->hanging_count; k++) hanging[g->hanging_vertex[k]] = 1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            double ri = (double)Av[3 * i + c] - w->rhs[3 * i + c], bi = w->rhs[3 * i + c];
            if (!hanging[i]) {
                r[3 * i + c] += ri;
                pb[3 * i + c] += bi;
            }
        }
    for (int k = 0; k < g->hanging_count; k++)
        for (int j = g->hanging_ptr[k]; j < g->hanging_ptr[k + 1]; j++)
            for (int c = 0; c < 3; c++) {
                int v = g->hanging_vertex[k], q = g->hanging_idx[j];
                r[3 * q + c] += g->hanging_weights[j] * ((double)Av[3 * v + c] - w->rhs[3 * v + c]);
                pb[3 * q + c] += g->hanging_weights[j] * w->rhs[3 * v + c];
            }
    double rn = 0, bn = 0;
    for (int i = 0; i < n; i++)
        if (tw_world_get_constraint(w, i) == TW_FREE)
            for (int c = 0; c < 3; c++) {
                rn += r[3 * i + c] * r[3 * i + c];
                bn += pb[3 * i + c] * pb[3 * i + c];
            }
    printf("|P^T (A v - b)| / |P^T b| = %.3g on the free vertices (%d hanging)\n", sqrt(rn / bn), g->hanging_count);
    CHECK(bn > 0);
    CHECK(sqrt(rn / bn) <= 1e-5);
    free(Av);
    free(r);
    free(pb);
    free(hanging);
    tw_world_destroy(w);
    tw_graded_mesh_destroy(g);
    return 0;
}

TW_TEST(sphere_step_solves_the_reduced_system) { return reduced_system_solved(TW_COROT_ELEMENT, 0); }
TW_TEST(sphere_bicgstab_solves_the_reduced_system) { return reduced_system_solved(TW_WARP_VERTEX, 1); }

/* The reduced system under the implicit paths: a graded sphere dropped on
 * a floor (contacts in the filter), with multigrid, BDF2, two Newton steps
 * (green) and BiCGStab (warp-vertex's exact system): every step passes, the
 * hanging vertices stay on their edges and faces, nothing sinks into the
 * floor. The floor (friction 0.5) is 2 cm below the mesh's lowest vertex:
 * the lattice's cover reaches past the unit sphere (to z = -1.05, four
 * corner vertices in two to six tets each, which land first and are
 * crushed as the body comes down onto them). */
static double lowest_vertex_z(const tw_mesh *m)
{
    double z = INFINITY;
    for (int i = 0; i < tw_mesh_vertex_count(m); i++) z = fmin(z, tw_mesh_positions(m)[3 * i + 2]);
    return z;
}

TW_TEST(sphere_reduced_system_on_every_implicit_path)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    double floor_z = lowest_vertex_z(g->mesh) - 0.02;
    for (int r = 0; r < TW_TEST_GRADED_PATHS; r++) {
        tw_world_def d = tw_test_graded_drop_def(&tw_test_graded_paths[r]);
        d.threads = 2;
        tw_world *w = tw_world_create(g->mesh, &d);
        CHECK(w);
        tw_collider_def floor = tw_default_collider_def();
        floor.point[2] = floor_z;
        CHECK_OK(tw_world_add_collider(w, &floor));
        CHECK_OK(tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                      g->hanging_weights));
        int contacts = 0;
        double worst = 0;
        for (int s = 0; s < 25; s++) {
            tw_step_stats st;
            CHECK_OK(tw_world_step(w, &st));
            contacts = st.contacts > contacts ? st.contacts : contacts;
            worst = tw_test_max(worst, tw_test_hanging_error(w, g));
        }
        const tw_real *x = tw_world_positions(w);
        double lowest = 1e9;
        for (int i = 0; i < tw_mesh_vertex_count(g->mesh); i++) lowest = fmin(lowest, x[3 * i + 2]);
        printf("run %d: up to %d contacts, hanging error %.3g m, lowest z %.4f m\n", r, contacts, worst, lowest);
        CHECK(contacts > 0);
        CHECK(worst <= 1e-5);
        CHECK(lowest >= floor_z - 1e-3);
        tw_world_destroy(w);
    }
    tw_graded_mesh_destroy(g);
    return 0;
}

/* green (two Newton steps) dropped 2 cm onto a floor with friction 0.5, at
 * 0.01 s (0.6 s: landed and bounced) and 1/30 s (2 s: at rest): every step
 * passes, the mechanical energy never rises above its start by more than
 * 1 % of the weight's work over the 2 cm, no vertex ends a step more than
 * 0.5 mm inside the floor, and the volume ends within 1 % of the rest
 * volume. The four corner vertices that land first are crushed flat under
 * the body: StVK's stress below its peak resistance is held there
 * (hd/element.h, tw_stvk_floor), without which the crushed tets invert
 * for good and the run blows up within 0.35 s. */
static int green_drop_on_friction_floor(double dt, int steps)
{
    tw_graded_mesh *g = tw_test_graded_sphere(4);
    CHECK(g);
    tw_world_def d = tw_default_world_def();
    d.method = TW_GREEN;
    d.newton_iterations = 2;
    d.youngs_modulus = 1e6;
    d.gravity[0] = d.gravity[1] = 0;
    d.gravity[2] = -9.81;
    d.dt = dt;
    d.threads = 2;
    tw_world *w = tw_world_create(g->mesh, &d);
    CHECK(w);
    tw_collider_def floor = tw_default_collider_def();
    floor.point[2] = lowest_vertex_z(g->mesh) - 0.02;
    floor.friction = 0.5;
    CHECK_OK(tw_world_add_collider(w, &floor));
    CHECK_OK(tw_world_set_hanging(w, g->hanging_count, g->hanging_vertex, g->hanging_ptr, g->hanging_idx,
                                  g->hanging_weights));
    int n = tw_world_vertex_count(w);
    double mass = 0, vol0 = mesh_volume(g->mesh);
    for (int i = 0; i < n; i++) mass += tw_world_vertex_mass(w)[i];
    double drop = mass * 9.81 * 0.02;
    double e0 = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
    double gain = -INFINITY, depth = 0;
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        tw_status r = tw_world_step(w, &st);
        if (r != TW_OK) fprintf(stderr, "step %d: %s\n", s, tw_last_error());
        CHECK_OK(r);
        double e = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
        gain = tw_test_max(gain, e - e0);
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < n; i++) depth = tw_test_max(depth, floor.point[2] - x[3 * i + 2]);
    }
    const tw_real *x = tw_world_positions(w);
    double vol = 0;
    for (int e = 0; e < tw_mesh_tet_count(g->mesh); e++) {
        const int *t = tw_mesh_tets(g->mesh) + 4 * e;
        double p[12];
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++) p[3 * q + k] = x[3 * t[q] + k];
        int idx[4] = {0, 1, 2, 3};
        vol += tet_volume(p, idx);
    }
    printf("dt %.4g: max energy gain %.3g J (1 %% of the drop: %.3g J), depth %.3g mm, volume %.5f of rest, "
           "kinetic %.3g J\n",
           dt, gain, 0.01 * drop, 1e3 * depth, vol / vol0, tw_world_kinetic_energy(w));
    CHECK(gain <= 0.01 * drop);
    CHECK(depth <= 5e-4);
    CHECK(fabs(vol / vol0 - 1) <= 0.01);
    tw_world_destroy(w);
    tw_graded_mesh_destroy(g);
    return 0;
}

TW_TEST(sphere_green_on_friction_floor_dt_0_01) { return green_drop_on_friction_floor(0.01, 60); }
TW_TEST(sphere_green_on_friction_floor_dt_1_30) { return green_drop_on_friction_floor(1.0 / 30, 60); }
