/* Contact between bodies (tw_mesh_merge): cubes on cubes, the BVH query. */
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "scenes.h"
#include "tw_test.h"
#include "tw_test_scenes.h"
#include "world.h" /* w->cimpulse: the settled contacts' impulses */

static double mech_energy(const tw_world *w)
{
    return tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
}

/* A stack of `cubes` 0.2 m cubes (E 1e5 Pa), gap m apart, on the floor,
 * for `seconds` at dt: the worst penetration between the bodies at the end
 * of any step, the largest energy gain over the start, the kinetic energy at
 * the end, the drop energy (m g gap summed), and the cubes' centre heights. */
typedef struct stack_run {
    double pen, gain, ke_end, ke_last, drop, mass, z[8]; /* ke_last: the largest kinetic energy over the last second */
} stack_run;

static int run_stack(int cubes, double gap, double dt, double seconds, double friction, tw_integrator integ,
                     stack_run *r)
{
    tw_mesh *m = demo_stack_mesh(cubes, 0.2, 4, 0.3, 0, gap);
    if (!m) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = dt;
    d.integrator = integ;
    tw_collider_def floor = tw_default_collider_def();
    floor.friction = friction;
    tw_world *w = demo_bodies_world(m, &d, &floor);
    if (!w) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_world_set_body_friction(w, friction);
    int n = tw_world_vertex_count(w);
    double mass = 0;
    for (int i = 0; i < n; i++) mass += tw_world_vertex_mass(w)[i];
    r->mass = mass;
    /* the k-th cube falls gap (k + 1) in all */
    r->drop = 0;
    for (int k = 0; k < cubes; k++) r->drop += mass / cubes * 9.81 * gap * (k + 1);
    double e0 = mech_energy(w);
    r->pen = r->ke_last = 0;
    r->gain = -INFINITY;
    int steps = (int)(seconds / dt + 0.5);
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        if (tw_world_step(w, &st) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
        r->pen = tw_test_max(r->pen, tw_world_body_penetration(w, NULL));
        r->gain = tw_test_max(r->gain, mech_energy(w) - e0);
        if (s >= steps - (int)(1 / dt + 0.5)) r->ke_last = tw_test_max(r->ke_last, tw_world_kinetic_energy(w));
    }
    r->ke_end = tw_world_kinetic_energy(w);
    const tw_real *x = tw_world_positions(w);
    int per = n / cubes;
    for (int k = 0; k < cubes; k++) {
        r->z[k] = 0;
        for (int i = k * per; i < (k + 1) * per; i++) r->z[k] += x[3 * i + 2] / per;
    }
    tw_body_stats bs = tw_world_body_stats(w);
    printf("%s, %d cubes, gap %g m, dt %g s, %g s: penetration %.3g mm, energy gain %.3g J of a drop of %.3g J, "
           "kinetic energy at the end %.3g J (at most %.3g J in the last second), %d body contacts, %.1f ms in body contact, %d BVH rebuilds; centres z",
           tw_integrator_name(integ), cubes, gap, dt, seconds, 1e3 * r->pen, r->gain, r->drop, r->ke_end, r->ke_last, bs.contacts, bs.ms_total,
           bs.rebuilds);
    for (int k = 0; k < cubes; k++) printf(" %.4f", r->z[k]);
    printf("\n");
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The upper cube, 1 mm above the lower one, settles on it at dt 1/60 s:
 * never more than 0.5 mm inside it, no energy gained, on top at the end and
 * at rest, below 1e-5 J/kg (measured: 0.13 mm at worst, the lower cube's
 * rim under the upper one's face; energy 0.18 J below the start, kinetic
 * energy 5.9e-10 J after 4 s). */
TW_TEST(cube_rests_on_cube)
{
    stack_run r;
    CHECK(run_stack(2, 0.001, 1.0 / 60, 4, 0.5, TW_IMPLICIT_EULER, &r) == 0);
    CHECK(r.pen <= 5e-4);
    CHECK(r.gain <= 0.01 * r.drop);
    CHECK(r.z[1] > r.z[0] + 0.19); /* on top, not through */
    CHECK(r.ke_end < 1e-5 * r.mass);
    return 0;
}

/* The same with BDF2 (one linearisation a step with bodies). Measured:
 * 0.13 mm at worst, 1.1e-9 J left after 4 s. */
TW_TEST(cube_rests_on_cube_bdf2)
{
    stack_run r;
    CHECK(run_stack(2, 0.001, 1.0 / 60, 4, 0.5, TW_BDF2, &r) == 0);
    CHECK(r.pen <= 5e-4);
    CHECK(r.gain <= 0.01 * r.drop);
    CHECK(r.z[1] > r.z[0] + 0.19);
    CHECK(r.ke_end < 1e-5 * r.mass);
    return 0;
}

/* The BVH's nearest triangle against every triangle tried in turn, at
 * random points around a body's surface, with the positions moved after
 * the build (a refit) and again after a rebuild. */
static int bvh_against_brute(const tw_bvh *b, const int *tris, int nt, const tw_real *x, unsigned *seed, int points,
                             double lo[3], double hi[3], int *mismatches)
{
    tw_bvh_view v = tw_bvh_view_of(b, x);
    for (int k = 0; k < points; k++) {
        double p[3], r = 0.05 + 0.2 * tw_test_uniform(seed);
        for (int a = 0; a < 3; a++) p[a] = lo[a] - 0.1 + (hi[a] - lo[a] + 0.2) * tw_test_uniform(seed);
        double w[3], q[3], d2;
        int t = tw_bvh_nearest(&v, p, r * r, w, q, &d2);
        double best = r * r;
        for (int u = 0; u < nt; u++) {
            double a[3], bb[3], c[3], ww[3], qq[3];
            tw_bvh_corners(&v, u, a, bb, c);
            double e = tw_closest_on_triangle(p, a, bb, c, ww, qq);
            if (e < best) best = e;
        }
        /* the same distance (a tie may pick another triangle), or none in both */
        int ok = (t < 0 && best >= r * r) || (t >= 0 && fabs(sqrt(d2) - sqrt(best)) <= 1e-12 + 1e-9 * sqrt(best));
        if (!ok && (*mismatches)++ < 5)
            fprintf(stderr, "point %d: BVH %d at %.9g, brute force %.9g (r %g)\n", k, t, sqrt(d2), sqrt(best), r);
        (void)tris;
    }
    return 0;
}

TW_TEST(bvh_nearest_matches_brute_force)
{
    tw_mesh *m = demo_drop_cube_mesh();
    CHECK(m);
    int *faces = NULL, nf = tw_mesh_boundary_faces(m, &faces);
    CHECK(nf > 0);
    int nv = tw_mesh_vertex_count(m);
    tw_real *x = malloc(sizeof(tw_real) * 3 * (size_t)nv);
    const double *X = tw_mesh_positions(m);
    for (int i = 0; i < 3 * nv; i++) x[i] = (tw_real)X[i];
    tw_bvh b;
    memset(&b, 0, sizeof b);
    CHECK_OK(tw_bvh_build(&b, faces, nf, x));
    double lo[3] = {0, 0, 0}, hi[3] = {0.2, 0.2, 0.2};
    unsigned seed = 12345;
    int bad = 0;
    bvh_against_brute(&b, faces, nf, x, &seed, 2000, lo, hi, &bad);
    /* moved: a twist about z growing with height, and a shear; refitted */
    for (int i = 0; i < nv; i++) {
        double a = 2.0 * X[3 * i + 2], c = cos(a), s = sin(a);
        double px = X[3 * i] - 0.1, py = X[3 * i + 1] - 0.1;
        x[3 * i] = (tw_real)(0.1 + c * px - s * py + 0.3 * X[3 * i + 2]);
        x[3 * i + 1] = (tw_real)(0.1 + s * px + c * py);
    }
    int grew = tw_bvh_refit(&b, x);
    hi[0] = 0.3;
    bvh_against_brute(&b, faces, nf, x, &seed, 2000, lo, hi, &bad);
    CHECK_OK(tw_bvh_build(&b, faces, nf, x));
    bvh_against_brute(&b, faces, nf, x, &seed, 2000, lo, hi, &bad);
    printf("%d triangles, %d nodes, 6000 points: %d mismatches; the refit %s\n", nf, b.nnodes, bad,
           grew ? "asked for a rebuild" : "kept the tree");
    tw_bvh_free(&b);
    free(x);
    free(faces);
    tw_mesh_destroy(m);
    CHECK(bad == 0);
    return 0;
}

/* Three cubes dropped 2 cm onto each other at dt 1/60 s land in their order
 * with no energy gained, none more than 0.5 mm inside another at the end of
 * any step: the lower cubes' rims under the upper cubes' faces, left out of
 * the contacts under a holding contact, are pushed out by their springs
 * (contact_bodies.c; measured: 0.27 mm at worst; 0.74 mm without the
 * springs). */
TW_TEST(stack_of_three_rests)
{
    stack_run r;
    CHECK(run_stack(3, 0.02, 1.0 / 60, 2, 0.5, TW_IMPLICIT_EULER, &r) == 0);
    CHECK(r.pen <= 5e-4);
    CHECK(r.gain <= 0.01 * r.drop);
    CHECK(r.z[1] > r.z[0] + 0.18 && r.z[2] > r.z[1] + 0.18); /* the order kept */
    return 0;
}

/* ... and then rest without trembling, as a single body on the floor does:
 * kinetic energy below 1e-8 J per kg over the last second of 4 s (the
 * contact between the cubes solved coupled, contact_bodies.c). Measured:
 * 1.1e-10 J/kg, 0.27 mm inside at worst. */
TW_TEST(stack_of_three_cubes_comes_to_rest)
{
    stack_run r;
    CHECK(run_stack(3, 0.02, 1.0 / 60, 4, 0.5, TW_IMPLICIT_EULER, &r) == 0);
    printf("kinetic energy over the last second at most %.3g J/kg\n", r.ke_last / r.mass);
    CHECK(r.ke_last <= 1e-8 * r.mass);
    CHECK(r.pen <= 5e-4);
    CHECK(r.gain <= 0.01 * r.drop);
    CHECK(r.z[1] > r.z[0] + 0.18 && r.z[2] > r.z[1] + 0.18);
    return 0;
}

/* tw_mesh_merge: the bodies, their placements, a reflection refused; a world
 * of several bodies refuses explicit Newmark with the reason. */
TW_TEST(merge_places_bodies_and_refuses_what_cannot_run)
{
    tw_mesh *a = tw_mesh_bar(1, 1, 1, 1, 1, 1);
    CHECK(a);
    const tw_mesh *parts[2] = {a, a};
    double P[24] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, 0, 1, 5, 0, 0};
    tw_mesh *m = tw_mesh_merge(parts, P, 2);
    CHECK(m);
    int n = tw_mesh_vertex_count(a);
    CHECK(tw_mesh_vertex_count(m) == 2 * n && tw_mesh_tet_count(m) == 2 * tw_mesh_tet_count(a));
    CHECK(tw_mesh_body_count(m) == 2 && tw_mesh_body_count(a) == 1);
    CHECK(tw_mesh_vertex_body(m, 0) == 0 && tw_mesh_vertex_body(m, n) == 1);
    /* the second copy turned 90 degrees about z and moved 5 m along x */
    const double *X = tw_mesh_positions(a), *Y = tw_mesh_positions(m);
    for (int i = 0; i < n; i++) {
        CHECK_NEAR(Y[3 * (n + i)], -X[3 * i + 1] + 5, 1e-12);
        CHECK_NEAR(Y[3 * (n + i) + 1], X[3 * i], 1e-12);
    }
    CHECK_NEAR(tw_mesh_compute_stats(m).volume, 2.0, 1e-12);
    double Rbad[12] = {-1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    const tw_mesh *one[1] = {a};
    CHECK(!tw_mesh_merge(one, Rbad, 1) && strstr(tw_last_error(), "determinant"));
    tw_world_def d = tw_default_world_def();
    d.integrator = TW_EXPLICIT_NEWMARK;
    tw_world *w = tw_world_create(m, &d);
    CHECK(!w && strstr(tw_last_error(), "2 bodies") && strstr(tw_last_error(), "explicit-newmark"));
    d.integrator = TW_IMPLICIT_EULER;
    d.backend = TW_BACKEND_AUTO; /* several bodies: auto picks the CPU */
    w = tw_world_create(m, &d);
    CHECK(w && tw_world_get_def(w)->backend == TW_BACKEND_CPU);
    CHECK(tw_world_body_stats(w).bodies == 2);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    tw_mesh_destroy(a);
    return 0;
}

/* The viewer's and the benchmark's bunny-block scene (demos/scenes.c): after
 * 1 s the bunny sits on the block, no energy gained, never more than 0.5 mm
 * inside it (measured: 0.13 mm). */
TW_TEST(bunny_lands_on_block)
{
    demo_scene s;
    demo_options o = demo_default_options();
    if (demo_scene_build(&s, "bunny-block", &o, "test_contact_bodies")) return 1;
    tw_world *w = s.body[0].world;
    const tw_mesh *m = s.body[0].mesh;
    double e0 = mech_energy(w), gain = -INFINITY, pen = 0;
    for (int k = 0; k < 60; k++) {
        CHECK_OK(tw_world_step(w, NULL));
        gain = tw_test_max(gain, mech_energy(w) - e0);
        pen = tw_test_max(pen, tw_world_body_penetration(w, NULL));
    }
    const tw_real *x = tw_world_positions(w);
    double low = INFINITY; /* the bunny's lowest vertex */
    for (int i = 0; i < tw_world_vertex_count(w); i++)
        if (tw_mesh_vertex_body(m, i) == 0) low = fmin(low, x[3 * i + 2]);
    printf("bunny on the block after 1 s: lowest bunny vertex z %.4f m (the block's top at rest 0.1), deepest %.3g mm, "
           "energy gain %.3g J, kinetic energy %.3g J\n",
           low, 1e3 * pen, gain, tw_world_kinetic_energy(w));
    CHECK(low > 0.09 && low < 0.101); /* on the block (which the bunny dents), not through it, not bounced off */
    CHECK(pen <= 5e-4);
    CHECK(gain <= 0.01 * -tw_world_gravity_energy(w));
    demo_scene_destroy(&s);
    return 0;
}

/* The two cubes of the tests below (demo_stack_mesh(2, 0.2, 4, 0.3, 0,
 * 0.001): the upper one 1 mm above the lower) in a world of E 1e5 Pa, dt
 * 1/60 s, integ, friction 0.5 between them and on the floor; with_floor 0:
 * no floor, the lower cube's bottom pinned. NULL on failure. */
static tw_world *cube_pair_world(const tw_mesh *m, tw_integrator integ, int with_floor)
{
    tw_world_def d = tw_default_world_def();
    d.youngs_modulus = 1e5;
    d.dt = 1.0 / 60;
    d.integrator = integ;
    tw_collider_def floor = tw_default_collider_def();
    floor.friction = 0.5;
    tw_world *w = demo_bodies_world(m, &d, &floor);
    if (!w) return NULL;
    tw_world_set_body_friction(w, 0.5);
    if (!with_floor) {
        tw_world_clear_colliders(w);
        if (tw_world_pin_where(w, 2, 1, 0.002) <= 0) {
            tw_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

/* The upper of two cubes (friction 0.5 between them, the lower one's
 * bottom pinned, no floor; dt 1/60 s, integ)
 * settles on the lower for 1 s: its contacts on the lower cube press. Then
 * both move 0.05 m sideways (tw_world_set_positions, the velocities kept):
 * the body contacts are forgotten, and the next 5 steps are those of a world
 * newly created in that state, bit for bit. With the impulses kept
 * (tw_world_restart not zeroing cimpulse) the first step after the move
 * differs in 1245 coordinates and hits the CG cap (1000 iterations, the new
 * world 75). */
static int bodies_restart_case(tw_integrator integ)
{
    tw_mesh *m = demo_stack_mesh(2, 0.2, 4, 0.3, 0, 0.001);
    CHECK(m);
    tw_world *w = cube_pair_world(m, integ, 0);
    CHECK(w);
    int n = tw_world_vertex_count(w), pressed = 0;
    for (int k = 0; k < 60; k++) CHECK_OK(tw_world_step(w, NULL));
    for (int i = n / 2; i < n; i++) pressed += w->cimpulse[i] > 0; /* the upper cube's vertices */
    CHECK(pressed > 0);
    tw_real *x = malloc(sizeof(tw_real) * 6 * n), *v = x ? x + 3 * n : NULL; /* the state moved to */
    CHECK(x);
    memcpy(x, tw_world_positions(w), sizeof(tw_real) * 3 * n);
    memcpy(v, tw_world_velocities(w), sizeof(tw_real) * 3 * n);
    for (int i = 0; i < n; i++) x[3 * i] += (tw_real)0.05;
    CHECK(tw_world_body_stats(w).contacts > 0);
    CHECK_OK(tw_world_set_positions(w, x));
    CHECK(tw_world_body_stats(w).contacts == 0); /* as a new world's: none yet */
    tw_world *f = cube_pair_world(m, integ, 0);
    CHECK(f);
    CHECK_OK(tw_world_set_positions(f, x));
    CHECK_OK(tw_world_set_velocities(f, v));
    int contacts, apart = tw_test_steps_apart(w, f, 5, &contacts);
    printf("%s: %d upper-cube vertices pressed before, %d contacts in the 5 steps after, %d differences from a new "
           "world\n", tw_integrator_name(integ), pressed, contacts, apart);
    CHECK(contacts > 0 && apart == 0);
    free(x);
    tw_world_destroy(f);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(set_positions_restarts_body_contacts)
{
    CHECK(bodies_restart_case(TW_IMPLICIT_EULER) == 0);
    CHECK(bodies_restart_case(TW_BDF2) == 0);
    return 0;
}

/* Two cubes resting on the floor (friction 0.5 on the floor and between
 * them, dt 1/60 s, integ) for 3 s: over the last half second a step takes
 * at most half a contact solve more on average than the same cubes without
 * the floor (the lower one's bottom pinned). The body contacts start each
 * step with the last step's impulses, so their first pass has its friction:
 * the floor's detection leaves the impulse of a vertex it finds no floor
 * contact for to tw_bodies_detect. Measured, float: 1.00 solves a step
 * (implicit Euler) and 1.13 (BDF2), the same without the floor; double:
 * 1.33 and 2.00, without the floor 1.10 and 1.97. With the floor's
 * detection zeroing the body contacts' impulses, float: 3.00 and 3.00
 * (every step a first pass without friction between the cubes, then two
 * more). */
static int resting_pair_case(tw_integrator integ, int with_floor, double *per_step)
{
    tw_mesh *m = demo_stack_mesh(2, 0.2, 4, 0.3, 0, 0.001);
    CHECK(m);
    tw_world *w = cube_pair_world(m, integ, with_floor);
    CHECK(w);
    int passes = 0, last = 30, steps = 180;
    for (int k = 0; k < steps; k++) {
        tw_step_stats st;
        CHECK_OK(tw_world_step(w, &st));
        if (k >= steps - last) passes += st.contact_passes;
    }
    CHECK(tw_world_body_stats(w).contacts > 0);
    *per_step = (double)passes / last;
    printf("%s, %s: %.2f contact solves a step at rest\n", tw_integrator_name(integ),
           with_floor ? "on the floor" : "lower cube pinned, no floor", *per_step);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(body_contacts_keep_their_impulses_on_the_floor)
{
    static const tw_integrator integs[2] = {TW_IMPLICIT_EULER, TW_BDF2};
    for (int k = 0; k < 2; k++) {
        double floor, pinned;
        CHECK(resting_pair_case(integs[k], 1, &floor) == 0);
        CHECK(resting_pair_case(integs[k], 0, &pinned) == 0);
        CHECK(floor <= pinned + 0.5);
    }
    return 0;
}
