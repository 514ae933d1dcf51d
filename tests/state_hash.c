/* tw_state_hash: prints one FNV-1a hash of the positions and velocities per
 * (scene, method, integrator) after a few steps, for checking that a
 * refactor keeps the CPU results bit-identical:
 *
 *   ./build/tests/tw_state_hash > before.txt   (on the old tree)
 *   ./build/tests/tw_state_hash > after.txt    (on the new tree)
 *   diff before.txt after.txt
 *
 * The scenes cover pinned and free bodies, point forces, the mouse spring,
 * colliders with friction, kinematic vertices and the solver variants. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "tetwarp.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

typedef enum { BAR_PINNED, CUBE_FLOOR, TUBE_SPRING, BAR_KINEMATIC, SCENE_COUNT } scene;
static const char *scene_names[] = {"bar-pinned", "cube-floor", "tube-spring", "bar-kinematic"};

static tw_mesh *scene_mesh(scene s)
{
    switch (s) {
    case BAR_PINNED: return tw_mesh_bar(1.0, 0.1, 0.1, 12, 2, 2);
    case CUBE_FLOOR: return tw_mesh_bar(0.2, 0.2, 0.2, 3, 3, 3);
    case TUBE_SPRING: return tw_mesh_tube(0.05, 0.1, 0.6, 1, 8, 6);
    case BAR_KINEMATIC: return tw_mesh_bar(0.5, 0.1, 0.1, 6, 2, 2);
    default: return NULL;
    }
}

static void scene_setup(scene s, tw_world *w, const tw_mesh *m)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    if (s == BAR_PINNED) {
        tw_world_pin_where(w, 0, 1, 1e-6);
        double f[3] = {0, 3.0, -5.0};
        tw_world_set_force(w, n - 1, f);
    } else if (s == CUBE_FLOOR) {
        /* drop from 5 cm, rotated a little by an initial spin */
        tw_real *x = (tw_real *)malloc(sizeof(tw_real) * 3 * (size_t)n);
        tw_real *v = (tw_real *)malloc(sizeof(tw_real) * 3 * (size_t)n);
        for (int i = 0; i < n; i++) {
            x[3 * i] = (tw_real)X[3 * i];
            x[3 * i + 1] = (tw_real)X[3 * i + 1];
            x[3 * i + 2] = (tw_real)(X[3 * i + 2] + 0.05);
            v[3 * i] = (tw_real)(-2.0 * (X[3 * i + 1] - 0.1));
            v[3 * i + 1] = (tw_real)(2.0 * (X[3 * i] - 0.1));
            v[3 * i + 2] = (tw_real)-0.5;
        }
        tw_world_set_positions(w, x);
        tw_world_set_velocities(w, v);
        free(x);
        free(v);
        tw_collider_def c = tw_default_collider_def();
        tw_world_add_collider(w, &c);
        tw_collider_def sph = tw_default_collider_def();
        sph.kind = TW_COLLIDER_SPHERE;
        sph.center[0] = 0.3;
        sph.center[1] = 0.1;
        sph.center[2] = 0.1;
        sph.radius = 0.12;
        sph.friction = 0.2;
        tw_world_add_collider(w, &sph);
    } else if (s == TUBE_SPRING) {
        tw_world_pin_where(w, 2, 1, 1e-6);
        double anchor[3] = {0.2, 0.1, 0.7};
        tw_world_set_spring(w, n - 1, anchor, 50.0);
    } else if (s == BAR_KINEMATIC) {
        for (int i = 0; i < n; i++)
            if (X[3 * i] < 1e-6) tw_world_set_constraint(w, i, TW_KINEMATIC);
        for (int i = 0; i < n; i++)
            if (X[3 * i] < 1e-6) {
                double p[3] = {X[3 * i], X[3 * i + 1] + 0.01, X[3 * i + 2] + 0.02};
                tw_world_set_target(w, i, p);
            }
    }
}


int main(void)
{
    for (int s = 0; s < SCENE_COUNT; s++) {
        tw_mesh *m = scene_mesh((scene)s);
        if (!m) {
            fprintf(stderr, "tw_state_hash: %s: %s\n", scene_names[s], tw_last_error());
            return 1;
        }
        for (int method = 0; method < TW_METHOD_COUNT; method++) {
            for (int integ = 0; integ < TW_INTEGRATOR_COUNT; integ++) {
                for (int variant = 0; variant < 3; variant++) {
                    tw_world_def d = tw_default_world_def();
                    d.backend = TW_BACKEND_CPU;
                    d.method = (tw_method)method;
                    d.integrator = (tw_integrator)integ;
                    d.threads = 1;
                    d.dt = integ == TW_EXPLICIT_NEWMARK ? 0.0 : 0.01;
                    if (variant == 1) {
                        /* fixed iterations, Rayleigh stiffness damping, no warm start */
                        d.cg_fixed_iterations = 20;
                        d.damping_stiffness = 0.01;
                        d.warm_start = 0;
                    } else if (variant == 2) {
                        if (integ == TW_EXPLICIT_NEWMARK) continue;
                        d.newton_iterations = 3;
                        d.warp_system = TW_WARP_SYSTEM_BICGSTAB;
                        d.ghost_force_correction = 0;
                    }
                    tw_world *w = tw_world_create(m, &d);
                    if (!w) {
                        printf("%-13s %-14s %-16s v%d  create failed: %s\n", scene_names[s],
                               tw_method_name((tw_method)method), tw_integrator_name((tw_integrator)integ),
                               variant, tw_last_error());
                        continue;
                    }
                    scene_setup((scene)s, w, m);
                    int steps = integ == TW_EXPLICIT_NEWMARK ? 60 : 15;
                    tw_status st = TW_OK;
                    for (int k = 0; k < steps && st == TW_OK; k++) st = tw_world_step(w, NULL);
                    int n = tw_world_vertex_count(w);
                    uint64_t h = 1469598103934665603ull;
                    h = fnv(h, tw_world_positions(w), sizeof(tw_real) * 3 * (size_t)n);
                    h = fnv(h, tw_world_velocities(w), sizeof(tw_real) * 3 * (size_t)n);
                    printf("%-13s %-14s %-16s v%d  %016llx %s\n", scene_names[s],
                           tw_method_name((tw_method)method), tw_integrator_name((tw_integrator)integ), variant,
                           (unsigned long long)h, st == TW_OK ? "ok" : tw_status_name(st));
                    tw_world_destroy(w);
                }
            }
        }
        tw_mesh_destroy(m);
    }
    return 0;
}
