/* GPU parity of the batched polar decomposition: exits 77 (skipped) with no
 * CUDA build or no device. */
#include <stdlib.h>

#include "hd/math3.h"
#include "tw_test.h"
#ifdef TW_HAVE_CUDA
#include "tw_cuda.h"
#endif

TW_TEST(polar_batched_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    int count = 100000;
    tw_real *A = malloc(sizeof(tw_real) * 9 * count), *R = malloc(sizeof(tw_real) * 9 * count);
    srand(7);
    for (int i = 0; i < 9 * count; i++) A[i] = (tw_real)(rand() / (double)RAND_MAX * 2 - 1);
    for (int i = 0; i < 9; i++) A[i] = 0; /* a zero matrix */
    CHECK_OK(tw_cuda_polar_batched(A, R, count));
    double worst = 0;
    for (int k = 0; k < count; k++) {
        tw_m3 ref = tw_polar3(tw_m3_load(A + 9 * k));
        for (int i = 0; i < 9; i++) worst = tw_test_max(worst, fabs((double)ref.m[i] - R[9 * k + i]));
    }
    printf("max |R_gpu - R_cpu| over %d matrices: %.3g\n", count, worst);
    CHECK(worst < (sizeof(tw_real) == 8 ? 1e-10 : 1e-3));
    free(A);
    free(R);
#endif
    return 0;
}

/* ------------------------------------------------ against cuSOLVER's gesvdjBatched
 * cuSOLVER's batched Jacobi SVD is the oracle: our singular values (tw_svd3)
 * must equal its S, and our GPU polar rotation R must be the rotation that
 * maximizes tr(R^T A) = s1 + s2 + d s3 (d = det U det V: the sign of det A).
 * Where that rotation is unique and well conditioned (gap s2 + d s3 not
 * small against s1) R must equal U diag(1, 1, d) V^T; for rank 1 and zero
 * matrices any maximizer is a valid polar factor, so only the rotation and
 * the trace are checked. */

static double rnd(void) { return rand() / (double)RAND_MAX * 2 - 1; }

static tw_m3 random_m3(double scale)
{
    tw_m3 a;
    for (int i = 0; i < 9; i++) a.m[i] = (tw_real)(scale * rnd());
    return a;
}

static tw_m3 random_rotation(void) { return tw_polar3(random_m3(1)); }

/* Q1 diag(s) Q2^T with random rotations */
static tw_m3 with_singular_values(double s0, double s1, double s2)
{
    tw_m3 D = tw_m3_zero();
    D.m[0] = (tw_real)s0; D.m[4] = (tw_real)s1; D.m[8] = (tw_real)s2;
    return tw_m3_mul_bt(tw_m3_mul(random_rotation(), D), random_rotation());
}

#ifdef TW_HAVE_CUDA
#include "tw_cusolver.h"

/* 0 when GPU polar, tw_svd3 and gesvdjBatched agree on all count matrices */
static int against_gesvdj(const char *label, const tw_real *A, int count, int unique_rotation)
{
    int dbl = sizeof(tw_real) == 8;
    double tol = dbl ? 1e-10 : 1e-4;
    size_t m9 = sizeof(tw_real) * 9 * (size_t)count;
    tw_real *R = malloc(m9), *U = malloc(m9), *V = malloc(m9), *S = malloc(m9 / 3);
    double ms = 0;
    int fail = !R || !U || !V || !S;
    if (!fail && tw_cuda_polar_batched(A, R, count) != TW_OK) fail = 1;
    if (!fail && tw_cusolver_svd_batched(A, U, S, V, count, &ms) != TW_OK) fail = 1;
    if (fail) fprintf(stderr, "%s: %s\n", label, tw_last_error());
    double e_sigma = 0, e_trace = 0, e_orth = 0, e_R = 0;
    int compared = 0;
    for (int k = 0; k < count && !fail; k++) {
        tw_m3 a = tw_m3_load(A + 9 * (size_t)k), u = tw_m3_load(U + 9 * (size_t)k), v = tw_m3_load(V + 9 * (size_t)k);
        tw_m3 r = tw_m3_load(R + 9 * (size_t)k), uc, vc;
        const tw_real *s = S + 3 * (size_t)k;
        double scale = tw_test_max((double)s[0], 1e-30);
        tw_real so[3];
        tw_svd3(a, &uc, so, &vc);
        for (int i = 0; i < 3; i++) e_sigma = tw_test_max(e_sigma, fabs((double)so[i] - s[i]) / tw_test_max(scale, 1));
        double d = tw_m3_det(u) * tw_m3_det(v) < 0 ? -1 : 1;
        /* R a rotation */
        tw_m3 rtr = tw_m3_mul_at(r, r);
        for (int i = 0; i < 9; i++) e_orth = tw_test_max(e_orth, fabs((double)rtr.m[i] - (i % 4 == 0)));
        e_orth = tw_test_max(e_orth, fabs((double)tw_m3_det(r) - 1));
        /* R maximizes the trace */
        double tr = tw_m3_trace(tw_m3_mul_at(r, a)), best = (double)s[0] + s[1] + d * s[2];
        e_trace = tw_test_max(e_trace, fabs(tr - best) / tw_test_max(scale, 1));
        /* R equals gesvdj's where unique */
        double gap = (double)s[1] + d * s[2];
        if (unique_rotation && gap > 1e-2 * scale) {
            tw_m3 ud = u;
            for (int i = 0; i < 3; i++) ud.m[3 * i + 2] = (tw_real)(ud.m[3 * i + 2] * d);
            tw_m3 rref = tw_m3_mul_bt(ud, v);
            double e = 0;
            for (int i = 0; i < 9; i++) e = tw_test_max(e, fabs((double)r.m[i] - rref.m[i]));
            e_R = tw_test_max(e_R, e * gap / scale); /* the polar factor's sensitivity is ~ scale / gap */
            compared++;
        }
    }
    printf("%s: %d matrices, gesvdjBatched %.3f ms; max errors: sigma %.3g, trace %.3g, |R^T R - I| %.3g, "
           "|R - R_gesvdj| * gap / s1 %.3g over %d\n",
           label, count, ms, e_sigma, e_trace, e_orth, e_R, compared);
    fail = fail || !(e_sigma < tol) || !(e_trace < 10 * tol) || !(e_orth < tol) || !(e_R < tol) ||
           (unique_rotation && compared < count / 2);
    free(R); free(U); free(V); free(S);
    return fail;
}

#endif

/* Runs against_gesvdj on count matrices made by make(k) (seeded); TW_SKIP
 * without CUDA or a device. */
static int gesvdj_case(const char *label, int count, int unique_rotation, tw_m3 (*make)(int k))
{
    if (tw_test_gpu_skip()) return TW_SKIP;
#ifdef TW_HAVE_CUDA
    tw_real *A = malloc(sizeof(tw_real) * 9 * (size_t)count);
    CHECK(A);
    srand(11);
    for (int k = 0; k < count; k++) tw_m3_store(A + 9 * (size_t)k, make(k));
    int fail = against_gesvdj(label, A, count, unique_rotation);
    free(A);
    CHECK(!fail);
#endif
    return 0;
}

static tw_m3 make_random(int k) { return random_m3(k % 2 ? 1 : 1e3); }
static tw_m3 make_rank2(int k) { return with_singular_values(1 + rnd() * 0.5, 0.1 + 0.5 * fabs(rnd()), 0); }
static tw_m3 make_rank1(int k) { return with_singular_values(0.5 + fabs(rnd()), 0, 0); }
/* det < 0, well separated and, for a few, s2 close to |s3| (then only the trace is conclusive) */
static tw_m3 make_reflected(int k)
{
    return with_singular_values(2 + rnd() * 0.5, 1 + 0.2 * rnd(), k % 10 ? -0.3 + 0.1 * rnd() : -0.999);
}
static tw_m3 make_zero(int k) { return tw_m3_zero(); }
static tw_m3 make_near_identity(int k) { return tw_m3_add(tw_m3_identity(), random_m3(1e-3)); }

TW_TEST(gesvdj_random) { return gesvdj_case("random", 20000, 1, make_random); }
TW_TEST(gesvdj_rank2) { return gesvdj_case("rank 2", 5000, 1, make_rank2); }
TW_TEST(gesvdj_rank1) { return gesvdj_case("rank 1", 5000, 0, make_rank1); }
TW_TEST(gesvdj_reflected) { return gesvdj_case("reflected (det < 0)", 5000, 1, make_reflected); }
TW_TEST(gesvdj_zero) { return gesvdj_case("zero", 100, 0, make_zero); }
TW_TEST(gesvdj_near_identity) { return gesvdj_case("near identity", 5000, 1, make_near_identity); }
