/* Contact at real-time time steps: a body dropped on a floor, one CSV row per
 * run (scene, method, integrator, dt, friction) with the figures the contact
 * must meet:
 *   max_gain     max over the steps of (E - E0) / E_drop, E the kinetic +
 *                elastic + gravity energy, E_drop = m g gap (nothing else does
 *                work); at most 0.01
 *   rest_strain  elastic energy at the end / E_drop; below 0.01
 *   volume_pct   volume at the end against rest, %; within 1
 *   pen_mm       deepest vertex inside the floor at the end of any step, mm;
 *                at most 0.5
 *   ke_per_kg    kinetic energy at the end / mass, J/kg
 *   ms_step, cg_mean, passes_mean, and the warning counts summed over the
 *   run (tw_step_stats: cg_capped, energy_rise, contacts_unresolved).
 *
 * Usage: tw_contact_report [--header] SCENE METHOD INTEGRATOR DT FRICTION SECONDS
 *   SCENE: cube | tube | bunny | armadillo (meshes from TW_DATA_DIR or data/)
 *   TW_CONTACT_REPORT_VERBOSE=1: each step's tw_step_stats on stderr
 * Scenes: cube 0.2 m (4x4x4 cells), E 1e5; tube (0.05/0.08 m radii, 0.6 m,
 * lying along x), E 1e5; bunny (bunny_closed_3485v, 0.15 m), E 1e6; armadillo
 * (armadillo_4k, scaled to 0.3 m tall), E 1e5; density 1000, Rayleigh beta
 * 0.01 s, the lowest vertex 0.1 m above the floor, gravity -9.81 along the
 * floor's normal (y for the bunny and the armadillo, z otherwise). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tetwarp.h"

#ifndef TW_DATA_DIR
#define TW_DATA_DIR "data"
#endif

static double now_ms(void);

static tw_mesh *load(const char *file)
{
    char path[1024];
    const char *dir = getenv("TW_DATA_DIR");
    snprintf(path, sizeof path, "%s/meshes/%s", dir ? dir : TW_DATA_DIR, file);
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1;
    tw_mesh *m = tw_mesh_load(path, &ld, NULL);
    if (!m) fprintf(stderr, "%s: %s\n", path, tw_last_error());
    return m;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--header")) {
        printf("scene,method,integrator,dt,friction,seconds,steps,vertices,drop_J,max_gain,rest_strain,volume_pct,"
               "pen_mm,ke_per_kg,ms_step,cg_mean,passes_mean,cg_capped,energy_rise,unresolved,status\n");
        return 0;
    }
    if (argc != 7) {
        fprintf(stderr, "usage: %s [--header] SCENE METHOD INTEGRATOR DT FRICTION SECONDS\n", argv[0]);
        return 2;
    }
    const char *scene = argv[1];
    int method = tw_method_parse(argv[2]), integ = tw_integrator_parse(argv[3]);
    double dt = atof(argv[4]), mu = atof(argv[5]), seconds = atof(argv[6]);
    if (method < 0 || integ < 0 || !(dt >= 0) || !(mu >= 0) || !(seconds > 0)) {
        fprintf(stderr, "%s: bad method, integrator, dt, friction or seconds\n", argv[0]);
        return 2;
    }
    tw_mesh *m = NULL;
    double E = 1e5, scale = 1;
    int up = 2;
    if (!strcmp(scene, "cube")) m = tw_mesh_bar(0.2, 0.2, 0.2, 4, 4, 4);
    else if (!strcmp(scene, "tube")) m = tw_mesh_tube(0.05, 0.08, 0.6, 2, 16, 12);
    else if (!strcmp(scene, "bunny")) { m = load("bunny_closed_3485v.tet.node"); E = 1e6; up = 1; }
    else if (!strcmp(scene, "armadillo")) { m = load("armadillo_4k.node"); up = 1; }
    else { fprintf(stderr, "%s: unknown scene %s\n", argv[0], scene); return 2; }
    if (!m) return 1;
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) { lo[c] = fmin(lo[c], X[3 * i + c]); hi[c] = fmax(hi[c], X[3 * i + c]); }
    if (!strcmp(scene, "armadillo")) scale = 0.3 / (hi[1] - lo[1]);
    double gap = 0.1;
    tw_world_def d = tw_default_world_def();
    d.method = (tw_method)method;
    d.integrator = (tw_integrator)integ;
    d.dt = dt;
    d.youngs_modulus = E;
    d.gravity[0] = d.gravity[1] = d.gravity[2] = 0;
    d.gravity[up] = -9.81;
    d.threads = 1;
    if (integ == TW_EXPLICIT_NEWMARK) { d.damping_stiffness = 0; d.damping_mass = 4; }
    if (scale != 1) { /* a scaled copy: the mesh's rest shape is the scaled one */
        double *P = malloc(sizeof(double) * 3 * n);
        for (int i = 0; i < 3 * n; i++) P[i] = X[i] * scale;
        int nt = tw_mesh_tet_count(m);
        tw_mesh *s = tw_mesh_create(P, n, tw_mesh_tets(m), nt, NULL, NULL, NULL);
        free(P);
        tw_mesh_destroy(m);
        if (!(m = s)) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
        X = tw_mesh_positions(m);
        lo[up] *= scale;
    }
    tw_world *w = tw_world_create(m, &d);
    if (!w) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    tw_collider_def fl = tw_default_collider_def();
    fl.normal[0] = fl.normal[1] = fl.normal[2] = 0;
    fl.normal[up] = 1;
    fl.point[up] = lo[up] - gap;
    fl.friction = mu;
    if (tw_world_add_collider(w, &fl) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); return 1; }
    double mass = 0;
    for (int i = 0; i < n; i++) mass += tw_world_vertex_mass(w)[i];
    double drop = mass * 9.81 * gap, vol0 = tw_world_volume(w);
    double e0 = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
    int steps = (int)ceil(seconds / tw_world_dt(w) - 1e-9);
    double max_gain = -INFINITY, pen = 0, ms = 0;
    long cg = 0, passes = 0, capped = 0, rises = 0, unresolved = 0;
    const char *status = "ok";
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        double t0 = now_ms();
        if (tw_world_step(w, &st) != TW_OK) {
            fprintf(stderr, "%s %s %s dt %g mu %g: %s\n", scene, argv[2], argv[3], dt, mu, tw_last_error());
            status = "diverged";
            steps = s;
            break;
        }
        ms += now_ms() - t0;
        cg += st.cg_iterations;
        passes += st.contact_passes;
        capped += st.cg_capped;
        rises += st.energy_rise;
        unresolved += st.contacts_unresolved;
        if (getenv("TW_CONTACT_REPORT_VERBOSE"))
            fprintf(stderr, "step %d: contacts %d, passes %d, cg %d (residual %.3g), capped %d, rise %d, unresolved %d\n",
                    s + 1, st.contacts, st.contact_passes, st.cg_iterations, st.residual, st.cg_capped, st.energy_rise,
                    st.contacts_unresolved);
        const tw_real *x = tw_world_positions(w);
        for (int i = 0; i < n; i++) pen = fmax(pen, fl.point[up] - x[3 * i + up]);
        double e = tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w);
        max_gain = fmax(max_gain, (e - e0) / drop);
    }
    double ns = steps > 0 ? steps : 1;
    printf("%s,%s,%s,%.6g,%g,%g,%d,%d,%.6g,%.4g,%.4g,%.4g,%.4g,%.3g,%.4g,%.1f,%.2f,%ld,%ld,%ld,%s\n", scene,
           argv[2], argv[3], tw_world_dt(w), mu, seconds, steps, n, drop, max_gain,
           tw_world_elastic_energy(w) / drop, 100 * (tw_world_volume(w) / vol0 - 1), 1e3 * pen,
           tw_world_kinetic_energy(w) / mass, ms / ns, cg / ns, passes / ns, capped, rises, unresolved, status);
    tw_world_destroy(w);
    tw_mesh_destroy(m);
    return 0;
}

#include <time.h>
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
