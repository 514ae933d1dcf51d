/* The tetra front (Imai et al. 2013 sec. 5): the switching rules on
 * constructed strains, T-junction vertices on their coarse tet's linear
 * field, the energy at a switch, and the finest level when not adapting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "tetra_front.h"
#include "tetra_tree.h"
#include "tw_test.h"
#include "tw_test_scenes.h"

/* The unit cube's tree (384 finest tets); T1 0.015 puts a normal basis'
 * valid range at +-0.02 (Green strain's relative deviation alpha / 2;
 * tetra_tree.valid_range_green). */
static tw_tetra_tree *cube_tree(void)
{
    return tw_test_cube_tree(0.015);
}

static tw_front_def still_def(void)
{
    tw_front_def d = tw_default_front_def();
    d.gravity[2] = 0;
    d.dt = 1e-6; /* the imposed state barely moves within a step */
    d.hold_steps = 3;
    return d;
}

/* x = (I + a e_x e_x^T) X at every vertex, v = 0. */
static void stretch(tw_front *f, const tw_tetra_tree *t, double a)
{
    const tw_mesh *m = t->h->level[t->levels - 1];
    double *x = tw_front_x(f), *v = tw_front_v(f);
    for (int i = 0; i < m->nv; i++) {
        x[3 * i] = (1 + a) * m->X[3 * i];
        x[3 * i + 1] = m->X[3 * i + 1];
        x[3 * i + 2] = m->X[3 * i + 2];
        v[3 * i] = v[3 * i + 1] = v[3 * i + 2] = 0;
    }
}

TW_TEST(adapt_off_is_finest)
{
    tw_tetra_tree *t = cube_tree();
    CHECK(t);
    tw_front_def d = still_def();
    d.adapt = 0;
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    tw_front_stats s;
    stretch(f, t, 0.1);
    CHECK_OK(tw_front_step(f, &s));
    CHECK(s.active_tets == 384 && s.hanging_vertices == 0 && s.refined == 0);
    CHECK(s.free_vertices == t->h->level[2]->nv);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}

/* Coarse to fine (eq. 6): a strain inside every range keeps the base; one
 * outside refines down to the finest level (the children start with their
 * parent's strain, outside their range too). */
TW_TEST(refines_outside_range)
{
    tw_tetra_tree *t = cube_tree();
    CHECK(t);
    CHECK(t->amax[0] == 0.02);
    tw_front_def d = still_def();
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    CHECK(tw_front_active_tets(f) == 6);
    tw_front_stats s;
    stretch(f, t, 0.015);
    CHECK_OK(tw_front_step(f, &s));
    CHECK(s.active_tets == 6 && s.refined == 0);
    stretch(f, t, 0.03);
    CHECK_OK(tw_front_step(f, &s));
    CHECK(s.active_tets == 384);
    CHECK(s.refined == 6 + 48);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}

/* Fine to coarse (sec. 5.2): at rest the children match their parent, and
 * the front climbs back one level per hold period; a strain inside the range
 * but outside the hysteresis margin (0.5 of it) keeps the fine level. */
TW_TEST(coarsens_with_hysteresis)
{
    tw_tetra_tree *t = cube_tree();
    CHECK(t);
    tw_front_def d = still_def();
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    tw_front_stats s;
    stretch(f, t, 0.03);
    CHECK_OK(tw_front_step(f, &s));
    CHECK(s.active_tets == 384);
    /* 0.015: inside [-0.02, 0.02], outside +-0.01 */
    for (int k = 0; k < 10; k++) {
        stretch(f, t, 0.015);
        CHECK_OK(tw_front_step(f, &s));
        CHECK(s.active_tets == 384 && s.coarsened == 0);
    }
    int trace[12];
    for (int k = 0; k < 12; k++) {
        stretch(f, t, 0.0);
        CHECK_OK(tw_front_step(f, &s));
        trace[k] = s.active_tets;
    }
    printf("active tets at rest, step by step:");
    for (int k = 0; k < 12; k++)
        printf(" %d", trace[k]);
    printf("\n");
    CHECK(trace[0] == 48);  /* the finest have been there long enough */
    CHECK(trace[1] == 48);  /* level 1 has just arrived: held */
    CHECK(trace[11] == 6);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}

/* Condition 3: children straining unlike their parent (a bend: z gets
 * 0.005 (x - 1/2)^2, strains up to 0.005, inside every parent's margin) stay
 * fine at t3 1e-4; with t3 1 the same front coarsens, so condition 3 is what
 * holds it. */
TW_TEST(children_unlike_parent_stay)
{
    tw_tetra_tree *t = cube_tree();
    CHECK(t);
    for (int pass = 0; pass < 2; pass++) {
        tw_front_def d = still_def();
        d.t3 = pass == 0 ? 1e-4 : 1.0;
        tw_front *f = tw_front_create(t, NULL, &d);
        CHECK(f);
        CHECK_OK(tw_test_front_set_level(f, t, 2));
        const tw_mesh *m = t->h->level[2];
        double *x = tw_front_x(f), *v = tw_front_v(f);
        tw_front_stats s;
        int coarsened = 0;
        for (int k = 0; k < 8; k++) {
            for (int i = 0; i < m->nv; i++) {
                const double X = m->X[3 * i];
                for (int c = 0; c < 3; c++) {
                    x[3 * i + c] = m->X[3 * i + c];
                    v[3 * i + c] = 0;
                }
                x[3 * i + 2] += 0.005 * (X - 0.5) * (X - 0.5);
            }
            CHECK_OK(tw_front_step(f, &s));
            coarsened += s.coarsened;
        }
        printf("t3 %g: %d parents restored\n", d.t3, coarsened);
        CHECK(pass == 0 ? coarsened == 0 : coarsened > 0);
        tw_front_destroy(f);
    }
    tw_tetra_tree_free(t);
    return 0;
}

/* A mixed front under gravity: base tet 0 refined, its first child refined
 * again, the rest coarse; every T-junction vertex stays on its coarse tet's
 * linear field (to rounding) while the body moves. */
TW_TEST(tjunctions_on_coarse_field)
{
    tw_mesh *b = tw_mesh_bar(2, 1, 1, 2, 1, 1);
    CHECK(b);
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    td.levels = 3;
    tw_tetra_tree *t = tw_tetra_tree_build(b, &td);
    CHECK(t);
    const tw_mesh *m = t->h->level[2];
    unsigned char *pin = calloc((size_t)m->nv, 1);
    CHECK(pin);
    for (int i = 0; i < m->nv; i++)
        pin[i] = m->X[3 * i] < 1e-12;
    tw_front_def d = tw_default_front_def();
    d.adapt = 0; /* keep this front */
    tw_front *f = tw_front_create(t, pin, &d);
    CHECK(f);
    CHECK_OK(tw_test_front_set_mixed(f, t));
    tw_front_stats s;
    double worst = 0, sag = 0;
    for (int k = 0; k < 30; k++) {
        CHECK_OK(tw_front_step(f, &s));
        worst = tw_test_max(worst, tw_front_tjunction_error(f));
    }
    const double *x = tw_front_x(f);
    for (int i = 0; i < m->nv; i++)
        sag = tw_test_max(sag, m->X[3 * i + 2] - x[3 * i + 2]);
    printf("mixed front: %d tets, %d T-junction vertices, worst T-junction error %.3g m, sag %.3g m\n",
           s.active_tets, s.hanging_vertices, worst, sag);
    CHECK(s.active_tets == b->nt - 1 + 7 + 8);
    CHECK(s.hanging_vertices > 0);
    CHECK(sag > 1e-4);
    CHECK(worst <= 1e-12);
    free(pin);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    tw_mesh_destroy(b);
    return 0;
}

/* Refinement interpolates new vertices on the parent's linear field and
 * coarsening only restores parents whose children strain alike: a sagging
 * box that switches gains no energy at a switch beyond a bounded amount
 * (reported), and never more than 1e-3 of its peak elastic energy scale. */
TW_TEST(energy_at_switch_bounded)
{
    tw_test_box_front b;
    tw_front *f = tw_test_box_front_create(&b, NULL);
    CHECK(f);
    tw_front_stats s;
    double gain = 0, loss = 0, scale = 0;
    int switches = 0;
    for (int k = 0; k < 100; k++) {
        const double e0 = tw_front_energy(f);
        CHECK_OK(tw_front_step(f, &s));
        scale = tw_test_max(scale, fabs(tw_front_energy(f) - e0));
        if (s.rebuilt) {
            switches++;
            gain = tw_test_max(gain, s.energy_jump);
            loss = tw_test_max(loss, -s.energy_jump);
        }
    }
    printf("%d switch steps: largest energy gain %.3g J, largest loss %.3g J; largest energy change of a step "
           "%.3g J\n", switches, gain, loss, scale);
    CHECK(switches > 0);
    CHECK(gain <= 1e-3 * scale);
    tw_test_box_front_free(&b);
    return 0;
}

/* A bar of 2 levels (1 x 0.1 x 0.1 m, 5 x 1 x 1 base cells), fixed at x = 0. */
static tw_tetra_tree *force_bar(unsigned char **pin)
{
    tw_mesh *b = tw_mesh_bar(1, 0.1, 0.1, 5, 1, 1);
    if (!b)
        return NULL;
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    td.levels = 2;
    tw_tetra_tree *t = tw_tetra_tree_build(b, &td);
    tw_mesh_destroy(b);
    if (!t)
        return NULL;
    const tw_mesh *m = t->h->level[1];
    *pin = calloc((size_t)m->nv, 1);
    if (*pin)
        for (int i = 0; i < m->nv; i++)
            (*pin)[i] = m->X[3 * i] < 1e-6;
    return t;
}

/* The engine's counterpart of a finest front: a corot-element world,
 * implicit Euler, block-Jacobi CG to 1e-8, no energy check, on the CPU. */
static tw_world_def front_world_def(void)
{
    tw_world_def wd = tw_default_world_def();
    wd.method = TW_COROT_ELEMENT;
    wd.integrator = TW_IMPLICIT_EULER;
    wd.backend = TW_BACKEND_CPU;
    wd.cg_tolerance = 1e-8;
    wd.energy_check = 0;
    wd.precond = TW_PRECOND_JACOBI;
    return wd;
}

/* --adapt off against the engine: the finest level's front and a
 * corot-element world on the same mesh (implicit Euler, the same damping,
 * lumped mass, CG to 1e-8) agree on a sagging bar (0.67 m) to 1.7e-5 m, the
 * float world's rounding:
 * the front's corotated K_e = V B^T C B with the isotropic C is the
 * engine's element. */
TW_TEST(finest_matches_world)
{
    unsigned char *pin = NULL;
    tw_tetra_tree *t = force_bar(&pin);
    CHECK(t && pin);
    const tw_mesh *m = t->h->level[1];
    tw_front_def fd = tw_default_front_def();
    fd.adapt = 0;
    fd.cg_tolerance = 1e-8;
    tw_front *f = tw_front_create(t, pin, &fd);
    CHECK(f);
    tw_world_def wd = front_world_def();
    tw_world *w = tw_world_create(m, &wd);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 0, 1, 1e-6) > 0);
    double worst = 0, sag = 0;
    for (int k = 0; k < 40; k++) {
        CHECK_OK(tw_front_step(f, NULL));
        CHECK_OK(tw_world_step(w, NULL));
    }
    const double *xf = tw_front_x(f);
    const tw_real *xw = tw_world_positions(w);
    for (int i = 0; i < m->nv; i++) {
        for (int d = 0; d < 3; d++)
            worst = tw_test_max(worst, fabs(xf[3 * i + d] - (double)xw[3 * i + d]));
        sag = tw_test_max(sag, m->X[3 * i + 2] - xf[3 * i + 2]);
    }
    printf("front (finest) against the corot-element world after 40 steps: largest difference %.3g m, sag %.3g m\n",
           worst, sag);
    CHECK(sag > 0.05);
    CHECK(worst <= 1e-4 * sag);
    tw_world_destroy(w);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    free(pin);
    return 0;
}

/* External forces (tw_front_set_forces) on the finest front against the
 * engine's (tw_world_set_force) on the same mesh: 5 N down at the tip
 * vertex of a bar without gravity; the trajectories agree to the float
 * world's rounding. A force of 0 changes nothing. */
TW_TEST(force_matches_world)
{
    unsigned char *pin = NULL;
    tw_tetra_tree *t = force_bar(&pin);
    CHECK(t && pin);
    const tw_mesh *m = t->h->level[1];
    int tip = 0;
    for (int i = 1; i < m->nv; i++)
        if (m->X[3 * i] > m->X[3 * tip] + 1e-9)
            tip = i;
    tw_front_def fd = tw_default_front_def();
    fd.adapt = 0;
    fd.cg_tolerance = 1e-8;
    fd.gravity[2] = 0;
    tw_front *f = tw_front_create(t, pin, &fd);
    CHECK(f);
    double *force = calloc(3 * (size_t)m->nv, sizeof *force);
    CHECK(force);
    CHECK_OK(tw_front_set_forces(f, force)); /* zeros: the same as none */
    force[3 * tip + 2] = -5;
    CHECK_OK(tw_front_set_forces(f, force));
    force[3 * tip] = NAN;
    CHECK(tw_front_set_forces(f, force) == TW_ERR_INVALID);
    tw_world_def wd = front_world_def();
    wd.gravity[0] = wd.gravity[1] = wd.gravity[2] = 0;
    tw_world *w = tw_world_create(m, &wd);
    CHECK(w);
    CHECK(tw_world_pin_where(w, 0, 1, 1e-6) > 0);
    const double fz[3] = {0, 0, -5};
    CHECK_OK(tw_world_set_force(w, tip, fz));
    for (int k = 0; k < 40; k++) {
        CHECK_OK(tw_front_step(f, NULL));
        CHECK_OK(tw_world_step(w, NULL));
    }
    const double *xf = tw_front_x(f);
    const tw_real *xw = tw_world_positions(w);
    double worst = 0;
    for (int i = 0; i < 3 * m->nv; i++)
        worst = tw_test_max(worst, fabs(xf[i] - (double)xw[i]));
    const double sag = m->X[3 * tip + 2] - xf[3 * tip + 2];
    printf("tip force 5 N: front sag %.4g m, largest difference from the world %.3g m\n", sag, worst);
    CHECK(sag > 1e-3);
    CHECK(worst <= 1e-4 * sag);
    tw_world_destroy(w);
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    free(force);
    free(pin);
    return 0;
}

/* A force on a finest vertex outside a coarse front reaches the front
 * through the interpolation that places the vertex (Q^T): half to each end
 * of its parent edge, so it moves the body exactly as those halves do. */
TW_TEST(force_off_front_reaches_parents)
{
    unsigned char *pin = NULL;
    tw_tetra_tree *t = force_bar(&pin);
    CHECK(t && pin);
    const tw_mesh *m = t->h->level[1];
    const tw_transfer *P = &t->h->P[0];
    int u = -1; /* the free end's midpoint vertex farthest out: an edge midpoint of level 1 */
    for (int i = P->n_coarse; i < P->n_fine; i++)
        if (u < 0 || m->X[3 * i] > m->X[3 * u] + 1e-9)
            u = i;
    const int a = P->idx[TW_HIER_ROW * (size_t)u], bb = P->idx[TW_HIER_ROW * (size_t)u + 1];
    unsigned char *act = calloc((size_t)t->nt, 1);
    double *fa = calloc(3 * (size_t)m->nv, sizeof *fa), *fb = calloc(3 * (size_t)m->nv, sizeof *fb);
    CHECK(act && fa && fb);
    for (int e = 0; e < t->level_start[1]; e++)
        act[e] = 1; /* the base */
    fa[3 * u + 1] = 4;
    fb[3 * a + 1] = fb[3 * bb + 1] = 2;
    tw_front_def fd = tw_default_front_def();
    fd.adapt = 0;
    fd.gravity[2] = 0;
    double *x[2];
    for (int r = 0; r < 2; r++) {
        tw_front *f = tw_front_create(t, pin, &fd);
        CHECK(f);
        CHECK_OK(tw_front_set(f, act));
        CHECK_OK(tw_front_set_forces(f, r ? fb : fa));
        for (int k = 0; k < 20; k++)
            CHECK_OK(tw_front_step(f, NULL));
        x[r] = malloc(3 * sizeof(double) * (size_t)m->nv);
        CHECK(x[r]);
        tw_front_positions(f, x[r]);
        tw_front_destroy(f);
    }
    double worst = 0, moved = 0;
    for (int i = 0; i < 3 * m->nv; i++) {
        worst = tw_test_max(worst, fabs(x[0][i] - x[1][i]));
        moved = tw_test_max(moved, fabs(x[0][i] - m->X[i]));
    }
    printf("4 N on vertex %d (off the base front) vs 2 N on each of %d and %d: moved %.3g m, difference %.3g m\n", u,
           a, bb, moved, worst);
    CHECK(moved > 1e-4);
    CHECK(worst <= 1e-12 * (1 + moved));
    free(x[0]);
    free(x[1]);
    free(act);
    free(fa);
    free(fb);
    free(pin);
    tw_tetra_tree_free(t);
    return 0;
}

/* A switch rebuilds only what it changed (the tets whose slots changed and
 * their rows): the system does not depend on the fronts it was reached
 * through. Two fronts set to the same cut of the tree, one directly from
 * the finest level and one through an earlier front of an adaptive run, with
 * the same state, step to the same bits. */
TW_TEST(rebuild_independent_of_history)
{
    unsigned char *pin = NULL;
    tw_tetra_tree *t = tw_test_box_tree(TW_TEST_BOX_T2, &pin);
    CHECK(t);
    const tw_mesh *m = t->h->level[2];
    unsigned char *early = calloc((size_t)t->nt, 1), *late = calloc((size_t)t->nt, 1);
    CHECK(early && late);
    tw_front_def d = tw_default_front_def();
    d.t3 = 1e-2; /* coarsens too */
    tw_front *a = tw_front_create(t, pin, &d);
    CHECK(a);
    int coarsened = 0, n_early = 0, n_late = 0;
    for (int k = 0; k < 60; k++) {
        tw_front_stats s;
        CHECK_OK(tw_front_step(a, &s));
        coarsened += s.coarsened;
        for (int id = 0; id < t->nt; id++) {
            if (k == 3)
                early[id] = (unsigned char)tw_front_is_active(a, id);
            late[id] = (unsigned char)tw_front_is_active(a, id);
        }
    }
    for (int id = 0; id < t->nt; id++) {
        n_early += early[id];
        n_late += late[id];
    }
    d.adapt = 0;
    tw_front *direct = tw_front_create(t, pin, &d), *through = tw_front_create(t, pin, &d);
    CHECK(direct && through);
    CHECK_OK(tw_front_set(direct, late));
    CHECK_OK(tw_front_set(through, early));
    CHECK_OK(tw_front_set(through, late));
    for (int r = 0; r < 2; r++) {
        tw_front *f = r ? through : direct;
        memcpy(tw_front_x(f), tw_front_x(a), 3 * sizeof(double) * (size_t)m->nv);
        memcpy(tw_front_v(f), tw_front_v(a), 3 * sizeof(double) * (size_t)m->nv);
        for (int k = 0; k < 5; k++)
            CHECK_OK(tw_front_step(f, NULL));
    }
    double worst = 0, moved = 0;
    const double *x0 = tw_front_x(direct), *x1 = tw_front_x(through), *xa = tw_front_x(a);
    for (int i = 0; i < 3 * m->nv; i++) {
        worst = tw_test_max(worst, fabs(x0[i] - x1[i]));
        moved = tw_test_max(moved, fabs(x0[i] - xa[i]));
    }
    printf("fronts of %d and %d tets (%d parents restored on the way): moved %.3g m in 5 steps, direct vs through "
           "the early front %.3g m\n", n_early, n_late, coarsened, moved, worst);
    CHECK(n_early != n_late && coarsened > 0);
    CHECK(moved > 0);
    CHECK(worst == 0);
    tw_front_destroy(a);
    tw_front_destroy(direct);
    tw_front_destroy(through);
    tw_tetra_tree_free(t);
    free(pin);
    free(early);
    free(late);
    return 0;
}

/* The multigrid kept across a switch (lagged): after the one coarser tet of
 * a front is refined, the step solves with the earlier front's multigrid
 * through the interpolation and Gauss-Seidel on the changed rows, to the
 * PCG's tolerance in at most a few more iterations than a multigrid set up
 * for the new front, and the states agree to that tolerance. */
TW_TEST(lagged_multigrid_after_switch)
{
    unsigned char *pin = NULL;
    tw_tetra_tree *t = tw_test_box_tree(tw_default_tetra_tree_def().t2, &pin);
    CHECK(t);
    const tw_mesh *m = t->h->level[2];
    unsigned char *act = calloc((size_t)t->nt, 1);
    CHECK(act);
    /* the finest level but for one level-1 tet */
    const int id = t->level_start[1] + 8;
    for (int k = t->level_start[2]; k < t->nt; k++)
        act[k] = 1;
    act[id] = 1;
    for (int c = 0; c < 8; c++)
        act[t->level_start[2] + 8 * 8 + c] = 0;
    tw_front_def d = tw_default_front_def();
    d.adapt = 0;
    d.precond = TW_PRECOND_MG;
    d.cg_tolerance = 1e-6;
    tw_front *f[2];
    for (int r = 0; r < 2; r++) {
        f[r] = tw_front_create(t, pin, &d);
        CHECK(f[r]);
        tw_front_set_mg_lag(f[r], r);
        CHECK_OK(tw_front_set(f[r], act));
        for (int k = 0; k < 3; k++)
            CHECK_OK(tw_front_step(f[r], NULL));
    }
    /* refine it */
    act[id] = 0;
    for (int c = 0; c < 8; c++)
        act[t->level_start[2] + 8 * 8 + c] = 1;
    int it[2] = {0, 0}, kind[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        CHECK_OK(tw_front_set(f[r], act));
        tw_front_stats s;
        CHECK_OK(tw_front_step(f[r], &s));
        it[r] = s.cg_iterations;
        kind[r] = tw_front_mg_kind(f[r]);
        for (int k = 0; k < 2; k++)
            CHECK_OK(tw_front_step(f[r], NULL));
    }
    double worst = 0, moved = 0;
    const double *x0 = tw_front_x(f[0]), *x1 = tw_front_x(f[1]);
    for (int i = 0; i < 3 * m->nv; i++) {
        worst = tw_test_max(worst, fabs(x0[i] - x1[i]));
        moved = tw_test_max(moved, fabs(x0[i] - m->X[i]));
    }
    printf("after the switch: %d iterations with a new multigrid, %d with the lagged one; states %.3g m apart, "
           "moved %.3g m\n", it[0], it[1], worst, moved);
    CHECK(kind[0] == 1 && kind[1] == 2);
    CHECK(it[1] <= it[0] + it[0] / 4 + 2);
    CHECK(moved > 0);
    CHECK(worst <= 1e-4 * moved);
    for (int r = 0; r < 2; r++)
        tw_front_destroy(f[r]);
    tw_tetra_tree_free(t);
    free(pin);
    free(act);
    return 0;
}

/* The backend: auto runs on the CPU; cuda runs on the device where one is
 * usable, and elsewhere (no device, or a build without CUDA) is refused
 * with a message that names the backend and the reason. */
TW_TEST(backend_selection)
{
    tw_tetra_tree *t = cube_tree();
    CHECK(t);
    tw_front_def d = still_def();
    d.backend = TW_BACKEND_AUTO;
    tw_front *f = tw_front_create(t, NULL, &d);
    CHECK(f);
    CHECK_OK(tw_front_step(f, NULL));
    CHECK(!tw_front_on_device(f));
    tw_front_destroy(f);
    char why[256] = "";
    const int usable = tw_backend_usable(TW_BACKEND_CUDA, why, sizeof why);
    d.backend = TW_BACKEND_CUDA;
    f = tw_front_create(t, NULL, &d);
    if (usable) {
        CHECK(f);
        CHECK_OK(tw_front_step(f, NULL));
        CHECK(tw_front_on_device(f));
    } else {
        CHECK(!f);
        printf("%s\n", tw_last_error());
        CHECK(strstr(tw_last_error(), "cuda backend") != NULL);
        CHECK(strstr(tw_last_error(), why) != NULL);
    }
    tw_front_destroy(f);
    tw_tetra_tree_free(t);
    return 0;
}
