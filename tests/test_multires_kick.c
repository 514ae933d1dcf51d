/* host/multires.c's two-tet kick (kick_pair) against its one-tet kick
 * (kick_packed), both instances of host/multires_kick.h: the frame
 * evaluates a tet by either, depending on where it falls in the substep's
 * range, so the two must agree bit for bit. This
 * file is built with fused multiply-adds allowed (tests/CMakeLists.txt:
 * -mfma on x86-64, -ffp-contract=fast with GCC), where a product that one
 * form adds in the same expression and the other does not rounds
 * differently. The functions are static: the file includes multires.c, and
 * the static library's copy is then never linked. */
#include "../host/multires.c"

#include "tw_test.h"

static unsigned kick_state = 12345u;

/* a deterministic number in [-0.5, 0.5) */
static double kick_rand(void)
{
    kick_state = kick_state * 1664525u + 1013904223u;
    return (double)(kick_state >> 8) / 16777216.0 - 0.5;
}

/* Random tets over NV nodes, kicked one by one and two by two (a record's
 * two lanes together, the first tet alone as a range from a record's
 * second lane starts) in each of the four variants: the impulses must be
 * the same bits. */
TW_TEST(pair_equals_single)
{
#if !TW_MR_PAIRS
    return TW_SKIP; /* no vector types: kick_packed alone */
#else
#if defined(__x86_64__) && defined(__FMA__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("fma")) {
        printf("no FMA on this CPU: skipped\n");
        return TW_SKIP;
    }
#endif
    enum { NV = 64, NK = 2001 };
    static double x[3 * NV], X[3 * NV], v[3 * NV], single[3 * NV], paired[3 * NV];
    static mr_kick k[NK / 2 + 1];
    for (int i = 0; i < 3 * NV; i++) {
        X[i] = kick_rand();
        x[i] = X[i] + 0.3 * kick_rand();
        v[i] = kick_rand();
    }
    for (int e = 0; e < NK; e++) {
        mr_kick *r = k + e / 2;
        const int j = e & 1;
        for (int p = 0; p < 4; p++) r->n[p][j] = 3 * ((int)((kick_rand() + 0.5) * NV) % NV);
        for (int q = 0; q < 12; q++) r->g[q][j] = 10 * kick_rand();
        r->vol[j] = 1e-3 * (kick_rand() + 0.6);
        r->scale[j] = kick_rand() + 0.7;
    }
    const double lam = 1.3e5, mu2 = 2 * 4.1e4, phi = 0.7, psi2 = 2 * 0.3;
    long differ = 0;
    for (int green = 0; green < 2; green++)
        for (int damped = 0; damped < 2; damped++) {
            memset(single, 0, sizeof single);
            memset(paired, 0, sizeof paired);
            for (int e = 0; e < NK; e++)
                kick_packed(k + e / 2, e & 1, x, X, v, single, NULL, lam, mu2, phi, psi2, green, damped);
            kick_packed(k, 0, x, X, v, paired, NULL, lam, mu2, phi, psi2, green, damped);
            kick_packed(k, 1, x, X, v, paired, NULL, lam, mu2, phi, psi2, green, damped);
            int e = 2;
            for (; e + 1 < NK; e += 2)
                kick_pair(k + e / 2, 0, x, X, v, paired, NULL, lam, mu2, phi, psi2, green, damped);
            for (; e < NK; e++)
                kick_packed(k + e / 2, e & 1, x, X, v, paired, NULL, lam, mu2, phi, psi2, green, damped);
            long d = 0;
            for (int i = 0; i < 3 * NV; i++) d += memcmp(&single[i], &paired[i], sizeof(double)) != 0;
            printf("green %d damped %d: %ld of %d impulses differ\n", green, damped, d, 3 * NV);
            differ += d;
        }
    CHECK(differ == 0);
    return 0;
#endif
}
