/* 3x3 algebra and the one SVD / polar decomposition both backends use.
 *
 * Matrices are row-major tw_m3 { m[9] } passed by value or pointer; all
 * functions are TW_HD inline so a CUDA kernel calls exactly what the CPU runs.
 *
 * SVD (after McAdams et al. 2011, "Computing the SVD of 3x3 matrices"):
 *   1. eigen-decompose the symmetric A^T A by cyclic Jacobi: A^T A = V L V^T,
 *      V a proper rotation (det +1), eigenvalues sorted descending;
 *   2. B = A V; QR-factor B by Givens rotations: B = U R, U a proper rotation,
 *      R upper triangular. Then A = U diag(R) V^T with R's off-diagonal ~ 0.
 *   R11, R22 >= 0 and R33 carries the sign of det A: this is the
 *   "rotation-variant" SVD, so U V^T is always a rotation (det +1) — what
 *   polar decomposition needs for inverted elements. tw_svd3 turns it into the
 *   textbook SVD (sigma >= 0, det U may be -1).
 * Rank-deficient and zero inputs are handled: Givens with a zero pivot picks
 * the identity, Jacobi of a zero matrix returns V = I. No division by a
 * singular value ever happens, so no NaN comes out of finite input.
 *
 * Polar decomposition (tw_polar3) tries Newton's iteration first (Higham
 * 1986): X <- (X + X^-T) / 2 from X = A. For det A > 0 it converges
 * quadratically to the orthogonal polar factor, the same rotation as the
 * SVD's U V^T. Stopping rule: with d = |X_k+1 - X_k|_F, the error of X_k+1 is
 * at most d^2 / 2 (per singular value, sigma -> (sigma + 1/sigma) / 2 moves
 * by d_i and lands within d_i |sigma - 1| / (sigma + 1) <= d_i^2 / 2 of 1), so
 * d^2 < TW_EPS stops at rounding level: 1-3 steps at the strains of a
 * simulation, 5-10x cheaper than the SVD. A first step far from orthogonal
 * is Frobenius-scaled (X <- (g X + X^-T / g) / 2, g = sqrt(|X^-1| / |X|))
 * and never ends the iteration (the bound holds for unscaled steps).
 * Inverted, near-singular (det A < 1e-2 (|A|_F / sqrt 3)^3, condition
 * beyond ~50-100), non-finite, or not converged in 10 steps: the SVD above,
 * whose rotation-variant form handles all of those. */
#ifndef TW_MATH3_H
#define TW_MATH3_H
#include "hd/hd.h"
#include <math.h>

typedef struct tw_m3 { tw_real m[9]; } tw_m3;
typedef struct tw_v3 { tw_real x, y, z; } tw_v3;

#ifdef TW_DOUBLE
#define TW_SQRT sqrt
#define TW_FABS fabs
#define TW_EPS 1e-15
#else
#define TW_SQRT sqrtf
#define TW_FABS fabsf
#define TW_EPS 1e-7f
#endif

TW_HD tw_v3 tw_v3_make(tw_real x, tw_real y, tw_real z) { tw_v3 v; v.x = x; v.y = y; v.z = z; return v; }
TW_HD tw_v3 tw_v3_load(const tw_real *p) { return tw_v3_make(p[0], p[1], p[2]); }
TW_HD void tw_v3_store(tw_real *p, tw_v3 v) { p[0] = v.x; p[1] = v.y; p[2] = v.z; }
TW_HD tw_v3 tw_v3_add(tw_v3 a, tw_v3 b) { return tw_v3_make(a.x + b.x, a.y + b.y, a.z + b.z); }
TW_HD tw_v3 tw_v3_sub(tw_v3 a, tw_v3 b) { return tw_v3_make(a.x - b.x, a.y - b.y, a.z - b.z); }
TW_HD tw_v3 tw_v3_scale(tw_v3 a, tw_real s) { return tw_v3_make(a.x * s, a.y * s, a.z * s); }
TW_HD tw_real tw_v3_dot(tw_v3 a, tw_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
TW_HD tw_v3 tw_v3_cross(tw_v3 a, tw_v3 b)
{
    return tw_v3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
TW_HD tw_real tw_v3_norm(tw_v3 a) { return TW_SQRT(tw_v3_dot(a, a)); }

TW_HD tw_m3 tw_m3_zero(void) { tw_m3 r; for (int i = 0; i < 9; i++) r.m[i] = 0; return r; }
TW_HD tw_m3 tw_m3_identity(void) { tw_m3 r = tw_m3_zero(); r.m[0] = r.m[4] = r.m[8] = 1; return r; }
TW_HD tw_m3 tw_m3_load(const tw_real *p) { tw_m3 r; for (int i = 0; i < 9; i++) r.m[i] = p[i]; return r; }
TW_HD void tw_m3_store(tw_real *p, tw_m3 a) { for (int i = 0; i < 9; i++) p[i] = a.m[i]; }
/* Columns c0, c1, c2. */
TW_HD tw_m3 tw_m3_from_cols(tw_v3 c0, tw_v3 c1, tw_v3 c2)
{
    tw_m3 r;
    r.m[0] = c0.x; r.m[1] = c1.x; r.m[2] = c2.x;
    r.m[3] = c0.y; r.m[4] = c1.y; r.m[5] = c2.y;
    r.m[6] = c0.z; r.m[7] = c1.z; r.m[8] = c2.z;
    return r;
}
TW_HD tw_v3 tw_m3_col(tw_m3 a, int c) { return tw_v3_make(a.m[c], a.m[3 + c], a.m[6 + c]); }
TW_HD tw_m3 tw_m3_transpose(tw_m3 a)
{
    tw_m3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[3 * i + j] = a.m[3 * j + i];
    return r;
}
TW_HD tw_m3 tw_m3_mul(tw_m3 a, tw_m3 b)
{
    tw_m3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[3 * i + j] = a.m[3 * i] * b.m[j] + a.m[3 * i + 1] * b.m[3 + j] + a.m[3 * i + 2] * b.m[6 + j];
    return r;
}
/* a * b^T */
TW_HD tw_m3 tw_m3_mul_bt(tw_m3 a, tw_m3 b) { return tw_m3_mul(a, tw_m3_transpose(b)); }
/* a^T * b */
TW_HD tw_m3 tw_m3_mul_at(tw_m3 a, tw_m3 b) { return tw_m3_mul(tw_m3_transpose(a), b); }
TW_HD tw_m3 tw_m3_add(tw_m3 a, tw_m3 b) { for (int i = 0; i < 9; i++) a.m[i] += b.m[i]; return a; }
TW_HD tw_m3 tw_m3_sub(tw_m3 a, tw_m3 b) { for (int i = 0; i < 9; i++) a.m[i] -= b.m[i]; return a; }
TW_HD tw_m3 tw_m3_scale(tw_m3 a, tw_real s) { for (int i = 0; i < 9; i++) a.m[i] *= s; return a; }
TW_HD tw_v3 tw_m3_mulv(tw_m3 a, tw_v3 v)
{
    return tw_v3_make(a.m[0] * v.x + a.m[1] * v.y + a.m[2] * v.z,
                      a.m[3] * v.x + a.m[4] * v.y + a.m[5] * v.z,
                      a.m[6] * v.x + a.m[7] * v.y + a.m[8] * v.z);
}
/* a^T v */
TW_HD tw_v3 tw_m3_tmulv(tw_m3 a, tw_v3 v)
{
    return tw_v3_make(a.m[0] * v.x + a.m[3] * v.y + a.m[6] * v.z,
                      a.m[1] * v.x + a.m[4] * v.y + a.m[7] * v.z,
                      a.m[2] * v.x + a.m[5] * v.y + a.m[8] * v.z);
}
/* a += u v^T * s */
TW_HD tw_m3 tw_m3_add_outer(tw_m3 a, tw_v3 u, tw_v3 v, tw_real s)
{
    tw_real uu[3] = {u.x * s, u.y * s, u.z * s}, vv[3] = {v.x, v.y, v.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[3 * i + j] += uu[i] * vv[j];
    return a;
}
TW_HD tw_real tw_m3_det(tw_m3 a)
{
    return a.m[0] * (a.m[4] * a.m[8] - a.m[5] * a.m[7]) - a.m[1] * (a.m[3] * a.m[8] - a.m[5] * a.m[6]) +
           a.m[2] * (a.m[3] * a.m[7] - a.m[4] * a.m[6]);
}
TW_HD tw_real tw_m3_trace(tw_m3 a) { return a.m[0] + a.m[4] + a.m[8]; }
TW_HD tw_real tw_m3_frobenius2(tw_m3 a)
{
    tw_real s = 0;
    for (int i = 0; i < 9; i++) s += a.m[i] * a.m[i];
    return s;
}
/* cof(a) = det(a) a^-T, written out so a singular a is fine */
TW_HD tw_m3 tw_m3_cofactor(tw_m3 a)
{
    tw_m3 c;
    c.m[0] = a.m[4] * a.m[8] - a.m[5] * a.m[7];
    c.m[1] = a.m[5] * a.m[6] - a.m[3] * a.m[8];
    c.m[2] = a.m[3] * a.m[7] - a.m[4] * a.m[6];
    c.m[3] = a.m[2] * a.m[7] - a.m[1] * a.m[8];
    c.m[4] = a.m[0] * a.m[8] - a.m[2] * a.m[6];
    c.m[5] = a.m[1] * a.m[6] - a.m[0] * a.m[7];
    c.m[6] = a.m[1] * a.m[5] - a.m[2] * a.m[4];
    c.m[7] = a.m[2] * a.m[3] - a.m[0] * a.m[5];
    c.m[8] = a.m[0] * a.m[4] - a.m[1] * a.m[3];
    return c;
}
/* Inverse by cofactors; returns 0 (and the zero matrix) if |det| is ~0. */
TW_HD int tw_m3_inverse(tw_m3 a, tw_m3 *out)
{
    tw_real d = tw_m3_det(a);
    tw_real scale = tw_m3_frobenius2(a);
    if (!(TW_FABS(d) > (tw_real)1e-30) || !(d * d > (tw_real)1e-30 * scale * scale * scale)) {
        *out = tw_m3_zero();
        return 0;
    }
    tw_real id = (tw_real)1 / d;
    tw_m3 r;
    r.m[0] = (a.m[4] * a.m[8] - a.m[5] * a.m[7]) * id;
    r.m[1] = (a.m[2] * a.m[7] - a.m[1] * a.m[8]) * id;
    r.m[2] = (a.m[1] * a.m[5] - a.m[2] * a.m[4]) * id;
    r.m[3] = (a.m[5] * a.m[6] - a.m[3] * a.m[8]) * id;
    r.m[4] = (a.m[0] * a.m[8] - a.m[2] * a.m[6]) * id;
    r.m[5] = (a.m[2] * a.m[3] - a.m[0] * a.m[5]) * id;
    r.m[6] = (a.m[3] * a.m[7] - a.m[4] * a.m[6]) * id;
    r.m[7] = (a.m[1] * a.m[6] - a.m[0] * a.m[7]) * id;
    r.m[8] = (a.m[0] * a.m[4] - a.m[1] * a.m[3]) * id;
    *out = r;
    return 1;
}

/* ---------------------------------------------------------------- SVD */

/* One Jacobi rotation zeroing S[p][q] of symmetric S, accumulated into V. */
TW_HD void tw_jacobi_rotate(tw_m3 *S, tw_m3 *V, int p, int q)
{
    tw_real apq = S->m[3 * p + q];
    if (apq == 0) return;
    tw_real app = S->m[3 * p + p], aqq = S->m[3 * q + q];
    tw_real theta = (aqq - app) / (2 * apq);
    tw_real t = (theta >= 0 ? (tw_real)1 : (tw_real)-1) / (TW_FABS(theta) + TW_SQRT(theta * theta + 1));
    tw_real c = (tw_real)1 / TW_SQRT(t * t + 1), s = t * c;
    /* S' = J^T S J with J = rotation in the (p,q) plane */
    for (int k = 0; k < 3; k++) {
        tw_real skp = S->m[3 * k + p], skq = S->m[3 * k + q];
        S->m[3 * k + p] = c * skp - s * skq;
        S->m[3 * k + q] = s * skp + c * skq;
    }
    for (int k = 0; k < 3; k++) {
        tw_real spk = S->m[3 * p + k], sqk = S->m[3 * q + k];
        S->m[3 * p + k] = c * spk - s * sqk;
        S->m[3 * q + k] = s * spk + c * sqk;
    }
    for (int k = 0; k < 3; k++) {
        tw_real vkp = V->m[3 * k + p], vkq = V->m[3 * k + q];
        V->m[3 * k + p] = c * vkp - s * vkq;
        V->m[3 * k + q] = s * vkp + c * vkq;
    }
}

/* Symmetric eigen-decomposition S = V diag(l) V^T, V a rotation, l descending. */
TW_HD void tw_sym_eigen3(tw_m3 S, tw_m3 *V, tw_real l[3])
{
    *V = tw_m3_identity();
    for (int sweep = 0; sweep < 12; sweep++) {
        tw_real off = S.m[1] * S.m[1] + S.m[2] * S.m[2] + S.m[5] * S.m[5];
        tw_real diag = S.m[0] * S.m[0] + S.m[4] * S.m[4] + S.m[8] * S.m[8];
        /* converged: off-diagonal at the rounding level (quadratic
         * convergence gets there in 3-5 sweeps) */
        if (!(off > (tw_real)(TW_EPS * TW_EPS) * diag)) break;
        tw_jacobi_rotate(&S, V, 0, 1);
        tw_jacobi_rotate(&S, V, 0, 2);
        tw_jacobi_rotate(&S, V, 1, 2);
    }
    l[0] = S.m[0]; l[1] = S.m[4]; l[2] = S.m[8];
    /* sort descending; swapping two columns and negating one keeps det +1 */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (l[j] < l[j + 1]) {
                tw_real t = l[j]; l[j] = l[j + 1]; l[j + 1] = t;
                for (int k = 0; k < 3; k++) {
                    tw_real a = V->m[3 * k + j];
                    V->m[3 * k + j] = V->m[3 * k + j + 1];
                    V->m[3 * k + j + 1] = -a;
                }
            }
}

/* Givens rotation zeroing B[i][j] against pivot B[j][j] (rows j, i), applied
 * to B from the left and accumulated into U (U = U G^T). */
TW_HD void tw_givens_qr(tw_m3 *B, tw_m3 *U, int j, int i)
{
    tw_real a = B->m[3 * j + j], b = B->m[3 * i + j];
    tw_real r = TW_SQRT(a * a + b * b);
    tw_real c = 1, s = 0;
    if (r > 0) { c = a / r; s = b / r; }
    for (int k = 0; k < 3; k++) {
        tw_real bj = B->m[3 * j + k], bi = B->m[3 * i + k];
        B->m[3 * j + k] = c * bj + s * bi;
        B->m[3 * i + k] = -s * bj + c * bi;
    }
    for (int k = 0; k < 3; k++) {
        tw_real uj = U->m[3 * k + j], ui = U->m[3 * k + i];
        U->m[3 * k + j] = c * uj + s * ui;
        U->m[3 * k + i] = -s * uj + c * ui;
    }
}

/* Rotation-variant SVD: A = U diag(s) V^T, U and V rotations (det +1),
 * s[0] >= s[1] >= |s[2]|, s[2] < 0 exactly when det A < 0. */
TW_HD void tw_svd3_rv(tw_m3 A, tw_m3 *U, tw_real s[3], tw_m3 *V)
{
    tw_real l[3];
    tw_sym_eigen3(tw_m3_mul_at(A, A), V, l);
    tw_m3 B = tw_m3_mul(A, *V);
    *U = tw_m3_identity();
    tw_givens_qr(&B, U, 0, 1);
    tw_givens_qr(&B, U, 0, 2);
    tw_givens_qr(&B, U, 1, 2);
    s[0] = B.m[0]; s[1] = B.m[4]; s[2] = B.m[8];
    /* a rank-deficient column can leave s[1] < 0 with s[2] ~ 0: move the sign */
    if (s[1] < 0) {
        s[1] = -s[1]; s[2] = -s[2];
        for (int k = 0; k < 3; k++) { U->m[3 * k + 1] = -U->m[3 * k + 1]; U->m[3 * k + 2] = -U->m[3 * k + 2]; }
    }
}

/* Textbook SVD: s >= 0, U and V orthogonal (det U = sign det A, det V = +1). */
TW_HD void tw_svd3(tw_m3 A, tw_m3 *U, tw_real s[3], tw_m3 *V)
{
    tw_svd3_rv(A, U, s, V);
    if (s[2] < 0) {
        s[2] = -s[2];
        for (int k = 0; k < 3; k++) U->m[3 * k + 2] = -U->m[3 * k + 2];
    }
    /* noise-level singular values of a rank-deficient A may come out of
     * order: swap columns 1 and 2 of U and V (negating one of each keeps
     * det V = +1 and U diag(s) V^T unchanged) */
    if (s[2] > s[1]) {
        tw_real t = s[1]; s[1] = s[2]; s[2] = t;
        for (int k = 0; k < 3; k++) {
            tw_real u = U->m[3 * k + 1], v = V->m[3 * k + 1];
            U->m[3 * k + 1] = U->m[3 * k + 2]; U->m[3 * k + 2] = -u;
            V->m[3 * k + 1] = V->m[3 * k + 2]; V->m[3 * k + 2] = -v;
        }
    }
}

/* Newton's polar iteration (see the top of this file): 1 and the rotation in
 * *R when it converged, 0 (R untouched) when A needs the SVD. */
TW_HD int tw_polar3_newton(tw_m3 A, tw_m3 *R)
{
    tw_m3 X = A;
    tw_real n2 = tw_m3_frobenius2(X);
    for (int it = 0; it < 10; it++) {
        tw_m3 C = tw_m3_cofactor(X); /* X^-T = C / det */
        tw_real det = X.m[0] * C.m[0] + X.m[1] * C.m[1] + X.m[2] * C.m[2];
        /* inverted, near-singular or not finite: the SVD decides */
        if (it == 0 && !(det > 0 && 27 * det * det > (tw_real)1e-4 * n2 * n2 * n2)) return 0;
        tw_real a = (tw_real)0.5, b = (tw_real)0.5 / det;
        int scaled = it == 0 && TW_FABS(n2 - 3) > (tw_real)0.9;
        if (scaled) {
            tw_real g = TW_SQRT(TW_SQRT(tw_m3_frobenius2(C) / (det * det * n2)));
            a *= g;
            b /= g;
        }
        tw_real d2 = 0;
        for (int k = 0; k < 9; k++) {
            tw_real xn = a * X.m[k] + b * C.m[k], dk = xn - X.m[k];
            d2 += dk * dk;
            X.m[k] = xn;
        }
        if (!scaled && d2 < (tw_real)TW_EPS) {
            *R = X;
            return 1;
        }
    }
    return 0;
}

/* Polar decomposition A = R S with R a rotation (det +1) closest to A; for
 * det A < 0 (an inverted element) R still is a rotation and S has one
 * negative eigenvalue. Zero A gives R = I. Newton when it applies, else SVD. */
TW_HD tw_m3 tw_polar3(tw_m3 A)
{
    tw_m3 R;
    if (tw_polar3_newton(A, &R)) return R;
    tw_m3 U, V;
    tw_real s[3];
    tw_svd3_rv(A, &U, s, &V);
    return tw_m3_mul_bt(U, V);
}
#endif
