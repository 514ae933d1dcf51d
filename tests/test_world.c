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
