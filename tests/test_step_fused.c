/* host/hd/step_fused.h's tw_rotation_element_force (the fused kernel's body,
 * TW_CUDA_ELEMENT=fused) against hd/step.h's tw_rotation_element followed
 * by tw_element_force, on the CPU: the same R, S and element forces, bit
 * for bit, on a bar deformed by a rotation, a stretch and noise, for each
 * element method. */
#include <stdlib.h>
#include <string.h>

#include "hd/step_fused.h"
#include "tw_test.h"
#include "world.h"

static int fused_matches_separate(tw_method m)
{
    tw_mesh *mesh = tw_mesh_bar(1, 0.15, 0.15, 12, 3, 3);
    CHECK(mesh != NULL);
    tw_world_def d = tw_default_world_def();
    d.backend = TW_BACKEND_CPU;
    d.method = m;
    tw_world *w = tw_world_create(mesh, &d);
    CHECK(w != NULL);
    int n = w->fem.n, nt = w->fem.nt;
    size_t n3 = 3 * (size_t)n, nr = 9 * (size_t)nt, np = (size_t)(m == TW_GREEN ? TW_GREEN_PACK : TW_COROT_PACK) * nt,
           nf = 12 * (size_t)nt;
    tw_real *x = malloc(sizeof(tw_real) * n3), *keep = malloc(sizeof(tw_real) * (nr + np + nf));
    CHECK(x && keep);
    /* x = rotation about z by 0.3 rad of the stretched rest shape, plus noise */
    unsigned seed = 4242u;
    double c = cos(0.3), sn = sin(0.3);
    for (int i = 0; i < n; i++) {
        const tw_real *X = w->fem.X + 3 * (size_t)i;
        double p[3] = {1.1 * X[0], 0.95 * X[1], X[2]};
        for (int k = 0; k < 3; k++) {
            p[k] += 1e-3 * (tw_test_uniform(&seed) - 0.5);
        }
        x[3 * (size_t)i] = (tw_real)(c * p[0] - sn * p[1]);
        x[3 * (size_t)i + 1] = (tw_real)(sn * p[0] + c * p[1]);
        x[3 * (size_t)i + 2] = (tw_real)p[2];
    }
    tw_step_view s = tw_world_view(w);
    int green = m == TW_GREEN;
    for (int e = 0; e < nt; e++) tw_rotation_element(&s, x, e, green);
    for (int e = 0; e < nt; e++) tw_element_force(&s, x, e, m);
    memcpy(keep, s.R, sizeof(tw_real) * nr);
    memcpy(keep + nr, s.S, sizeof(tw_real) * np);
    memcpy(keep + nr + np, s.fe, sizeof(tw_real) * nf);
    memset(s.R, 0, sizeof(tw_real) * nr);
    memset(s.S, 0, sizeof(tw_real) * np);
    memset(s.fe, 0, sizeof(tw_real) * nf);
    for (int e = 0; e < nt; e++) tw_rotation_element_force(&s, x, e, m, NULL);
    int same_r = memcmp(keep, s.R, sizeof(tw_real) * nr) == 0;
    int same_s = memcmp(keep + nr, s.S, sizeof(tw_real) * np) == 0;
    int same_f = memcmp(keep + nr + np, s.fe, sizeof(tw_real) * nf) == 0;
    double fmax = 0;
    for (size_t k = 0; k < nf; k++) fmax = tw_test_max(fmax, fabs((double)s.fe[k]));
    printf("%s, %d elements: R %s, packs %s, element forces %s (max |f| %.3g N)\n", tw_method_name(m), nt,
           same_r ? "identical" : "DIFFER", same_s ? "identical" : "DIFFER", same_f ? "identical" : "DIFFER", fmax);
    CHECK(fmax > 0); /* the deformation loads the elements */
    CHECK(same_r && same_s && same_f);
    free(keep);
    free(x);
    tw_world_destroy(w);
    tw_mesh_destroy(mesh);
    return 0;
}

TW_TEST(corot_element_fused_matches_separate) { return fused_matches_separate(TW_COROT_ELEMENT); }
TW_TEST(hybrid_fused_matches_separate) { return fused_matches_separate(TW_HYBRID); }
TW_TEST(green_fused_matches_separate) { return fused_matches_separate(TW_GREEN); }
