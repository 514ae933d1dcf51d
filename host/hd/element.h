/* Per-element FEM math shared by both backends (TW_HD inline).
 *
 * A tet (a,b,c,d) stores the shape-function gradients g_a..g_d (rows of
 * Bm = Dm^-1 for b,c,d; g_a = -(g_b+g_c+g_d)), its rest volume V and its
 * Lamé constants. Everything else follows from those:
 *
 *   linear block        K^pq = V (lambda g_p g_q^T + mu g_q g_p^T + mu (g_p.g_q) I)
 *   deformation grad.   F = sum_p x_p g_p^T
 *   StVK force          f_p = -V P g_p,  P = F S,  S = lambda tr(E) I + 2 mu E,
 *                       E = (F^T F - I)/2
 *   StVK tangent        K_T^pq = V [ (g_q.S g_p) I + lambda (F g_p)(F g_q)^T
 *                                    + mu (g_p.g_q) F F^T + mu (F g_q)(F g_p)^T ]
 *                       (= K^pq at F = I; derived by differentiating f_p)
 *   corotated force     f_p = -R sum_q K^pq (R^T x_q - X_q)
 *                           = -V R P_c g_p,  P_c = 2 mu eps + lambda tr(eps) I,
 *                       eps = sym(R^T F) - I, which is the same number computed
 *                       per element in O(1) instead of 16 block products.
 */
#ifndef TW_ELEMENT_H
#define TW_ELEMENT_H
#include "hd/math3.h"

/* Gradient of vertex p (0..3) of element e from the 12-real g array. */
TW_HD tw_v3 tw_elem_g(const tw_real *g, int p) { return tw_v3_load(g + 3 * p); }

TW_HD tw_m3 tw_elem_linear_block(const tw_real *g, tw_real V, tw_real lam, tw_real mu, int p, int q)
{
    tw_v3 gp = tw_elem_g(g, p), gq = tw_elem_g(g, q);
    tw_m3 K = tw_m3_zero();
    K = tw_m3_add_outer(K, gp, gq, V * lam);
    K = tw_m3_add_outer(K, gq, gp, V * mu);
    tw_real d = V * mu * tw_v3_dot(gp, gq);
    K.m[0] += d; K.m[4] += d; K.m[8] += d;
    return K;
}

/* corot-element / hybrid system matrix: R K^pq R^T is the linear block of
 * the rotated gradients r_p = R g_p (the mu (g_p.g_q) I term is rotation
 * invariant), so each element packs what its 16 blocks need into
 * TW_COROT_PACK reals (one 64-byte line in float): r_0..r_3, V lambda, V mu,
 * two zeros. The gather then reads one line per contribution. */
#define TW_COROT_PACK 16
TW_HD void tw_corot_pack(tw_real *pk, tw_m3 R, const tw_real *g, tw_real V, tw_real lam, tw_real mu)
{
    for (int p = 0; p < 4; p++) tw_v3_store(pk + 3 * p, tw_m3_mulv(R, tw_elem_g(g, p)));
    pk[12] = V * lam;
    pk[13] = V * mu;
    pk[14] = pk[15] = 0;
}

/* K += R K^pq R^T from a pack. Written so that block (q,p) comes out as the
 * exact transpose of block (p,q) (every product of two gradient components
 * is formed first, and products commute): the assembled matrix is exactly
 * symmetric, and a backend may build one triangle and mirror it. Each entry
 * of the element's block, the diagonal's mu (r_p.r_q) term included, is
 * complete before it meets the running sum K: one rounding at K's size per
 * entry and element. (Adding that term on its own doubled the diagonals'
 * roundings, tripled the float matrix's error and its K 1, and the sagging
 * bar's float-vs-double drift 2-4x: bench/README.md.) */
TW_HD tw_m3 tw_corot_block_add(tw_m3 K, const tw_real *pk, int p, int q)
{
    const tw_real *rp = pk + 3 * p, *rq = pk + 3 * q;
    tw_real vl = pk[12], vm = pk[13];
    tw_real p0 = rp[0], p1 = rp[1], p2 = rp[2], q0 = rq[0], q1 = rq[1], q2 = rq[2];
    tw_real d = vm * (p0 * q0 + p1 * q1 + p2 * q2);
    tw_real s00 = p0 * q0, s11 = p1 * q1, s22 = p2 * q2; /* written out: compilers keep it in registers */
    tw_real s01 = p0 * q1, s10 = p1 * q0, s02 = p0 * q2, s20 = p2 * q0, s12 = p1 * q2, s21 = p2 * q1;
    K.m[0] += vl * s00 + vm * s00 + d; K.m[1] += vl * s01 + vm * s10; K.m[2] += vl * s02 + vm * s20;
    K.m[3] += vl * s10 + vm * s01; K.m[4] += vl * s11 + vm * s11 + d; K.m[5] += vl * s12 + vm * s21;
    K.m[6] += vl * s20 + vm * s02; K.m[7] += vl * s21 + vm * s12; K.m[8] += vl * s22 + vm * s22 + d;
    return K;
}

/* Edge-frame rotation (Müller 2002 eq. 16): the orthonormal frame of the
 * edges (a,b) and (a,c); warp-edge's R_i = frame(now) frame(rest)^T. */
TW_HD tw_m3 tw_edge_frame(tw_v3 a, tw_v3 b, tw_v3 c)
{
    tw_v3 e1 = tw_v3_sub(b, a), e2 = tw_v3_sub(c, a);
    tw_real l1 = tw_v3_norm(e1);
    e1 = tw_v3_scale(e1, l1 > 0 ? 1 / l1 : 0);
    tw_v3 n = tw_v3_cross(e1, e2);
    tw_real ln = tw_v3_norm(n);
    n = tw_v3_scale(n, ln > 0 ? 1 / ln : 0);
    return tw_m3_from_cols(e1, n, tw_v3_cross(e1, n));
}

/* F = I + sum_p u_p g_p^T for the 4 vertex displacements us[0..3]
 * (u = x - X). Equal to sum_p x_p g_p^T since sum_p X_p g_p^T = I, but
 * without the cancellation that costs float its small strains. */
TW_HD tw_m3 tw_elem_deformation(const tw_v3 us[4], const tw_real *g)
{
    tw_m3 F = tw_m3_identity();
    for (int p = 0; p < 4; p++) F = tw_m3_add_outer(F, us[p], tw_elem_g(g, p), 1);
    return F;
}

/* Second Piola-Kirchhoff stress of StVK and its energy density. */
TW_HD tw_m3 tw_stvk_S(tw_m3 F, tw_real lam, tw_real mu, tw_real *energy_density)
{
    tw_m3 E = tw_m3_mul_at(F, F);
    E.m[0] -= 1; E.m[4] -= 1; E.m[8] -= 1;
    E = tw_m3_scale(E, (tw_real)0.5);
    tw_real tr = tw_m3_trace(E);
    if (energy_density) *energy_density = mu * tw_m3_frobenius2(E) + (tw_real)0.5 * lam * tr * tr;
    tw_m3 S = tw_m3_scale(E, 2 * mu);
    S.m[0] += lam * tr; S.m[4] += lam * tr; S.m[8] += lam * tr;
    return S;
}

/* StVK under compression (green): along a principal stretch s its stress
 * s (s^2 - 1) (lambda + 2 mu) / 2 (uniaxial) resists most at s = 1/sqrt(3),
 * falls to zero as the element flattens and, once it is inverted, pushes it
 * on towards the mirror image of its rest shape, whose energy is zero: a tet
 * crushed past that point (a thin spike a body lands on, or an element of
 * a hard impact) stays inverted and drags its neighbours after it, and the
 * run blows up. As Irving, Teran and Fedkiw (Invertible finite elements for
 * robust simulation of large deformation, SCA 2004), green evaluates its
 * stress and tangent at F with the singular values below TW_STVK_SIGMA_MIN
 * (an inverted element's negative one among them) raised to it
 * (tw_stvk_floor), and the energy is continued to first order from there,
 * psi(Fc) + P(Fc) : (F - Fc) (tw_stvk_floor_energy): the stress stays the
 * largest StVK gives, so an inverted element is pushed back out. At
 * 1/sqrt(3) the uniaxial stress's slope is zero, so the continued stress is
 * continuous with a continuous slope there. Elements whose stretches all
 * stay above it (any moderate deformation) take the plain StVK arithmetic,
 * bit for bit. */
#define TW_STVK_SIGMA_MIN ((tw_real)0.57735026918962576)

/* F, or F with its singular values below TW_STVK_SIGMA_MIN raised to it
 * (an inverted element's negative one included); returns 1 when it raised
 * any. Gershgorin's bound on F^T F and det F > 0 settle most elements
 * without the SVD. */
TW_HD int tw_stvk_floor(tw_m3 F, tw_m3 *Fc)
{
    const tw_real c = TW_STVK_SIGMA_MIN;
    *Fc = F;
    tw_m3 C = tw_m3_mul_at(F, F);
    tw_real lb = C.m[0] - TW_FABS(C.m[1]) - TW_FABS(C.m[2]);
    tw_real l1 = C.m[4] - TW_FABS(C.m[3]) - TW_FABS(C.m[5]), l2 = C.m[8] - TW_FABS(C.m[6]) - TW_FABS(C.m[7]);
    lb = l1 < lb ? l1 : lb;
    lb = l2 < lb ? l2 : lb;
    if (lb >= c * c && tw_m3_det(F) > 0) return 0;
    tw_m3 U, V;
    tw_real s[3];
    tw_svd3_rv(F, &U, s, &V);
    if (s[2] >= c) return 0; /* s[0] >= s[1] >= |s[2]|: s[2] is the smallest, signed */
    for (int k = 0; k < 3; k++) {
        tw_real sk = s[k] >= c ? s[k] : c;
        for (int r = 0; r < 3; r++) U.m[3 * r + k] *= sk;
    }
    *Fc = tw_m3_mul_bt(U, V);
    return 1;
}

/* The continued energy density's first-order term P(Fc) : (F - Fc), P = Fc S
 * (S the StVK stress of Fc), added to psi(Fc) where tw_stvk_floor raised F. */
TW_HD tw_real tw_stvk_floor_energy(tw_m3 F, tw_m3 Fc, tw_m3 S)
{
    tw_m3 P = tw_m3_mul(Fc, S), D = tw_m3_sub(F, Fc);
    tw_real e = 0;
    for (int k = 0; k < 9; k++) e += P.m[k] * D.m[k];
    return e;
}

/* green's stress S at Fc (tw_stvk_floor of F; returns it in *Fc) and, with
 * energy_density, the continued energy density at F. */
TW_HD tw_m3 tw_green_S(tw_m3 F, tw_m3 *Fc, tw_real lam, tw_real mu, tw_real *energy_density)
{
    int raised = tw_stvk_floor(F, Fc);
    tw_m3 S = tw_stvk_S(*Fc, lam, mu, energy_density);
    if (raised && energy_density) *energy_density += tw_stvk_floor_energy(F, *Fc, S);
    return S;
}

/* Corotated first Piola-Kirchhoff stress R P_c and energy density, given R. */
TW_HD tw_m3 tw_corot_P(tw_m3 F, tw_m3 R, tw_real lam, tw_real mu, tw_real *energy_density)
{
    tw_m3 RtF = tw_m3_mul_at(R, F);
    tw_m3 eps = tw_m3_scale(tw_m3_add(RtF, tw_m3_transpose(RtF)), (tw_real)0.5);
    eps.m[0] -= 1; eps.m[4] -= 1; eps.m[8] -= 1;
    tw_real tr = tw_m3_trace(eps);
    if (energy_density) *energy_density = mu * tw_m3_frobenius2(eps) + (tw_real)0.5 * lam * tr * tr;
    tw_m3 Pc = tw_m3_scale(eps, 2 * mu);
    Pc.m[0] += lam * tr; Pc.m[4] += lam * tr; Pc.m[8] += lam * tr;
    return tw_m3_mul(R, Pc);
}

/* Hybrid stress (Hauth & Strasser): the pressure from Green strain, the
 * shear from the corotated strain. Split with the bulk modulus
 * kappa = lambda + 2 mu / 3:
 *   psi = mu |dev eps|^2 + (9 kappa / 8) (J^(2/3) - 1)^2,  eps = sym(R^T F) - I
 * where (J^(2/3) - 1)/2 is the Green strain of F's volumetric part J^(1/3) I.
 *   P = 2 mu R dev(eps) + (3 kappa / 2) (J^(2/3) - 1) J^(-1/3) cof(F)
 * Under pure compression F = s I this is exactly StVK's P (both reduce to
 * (3 kappa / 2) s (s^2 - 1) I); under isochoric shear the pressure vanishes
 * and the stress is the corotated deviatoric stress. J is clamped at 0.05 in
 * the J^(-1/3) factor so an inverted element still gets a finite push back. */
TW_HD tw_m3 tw_hybrid_P(tw_m3 F, tw_m3 R, tw_real lam, tw_real mu, tw_real *energy_density)
{
    tw_m3 RtF = tw_m3_mul_at(R, F);
    tw_m3 eps = tw_m3_scale(tw_m3_add(RtF, tw_m3_transpose(RtF)), (tw_real)0.5);
    eps.m[0] -= 1; eps.m[4] -= 1; eps.m[8] -= 1;
    tw_real tr3 = tw_m3_trace(eps) / 3;
    eps.m[0] -= tr3; eps.m[4] -= tr3; eps.m[8] -= tr3; /* dev(eps) */
    tw_real kappa = lam + 2 * mu / 3;
    tw_real J = tw_m3_det(F);
    tw_real cj = (tw_real)cbrt((double)J); /* J^(1/3), defined for J < 0 too */
    tw_real j23 = cj * cj;
    tw_real cjc = cj > (tw_real)0.3684 ? cj : (tw_real)0.3684; /* 0.05^(1/3) */
    if (energy_density)
        *energy_density = mu * tw_m3_frobenius2(eps) + (tw_real)(9.0 / 8.0) * kappa * (j23 - 1) * (j23 - 1);
    tw_m3 C = tw_m3_cofactor(F); /* det(F) F^-T, fine for a singular F */
    tw_m3 P = tw_m3_scale(tw_m3_mul(R, eps), 2 * mu);
    return tw_m3_add(P, tw_m3_scale(C, (tw_real)1.5 * kappa * (j23 - 1) / cjc));
}

/* Forces f_p = -V P g_p for a first Piola-Kirchhoff stress P. */
TW_HD void tw_elem_forces_from_P(tw_m3 P, const tw_real *g, tw_real V, tw_v3 f[4])
{
    for (int p = 0; p < 4; p++) f[p] = tw_v3_scale(tw_m3_mulv(P, tw_elem_g(g, p)), -V);
}

/* green's system matrix from a pack. The StVK tangent block (top of file)
 *   K_T^pq = lambda' f_p f_q^T + mu' f_q f_p^T + d_pq F F^T + c_pq I,
 *   f_p = F g_p, lambda' = V lambda, mu' = V mu,
 *   d_pq = V mu (g_p.g_q), c_pq = V (g_q.S g_p) (symmetric in p, q;
 *   tw_green_pack_psd takes c_pq at S's positive part)
 * needs, per element, TW_GREEN_PACK reals (three 64-byte lines in float):
 *   [0..11] f_0..f_3, [12] V lambda, [13] V mu, [14..19] F F^T (xx xy xz yy
 *   yz zz), [20..29] c_pq and [30..39] d_pq for p <= q (tw_green_pair),
 *   [40..45] S (xx xy xz yy yz zz) for the force, [46..47] zero.
 * F F^T and S are exactly symmetric as computed (tw_m3_mul_bt / mul_at form
 * both triangles from the same products in the same order), so six values
 * give back the bit-identical matrices. */
#define TW_GREEN_PACK 48
/* index of the pair (p, q), p <= q, among the 10: 00 01 02 03 11 12 13 22 23 33 */
TW_HD int tw_green_pair(int p, int q) { return p * (7 - p) / 2 + q; }

TW_HD void tw_sym_store(tw_real *s, tw_m3 A)
{
    s[0] = A.m[0]; s[1] = A.m[1]; s[2] = A.m[2]; s[3] = A.m[4]; s[4] = A.m[5]; s[5] = A.m[8];
}
TW_HD tw_m3 tw_sym_load(const tw_real *s)
{
    tw_m3 A;
    A.m[0] = s[0]; A.m[1] = s[1]; A.m[2] = s[2];
    A.m[3] = s[1]; A.m[4] = s[3]; A.m[5] = s[4];
    A.m[6] = s[2]; A.m[7] = s[4]; A.m[8] = s[5];
    return A;
}

/* The pack's geometric terms c_pq = V (g_q.Sg g_p) from the stress Sg. */
TW_HD void tw_green_pack_geometric(tw_real *pk, tw_m3 Sg, const tw_real *g, tw_real V)
{
    for (int p = 0; p < 4; p++) {
        tw_v3 Sgp = tw_m3_mulv(Sg, tw_elem_g(g, p));
        for (int q = p; q < 4; q++) pk[20 + tw_green_pair(p, q)] = V * tw_v3_dot(tw_elem_g(g, q), Sgp);
    }
}

/* FFt = F F^T, S the StVK stress of F (tw_stvk_S). */
TW_HD void tw_green_pack(tw_real *pk, tw_m3 F, tw_m3 FFt, tw_m3 S, const tw_real *g, tw_real V, tw_real lam, tw_real mu)
{
    tw_real vm = V * mu;
    for (int p = 0; p < 4; p++) tw_v3_store(pk + 3 * p, tw_m3_mulv(F, tw_elem_g(g, p)));
    pk[12] = V * lam;
    pk[13] = vm;
    tw_sym_store(pk + 14, FFt);
    tw_green_pack_geometric(pk, S, g, V);
    for (int p = 0; p < 4; p++)
        for (int q = p; q < 4; q++) pk[30 + tw_green_pair(p, q)] = vm * tw_v3_dot(tw_elem_g(g, p), tw_elem_g(g, q));
    tw_sym_store(pk + 40, S);
    pk[46] = pk[47] = 0;
}

/* Symmetric S's positive part (its negative eigenvalues set to zero) into
 * *Sp; returns 1 when S has a negative eigenvalue, else 0 with *Sp = S.
 * Gershgorin's bound settles most positive semidefinite S without the
 * eigen-decomposition. */
TW_HD int tw_sym_positive_part(tw_m3 S, tw_m3 *Sp)
{
    *Sp = S;
    tw_real lb = S.m[0] - TW_FABS(S.m[1]) - TW_FABS(S.m[2]);
    tw_real l1 = S.m[4] - TW_FABS(S.m[3]) - TW_FABS(S.m[5]), l2 = S.m[8] - TW_FABS(S.m[6]) - TW_FABS(S.m[7]);
    lb = l1 < lb ? l1 : lb;
    lb = l2 < lb ? l2 : lb;
    if (lb >= 0) return 0;
    tw_m3 V;
    tw_real l[3];
    tw_sym_eigen3(S, &V, l);
    if (l[2] >= 0) return 0; /* descending: l[2] is the smallest */
    *Sp = tw_m3_zero();
    for (int k = 0; k < 2; k++)
        if (l[k] > 0) *Sp = tw_m3_add_outer(*Sp, tw_m3_col(V, k), tw_m3_col(V, k), l[k]);
    return 1;
}

/* tw_green_pack with the tangent's geometric part at S's positive part
 * (its c_pq = V (g_q.S+ g_p)). The StVK tangent is a material part,
 * dF -> F dS with dF : F dS = dE : dS = lambda tr(dE)^2 + 2 mu |dE|^2 >= 0
 * (positive semidefinite at any F), plus a geometric part dF -> dF S with
 * dF : dF S >= 0 exactly when S is positive semidefinite. Under compression
 * S is not, and a crushed element's tangent is indefinite: at the floor
 * 1/sqrt(3) the two parts cancel along the crushed stretch, and the modes
 * that turn the crushed direction have negative stiffness, so a linearised step there (the CG on an indefinite
 * matrix) can throw the element's neighbours far past where the force puts
 * them back, and Newton's further iterations diverge. With S's positive part
 * in the geometric term every element's tangent is positive semidefinite
 * and the system matrix M (1 + h alpha) + (h^2 + h beta) K_T positive
 * definite: the projection of Teran, Sifakis, Irving and Fedkiw (Robust
 * quasistatic finite elements and flesh simulation, SCA 2005), made on the
 * geometric part, whose eigen-decomposition is S's own, instead of on the
 * element's 12 x 12 stiffness. Where S is positive semidefinite (tension)
 * the tangent is StVK's, bit for bit; the force is StVK's everywhere. */
TW_HD void tw_green_pack_psd(tw_real *pk, tw_m3 F, tw_m3 FFt, tw_m3 S, const tw_real *g, tw_real V, tw_real lam,
                             tw_real mu)
{
    tw_m3 Sp;
    tw_green_pack(pk, F, FFt, S, g, V, lam, mu);
    if (tw_sym_positive_part(S, &Sp)) tw_green_pack_geometric(pk, Sp, g, V);
}

/* green's element: the stress S at Fc (tw_green_S: F raised where crushed,
 * returned in *Fc; with psi, the energy density) and the element's pack
 * (tw_green_pack_psd at Fc). */
TW_HD tw_m3 tw_green_element(tw_real *pk, tw_m3 F, tw_m3 *Fc, const tw_real *g, tw_real V, tw_real lam, tw_real mu,
                             tw_real *psi)
{
    tw_m3 S = tw_green_S(F, Fc, lam, mu, psi);
    tw_green_pack_psd(pk, *Fc, tw_m3_mul_bt(*Fc, *Fc), S, g, V, lam, mu);
    return S;
}

/* K += K_T^pq from a pack, any p, q. As tw_corot_block_add: block (q,p)
 * comes out as the exact transpose of block (p,q), and every term of an
 * entry is summed before it meets the running sum K. */
TW_HD tw_m3 tw_green_block_add(tw_m3 K, const tw_real *pk, int p, int q)
{
    const tw_real *fp = pk + 3 * p, *fq = pk + 3 * q, *G = pk + 14;
    int k = p <= q ? tw_green_pair(p, q) : tw_green_pair(q, p);
    tw_real vl = pk[12], vm = pk[13], c = pk[20 + k], d = pk[30 + k];
    tw_real p0 = fp[0], p1 = fp[1], p2 = fp[2], q0 = fq[0], q1 = fq[1], q2 = fq[2];
    tw_real s00 = p0 * q0, s11 = p1 * q1, s22 = p2 * q2; /* written out: compilers keep it in registers */
    tw_real s01 = p0 * q1, s10 = p1 * q0, s02 = p0 * q2, s20 = p2 * q0, s12 = p1 * q2, s21 = p2 * q1;
    K.m[0] += vl * s00 + vm * s00 + d * G[0] + c; K.m[1] += vl * s01 + vm * s10 + d * G[1]; K.m[2] += vl * s02 + vm * s20 + d * G[2];
    K.m[3] += vl * s10 + vm * s01 + d * G[1]; K.m[4] += vl * s11 + vm * s11 + d * G[3] + c; K.m[5] += vl * s12 + vm * s21 + d * G[4];
    K.m[6] += vl * s20 + vm * s02 + d * G[2]; K.m[7] += vl * s21 + vm * s12 + d * G[4]; K.m[8] += vl * s22 + vm * s22 + d * G[5] + c;
    return K;
}

#endif
