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
 *   max_rise     max over the steps of (E_k - min_{j<k} E_j) / E_drop: the
 *                largest energy any stretch of the run gained back (a
 *                rebound the contact or the integrator made); 0 when E
 *                never rises
 *   ke_per_kg    kinetic energy at the end / mass, J/kg
 *   ke_cm_per_kg the part of it in the centre of mass's motion, |p|^2 / 2m^2
 *                (a body sliding on a frictionless floor, not trembling)
 *   static_strain the reference for rest_strain: the elastic energy / E_drop
 *                of a static solve (tw_world_solve_static) of the body
 *                resting on the floor, its rest shape placed in the pose the
 *                run ends in (the rigid fit of the end positions to the rest
 *                ones) and the vertices then within 0.1 mm of the floor
 *                pinned there, moved onto it (stuck contacts: no friction
 *                slip). rest_strain equal to it is the body's own sag; far
 *                above it, strain the contact locked in. Empty for a method
 *                without a static solver or a run that did not finish
 *   rest_over_static rest_strain / static_strain
 *   static_how   "static" (tw_world_solve_static), or "relaxed" where Newton
 *                fails because the pinned vertices leave a mode free (the
 *                tube's contact is a line it can roll on): damped implicit
 *                Euler steps of 0.05 s from the same start until at rest
 *   placed_strain the body set down on the floor without a drop (its rest
 *                shape in the end pose, lowered onto the floor, at rest) and
 *                relaxed there by damped implicit Euler steps of 0.02 s with
 *                the same floor and friction: its elastic energy / E_drop,
 *                the body's sag under the contact as it is without an impact
 *   rest_over_placed rest_strain / placed_strain
 *   frictionless_strain the same placement relaxed on a frictionless floor:
 *                the elastic energy / E_drop at the minimum of the elastic
 *                plus gravity energy (the rest state every frictionless run
 *                reaches). With friction the static states are a set, not
 *                one: every state whose contact forces lie in Coulomb's
 *                cone is at rest; placed_strain (contacts stuck where they
 *                first touched) and this one are two of them
 *   rest_over_frictionless rest_strain / frictionless_strain
 *   max_tan_ratio at the end, over the vertices on the floor (within 0.01 mm)
 *                that carry load (normal force above 1e-3 of the weight over
 *                their count): the largest |tangential| / normal of the
 *                force the floor gives them, -(f_elastic + m g) at rest: at
 *                most the friction coefficient when the rest state is one
 *                Coulomb's law can hold (0 without friction)
 *   held_strain  the rest state's own contact set as a reference: from the
 *                run's end positions, each floor contact the last step left
 *                stuck (a normal impulse, no slip friction, no damping)
 *                pinned where it is, the sliding ones (slip friction or
 *                damping) and the rest on a frictionless floor, relaxed by
 *                damped implicit Euler steps of 0.02 s (as placed_strain):
 *                the elastic energy / E_drop there. Equal to rest_strain
 *                when the run rests at an equilibrium of its own contact set
 *                (nothing else holds strain). Empty without friction
 *   rest_over_held rest_strain / held_strain
 *   held_stuck, held_sliding the contacts pinned and those left sliding
 *   held_coulomb the largest |tangential| / (mu normal) of the pins'
 *                reactions at that equilibrium, -(f_elastic + m g), over
 *                the pins that carry load (normal reaction above 1e-3 of
 *                the weight over the pins): at most 1 (Coulomb's cone) for
 *                a rest state friction can hold
 *   held_pulls   pins whose normal reaction pulls the body down by more
 *                than that (no contact can); 0 for an admissible state
 *   ms_step, cg_mean, passes_mean, and the warning counts summed over the
 *   run (tw_step_stats: cg_capped, energy_rise, contacts_unresolved).
 *   newton_mean  Newton iterations a step (tw_step_stats.newton_iterations:
 *                1, the single linearisation, plus the further Newton
 *                solves; last column)
 *
 * Usage: tw_contact_report [--header] SCENE METHOD INTEGRATOR DT FRICTION SECONDS [--refs]
 *   --refs: compute static_strain, placed_strain, frictionless_strain,
 *   max_tan_ratio and (with friction) the held columns (else empty)
 *   SCENE: cube | tube | bunny | armadillo (meshes from TW_DATA_DIR or data/)
 *   TW_CONTACT_REPORT_VERBOSE=1: each step's tw_step_stats on stderr
 *   TW_CONTACT_REPORT_CONTACTS=1 (with --refs): each floor vertex at the end on
 *   stderr, its normal force over the weight and its tangential / normal;
 *   and each pin of held_strain, its reaction over the weight and its
 *   |tangential| / (mu normal)
 *   TW_CONTACT_REPORT_MOMENTUM=N (implicit Euler): every N steps on stderr
 *   the angular momentum about the vertical through the centre of mass, the
 *   horizontal momentum, the kinetic energy split into translation, rigid
 *   rotation and deformation, and what changed L_up in the step, by the
 *   terms of the step's equation (momentum_step below); their sums over the
 *   run at the end
 *   TW_CONTACT_REPORT_NEWTON=N: tw_world_def.newton_iterations N (0, the
 *   default, is the engine's automatic count)
 *   TW_CONTACT_REPORT_TURN_SUBSTEPS=1: tw_world_def.turn_substeps (corot-element
 *   and hybrid, implicit Euler: a step that turns an element far as substeps)
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
#include "world.h" /* the momentum diagnostic reads the step's system (w->A, w->rhs, w->vnew, w->f); held_reference the run's contact state at the end (cimpulse, cslip, cfric, ccol) */

#ifndef TW_DATA_DIR
#define TW_DATA_DIR "data"
#endif

static double now_ms(void);

/* R, the rotation nearest the 3x3 matrix H (its polar factor, by the
 * averaging iteration R <- (R + R^-T) / 2; H not singular). */
static void nearest_rotation(const double H[9], double R[9])
{
    memcpy(R, H, sizeof(double) * 9);
    for (int it = 0; it < 100; it++) {
        const double *a = R;
        double c[9] = {a[4] * a[8] - a[5] * a[7], a[5] * a[6] - a[3] * a[8], a[3] * a[7] - a[4] * a[6],
                       a[2] * a[7] - a[1] * a[8], a[0] * a[8] - a[2] * a[6], a[1] * a[6] - a[0] * a[7],
                       a[1] * a[5] - a[2] * a[4], a[2] * a[3] - a[0] * a[5], a[0] * a[4] - a[1] * a[3]};
        double det = a[0] * c[0] + a[1] * c[1] + a[2] * c[2], diff = 0; /* c: the cofactors, R^-T = c / det */
        for (int k = 0; k < 9; k++) {
            double r = 0.5 * (R[k] + c[k] / det);
            diff = fmax(diff, fabs(r - R[k]));
            R[k] = r;
        }
        if (diff < 1e-14) break;
    }
}

/* The static reference of the body resting on the floor (the plane
 * coordinate `up` = floor): the elastic energy (J) of tw_world_solve_static
 * from the rest shape in the pose of x (the rotation and translation that fit
 * the rest positions best to x), the vertices of x within 0.1 mm of the floor
 * pinned at their posed rest positions moved onto the floor. NAN when the
 * solve fails. */
static double static_reference(const tw_mesh *m, const tw_world_def *d, const tw_real *x, int up, double floor,
                               const char **how)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    double cx[3] = {0, 0, 0}, cX[3] = {0, 0, 0}, H[9] = {0}, R[9];
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) { cx[a] += (double)x[3 * i + a] / n; cX[a] += X[3 * i + a] / n; }
    for (int i = 0; i < n; i++) /* H = sum (x - cx)(X - cX)^T: R maps rest to posed */
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) H[3 * a + b] += ((double)x[3 * i + a] - cx[a]) * (X[3 * i + b] - cX[b]);
    nearest_rotation(H, R);
    tw_world_def sd = *d;
    sd.threads = 1;
    tw_world *w = tw_world_create(m, &sd);
    tw_real *p = malloc(sizeof(tw_real) * 3 * (size_t)n);
    if (!w || !p) { free(p); tw_world_destroy(w); return NAN; }
    int pinned = 0;
    for (int i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            double q = cx[a];
            for (int b = 0; b < 3; b++) q += R[3 * a + b] * (X[3 * i + b] - cX[b]);
            p[3 * i + a] = (tw_real)q;
        }
        if ((double)x[3 * i + up] - floor < 1e-4) {
            p[3 * i + up] = (tw_real)floor;
            tw_world_set_constraint(w, i, TW_PINNED);
            pinned++;
        }
    }
    double e = NAN;
    tw_static_def st = tw_default_static_def();
    *how = "static";
    if (pinned >= 3 && tw_world_set_positions(w, p) == TW_OK && tw_world_solve_static(w, &st, NULL) == TW_OK) {
        e = tw_world_elastic_energy(w);
    } else if (pinned >= 1 && tw_world_set_positions(w, p) == TW_OK) {
        /* Newton's static solve fails where the pinned vertices leave a mode
         * free (a tube on its contact line can roll): relax instead, by
         * implicit Euler steps of 0.05 s with mass damping 20/s (the free
         * mode, unloaded, stays at rest), until the kinetic energy is below
         * 1e-14 J per vertex */
        tw_world_destroy(w);
        sd.dt = 0.05;
        sd.damping_mass = 20;
        sd.cg_tolerance = 1e-8;
        w = tw_world_create(m, &sd);
        for (int i = 0; w && i < n; i++)
            if (p[3 * i + up] == (tw_real)floor) tw_world_set_constraint(w, i, TW_PINNED);
        if (w && tw_world_set_positions(w, p) == TW_OK) {
            for (int k = 0; k < 2000; k++) {
                if (tw_world_step(w, NULL) != TW_OK) break;
                if (k > 20 && tw_world_kinetic_energy(w) < 1e-14 * n) { e = tw_world_elastic_energy(w); break; }
            }
        }
        *how = "relaxed";
    }
    if (!isfinite(e)) fprintf(stderr, "static reference (%d vertices on the floor): %s\n", pinned, tw_last_error());
    free(p);
    tw_world_destroy(w);
    return e;
}

/* A world of m for relaxing to rest: d's, one thread, implicit Euler steps
 * of 0.02 s with mass damping 20/s (placed_reference, held_reference). */
static tw_world *relax_world(const tw_mesh *m, const tw_world_def *d)
{
    tw_world_def sd = *d;
    sd.threads = 1;
    sd.dt = 0.02;
    sd.damping_mass = 20;
    sd.damping_stiffness = tw_default_world_def().damping_stiffness; /* the run's own may be explicit Newmark's 0 */
    sd.integrator = TW_IMPLICIT_EULER;
    return tw_world_create(m, &sd);
}

/* Steps w until its kinetic energy is below 1e-12 J per vertex (after at
 * least 21 steps) or 150 steps (3 s) have passed: the elastic energy (J)
 * there, NAN when a step fails. */
static double relax(tw_world *w)
{
    double e = NAN;
    int n = tw_world_vertex_count(w);
    for (int k = 0; k < 150; k++) {
        if (tw_world_step(w, NULL) != TW_OK) return NAN;
        e = tw_world_elastic_energy(w);
        if (k > 20 && tw_world_kinetic_energy(w) < 1e-12 * n) break;
    }
    return e;
}

/* The body set down on the floor (plane fl, normal along `up`) without a
 * drop: its rest shape in the pose of x (as static_reference), lowered until
 * its lowest vertex touches the floor, at rest, then relaxed by implicit
 * Euler steps of 0.02 s with mass damping 20/s and the default stiffness
 * damping (the same contact) until the kinetic energy is below 1e-12 J per
 * vertex or 3 s have passed (60 times the damping's time constant): the
 * elastic energy (J) it holds there, NAN when a step fails. The same
 * relaxation whatever integrator the run used: a rest state of the body on
 * the floor, not of the run. */
static double placed_reference(const tw_mesh *m, const tw_world_def *d, const tw_collider_def *fl, const tw_real *x,
                               int up)
{
    int n = tw_mesh_vertex_count(m);
    const double *X = tw_mesh_positions(m);
    double cx[3] = {0, 0, 0}, cX[3] = {0, 0, 0}, H[9] = {0}, R[9], low = INFINITY;
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) { cx[a] += (double)x[3 * i + a] / n; cX[a] += X[3 * i + a] / n; }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) H[3 * a + b] += ((double)x[3 * i + a] - cx[a]) * (X[3 * i + b] - cX[b]);
    nearest_rotation(H, R);
    tw_real *p = malloc(sizeof(tw_real) * 3 * (size_t)n);
    if (!p) return NAN;
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            double q = cx[a];
            for (int b = 0; b < 3; b++) q += R[3 * a + b] * (X[3 * i + b] - cX[b]);
            p[3 * i + a] = (tw_real)q;
            if (a == up) low = fmin(low, q);
        }
    for (int i = 0; i < n; i++) p[3 * i + up] += (tw_real)(fl->point[up] - low);
    tw_world *w = relax_world(m, d);
    double e = NAN;
    if (w && tw_world_add_collider(w, fl) == TW_OK && tw_world_set_positions(w, p) == TW_OK) e = relax(w);
    if (!isfinite(e)) fprintf(stderr, "placed reference: %s\n", tw_last_error());
    free(p);
    tw_world_destroy(w);
    return e;
}

/* The floor's reaction on vertex i of a body at rest under gravity along
 * -up, from the elastic forces f: r = -(f_i + m_i g) (N); returns its part
 * along the floor, |r_t| (max_tangential_ratio, held_reference). */
static double floor_reaction(const tw_real *f, const tw_real *m, int i, int up, double r[3])
{
    double t2 = 0;
    for (int a = 0; a < 3; a++) r[a] = -(double)f[3 * i + a] + (a == up ? m[i] * 9.81 : 0);
    for (int a = 0; a < 3; a++)
        if (a != up) t2 += r[a] * r[a];
    return sqrt(t2);
}

/* At the end of a run: the largest |tangential| / normal of the floor's force
 * on its loaded vertices (see max_tan_ratio above); 0 when none carries
 * load. */
static double max_tangential_ratio(tw_world *w, const tw_collider_def *fl, int up)
{
    int n = tw_world_vertex_count(w), on = 0;
    const tw_real *x = tw_world_positions(w), *m = tw_world_vertex_mass(w);
    tw_real *f = malloc(sizeof(tw_real) * 3 * (size_t)n);
    if (!f) return NAN;
    tw_world_elastic_force(w, f);
    double weight = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        weight += m[i] * 9.81;
        on += (double)x[3 * i + up] - fl->point[up] < 1e-5;
    }
    int list = getenv("TW_CONTACT_REPORT_CONTACTS") != NULL;
    if (list) fprintf(stderr, "contacts at the end: vertex, position (m), F_n / weight, |F_t| / F_n\n");
    for (int i = 0; i < n; i++) {
        if (!((double)x[3 * i + up] - fl->point[up] < 1e-5)) continue;
        double r[3], rt = floor_reaction(f, m, i, up, r);
        if (r[up] > 1e-3 * weight / on) worst = fmax(worst, rt / r[up]);
        if (list)
            fprintf(stderr, "contact %d (%.4f, %.4f, %.4f) %.4f %.4f\n", i, (double)x[3 * i], (double)x[3 * i + 1],
                    (double)x[3 * i + 2], r[up] / weight, r[up] > 0 ? rt / r[up] : NAN);
    }
    free(f);
    return worst;
}

/* The momentum diagnostic (TW_CONTACT_REPORT_MOMENTUM). Gravity is along
 * axis up and the floor is frictionless and horizontal, so no external force
 * has a horizontal part: the horizontal momentum and the angular momentum
 * about the vertical through the centre of mass, L_up, keep their start
 * values (0) in the exact motion. An implicit Euler step, x+ = x + h v+, of
 *   (M (1 + h alpha) + (h^2 + h beta) K') v+ = M v + h (f(x) + f_ext) + p
 * (p = A v+ - b: the contacts' impulses and the solver's residual) changes
 * the angular momentum about the centre of mass c by exactly
 * sum (x_i - c) x M_i (v+ - v)_i (the position update adds nothing), and so
 * by the sum of these terms' moments: the elastic force h f(x) ("elastic",
 * 0 for a rotation-invariant energy), the stiffness term -h^2 K' v+
 * ("stiffness", the linearisation at fixed rotations), Rayleigh's
 * -h beta K' v+ ("beta") and -h alpha M v+ ("alpha"), p at the free vertices
 * ("residual") and at the contacts, normal ("contact_n", 0 on a horizontal
 * floor) and tangential ("contact_t", the residual along the floor); then
 * the end-of-step projection ("projection"). "check" is the change from v
 * to v+ less those terms (rounding). The consistent tangent K (the
 * derivative of f, rotations included) has moments sum (x_i - c) x (K w)_i =
 * sum w_i x f_i for any w (f's moment is 0 at every x); what the stiffness
 * and beta terms would be with it, -(h^2 + h beta) sum v+ x f, is printed
 * beside them. */
enum { MD_EL, MD_K, MD_BETA, MD_ALPHA, MD_RES, MD_CN, MD_CT, MD_PROJ, MD_CHECK, MD_PARTS };
static const char *md_names[MD_PARTS] = {"elastic", "stiffness", "beta", "alpha", "residual",
                                         "contact_n", "contact_t", "projection", "check"};
typedef struct {
    int every, up;
    double *x0, *v0, sum[MD_PARTS], psum[MD_PARTS][3];
} momentum_diag;

/* The centre of mass of x (3n) and the angular momentum of (x, v) about it,
 * with the mass and momentum. */
static void md_moments(const tw_world *w, const double *x, const double *v, double c[3], double L[3], double P[3],
                       double *mass)
{
    int n = tw_world_vertex_count(w);
    const tw_real *m = tw_world_vertex_mass(w);
    double mt = 0;
    for (int a = 0; a < 3; a++) c[a] = L[a] = P[a] = 0;
    for (int i = 0; i < n; i++) {
        mt += m[i];
        for (int a = 0; a < 3; a++) { c[a] += m[i] * x[3 * i + a]; P[a] += m[i] * v[3 * i + a]; }
    }
    for (int a = 0; a < 3; a++) c[a] /= mt;
    for (int i = 0; i < n; i++) {
        const double *xi = x + 3 * i, *vi = v + 3 * i;
        double r[3] = {xi[0] - c[0], xi[1] - c[1], xi[2] - c[2]};
        L[0] += m[i] * (r[1] * vi[2] - r[2] * vi[1]);
        L[1] += m[i] * (r[2] * vi[0] - r[0] * vi[2]);
        L[2] += m[i] * (r[0] * vi[1] - r[1] * vi[0]);
    }
    *mass = mt;
}

/* The kinetic energy's translation (|P|^2 / 2m), rigid rotation (omega . L / 2,
 * omega = I^-1 L, I the inertia tensor about c) and the rest, J; omega. */
static void md_kinetic(const tw_world *w, const double *x, const double *v, double ke[3], double omega[3])
{
    int n = tw_world_vertex_count(w);
    const tw_real *m = tw_world_vertex_mass(w);
    double c[3], L[3], P[3], mt, I[9] = {0}, k = 0;
    md_moments(w, x, v, c, L, P, &mt);
    for (int i = 0; i < n; i++) {
        double r[3] = {x[3 * i] - c[0], x[3 * i + 1] - c[1], x[3 * i + 2] - c[2]};
        double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for (int a = 0; a < 3; a++) {
            k += 0.5 * m[i] * v[3 * i + a] * v[3 * i + a];
            for (int b = 0; b < 3; b++) I[3 * a + b] += m[i] * ((a == b) * r2 - r[a] * r[b]);
        }
    }
    double det = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
                 I[2] * (I[3] * I[7] - I[4] * I[6]);
    double inv[9] = {I[4] * I[8] - I[5] * I[7], I[2] * I[7] - I[1] * I[8], I[1] * I[5] - I[2] * I[4],
                     I[5] * I[6] - I[3] * I[8], I[0] * I[8] - I[2] * I[6], I[2] * I[3] - I[0] * I[5],
                     I[3] * I[7] - I[4] * I[6], I[1] * I[6] - I[0] * I[7], I[0] * I[4] - I[1] * I[3]};
    for (int a = 0; a < 3; a++)
        omega[a] = (inv[3 * a] * L[0] + inv[3 * a + 1] * L[1] + inv[3 * a + 2] * L[2]) / det;
    ke[0] = 0.5 * (P[0] * P[0] + P[1] * P[1] + P[2] * P[2]) / mt;
    ke[1] = 0.5 * (omega[0] * L[0] + omega[1] * L[1] + omega[2] * L[2]);
    ke[2] = k - ke[0] - ke[1];
}

static void md_copy(const tw_real *a, double *b, int n3)
{
    for (int i = 0; i < n3; i++) b[i] = a[i];
}

/* After step s (the state at its start in d->x0, d->v0): the terms above. */
static void md_step(momentum_diag *d, tw_world *w, int s)
{
    int n = tw_world_vertex_count(w), up = d->up;
    const tw_real *m = tw_world_vertex_mass(w);
    double h = w->def.dt, alpha = w->def.damping_mass, beta = w->def.damping_stiffness;
    double cm = 1 + h * alpha, ck = h * h + h * beta;
    double c0[3], L0[3], P0[3], mt, part[MD_PARTS] = {0}, pp[MD_PARTS][3] = {{0}}, tangent = 0;
    md_moments(w, d->x0, d->v0, c0, L0, P0, &mt);
    double *Av = malloc(sizeof(double) * 3 * (size_t)n), *xp = malloc(sizeof(double) * 3 * (size_t)n), *vp = malloc(sizeof(double) * 3 * (size_t)n);
    double *xe = malloc(sizeof(double) * 3 * (size_t)n), *ve = malloc(sizeof(double) * 3 * (size_t)n);
    if (!Av || !xp || !vp || !xe || !ve) { free(Av); free(xp); free(vp); free(xe); free(ve); return; }
    for (int i = 0; i < n; i++) /* A v+ in double: K' v+ is A v+ less cm M v+, over ck */
        for (int r = 0; r < 3; r++) {
            double sum = 0;
            for (int k = w->fem.row_ptr[i]; k < w->fem.row_ptr[i + 1]; k++)
                for (int c = 0; c < 3; c++)
                    sum += (double)w->A[9 * (size_t)k + 3 * r + c] * (double)w->vnew[3 * (size_t)w->fem.col[k] + c];
            Av[3 * i + r] = sum;
        }
    for (int i = 0; i < n; i++) {
        double r[3], t[MD_PARTS][3] = {{0}};
        for (int a = 0; a < 3; a++) r[a] = d->x0[3 * i + a] - c0[a];
        const tw_real *nn = w->cnormal + 3 * i;
        int contact = w->fcons[i] == TW_FILTER_NORMAL;
        double pn = 0, p[3];
        for (int a = 0; a < 3; a++) {
            size_t k = 3 * (size_t)i + a;
            double Kv = (Av[k] - cm * m[i] * (double)w->vnew[k]) / ck;
            t[MD_EL][a] = h * (double)w->f[k];
            t[MD_K][a] = -h * h * Kv;
            t[MD_BETA][a] = -h * beta * Kv;
            t[MD_ALPHA][a] = -h * alpha * m[i] * (double)w->vnew[k];
            p[a] = Av[k] - (double)w->rhs[k];
            pn += p[a] * nn[a];
            t[MD_CHECK][a] = m[i] * ((double)w->vnew[k] - d->v0[3 * i + a]) - h * m[i] * w->def.gravity[a];
            xp[k] = d->x0[3 * i + a] + h * (double)w->vnew[k];
            vp[k] = w->vnew[k];
        }
        for (int a = 0; a < 3; a++) {
            if (!contact) t[MD_RES][a] = p[a];
            else { t[MD_CN][a] = pn * nn[a]; t[MD_CT][a] = p[a] - pn * nn[a]; }
        }
        for (int q = 0; q < MD_CHECK; q++)
            for (int a = 0; a < 3; a++) t[MD_CHECK][a] -= t[q][a];
        const tw_real *vi = w->vnew + 3 * i, *fi = w->f + 3 * i;
        double vf[3] = {(double)vi[1] * fi[2] - (double)vi[2] * fi[1], (double)vi[2] * fi[0] - (double)vi[0] * fi[2],
                        (double)vi[0] * fi[1] - (double)vi[1] * fi[0]};
        tangent -= ck * vf[up];
        for (int q = 0; q < MD_PARTS; q++) {
            double cr[3] = {r[1] * t[q][2] - r[2] * t[q][1], r[2] * t[q][0] - r[0] * t[q][2],
                            r[0] * t[q][1] - r[1] * t[q][0]};
            part[q] += cr[up];
            for (int a = 0; a < 3; a++) pp[q][a] += a == up ? 0 : t[q][a];
        }
    }
    double cp[3], Lp[3], Pp[3], ce[3], Le[3], Pe[3], ke[3], om[3];
    md_moments(w, xp, vp, cp, Lp, Pp, &mt);
    md_copy(tw_world_positions(w), xe, 3 * n);
    md_copy(tw_world_velocities(w), ve, 3 * n);
    md_moments(w, xe, ve, ce, Le, Pe, &mt);
    part[MD_PROJ] = Le[up] - Lp[up];
    for (int a = 0; a < 3; a++) pp[MD_PROJ][a] = a == up ? 0 : Pe[a] - Pp[a];
    for (int q = 0; q < MD_PARTS; q++) {
        d->sum[q] += part[q];
        for (int a = 0; a < 3; a++) d->psum[q][a] += pp[q][a];
    }
    if ((s + 1) % d->every == 0) {
        md_kinetic(w, xe, ve, ke, om);
        fprintf(stderr, "momentum step %d t %.4f: L_up %.4g kg m^2/s, |P_horizontal| %.3g kg m/s, kinetic J/kg: "
                "translation %.3g rotation %.3g (omega_up %.3g rad/s) deformation %.3g; dL_up %.3g:",
                s + 1, (s + 1) * h, Le[up], hypot(Pe[(up + 1) % 3], Pe[(up + 2) % 3]), ke[0] / mt, ke[1] / mt,
                om[up], ke[2] / mt, Le[up] - L0[up]);
        for (int q = 0; q < MD_PARTS; q++) fprintf(stderr, " %s %.3g", md_names[q], part[q]);
        fprintf(stderr, "; stiffness + beta with the consistent tangent %.3g\n", tangent);
    }
    free(Av); free(xp); free(vp); free(xe); free(ve);
}

/* The run's sums of the terms (L_up, kg m^2/s; horizontal momentum, kg m/s). */
static void md_report(const momentum_diag *d)
{
    fprintf(stderr, "momentum over the run: L_up changed by");
    for (int q = 0; q < MD_PARTS; q++) fprintf(stderr, " %s %.4g", md_names[q], d->sum[q]);
    fprintf(stderr, "\nmomentum over the run: |P_horizontal| changed by");
    for (int q = 0; q < MD_PARTS; q++)
        fprintf(stderr, " %s %.4g", md_names[q],
                sqrt(d->psum[q][0] * d->psum[q][0] + d->psum[q][1] * d->psum[q][1] + d->psum[q][2] * d->psum[q][2]));
    fprintf(stderr, "\n");
}

/* held_strain and its columns (see above) for the run w on floor fl
 * (collider 0) with friction mu > 0; held->e NAN when a step fails. */
typedef struct held_ref {
    double e;             /* elastic energy at the equilibrium, J */
    int stuck, sliding;   /* the contacts pinned and those left sliding */
    double coulomb;       /* max |r_t| / (mu r_n) over the loaded pins */
    int pulls;            /* pins pulling by more than the load threshold */
} held_ref;

static void held_reference(const tw_mesh *m, const tw_world_def *d, const tw_collider_def *fl, const tw_world *run,
                           int up, double mu, held_ref *held)
{
    int n = tw_world_vertex_count(run);
    const tw_real *x = tw_world_positions(run);
    held->e = NAN;
    held->stuck = held->sliding = held->pulls = 0;
    held->coulomb = NAN;
    tw_world *w = relax_world(m, d);
    tw_collider_def fl0 = *fl;
    fl0.friction = 0;
    unsigned char *pin = calloc((size_t)n, 1);
    tw_real *f = malloc(sizeof(tw_real) * 3 * (size_t)n);
    if (!w || !pin || !f || tw_world_add_collider(w, &fl0) != TW_OK || tw_world_set_positions(w, x) != TW_OK) {
        free(pin);
        free(f);
        tw_world_destroy(w);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (run->ccol[i] != 0 || !(run->cimpulse[i] > 0)) continue;
        const tw_real *sl = run->cslip + 3 * (size_t)i;
        if (sl[0] != 0 || sl[1] != 0 || sl[2] != 0 || run->cfric[i] > 0) {
            held->sliding++;
            continue;
        }
        pin[i] = 1;
        held->stuck++;
        tw_world_set_constraint(w, i, TW_PINNED);
    }
    double e = relax(w);
    if (!isfinite(e)) fprintf(stderr, "held reference: %s\n", tw_last_error());
    held->e = e;
    const tw_real *ms = tw_world_vertex_mass(w), *xe = tw_world_positions(w);
    double weight = 0;
    for (int i = 0; i < n; i++) weight += ms[i] * 9.81;
    tw_world_elastic_force(w, f);
    double load = held->stuck ? 1e-3 * weight / held->stuck : 0, worst = 0;
    int list = getenv("TW_CONTACT_REPORT_CONTACTS") != NULL;
    if (list) fprintf(stderr, "held pins: vertex, position (m), R_n / weight, |R_t| / (mu R_n)\n");
    for (int i = 0; i < n; i++) {
        if (!pin[i]) continue;
        double r[3], rt = floor_reaction(f, ms, i, up, r);
        double ratio = r[up] > 0 ? rt / (mu * r[up]) : INFINITY;
        if (r[up] > load) worst = fmax(worst, ratio);
        held->pulls += r[up] < -load;
        if (list)
            fprintf(stderr, "pin %d (%.4f, %.4f, %.4f) %.4g %.4f\n", i, (double)xe[3 * i], (double)xe[3 * i + 1],
                    (double)xe[3 * i + 2], r[up] / weight, ratio);
    }
    held->coulomb = worst;
    free(pin);
    free(f);
    tw_world_destroy(w);
}

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
               "pen_mm,ke_per_kg,ms_step,cg_mean,passes_mean,cg_capped,energy_rise,unresolved,status,max_rise,static_strain,"
               "rest_over_static,static_how,placed_strain,rest_over_placed,ke_cm_per_kg,frictionless_strain,"
               "rest_over_frictionless,max_tan_ratio,newton_mean,held_strain,rest_over_held,held_stuck,held_sliding,"
               "held_coulomb,held_pulls\n");
        return 0;
    }
    if (argc != 7 && !(argc == 8 && !strcmp(argv[7], "--refs"))) {
        fprintf(stderr, "usage: %s [--header] SCENE METHOD INTEGRATOR DT FRICTION SECONDS [--refs]\n", argv[0]);
        return 2;
    }
    int refs_wanted = argc == 8;
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
    if (getenv("TW_CONTACT_REPORT_NEWTON")) d.newton_iterations = atoi(getenv("TW_CONTACT_REPORT_NEWTON"));
    if (getenv("TW_CONTACT_REPORT_TURN_SUBSTEPS")) d.turn_substeps = atoi(getenv("TW_CONTACT_REPORT_TURN_SUBSTEPS"));
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
    double max_gain = -INFINITY, pen = 0, ms = 0, max_rise = 0, e_min = e0;
    long cg = 0, passes = 0, capped = 0, rises = 0, unresolved = 0, newton = 0;
    const char *status = "ok";
    momentum_diag md = {0};
    if (getenv("TW_CONTACT_REPORT_MOMENTUM") && integ == TW_IMPLICIT_EULER) {
        md.every = atoi(getenv("TW_CONTACT_REPORT_MOMENTUM"));
        md.every = md.every > 0 ? md.every : 1;
        md.up = up;
        md.x0 = malloc(sizeof(double) * 3 * (size_t)n);
        md.v0 = malloc(sizeof(double) * 3 * (size_t)n);
        if (!md.x0 || !md.v0) md.every = 0;
    }
    for (int s = 0; s < steps; s++) {
        tw_step_stats st;
        if (md.every) {
            md_copy(tw_world_positions(w), md.x0, 3 * n);
            md_copy(tw_world_velocities(w), md.v0, 3 * n);
        }
        double t0 = now_ms();
        if (tw_world_step(w, &st) != TW_OK) {
            fprintf(stderr, "%s %s %s dt %g mu %g: %s\n", scene, argv[2], argv[3], dt, mu, tw_last_error());
            status = "diverged";
            steps = s;
            break;
        }
        ms += now_ms() - t0;
        if (md.every) md_step(&md, w, s);
        cg += st.cg_iterations;
        passes += st.contact_passes;
        newton += st.newton_iterations;
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
        if (getenv("TW_CONTACT_REPORT_VERBOSE"))
            fprintf(stderr, "  (E - E0) / E_drop %.4g: kinetic %.4g, elastic %.4g, gravity %.4g\n", (e - e0) / drop,
                    tw_world_kinetic_energy(w) / drop, tw_world_elastic_energy(w) / drop,
                    (tw_world_gravity_energy(w) - e0) / drop);
        max_gain = fmax(max_gain, (e - e0) / drop);
        max_rise = fmax(max_rise, (e - e_min) / drop);
        e_min = fmin(e_min, e);
    }
    if (md.every) md_report(&md);
    free(md.x0);
    free(md.v0);
    double rest = tw_world_elastic_energy(w) / drop, ref = NAN;
    const char *how = "";
    if (refs_wanted && !strcmp(status, "ok") && (method == TW_COROT_ELEMENT || method == TW_GREEN || method == TW_LINEAR))
        ref = static_reference(m, &d, tw_world_positions(w), up, fl.point[up], &how) / drop;
    double placed = NAN, frictionless = NAN;
    if (refs_wanted && !strcmp(status, "ok")) {
        placed = placed_reference(m, &d, &fl, tw_world_positions(w), up) / drop;
        tw_collider_def fl0 = fl;
        fl0.friction = 0;
        frictionless = mu > 0 ? placed_reference(m, &d, &fl0, tw_world_positions(w), up) / drop : placed;
    }
    char hl[128] = ",,,,,";
    if (refs_wanted && !strcmp(status, "ok") && integ != TW_EXPLICIT_NEWMARK && mu > 0) {
        held_ref held;
        held_reference(m, &d, &fl, w, up, mu, &held);
        if (isfinite(held.e))
            snprintf(hl, sizeof hl, "%.4g,%.4g,%d,%d,%.4g,%d", held.e / drop, rest / (held.e / drop), held.stuck,
                     held.sliding, held.coulomb, held.pulls);
    }
    double ns = steps > 0 ? steps : 1;
    char refs[64] = ",,";
    if (isfinite(ref)) snprintf(refs, sizeof refs, "%.4g,%.4g,%s", ref, rest / ref, how);
    double pcm[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) pcm[a] += tw_world_vertex_mass(w)[i] * (double)tw_world_velocities(w)[3 * i + a];
    double ke_cm = 0.5 * (pcm[0] * pcm[0] + pcm[1] * pcm[1] + pcm[2] * pcm[2]) / (mass * mass);
    char pl[64] = ",";
    if (isfinite(placed)) snprintf(pl, sizeof pl, "%.4g,%.4g", placed, rest / placed);
    char fr[64] = ",", tan[32] = "";
    if (isfinite(frictionless)) snprintf(fr, sizeof fr, "%.4g,%.4g", frictionless, rest / frictionless);
    if (refs_wanted && !strcmp(status, "ok")) snprintf(tan, sizeof tan, "%.3g", max_tangential_ratio(w, &fl, up));
    printf("%s,%s,%s,%.6g,%g,%g,%d,%d,%.6g,%.4g,%.4g,%.4g,%.4g,%.3g,%.4g,%.1f,%.2f,%ld,%ld,%ld,%s,%.4g,%s,%s,%.3g,%s,%s,%.2f,%s\n",
           scene, argv[2], argv[3], tw_world_dt(w), mu, seconds, steps, n, drop, max_gain, rest,
           100 * (tw_world_volume(w) / vol0 - 1), 1e3 * pen, tw_world_kinetic_energy(w) / mass, ms / ns, cg / ns,
           passes / ns, capped, rises, unresolved, status, max_rise, refs, pl, ke_cm, fr, tan, newton / ns, hl);
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
