/* The world's lifecycle: settings that belong to one world stay with it. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tw_test.h"
#include "world.h" /* tw_world_threads: what a world's num_threads clauses ask for */

/* The OpenMP default the cases set first: not 1, and not the machine's
 * count, so a world that changed the default would show. */
#define DEFAULT_THREADS 3

#ifdef _OPENMP
/* A world with def.threads = 1, then one with 0; each case checks one thing
 * of what they leave. */
static int two_worlds(int *max_after, int *threads_one, int *threads_zero)
{
    omp_set_num_threads(DEFAULT_THREADS);
    tw_mesh *m = tw_mesh_bar(1, 0.1, 0.1, 4, 1, 1);
    if (!m) return 1;
    tw_world_def d = tw_default_world_def();
    d.threads = 1;
    tw_world *one = tw_world_create(m, &d);
    d.threads = 0;
    tw_world *zero = tw_world_create(m, &d);
    int bad = !one || !zero;
    if (!bad) {
        /* a step runs every kind of loop the world has */
        bad = tw_world_step(one, NULL) != TW_OK || tw_world_step(zero, NULL) != TW_OK;
        *max_after = omp_get_max_threads();
        *threads_one = tw_world_threads(one);
        *threads_zero = tw_world_threads(zero);
        printf("OpenMP default %d after both worlds; the worlds' loops ask for %d and %d threads\n", *max_after,
               *threads_one, *threads_zero);
    }
    if (bad) fprintf(stderr, "%s\n", tw_last_error());
    tw_world_destroy(one);
    tw_world_destroy(zero);
    tw_mesh_destroy(m);
    return bad;
}
#endif

TW_TEST(threads_one_leaves_openmp_default)
{
#ifdef _OPENMP
    int max_after = 0, t1 = 0, t0 = 0;
    CHECK(two_worlds(&max_after, &t1, &t0) == 0);
    CHECK(max_after == DEFAULT_THREADS);
    return 0;
#else
    printf("built without OpenMP: every loop runs on one thread\n");
    return TW_SKIP;
#endif
}

TW_TEST(threads_one_is_one)
{
#ifdef _OPENMP
    int max_after = 0, t1 = 0, t0 = 0;
    CHECK(two_worlds(&max_after, &t1, &t0) == 0);
    CHECK(t1 == 1);
    return 0;
#else
    printf("built without OpenMP: every loop runs on one thread\n");
    return TW_SKIP;
#endif
}

TW_TEST(threads_zero_after_one_uses_default)
{
#ifdef _OPENMP
    int max_after = 0, t1 = 0, t0 = 0;
    CHECK(two_worlds(&max_after, &t1, &t0) == 0);
    CHECK(t0 == DEFAULT_THREADS);
    return 0;
#else
    printf("built without OpenMP: every loop runs on one thread\n");
    return TW_SKIP;
#endif
}

/* ------------------------------------------------------- the mass sums */

/* A bar world with no constraint, its patch mass read once and one step
 * taken. */
static tw_world *mass_world(tw_mesh **m)
{
    *m = tw_mesh_bar(1, 0.1, 0.1, 4, 1, 1);
    if (!*m) return NULL;
    tw_world_def d = tw_default_world_def();
    d.threads = 1;
    tw_world *w = tw_world_create(*m, &d);
    if (!w) return NULL;
    if (!(tw_contact_patch_mass(w) > 0) || tw_world_step(w, NULL) != TW_OK) {
        tw_world_destroy(w);
        return NULL;
    }
    return w;
}

/* the vertex masses summed in vertex order, as the world sums them */
static double mass_sum(const tw_world *w)
{
    const tw_real *mass = tw_world_vertex_mass(w);
    double m = 0;
    for (int i = 0; i < tw_world_vertex_count(w); i++) m += mass[i];
    return m;
}

TW_TEST(total_mass_is_the_vertex_sum)
{
    tw_mesh *m;
    tw_world *w = mass_world(&m);
    CHECK(w);
    printf("total mass %.17g kg, patch mass %.17g kg\n", tw_world_total_mass(w), tw_contact_patch_mass(w));
    CHECK(tw_world_total_mass(w) == mass_sum(w)); /* bit for bit: the energy scale's */
    CHECK(tw_contact_patch_mass(w) == mass_sum(w));
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* tw_contact_patch_mass is 0 with a constrained vertex: a pin set after a
 * step takes it to 0, and freeing it again restores it. */
TW_TEST(patch_mass_follows_set_constraint)
{
    tw_mesh *m;
    tw_world *w = mass_world(&m);
    CHECK(w);
    CHECK_OK(tw_world_set_constraint(w, 3, TW_PINNED));
    double pinned = tw_contact_patch_mass(w);
    CHECK_OK(tw_world_step(w, NULL));
    CHECK_OK(tw_world_set_constraint(w, 3, TW_FREE));
    double freed = tw_contact_patch_mass(w);
    printf("patch mass pinned %g kg, freed %g kg (total %g kg)\n", pinned, freed, tw_world_total_mass(w));
    CHECK(pinned == 0);
    CHECK(freed == mass_sum(w));
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

TW_TEST(patch_mass_follows_pin_where)
{
    tw_mesh *m;
    tw_world *w = mass_world(&m);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 0, 1, 0.01) > 0);
    printf("patch mass after pin_where %g kg\n", tw_contact_patch_mass(w));
    CHECK(tw_contact_patch_mass(w) == 0);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* A hanging vertex is kinematic (patch mass 0); clearing the hanging set
 * frees it again inside tw_world_set_hanging (hanging.c), and the patch
 * mass is the total again. */
TW_TEST(patch_mass_follows_set_hanging)
{
    tw_mesh *m;
    tw_world *w = mass_world(&m);
    CHECK(w);
    /* a vertex at x = 0.25 hangs at the middle of its neighbours at 0 and 0.5 */
    const double *X = tw_mesh_positions(m);
    int v = -1, nb[2] = {-1, -1};
    for (int i = 0; i < tw_mesh_vertex_count(m); i++) {
        if (X[3 * i + 1] != 0 || X[3 * i + 2] != 0) continue;
        if (fabs(X[3 * i] - 0.25) < 1e-12) v = i;
        if (fabs(X[3 * i]) < 1e-12) nb[0] = i;
        if (fabs(X[3 * i] - 0.5) < 1e-12) nb[1] = i;
    }
    CHECK(v >= 0 && nb[0] >= 0 && nb[1] >= 0);
    int ptr[2] = {0, 2};
    double wt[2] = {0.5, 0.5};
    CHECK_OK(tw_world_set_hanging(w, 1, &v, ptr, nb, wt));
    double hanging = tw_contact_patch_mass(w);
    CHECK_OK(tw_world_step(w, NULL));
    CHECK_OK(tw_world_set_hanging(w, 0, NULL, NULL, NULL, NULL));
    double cleared = tw_contact_patch_mass(w);
    printf("patch mass with a hanging vertex %g kg, cleared %g kg\n", hanging, cleared);
    CHECK(tw_world_get_constraint(w, v) == TW_FREE);
    CHECK(hanging == 0);
    CHECK(cleared == mass_sum(w));
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}
