/* The device front's element pass and gathered assembly (the gather maps of
 * host/tetra_front_maps.h, the bodies of host/hd/front_element.h), run on
 * the CPU in the device's order (tw_front_maps_assemble), against the CPU
 * front's own scatter (tw_front_assemble) at the same state.
 *
 * The tolerance is zero: both compute every element product in double with
 * the same TW_HD bodies, and every block and force sums the same double
 * products in the same order (tet, then corner p, then q), each rounded to
 * tw_real before it meets the running sum, as the CPU front does; the
 * project's flags form no fused multiply-adds on the CPU (tests/
 * CMakeLists.txt), so the two are the same arithmetic. On the device nvcc
 * contracts to FMAs, so there the blocks agree to rounding only
 * (tests/test_gpu_front.c). The last cases corrupt one map entry each and
 * require the comparison to notice. */
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "tetra_front.h"
#include "tetra_tree.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

/* The device's system on the CPU from maps m at f's state, against f's own
 * assembly (tw_front_assemble, called here); returns the count of values
 * that differ (NaN counts) and prints the largest difference. */
static long system_mismatches(tw_front *f, const tw_front_maps *m, const char *what)
{
    if (tw_front_assemble(f) != TW_OK) {
        fprintf(stderr, "%s: %s\n", what, tw_last_error());
        return -1;
    }
    const tw_real *val, *rhs, *vr;
    const double *fq, *g, *Ke;
    tw_front_system(f, &val, &rhs, &vr, &fq);
    tw_front_element_data(f, &g, &Ke);
    const size_t nu = (size_t)m->nu + 1, n = (size_t)m->n + 1, na = (size_t)m->nact + 1;
    double *xu = malloc(3 * nu * sizeof *xu), *vf = malloc(3 * n * sizeof *vf), *fqf = malloc(3 * n * sizeof *fqf);
    double *elf = malloc(12 * na * sizeof *elf), *elK = malloc(144 * na * sizeof *elK);
    tw_real *dval = malloc(9 * ((size_t)m->nnzb + 1) * sizeof *dval), *drhs = malloc(3 * n * sizeof *drhs),
            *dvr = malloc(3 * n * sizeof *dvr);
    long bad = -1;
    if (xu && vf && fqf && elf && elK && dval && drhs && dvr) {
        tw_front_maps_pack(m, tw_front_x(f), tw_front_v(f), fq, xu, vf, fqf);
        tw_front_maps_assemble(m, g, Ke, xu, vf, fq ? fqf : NULL, elf, elK, dval, drhs, dvr);
        double worst = 0, scale = 0;
        bad = 0;
        for (long k = 0; k < 9L * m->nnzb; k++) {
            const double e = fabs((double)dval[k] - (double)val[k]);
            worst = tw_test_max(worst, e);
            scale = tw_test_max(scale, fabs((double)val[k]));
            bad += !(e == 0);
        }
        for (long k = 0; k < 3L * m->n; k++) {
            bad += !((double)drhs[k] == (double)rhs[k]) + !((double)dvr[k] == (double)vr[k]);
            worst = tw_test_max(worst, fabs((double)drhs[k] - (double)rhs[k]));
        }
        if (bad)
            fprintf(stderr, "%s: %ld values differ, the largest by %.3g (largest block entry %.3g)\n", what, bad,
                    worst, scale);
    }
    free(xu);
    free(vf);
    free(fqf);
    free(elf);
    free(elK);
    free(dval);
    free(drhs);
    free(dvr);
    return bad;
}

/* The maps of f's front and the comparison at its state. */
static long front_mismatches(tw_front *f, const char *what, long *blocks, long *contributions)
{
    tw_front_maps m;
    if (tw_front_maps_build(f, &m) != TW_OK) {
        fprintf(stderr, "%s: %s\n", what, tw_last_error());
        return -1;
    }
    *blocks += m.nnzb;
    *contributions += m.blk_ptr[m.nnzb];
    const long bad = system_mismatches(f, &m, what);
    tw_front_maps_free(&m);
    return bad;
}

/* front_mismatches as a tw_test_front_checkpoints check: none; ctx: the
 * counts {blocks, contributions}. */
static int gather_check(tw_front *f, const char *what, void *ctx)
{
    long *count = ctx;
    return front_mismatches(f, what, &count[0], &count[1]) == 0;
}

/* The sagging box (tw_test_box_front, 3 levels, T2 3e-6, 100 steps): at the
 * start and after every switch (T-junction vertices among the front's) the
 * device's order reproduces the CPU front's system exactly; so it does at
 * every tenth step between. */
TW_TEST(gather_matches_scatter_sagging_box)
{
    tw_test_box_front b;
    tw_front *f = tw_test_box_front_create(&b, NULL);
    CHECK(f);
    long count[2] = {0, 0};
    int switches, hanging;
    const int checked = tw_test_front_checkpoints(f, gather_check, count, &switches, &hanging);
    CHECK(checked > 0);
    printf("%d systems equal to the bit (%d after a switch; up to %d T-junction vertices): %ld blocks, %ld block "
           "contributions gathered\n", checked, switches, hanging, count[0], count[1]);
    CHECK(switches >= 3 && hanging > 0);
    tw_test_box_front_free(&b);
    return 0;
}

/* A front that mixes three levels (a base tet refined, one of its children
 * refined again: T-junction vertices whose expansions nest), under
 * external forces (their reduced form in the rhs) at a jittered state, so
 * that every rotation is a rotation: the same. */
TW_TEST(gather_matches_scatter_mixed_levels_forces)
{
    tw_tetra_tree *t = tw_test_cube_tree(tw_default_tetra_tree_def().t1);
    CHECK(t);
    tw_front_def d = tw_default_front_def();
    d.adapt = 0;
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    CHECK_OK(tw_test_front_set_mixed(f, t));
    const int nv = t->h->level[2]->nv;
    double *force = malloc(3 * (size_t)nv * sizeof *force);
    CHECK(force);
    unsigned seed = 7;
    for (int i = 0; i < 3 * nv; i++)
        force[i] = tw_test_jitter(&seed, 5.0);
    CHECK_OK(tw_front_set_forces(f, force));
    double *x = tw_front_x(f), *v = tw_front_v(f);
    for (int i = 0; i < 3 * nv; i++) {
        x[i] += tw_test_jitter(&seed, 0.05);
        v[i] = tw_test_jitter(&seed, 0.1);
    }
    tw_front_stats s;
    CHECK_OK(tw_front_step(f, &s)); /* the T-junction vertices back on their tets */
    long blocks = 0, contributions = 0;
    CHECK(front_mismatches(f, "mixed front, jittered, forces", &blocks, &contributions) == 0);
    printf("%d active tets, %d T-junction vertices: %ld blocks, %ld contributions, equal to the bit\n",
           s.active_tets, s.hanging_vertices, blocks, contributions);
    CHECK(s.hanging_vertices > 0);
    free(force);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}

/* The sagging box's front after its first switch with T-junction
 * vertices; NULL when none comes within 100 steps. */
static tw_front *switched_box(tw_test_box_front *b)
{
    tw_front *f = tw_test_box_front_create(b, NULL);
    for (int k = 0; f && k < 100; k++) {
        tw_front_stats s;
        if (tw_front_step(f, &s) != TW_OK) break;
        if (s.rebuilt && s.hanging_vertices > 0) return f;
    }
    return NULL;
}

/* The comparison can fail: a contribution gathered into the next block (a
 * wrong slot), an active tet whose contributions are lost (a missing tet),
 * a corner read from the wrong vertex, and a force contribution of the
 * wrong corner each make values differ. */
TW_TEST(gather_detects_wrong_maps)
{
    tw_test_box_front b;
    tw_front *f = switched_box(&b);
    CHECK(f);
    tw_front_maps m;
    CHECK_OK(tw_front_maps_build(f, &m));
    CHECK(system_mismatches(f, &m, "intact") == 0);
    /* a wrong slot: block 0's last contribution moved to block 1 */
    CHECK(m.nnzb > 1 && m.blk_ptr[1] > m.blk_ptr[0]);
    m.blk_ptr[1]--;
    const long wrong_slot = system_mismatches(f, &m, "wrong slot (expected)");
    m.blk_ptr[1]++;
    /* a missing tet: the contributions of the active tet in the middle lost */
    const int k = m.nact / 2;
    double *saved = malloc((size_t)m.blk_ptr[m.nnzb] * sizeof *saved);
    CHECK(saved);
    memcpy(saved, m.blk_w, (size_t)m.blk_ptr[m.nnzb] * sizeof *saved);
    for (int c = 0; c < m.blk_ptr[m.nnzb]; c++)
        if (m.blk_code[c] >> 4 == k) m.blk_w[c] = 0;
    const long missing = system_mismatches(f, &m, "missing tet (expected)");
    memcpy(m.blk_w, saved, (size_t)m.blk_ptr[m.nnzb] * sizeof *saved);
    /* a wrong corner */
    const int c0 = m.corner[4 * k];
    m.corner[4 * k] = m.corner[4 * k + 1];
    const long corner = system_mismatches(f, &m, "wrong corner (expected)");
    m.corner[4 * k] = c0;
    /* a force contribution of the wrong corner */
    const int code0 = m.frc_code[0];
    m.frc_code[0] = (code0 & ~3) | ((code0 + 1) & 3);
    const long force = system_mismatches(f, &m, "wrong force corner (expected)");
    m.frc_code[0] = code0;
    const long again = system_mismatches(f, &m, "restored");
    printf("values that differ: wrong slot %ld, missing tet %ld, wrong corner %ld, wrong force corner %ld; "
           "restored %ld\n", wrong_slot, missing, corner, force, again);
    CHECK(wrong_slot > 0 && missing > 0 && corner > 0 && force > 0);
    CHECK(again == 0);
    free(saved);
    tw_front_maps_free(&m);
    tw_test_box_front_free(&b);
    return 0;
}
