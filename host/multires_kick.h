/* The tet kick of multires.c's substeps (tet_force's arithmetic on packed
 * tets), written once and instantiated by multires.c for MR_K_LANES
 * lanes of a packed record evaluated side by side in MR_K_T, from lane
 * `lane` on: one tet in double, two in GCC's two-double vectors, four in
 * its four-double ones (AVX). Each lane runs the same operations in the
 * same order and IEEE arithmetic rounds each lane as the scalar operation
 * does, so every instance gives the one-tet kernel's values bit for bit
 * (tests/test_multires_kick.c).
 *
 * The nodes' displacements x - X come in `disp` (the substeps keep them:
 * one array to gather, not two), their velocities in `vel`. The forces of
 * lane j's tet, times its scale, are added to its nodes'
 * impulses (lane 0's first, then lane 1's, and so on: the order of one-tet
 * kicks in a row; no lane reads an impulse, so evaluating them together
 * changes nothing), or, with `store` not NULL, written unscaled to store + 12 j for
 * a later gather to add in the same order (the same expression,
 * imp += scale f, where multiply-adds fuse alike). What the kick cannot
 * change is left out: without damping the rate terms (they add zeros), and
 * E and N are symmetric, their lower halves copied. The strain and the
 * damping are compile-time constants in the variants kick_range picks from.
 *
 * Expects MR_K_NAME (the function), MR_K_ATTR (its attributes), MR_K_T
 * (the lane type), MR_K_LANES,
 * MR_K_SPLAT(c) (a constant in every lane), MR_K_REC(e) (a T from the
 * record's lanes `k->e`), MR_K_AT(a, i, o) (a T from a[i[j] + o], i the
 * lanes' node offsets) and MR_K_LANE(v, j) (lane j of v); undefines
 * them. */
static inline MR_K_ATTR void MR_K_NAME(const mr_kick *restrict k, int lane, const double *restrict disp,
                                       const double *restrict vel,
                                       double *restrict impulse, double *restrict store, double lam, double mu2,
                                       double phi, double psi2, int green, int damped)
{
    MR_K_T F[9], Fd[9];
    TW_MR_UNROLL
    for (int q = 0; q < 9; q++) {
        F[q] = MR_K_SPLAT(q % 4 == 0 ? 1.0 : 0.0);
        Fd[q] = MR_K_SPLAT(0.0);
    }
    TW_MR_UNROLL
    for (int p = 0; p < 4; p++) {
        size_t i[MR_K_LANES];
        TW_MR_UNROLL
        for (int j = 0; j < MR_K_LANES; j++)
            i[j] = (size_t)k->n[p][lane + j];
        const MR_K_T g0 = MR_K_REC(g[3 * p]), g1 = MR_K_REC(g[3 * p + 1]), g2 = MR_K_REC(g[3 * p + 2]);
        TW_MR_UNROLL
        for (int r = 0; r < 3; r++) {
            const MR_K_T u = MR_K_AT(disp, i, r);
            F[3 * r] += u * g0;
            F[3 * r + 1] += u * g1;
            F[3 * r + 2] += u * g2;
        }
        if (damped) {
            TW_MR_UNROLL
            for (int r = 0; r < 3; r++) {
                const MR_K_T v = MR_K_AT(vel, i, r);
                Fd[3 * r] += v * g0;
                Fd[3 * r + 1] += v * g1;
                Fd[3 * r + 2] += v * g2;
            }
        }
    }
    MR_K_T E[9], N[9], S[9], P[9];
    TW_MR_UNROLL
    for (int q = 0; q < 9; q++)
        N[q] = MR_K_SPLAT(0.0);
    TW_MR_UNROLL
    for (int r = 0; r < 3; r++)
        TW_MR_UNROLL
        for (int c = r; c < 3; c++) {
            const MR_K_T one = MR_K_SPLAT(r == c ? 1.0 : 0.0), half = MR_K_SPLAT(0.5);
            if (green) {
                MR_K_T s = MR_K_SPLAT(0.0);
                TW_MR_UNROLL
                for (int q = 0; q < 3; q++)
                    s += F[3 * q + r] * F[3 * q + c];
                E[3 * r + c] = E[3 * c + r] = half * (s - one);
            } else {
                E[3 * r + c] = E[3 * c + r] = half * (F[3 * r + c] + F[3 * c + r]) - one;
            }
            if (damped) {
                if (green) {
                    MR_K_T sd = MR_K_SPLAT(0.0);
                    TW_MR_UNROLL
                    for (int q = 0; q < 3; q++)
                        sd += Fd[3 * q + r] * F[3 * q + c] + F[3 * q + r] * Fd[3 * q + c];
                    N[3 * r + c] = N[3 * c + r] = half * sd;
                } else {
                    N[3 * r + c] = N[3 * c + r] = half * (Fd[3 * r + c] + Fd[3 * c + r]);
                }
            }
        }
    const MR_K_T lamv = MR_K_SPLAT(lam), mu2v = MR_K_SPLAT(mu2), phiv = MR_K_SPLAT(phi), psi2v = MR_K_SPLAT(psi2);
    const MR_K_T trE = E[0] + E[4] + E[8];
    if (damped) {
        const MR_K_T trN = N[0] + N[4] + N[8];
        TW_MR_UNROLL
        for (int q = 0; q < 9; q++)
            S[q] = mu2v * E[q] + psi2v * N[q];
        TW_MR_UNROLL
        for (int d = 0; d < 3; d++)
            S[4 * d] += lamv * trE + phiv * trN;
    } else {
        TW_MR_UNROLL
        for (int q = 0; q < 9; q++)
            S[q] = mu2v * E[q];
        TW_MR_UNROLL
        for (int d = 0; d < 3; d++)
            S[4 * d] += lamv * trE;
    }
    if (green) {
        TW_MR_UNROLL
        for (int r = 0; r < 3; r++)
            TW_MR_UNROLL
            for (int c = 0; c < 3; c++)
                P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
    } else {
        TW_MR_UNROLL
        for (int q = 0; q < 9; q++)
            P[q] = S[q];
    }
    const MR_K_T V = MR_K_REC(vol);
    MR_K_T out[12];
    TW_MR_UNROLL
    for (int p = 0; p < 4; p++) {
        const MR_K_T g0 = MR_K_REC(g[3 * p]), g1 = MR_K_REC(g[3 * p + 1]), g2 = MR_K_REC(g[3 * p + 2]);
        TW_MR_UNROLL
        for (int r = 0; r < 3; r++)
            out[3 * p + r] = -V * (P[3 * r] * g0 + P[3 * r + 1] * g1 + P[3 * r + 2] * g2);
    }
    TW_MR_UNROLL
    for (int j = 0; j < MR_K_LANES; j++) {
        if (store) {
            TW_MR_UNROLL
            for (int q = 0; q < 12; q++)
                store[12 * j + q] = MR_K_LANE(out[q], j);
            continue;
        }
        const double scale = k->scale[lane + j];
        TW_MR_UNROLL
        for (int p = 0; p < 4; p++) {
            double *imp = impulse + k->n[p][lane + j];
            TW_MR_UNROLL
            for (int r = 0; r < 3; r++)
                imp[r] += scale * MR_K_LANE(out[3 * p + r], j);
        }
    }
}
#undef MR_K_NAME
#undef MR_K_ATTR
#undef MR_K_T
#undef MR_K_LANES
#undef MR_K_SPLAT
#undef MR_K_REC
#undef MR_K_AT
#undef MR_K_LANE
