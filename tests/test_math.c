/* 3x3 SVD and polar decomposition: the routine both backends share. */
#include <stdlib.h>

#include "hd/math3.h"
#include "tw_test.h"

static const double tol = sizeof(tw_real) == 8 ? 1e-10 : 2e-4;

static double urand(void) { return rand() / (double)RAND_MAX * 2 - 1; }

static tw_m3 random_m3(void)
{
    tw_m3 A;
    for (int i = 0; i < 9; i++) A.m[i] = (tw_real)urand();
    return A;
}

static double max_abs_diff(tw_m3 a, tw_m3 b)
{
    double m = 0;
    for (int i = 0; i < 9; i++) m = tw_test_max(m, fabs((double)a.m[i] - b.m[i]));
    return m;
}

static double orthogonality_error(tw_m3 U) { return max_abs_diff(tw_m3_mul_at(U, U), tw_m3_identity()); }

static tw_m3 reconstruct(tw_m3 U, const tw_real s[3], tw_m3 V)
{
    tw_m3 S = tw_m3_zero();
    S.m[0] = s[0]; S.m[4] = s[1]; S.m[8] = s[2];
    return tw_m3_mul_bt(tw_m3_mul(U, S), V);
}

/* checks one matrix; returns the worst error seen */
static double svd_error(tw_m3 A)
{
    tw_m3 U, V;
    tw_real s[3];
    tw_svd3(A, &U, s, &V);
    double scale = tw_test_max(1.0, sqrt(tw_m3_frobenius2(A)));
    double e = max_abs_diff(reconstruct(U, s, V), A) / scale;
    e = tw_test_max(e, orthogonality_error(U));
    e = tw_test_max(e, orthogonality_error(V));
    if (!(s[0] >= s[1] && s[1] >= s[2] && s[2] >= 0)) e = tw_test_max(e, 1.0);
    tw_m3 R = tw_polar3(A);
    e = tw_test_max(e, orthogonality_error(R));
    e = tw_test_max(e, fabs(tw_m3_det(R) - 1));
    return e;
}

/* The error accumulation cannot hide NaN: a NaN result is the worst error. */
TW_TEST(nan_result_fails_the_check)
{
    CHECK(tw_test_max(tw_test_max(0.0, NAN), 1.0) != tw_test_max(tw_test_max(0.0, NAN), 1.0));
    CHECK(tw_test_max(0.5, 0.25) == 0.5);
    tw_m3 A = random_m3();
    A.m[4] = (tw_real)NAN;
    CHECK(!(svd_error(A) < tol));
    return 0;
}

TW_TEST(svd_random)
{
    srand(1);
    double worst = 0;
    for (int k = 0; k < 20000; k++) worst = tw_test_max(worst, svd_error(random_m3()));
    printf("worst error over 20000 random matrices: %.3g\n", worst);
    CHECK(worst < tol);
    return 0;
}

TW_TEST(svd_rank_deficient)
{
    srand(2);
    double worst = 0;
    for (int k = 0; k < 5000; k++) {
        tw_v3 a = tw_v3_make((tw_real)urand(), (tw_real)urand(), (tw_real)urand());
        tw_v3 b = tw_v3_make((tw_real)urand(), (tw_real)urand(), (tw_real)urand());
        tw_v3 c = tw_v3_make((tw_real)urand(), (tw_real)urand(), (tw_real)urand());
        tw_m3 rank1 = tw_m3_add_outer(tw_m3_zero(), a, b, 1);
        tw_m3 rank2 = tw_m3_add_outer(rank1, c, a, 1);
        worst = tw_test_max(worst, svd_error(rank1));
        worst = tw_test_max(worst, svd_error(rank2));
    }
    printf("worst error over rank-1 and rank-2 matrices: %.3g\n", worst);
    CHECK(worst < 10 * tol);
    return 0;
}

TW_TEST(svd_zero_and_identity)
{
    CHECK(svd_error(tw_m3_zero()) < tol);
    CHECK(max_abs_diff(tw_polar3(tw_m3_zero()), tw_m3_identity()) < tol);
    CHECK(max_abs_diff(tw_polar3(tw_m3_identity()), tw_m3_identity()) < tol);
    tw_m3 diag = tw_m3_zero(); /* repeated singular values */
    diag.m[0] = diag.m[4] = diag.m[8] = 2;
    CHECK(svd_error(diag) < tol);
    return 0;
}

/* A reflection (det < 0): polar must still return a rotation, the one that
 * leaves the "inverted" element's smallest direction flipped. */
TW_TEST(polar_reflected_is_rotation)
{
    srand(3);
    for (int k = 0; k < 5000; k++) {
        tw_m3 A = random_m3();
        if (tw_m3_det(A) > 0) for (int c = 0; c < 3; c++) A.m[3 * c] = -A.m[3 * c];
        tw_m3 R = tw_polar3(A);
        CHECK_NEAR(tw_m3_det(R), 1, tol);
        CHECK(orthogonality_error(R) < tol);
        /* R^T A is symmetric */
        tw_m3 S = tw_m3_mul_at(R, A);
        CHECK(max_abs_diff(S, tw_m3_transpose(S)) < 50 * tol);
    }
    tw_m3 M = tw_m3_identity();
    M.m[8] = -1; /* a pure reflection: polar is a rotation, S has a negative eigenvalue */
    tw_m3 R = tw_polar3(M);
    CHECK_NEAR(tw_m3_det(R), 1, tol);
    return 0;
}

/* polar of (rotation * stretch) recovers the rotation */
TW_TEST(polar_recovers_rotation)
{
    double c = cos(0.7), s = sin(0.7);
    tw_m3 Q = tw_m3_identity();
    Q.m[0] = (tw_real)c; Q.m[1] = (tw_real)-s; Q.m[3] = (tw_real)s; Q.m[4] = (tw_real)c;
    tw_m3 S = tw_m3_zero();
    S.m[0] = 2; S.m[4] = (tw_real)0.5; S.m[8] = (tw_real)1.5; S.m[1] = S.m[3] = (tw_real)0.2;
    tw_m3 R = tw_polar3(tw_m3_mul(Q, S));
    printf("rotation error %.3g\n", max_abs_diff(R, Q));
    CHECK(max_abs_diff(R, Q) < 10 * tol);
    return 0;
}

TW_TEST(inverse_and_det)
{
    srand(4);
    tw_m3 A = random_m3(), Ai;
    CHECK(tw_m3_inverse(A, &Ai));
    CHECK(max_abs_diff(tw_m3_mul(A, Ai), tw_m3_identity()) < 100 * tol);
    CHECK(!tw_m3_inverse(tw_m3_zero(), &Ai));
    return 0;
}
