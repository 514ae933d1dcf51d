/* The tetra front's element pass and gathered assembly (TW_HD inline),
 * shared by the CPU front (host/tetra_front.c) and the device front
 * (kernels/cuda_front.cu), in double as the CPU front computes them; only
 * the rotation's polar decomposition is in tw_real (tw_polar3), and the
 * system's blocks are tw_real sums of double products.
 *
 * Per active tet, corners c[0..3] (indices into x and X, 3 per vertex),
 * gradients g (12) and element stiffness K = V B^T C B (144, row-major
 * 12x12, the tree's anisotropic C):
 *   F = sum_p x_p g_p^T,  R = polar(F),  u_p = R^T x_p - X_p,
 *   f_p = -R sum_q K^pq u_q,  KR^pq = R K^pq R^T.
 * The system A = cm M + Q^T (ck KR) Q gathers per block: each block sums its
 * contributions w KR^pq (w = ck W[p][sI] W[q][sJ], the corner-by-slot
 * weights of Q) in the order the CPU front scatters them (tet, then p, then
 * q), each product rounded to tw_real before it meets the running sum, then
 * the diagonal's mass; the force per free vertex likewise (tet, then p), in
 * double. The lists (tw_front_maps, host/tetra_front_maps.h) hold the
 * contributions in that order, so a gather reproduces the CPU's scatter bit
 * for bit where the element pass is the same arithmetic. */
#ifndef TW_FRONT_ELEMENT_H
#define TW_FRONT_ELEMENT_H
#include "hd/math3.h"

/* F = sum_p x_p g_p^T. */
TW_HD void tw_front_deformation(const double *x, const int *c, const double *g, double F[9])
{
    for (int k = 0; k < 9; k++) F[k] = 0;
    for (int p = 0; p < 4; p++) {
        const double *xp = x + 3 * (size_t)c[p];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) F[3 * i + j] += xp[i] * g[3 * p + j];
    }
}

/* R = polar(F), the polar factor taken in tw_real. */
TW_HD void tw_front_rotation(const double F[9], double R[9])
{
    tw_m3 A;
    for (int i = 0; i < 9; i++) A.m[i] = (tw_real)F[i];
    const tw_m3 Rm = tw_polar3(A);
    for (int i = 0; i < 9; i++) R[i] = (double)Rm.m[i];
}

/* The corotated displacement: R (polar of F) and u_p = R^T x_p - X_p. */
TW_HD void tw_front_rotated_displacement(const double *x, const double *X, const int *c, const double *g,
                                         double R[9], double u[12])
{
    double F[9];
    tw_front_deformation(x, c, g, F);
    tw_front_rotation(F, R);
    for (int p = 0; p < 4; p++) {
        const double *xp = x + 3 * (size_t)c[p], *Xp = X + 3 * (size_t)c[p];
        for (int i = 0; i < 3; i++) u[3 * p + i] = R[i] * xp[0] + R[3 + i] * xp[1] + R[6 + i] * xp[2] - Xp[i];
    }
}

/* The element force fe = -R K u and the rotated stiffness KR = R K^pq R^T
 * per block (12x12, row-major). */
TW_HD void tw_front_element_forces(const double *K, const double R[9], const double u[12], double fe[12],
                                   double KR[144])
{
    for (int p = 0; p < 4; p++) {
        double ku[3];
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int j = 0; j < 12; j++) s += K[12 * (3 * p + i) + j] * u[j];
            ku[i] = s;
        }
        for (int i = 0; i < 3; i++) fe[3 * p + i] = -(R[3 * i] * ku[0] + R[3 * i + 1] * ku[1] + R[3 * i + 2] * ku[2]);
    }
    for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++) {
            double B[9], T[9];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) B[3 * i + j] = K[12 * (3 * p + i) + 3 * q + j];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    T[3 * i + j] = R[3 * i] * B[j] + R[3 * i + 1] * B[3 + j] + R[3 * i + 2] * B[6 + j];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    KR[12 * (3 * p + i) + 3 * q + j] =
                        T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
        }
}

/* One active tet's whole element pass: R (9), fe (12), KR (144). */
TW_HD void tw_front_element(const double *x, const double *X, const int *c, const double *g, const double *K,
                            double R[9], double fe[12], double KR[144])
{
    double u[12];
    tw_front_rotated_displacement(x, X, c, g, R, u);
    tw_front_element_forces(K, R, u, fe, KR);
}

/* A contribution's code: active tet k, corners p, q (blocks) or p (forces). */
TW_HD int tw_front_block_code(int k, int p, int q) { return (k << 4) | (p << 2) | q; }
TW_HD int tw_front_force_code(int k, int p) { return (k << 2) | p; }

/* Block b of the system's stiffness part from its contributions ptr[b] ..
 * ptr[b + 1] - 1 (code, weight) over the active tets' KR (144 each). */
TW_HD void tw_front_block_gather(const int *ptr, const int *code, const double *w, const double *KR, int b,
                                 tw_real A[9])
{
    for (int e = 0; e < 9; e++) A[e] = 0;
    for (int c = ptr[b]; c < ptr[b + 1]; c++) {
        const int k = code[c] >> 4, p = (code[c] >> 2) & 3, q = code[c] & 3;
        const double *Kb = KR + 144 * (size_t)k + 12 * (3 * p) + 3 * q;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) A[3 * i + j] += (tw_real)(w[c] * Kb[12 * i + j]);
    }
}

/* The mass term cm m added to a diagonal block, after its gather. */
TW_HD void tw_front_diag_mass(tw_real A[9], double cm, double m)
{
    for (int d = 0; d < 3; d++) A[4 * d] += (tw_real)(cm * m);
}

/* Free vertex i's right-hand side m v + h (f + m g + fq) and PCG start
 * (v, 0 where held): f gathered from its contributions ptr[i] .. ptr[i + 1]
 * - 1 (code, weight) over the active tets' fe (12 each); fq NULL: no
 * external force. */
TW_HD void tw_front_row_rhs(const int *ptr, const int *code, const double *w, const double *fe, int i, double m,
                            const double *v, const double *fq, const double *gravity, double h, int held,
                            tw_real rhs[3], tw_real vr[3])
{
    double fr[3] = {0, 0, 0};
    for (int c = ptr[i]; c < ptr[i + 1]; c++) {
        const double *fp = fe + 12 * (size_t)(code[c] >> 2) + 3 * (code[c] & 3);
        for (int d = 0; d < 3; d++) fr[d] += w[c] * fp[d];
    }
    for (int d = 0; d < 3; d++) {
        double fd = fr[d] + m * gravity[d];
        if (fq) fd += fq[d];
        rhs[d] = (tw_real)(m * v[d] + h * fd);
        vr[d] = held ? (tw_real)0 : (tw_real)v[d];
    }
}
#endif
