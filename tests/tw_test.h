/* A minimal test harness: each TW_TEST(name) is one ctest case (the CMake
 * scan registers it), run as `test_group name`. A test returns 0 to pass,
 * 1 to fail, TW_SKIP (77) to be reported skipped; the CHECK macros print the
 * file, line and values of the first failure. */
#ifndef TW_TEST_H
#define TW_TEST_H
#include <math.h>
#include <stdio.h>

#include "tetwarp.h"

#define TW_SKIP 77

typedef int (*tw_test_fn)(void);
void tw_test_register(const char *name, tw_test_fn fn);

#define TW_TEST(name)                                                                      \
    static int test_##name(void);                                                          \
    __attribute__((constructor)) static void register_##name(void) { tw_test_register(#name, test_##name); } \
    static int test_##name(void)

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);        \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

/* |a - b| <= tol, printing both values on failure */
#define CHECK_NEAR(a, b, tol)                                                               \
    do {                                                                                    \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                      \
        if (!(fabs(a_ - b_) <= t_)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK_NEAR(%s, %s, %s) failed: %.9g vs %.9g (diff %.3g)\n", \
                    __FILE__, __LINE__, #a, #b, #tol, a_, b_, fabs(a_ - b_));               \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

/* The larger of two errors, NaN when either is NaN: fmax (and `if (e > worst)
 * worst = e`) drop a NaN, so a test accumulating its worst error with them
 * passes on an all-NaN result. Every accumulated error in tests/ uses this. */
static inline double tw_test_max(double a, double b)
{
    if (a != a || b != b) return NAN;
    return a > b ? a : b;
}

/* The tests' deterministic random numbers: a linear congruential step of
 * the state *s (Numerical Recipes' constants) and its top 24 bits, the same
 * sequence on every platform and in every build; tw_test_uniform is them
 * over 2^24, in [0, 1), exact in double, so affine maps of it (2u - 1,
 * u - 0.5) are exact too. */
static inline unsigned tw_test_lcg24(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static inline double tw_test_uniform(unsigned *s) { return (double)tw_test_lcg24(s) / 16777216.0; }

/* a status call must return TW_OK */
#define CHECK_OK(call)                                                                      \
    do {                                                                                    \
        tw_status s_ = (call);                                                              \
        if (s_ != TW_OK) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,       \
                    tw_status_name(s_), tw_last_error());                                   \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

/* max |x_w - x_ref| / size over every coordinate of the two worlds' positions
 * (NaN where any is NaN), printing the first mismatches over tol and the
 * result, each line naming `when` (llm.c's validate_result). */
double tw_test_position_error(const tw_world *ref, const tw_world *w, double size, double tol, const char *when);
/* Path of a file in data/meshes (static buffer). */
const char *tw_test_mesh_path(const char *file);
/* Path of a scratch file under the build's tests/tmp (static buffer, rotating). */
const char *tw_test_tmp_path(const char *file);
/* 1 (and why, on stdout) when GPU cases cannot run here: built without CUDA,
 * or no usable device; the case then returns TW_SKIP. */
int tw_test_gpu_skip(void);
/* The armadillo drop, as bench/contact_report.c sets it up: the world's
 * settings (E 1e5, dt 1/30 s, gravity -9.81 along y, one thread), */
tw_world_def tw_test_armadillo_def(tw_backend backend, tw_method method, tw_integrator integ);
/* and the world of d: armadillo_4k scaled to 0.3 m tall with its lowest
 * vertex 0.1 m over a floor of friction mu; *mesh: the scaled mesh (the
 * caller destroys it after the world), *size: its bounding-box diagonal, m.
 * NULL (tw_last_error) on failure. */
tw_world *tw_test_armadillo_drop(tw_mesh **mesh, const tw_world_def *d, double mu, double *size);
#endif
