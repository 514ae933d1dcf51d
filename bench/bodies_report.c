/* Contact between bodies: the scenes of demos/scenes.h with several bodies
 * or lying on the floor (bunny-block, stack, dane-floor), run at a time step,
 * one CSV row per run:
 *   drop_J       the gravity energy released at the end (J): what the fall
 *                and the settling gave up, the yardstick of the gains
 *   max_gain     max over the steps of (E - E0) / drop_J, E the kinetic +
 *                elastic + gravity energy (nothing else does work)
 *   pen_body_mm  deepest surface vertex inside another body at the end of
 *                any step, mm (tw_world_body_penetration)
 *   pen_floor_mm deepest vertex below the floor z = 0 at the end of any step, mm
 *   ke_end_per_kg, ke_last_per_kg  kinetic energy at the end, and its largest
 *                value over the last second, J/kg
 *   ms_step      mean wall time of a step, ms; body_ms_step the part of it in
 *                body contact's own work (BVHs, detection, the gaps, the
 *                projection: tw_body_stats.ms_total; the coupled solve counts
 *                as the step's solve); body_share their ratio
 *   passes_mean, cg_mean  contact passes (solves) and CG iterations a step
 *   rebuilds     BVH rebuilds over the run
 *   mu_body, mu_floor  Coulomb friction between the bodies and on the floor
 *                (the scene's 0.5 and 0.5 unless --friction BODY,FLOOR)
 * With --trace FILE each step's time, (E - E0) / drop_J of the end, kinetic
 * energy and body penetration go to FILE.
 *
 * Usage: tw_bodies_report [--header] SCENE DT SECONDS [--trace FILE] [--friction BODY,FLOOR]
 * The meshes come from TW_DATA_DIR (environment) or the build's data/. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenes.h"

static double energy(const tw_world *w)
{
    return tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--header")) {
        printf("scene,bodies,vertices,tets,dt,seconds,steps,drop_J,max_gain,pen_body_mm,pen_floor_mm,ke_end_per_kg,"
               "ke_last_per_kg,ms_step,body_ms_step,body_share,passes_mean,cg_mean,rebuilds,status,mu_body,mu_floor\n");
        return 0;
    }
    const char *trace_path = NULL;
    double mu_body = -1, mu_floor = -1;
    int bad = argc < 4;
    for (int k = 4; k < argc && !bad; k += 2) {
        if (k + 1 >= argc) bad = 1;
        else if (!strcmp(argv[k], "--trace")) trace_path = argv[k + 1];
        else if (!strcmp(argv[k], "--friction"))
            bad = sscanf(argv[k + 1], "%lf,%lf", &mu_body, &mu_floor) != 2 || !(mu_body >= 0) || !(mu_floor >= 0);
        else bad = 1;
    }
    if (bad) {
        fprintf(stderr, "usage: %s [--header] SCENE DT SECONDS [--trace FILE] [--friction BODY,FLOOR]\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    double dt = atof(argv[2]), seconds = atof(argv[3]);
    if (!(dt > 0) || !(seconds > 0)) {
        fprintf(stderr, "%s: DT and SECONDS must be > 0\n", argv[0]);
        return 2;
    }
    demo_options o = demo_default_options();
    if (getenv("TW_DATA_DIR")) o.data_dir = getenv("TW_DATA_DIR");
    o.dt = dt;
    demo_scene s;
    if (demo_scene_build(&s, name, &o, argv[0])) return 1;
    if (s.body_count != 1) {
        fprintf(stderr, "%s: %s is not a scene of one world\n", argv[0], name);
        return 1;
    }
    tw_world *w = s.body[0].world;
    const tw_mesh *m = s.body[0].mesh;
    if (mu_body >= 0) {
        if (tw_world_set_body_friction(w, mu_body) != TW_OK) return 1;
        for (int k = 0; k < tw_world_collider_count(w); k++) {
            tw_collider_def c;
            if (tw_world_get_collider(w, k, &c) != TW_OK) return 1;
            c.friction = mu_floor;
            if (tw_world_set_collider(w, k, &c) != TW_OK) return 1;
        }
    } else {
        mu_body = tw_mesh_body_count(m) > 1 ? 0.5 : 0; /* the worlds' defaults */
        tw_collider_def c;
        mu_floor = tw_world_collider_count(w) > 0 && tw_world_get_collider(w, 0, &c) == TW_OK ? c.friction : 0;
    }
    int n = tw_world_vertex_count(w), steps = (int)(seconds / dt + 0.5), last = (int)(1 / dt + 0.5);
    double mass = 0;
    for (int i = 0; i < n; i++) mass += tw_world_vertex_mass(w)[i];
    FILE *trace = trace_path ? fopen(trace_path, "w") : NULL;
    if (trace_path && !trace) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], trace_path);
        return 1;
    }
    double *e = malloc(sizeof(double) * (size_t)(steps + 1)), *ke = malloc(sizeof(double) * (size_t)(steps + 1));
    double *pen = malloc(sizeof(double) * (size_t)(steps + 1));
    if (!e || !ke || !pen) return 1;
    e[0] = energy(w);
    ke[0] = tw_world_kinetic_energy(w);
    pen[0] = 0;
    double pen_body = 0, pen_floor = 0, ms = 0, ke_last = 0;
    long passes = 0, cg = 0;
    const char *status = "ok";
    int done = 0;
    for (int k = 1; k <= steps; k++) {
        tw_step_stats st;
        if (tw_world_step(w, &st) != TW_OK) {
            fprintf(stderr, "%s %g: %s\n", name, dt, tw_last_error());
            status = "diverged";
            break;
        }
        done = k;
        ms += st.ms_total;
        passes += st.contact_passes;
        cg += st.cg_iterations;
        e[k] = energy(w);
        ke[k] = tw_world_kinetic_energy(w);
        pen[k] = tw_world_body_penetration(w, NULL);
        pen_body = fmax(pen_body, pen[k]);
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < n; i++) pen_floor = fmax(pen_floor, -(double)x[3 * i + 2]);
        if (k > steps - last) ke_last = fmax(ke_last, ke[k]);
    }
    double drop = -tw_world_gravity_energy(w), gain = -INFINITY;
    for (int k = 0; k <= done; k++) {
        gain = fmax(gain, (e[k] - e[0]) / drop);
        if (trace) fprintf(trace, "%d,%.6g,%.6g,%.6g,%.6g\n", k, k * dt, (e[k] - e[0]) / drop, ke[k], 1e3 * pen[k]);
    }
    if (trace) fclose(trace);
    tw_body_stats bs = tw_world_body_stats(w);
    int dsteps = done > 0 ? done : 1;
    printf("%s,%d,%d,%d,%.6g,%g,%d,%.6g,%.4g,%.4g,%.4g,%.3g,%.3g,%.4g,%.4g,%.3f,%.2f,%.1f,%d,%s,%g,%g\n", name,
           tw_mesh_body_count(m), n, tw_mesh_tet_count(m), dt, seconds, done, drop, gain, 1e3 * pen_body,
           1e3 * pen_floor, ke[done] / mass, ke_last / mass, ms / dsteps, bs.ms_total / dsteps,
           ms > 0 ? bs.ms_total / ms : 0, (double)passes / dsteps, (double)cg / dsteps, bs.rebuilds, status, mu_body,
           mu_floor);
    free(e);
    free(ke);
    free(pen);
    demo_scene_destroy(&s);
    return 0;
}
