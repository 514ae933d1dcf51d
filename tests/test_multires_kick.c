/* host/multires.c's two- and four-tet kicks (kick_pair, kick_quad) against
 * its one-tet kick (kick_packed), all instances of host/multires_kick.h:
 * the frame evaluates a tet by any, depending on where it falls in the
 * substep's range and on the CPU, so they must agree bit for bit. This
 * file is built with fused multiply-adds allowed (tests/CMakeLists.txt:
 * -mfma on x86-64, -ffp-contract=fast with GCC), where a product that one
 * form adds in the same expression and the other does not rounds
 * differently. The functions are static: the file includes multires.c, and
 * the static library's copy is then never linked; the substeps' schedule,
 * which only this file sees, is tested here too (cycles_run_with_their_tets). */
#include "../host/multires.c"

#include "tw_test.h"
#include "tw_test_scenes.h"

static unsigned kick_state = 12345u;

/* a deterministic number in [-0.5, 0.5) */
static double kick_rand(void)
{
    return tw_test_uniform(&kick_state) - 0.5;
}

/* Random tets over NV nodes, kicked one by one, and as the frame kicks a
 * range of them (kick_range_pair: two at a time; kick_range_avx where the
 * CPU has AVX: four at a time, the ends one or two at a time), from each
 * lane of a record on and to each lane's end, in each of the four variants: the impulses must be
 * the same bits. */
TW_TEST(pair_equals_single)
{
#if !TW_MR_PAIRS
    return TW_SKIP; /* no vector types: kick_packed alone */
#else
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
#endif
#if defined(__x86_64__) && defined(__FMA__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("fma")) {
        printf("no FMA on this CPU: skipped\n");
        return TW_SKIP;
    }
#endif
    enum { NV = 64, NK = 2001 };
    static double u[3 * NV], v[3 * NV], single[3 * NV], ranged[3 * NV];
    static mr_kick k[NK / MR_KICK_LANES + 1];
    for (int i = 0; i < 3 * NV; i++) {
        const double X = kick_rand(), x = X + 0.3 * kick_rand();
        u[i] = x - X;
        v[i] = kick_rand();
    }
    for (int e = 0; e < NK; e++) {
        mr_kick *r = k + e / MR_KICK_LANES;
        const int j = e % MR_KICK_LANES;
        for (int p = 0; p < 4; p++) r->n[p][j] = 3 * ((int)((kick_rand() + 0.5) * NV) % NV);
        for (int q = 0; q < 12; q++) r->g[q][j] = 10 * kick_rand();
        r->vol[j] = 1e-3 * (kick_rand() + 0.6);
        r->scale[j] = kick_rand() + 0.7;
    }
    static tw_multires m;
    m.lam = 1.3e5;
    m.mu = 4.1e4;
    m.kick = k;
    m.us = u;
    m.vs = v;
#if TW_MR_QUADS
    const int quads = __builtin_cpu_supports("avx") != 0; /* x86-64 only: no such builtin elsewhere */
#else
    const int quads = 0;
#endif
    long differ = 0;
    for (int green = 0; green < 2; green++)
        for (int damped = 0; damped < 2; damped++) {
            m.def.strain = green ? TW_MR_GREEN : TW_MR_CAUCHY;
            m.def.damping_phi = damped ? 0.7 : 0;
            m.def.damping_psi = damped ? 0.3 : 0;
            for (int b0 = 0; b0 < MR_KICK_LANES; b0++)
                for (int form = 0; form <= quads; form++) {
                    const int b1 = NK - b0; /* every end lane too (NK % 4 == 1) */
                    memset(single, 0, sizeof single);
                    memset(ranged, 0, sizeof ranged);
                    m.imps = single;
                    for (int e = b0; e < b1; e++)
                        kick_packed(k + e / MR_KICK_LANES, e % MR_KICK_LANES, u, v, single, NULL, m.lam, 2 * m.mu,
                                    m.def.damping_phi, 2 * m.def.damping_psi, green, damped);
                    m.imps = ranged;
#if TW_MR_QUADS
                    if (form)
                        kick_range_avx(&m, b0, b1, 0);
                    else
#endif
                        kick_range_pair(&m, b0, b1, 0);
                    long d = 0;
                    for (int i = 0; i < 3 * NV; i++) d += memcmp(&single[i], &ranged[i], sizeof(double)) != 0;
                    printf("green %d damped %d from %d, %s: %ld of %d impulses differ\n", green, damped, b0,
                           form ? "avx" : "pair", d, 3 * NV);
                    differ += d;
                }
        }
    CHECK(differ == 0);
    return 0;
#endif
}

/* A cycle's node (an interface node the plan solves for a row) is read by
 * its tets alone: the substeps interpolate it before those that evaluate
 * them, its need the finest level of the due tets holding it (-1: none),
 * and the plan entries its row reads at least as often. On the cube levels
 * of tw_state_hash's multires rows, with the tool pressing in. */
TW_TEST(cycles_run_with_their_tets)
{
    const int cells[3] = {2, 3, 6};
    const double amount[3] = {0, 0.2, 0.3};
    tw_hierarchy *hier = tw_test_mr_cubes(cells, amount);
    CHECK(hier != NULL);
    tw_multires_def d = tw_default_multires_def();
    d.youngs = 2e4;
    d.gamma_min = 1e-4;
    d.gamma_max = 3e-4;
    tw_multires *m = tw_multires_create(hier, &d);
    CHECK(m != NULL);
    tw_multires_fix(m, 0, 1, 1e-9);
    const tw_mr_tool tool = tw_test_mr_tool(0.03, 0.07, 0.05, 0.004, -0.01, 0.2);
    tw_multires_set_tool(m, &tool);
    int cycles = 0, coarse = 0;
    long wrong = 0;
    for (int f = 0; f < 30; f++) {
        CHECK_OK(tw_multires_frame(m, NULL));
        for (int k = m->plan_n - m->stale; k < m->plan_n; k++) {
            const int l = m->plan[k].level, i = m->plan[k].node, s = k - (m->plan_n - m->stale);
            int want = -1;
            for (int lev = 0; lev <= m->M; lev++)
                for (int b = m->due_ptr[lev]; b < m->due_ptr[lev + 1]; b++) {
                    const int *t = m->lv[l].m->tets + 4 * m->due[b].tet;
                    for (int p = 0; p < 4 && m->due[b].level == l; p++)
                        if (t[p] == i && lev > want)
                            want = lev;
                }
            const int need = m->lv[l].need[i];
            cycles++;
            coarse += want < m->M;
            wrong += need != want;
            for (int q = m->srow_ptr[s]; q < m->srow_ptr[s + 1]; q++) {
                const int n = m->srow_src[q];
                const mr_level *S = &m->lv[pool_level(m, n)];
                wrong += S->inplan[n - S->node0] && S->need[n - S->node0] < need;
            }
        }
    }
    printf("%d cycles' nodes over 30 frames, %d read by no tet of the finest step level; %ld needs wrong\n", cycles,
           coarse, wrong);
    CHECK(cycles > 0 && coarse > 0); /* the case the schedule tells apart */
    CHECK(wrong == 0);
    tw_multires_destroy(m);
    return 0;
}
