/* The moving tool and the force on it on the CUDA backend against the CPU
 * (tests/test_tool.c's scenes); skipped without a device. */
#include <stdlib.h>
#include <string.h>

#include "tool_press.h"
#include "tw_test.h"

/* The fixed block with a sphere pressed 1 cm in over 0.2 s, then moved 1 cm
 * along x over 0.3 s and held (dt 0.01, friction 0.5, no gravity), on
 * `backend`: the force on the tool per step (3 per step, 60 steps) and the
 * deepest a vertex ended a step inside it. */
static int press_run(tw_backend backend, double *force, double *deepest, tw_real *x_end, int nx)
{
    tw_mesh *m = demo_tool_block_mesh(8);
    CHECK(m);
    tw_world_def d = tw_default_world_def();
    d.backend = backend;
    d.youngs_modulus = 1e5;
    d.gravity[2] = 0;
    d.damping_mass = 5;
    tw_world *w = demo_tool_block_world(m, &d, 1);
    CHECK(w);
    tw_collider_def tool = demo_tool_sphere(0.04, 0, 0.5);
    CHECK_OK(tw_world_add_collider(w, &tool));
    double c[3] = {tool.center[0], tool.center[1], tool.center[2]}, nn[3];
    *deepest = -INFINITY;
    for (int s = 0; s < 60; s++) {
        if (s < 20) c[2] -= 0.01 / 20;
        else if (s < 50) c[0] += 0.01 / 30;
        CHECK_OK(tw_world_move_collider(w, 0, c, NULL));
        CHECK_OK(tw_world_step(w, NULL));
        CHECK_OK(tw_world_collider_force(w, 0, force + 3 * s));
        tw_collider_def now;
        CHECK_OK(tw_world_get_collider(w, 0, &now));
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < tw_world_vertex_count(w); i++) {
            double p[3] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
            *deepest = tw_test_max(*deepest, -tw_collider_distance(&now, p, nn));
        }
    }
    CHECK(nx == 3 * tw_world_vertex_count(w));
    memcpy(x_end, tw_world_positions(w), sizeof(tw_real) * (size_t)nx);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

/* The device follows the tool as the CPU does: the force on it per step
 * within 3 % of the CPU's largest (max over the steps), the end positions
 * within 1e-3 of the block's edge, and no vertex ends a step 0.5 mm inside. */
TW_TEST(tool_press_matches_cpu)
{
    if (tw_test_gpu_skip()) return TW_SKIP;
    int n3 = 3 * 405; /* demo_tool_block_mesh(8): 9 x 9 x 5 vertices */
    double fc[180], fg[180], dc, dg;
    tw_real *xc = malloc(sizeof(tw_real) * (size_t)n3), *xg = malloc(sizeof(tw_real) * (size_t)n3);
    CHECK(xc && xg);
    CHECK(press_run(TW_BACKEND_CPU, fc, &dc, xc, n3) == 0);
    CHECK(press_run(TW_BACKEND_CUDA, fg, &dg, xg, n3) == 0);
    double fmax = 0, ferr = 0, xerr = 0;
    for (int k = 0; k < 180; k++) {
        fmax = tw_test_max(fmax, fabs(fc[k]));
        ferr = tw_test_max(ferr, fabs(fc[k] - fg[k]));
    }
    for (int k = 0; k < n3; k++) xerr = tw_test_max(xerr, fabs((double)xc[k] - xg[k]));
    printf("force at the end: cpu (%.4g, %.4g, %.4g) gpu (%.4g, %.4g, %.4g) N; max force difference %.3g of %.3g N; "
           "positions %.3g m apart; deepest cpu %.3g gpu %.3g mm\n",
           fc[177], fc[178], fc[179], fg[177], fg[178], fg[179], ferr, fmax, xerr, 1e3 * dc, 1e3 * dg);
    CHECK(fmax > 1);
    CHECK(!(ferr > 0.03 * fmax));
    CHECK(!(xerr > 1e-3 * DEMO_TOOL_BLOCK_EDGE));
    CHECK(!(dg > 0.5e-3));
    free(xc);
    free(xg);
    return 0;
}
