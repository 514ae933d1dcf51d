/* `tetwarp run --hier-basis L`: the hierarchical-basis corotated simulation
 * (Hauth and Straßer 2004; host/hier_basis.h) on the scene's mesh refined
 * 1:8 L - 1 times, with an optional reference run of the engine's world on
 * the finest level (same mesh, material, pinned vertices and loads) stepped
 * beside it, for the error and the speed-up. One CSV row per step. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hier_basis.h"
#include "../hierarchy.h"
#include "../mesh.h"
#include "cli_args.h"
#include "cli_commands.h"
#include "cli_scene.h"
#include "tetwarp.h"

typedef struct hb_opts {
    int levels;
    tw_hb_def def;
    int steps;
    int threads_ref;
    int load_given;
    cli_fix load_region;  /* the vertices the load is spread over */
    double load_force[3]; /* N, in all */
    double load_ramp;     /* s: the load rises linearly from 0 over this time, then holds */
    int reference;        /* -1: none, else a tw_method */
    int ref_substeps;
    int ref_newton;
    int ref_only;         /* the reference alone (its timing and stable step) */
    double spin;          /* rad/s: an initial rotation about z through the centroid */
    double stretch;       /* an initial stretch along x about the centroid (0.1: 10 %) */
    const char *csv;
    int probe;
} hb_opts;

static hb_opts hb_defaults(void)
{
    hb_opts o;
    memset(&o, 0, sizeof o);
    o.levels = 2;
    o.def = tw_default_hb_def();
    o.steps = 100;
    o.reference = -1;
    o.ref_substeps = 1;
    o.ref_newton = 1;
    o.probe = -1;
    return o;
}

void cli_hier_basis_help(FILE *f)
{
    hb_opts d = hb_defaults();
    fprintf(f,
            "Usage: tetwarp run --hier-basis L [--mesh MESH | --bar ...] [options]\n"
            "\n"
            "The hierarchical-basis corotated simulation (Hauth and Strasser 2004): the mesh refined\n"
            "1:8 L-1 times; a finest tet's strain is the Green strain of its coarsest-level tet plus the\n"
            "corotated linear strain of the finer levels' offsets, with the coarse tet's polar rotation;\n"
            "implicit Euler, Newton at fixed rotations, CG preconditioned in the hierarchical basis.\n"
            "CSV, one row per step: step,time,cg_iterations,newton_iterations,residual,step_ms,\n"
            "kinetic_energy,elastic_energy,gravity_energy,probe_ux,probe_uy,probe_uz, and with\n"
            "--reference: ref_step_ms,ref_cg_iterations,ref_probe_ux,ref_probe_uy,ref_probe_uz,\n"
            "err_probe,err_max (distances over the bounding box's longest edge).\n"
            "\n"
            "  --hier-basis L          levels, 1..5 (1: no hierarchy, the world's green method)\n"
            "  --mesh, --bar, --E, --nu, --rho, --gravity, --fix   as for `run`\n"
            "  --dt S                  time step, s (default %g)\n"
            "  --steps N               steps (default %d)\n"
            "  --damping ALPHA,BETA    Rayleigh damping, 1/s and s (default %g,%g)\n"
            "  --cg-tol T              outer CG relative residual (default %g)\n"
            "  --cg-max N              outer CG iterations per solve at most (default %d)\n"
            "  --newton N              Newton iterations per step (default %d)\n"
            "  --coarse green|corot    the coarsest level's strain: Green (the paper's) or corotated\n"
            "                          (every level linear around the coarse rotations) (default green)\n"
            "  --hb-precond NAME       hierarchical (S B S^T, Yserentant) | two-level | jacobi\n"
            "                          (default two-level)\n"
            "  --coarse-refresh N      refactor the dense coarse system every N assemblies (default %d)\n"
            "  --load AXIS<V|AXIS>V    the vertices a load is spread over (finest level), e.g. x>0.99\n"
            "  --load-force FX,FY,FZ   the load in all, N, equal per vertex of the region\n"
            "  --load-ramp S           the load rises linearly from 0 over S s, then holds (default 0)\n"
            "  --reference METHOD      step the world on the finest level beside it: green,\n"
            "                          corot-element, ... (implicit Euler)\n"
            "  --reference-substeps K  the reference takes K steps of dt/K per step (default 1)\n"
            "  --reference-newton N    the reference's Newton iterations per step (default 1)\n"
            "  --reference-only        step the reference alone (the CSV's own columns then hold\n"
            "                          the reference's state; err_* are 0)\n"
            "  --threads N             the reference world's threads (default 0: OpenMP's; the\n"
            "                          hierarchical simulation is serial)\n"
            "  --spin W                start spinning about z through the centroid at W rad/s\n"
            "  --stretch S             start stretched along x about the centroid by S (0.1: 10 %%)\n"
            "  --csv PATH              per-step CSV\n"
            "  --probe VERTEX          the finest-level vertex the CSV follows (default: the one\n"
            "                          farthest from the pinned vertices' centroid)\n",
            d.def.dt, d.steps, d.def.damping_mass, d.def.damping_stiffness, d.def.cg_tolerance,
            d.def.cg_max_iterations, d.def.newton_iterations, d.def.coarse_refresh);
}

/* "x<0.5", "z>1": axis, '<' or '>', a number. */
static int parse_region(const char *s, cli_fix *r)
{
    const char *axes = "xyz", *ax = *s ? strchr(axes, *s) : NULL;
    if (!ax || (s[1] != '<' && s[1] != '>')) return -1;
    r->axis = (int)(ax - axes);
    r->less = s[1] == '<';
    snprintf(r->text, sizeof r->text, "%s", s);
    return cli_parse_double(s + 2, &r->value);
}

static int hb_parse(cli_args *a, cli_scene_opts *so, hb_opts *o)
{
    while (cli_next(a)) {
        int r = cli_scene_option(so, a);
        if (r < 0) return -1;
        if (r > 0) continue;
        int bad = 0;
        if (cli_is_help(a)) {
            cli_hier_basis_help(stdout);
            return 1;
        } else if (cli_is(a, "--hier-basis")) {
            bad = cli_int(a, "levels", &o->levels) || cli_require(a, o->levels >= 1 && o->levels <= 5, "1..5");
        } else if (cli_is(a, "--dt")) {
            bad = cli_double(a, "s", &o->def.dt) || cli_require(a, o->def.dt > 0, "> 0 s");
        } else if (cli_is(a, "--steps")) {
            bad = cli_int(a, "steps", &o->steps) || cli_require(a, o->steps >= 1, ">= 1");
        } else if (cli_is(a, "--damping")) {
            double v[2];
            bad = cli_doubles(a, "ALPHA,BETA", 2, v) || cli_require(a, v[0] >= 0 && v[1] >= 0, ">= 0");
            o->def.damping_mass = v[0];
            o->def.damping_stiffness = v[1];
        } else if (cli_is(a, "--cg-tol")) {
            bad = cli_double(a, "relative residual", &o->def.cg_tolerance) ||
                  cli_require(a, o->def.cg_tolerance > 0 && o->def.cg_tolerance < 1, "in (0, 1)");
        } else if (cli_is(a, "--cg-max")) {
            bad = cli_int(a, "iterations", &o->def.cg_max_iterations) || cli_require(a, o->def.cg_max_iterations >= 1, ">= 1");
        } else if (cli_is(a, "--newton")) {
            bad = cli_int(a, "iterations", &o->def.newton_iterations) ||
                  cli_require(a, o->def.newton_iterations >= 1, ">= 1");
        } else if (cli_is(a, "--coarse")) {
            static const char *const names[2] = {"corot", "green"};
            bad = cli_choice(a, "green|corot", names, 2, &o->def.coarse_green);
        } else if (cli_is(a, "--hb-precond")) {
            static const char *const names[3] = {"hierarchical", "two-level", "jacobi"};
            bad = cli_choice(a, "hierarchical|two-level|jacobi", names, 3, &o->def.precond);
        } else if (cli_is(a, "--coarse-refresh")) {
            bad = cli_int(a, "assemblies", &o->def.coarse_refresh) || cli_require(a, o->def.coarse_refresh >= 1, ">= 1");
        } else if (cli_is(a, "--load")) {
            const char *v = cli_value(a, "AXIS<VALUE or AXIS>VALUE");
            bad = !v || cli_require(a, parse_region(v, &o->load_region) == 0, "AXIS<VALUE or AXIS>VALUE, AXIS x, y or z");
            o->load_given = 1;
        } else if (cli_is(a, "--load-force")) {
            bad = cli_doubles(a, "FX,FY,FZ in N", 3, o->load_force);
        } else if (cli_is(a, "--load-ramp")) {
            bad = cli_double(a, "s", &o->load_ramp) || cli_require(a, o->load_ramp >= 0, ">= 0 s");
        } else if (cli_is(a, "--reference")) {
            const char *v = cli_value(a, "method");
            bad = !v || cli_require(a, (o->reference = tw_method_parse(v)) >= 0, "a method (green, corot-element, ..)");
        } else if (cli_is(a, "--reference-substeps")) {
            bad = cli_int(a, "substeps", &o->ref_substeps) || cli_require(a, o->ref_substeps >= 1, ">= 1");
        } else if (cli_is(a, "--reference-newton")) {
            bad = cli_int(a, "iterations", &o->ref_newton) || cli_require(a, o->ref_newton >= 1, ">= 1");
        } else if (cli_is(a, "--reference-only")) {
            bad = cli_flag(a);
            o->ref_only = 1;
        } else if (cli_is(a, "--spin")) {
            bad = cli_double(a, "rad/s", &o->spin);
        } else if (cli_is(a, "--stretch")) {
            bad = cli_double(a, "fraction", &o->stretch) || cli_require(a, o->stretch > -1, "> -1");
        } else if (cli_is(a, "--csv")) {
            bad = !(o->csv = cli_value(a, "CSV path"));
        } else if (cli_is(a, "--probe")) {
            bad = cli_int(a, "vertex", &o->probe) || cli_require(a, o->probe >= 0, ">= 0");
        } else {
            cli_unknown(a);
            return -1;
        }
        if (bad) return -1;
    }
    return 0;
}

static int in_region(const cli_fix *r, const double *X)
{
    return r->less ? X[r->axis] < r->value : X[r->axis] > r->value;
}

int cli_cmd_run_hier_basis(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp run --hier-basis");
    cli_scene_opts so = cli_default_scene_opts();
    hb_opts o = hb_defaults();
    int parsed = hb_parse(&a, &so, &o);
    if (parsed) return parsed > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (o.ref_only && o.reference < 0) {
        cli_error(&a, "--reference-only needs --reference METHOD");
        return CLI_EXIT_USAGE;
    }
    o.def.youngs_modulus = so.youngs;
    o.def.poisson_ratio = so.poisson;
    o.def.density = so.density;
    for (int k = 0; k < 3; k++) o.def.gravity[k] = so.gravity[k];

    int rc = CLI_EXIT_FAIL;
    tw_mesh *base = NULL;
    tw_hierarchy *h = NULL;
    tw_hb *hb = NULL;
    tw_world *w = NULL;
    FILE *csv = NULL;
    int *loaded = NULL;
    if (so.mesh_path) {
        tw_mesh_load_def ld = tw_default_mesh_load_def();
        ld.quiet = 1;
        base = tw_mesh_load(so.mesh_path, &ld, NULL);
    } else {
        base = tw_mesh_bar(so.bar_size[0], so.bar_size[1], so.bar_size[2], so.bar_cells[0], so.bar_cells[1],
                           so.bar_cells[2]);
    }
    if (!base || !(h = tw_hier_nested(base, o.levels)) || !(hb = tw_hb_create(h, &o.def))) {
        cli_error(&a, "%s", tw_last_error());
        goto done;
    }
    const tw_mesh *m = h->level[o.levels - 1];
    const int nv = m->nv;
    /* pinned: --fix, or the bar's end */
    cli_fix bar_fix = {0, 1, 1e-6, "x<1e-6"};
    const cli_fix *fix = so.fix;
    int fix_count = so.fix_count;
    if (fix_count == 0 && !so.mesh_path && !so.fix_none) {
        fix = &bar_fix;
        fix_count = 1;
    }
    int pinned = 0;
    for (int k = 0; k < fix_count; k++) pinned = tw_hb_pin_where(hb, fix[k].axis, fix[k].less, fix[k].value);
    /* the load's vertices */
    int nload = 0;
    if (o.load_given) {
        if (!(loaded = malloc((size_t)nv * sizeof *loaded))) {
            cli_error(&a, "out of memory");
            goto done;
        }
        for (int i = 0; i < nv; i++)
            if (in_region(&o.load_region, m->X + 3 * (size_t)i)) loaded[nload++] = i;
        if (nload == 0) {
            cli_error(&a, "--load %s selects no vertex of the finest level", o.load_region.text);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    /* the bounding box's longest edge: the error's yardstick */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], m->X[3 * (size_t)i + c]);
            hi[c] = fmax(hi[c], m->X[3 * (size_t)i + c]);
        }
    const double edge = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    int pv = o.probe;
    if (pv >= nv) {
        cli_error(&a, "--probe %d: the finest level has %d vertices", pv, nv);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (pv < 0) {
        double c[3] = {0, 0, 0}, best = -1;
        int cnt = 0;
        for (int i = 0; i < nv; i++) {
            int p = 0;
            for (int k = 0; k < fix_count; k++) p |= in_region(&fix[k], m->X + 3 * (size_t)i);
            if (p || fix_count == 0) {
                for (int d = 0; d < 3; d++) c[d] += m->X[3 * (size_t)i + d];
                cnt++;
            }
        }
        for (int i = 0; i < nv; i++) {
            double s = 0;
            for (int d = 0; d < 3; d++) s += pow(m->X[3 * (size_t)i + d] - c[d] / cnt, 2);
            if (s > best) best = s, pv = i;
        }
    }
    if (o.reference >= 0) {
        tw_world_def wd = tw_default_world_def();
        wd.method = (tw_method)o.reference;
        wd.backend = TW_BACKEND_CPU;
        wd.youngs_modulus = o.def.youngs_modulus;
        wd.poisson_ratio = o.def.poisson_ratio;
        wd.density = o.def.density;
        for (int c = 0; c < 3; c++) wd.gravity[c] = o.def.gravity[c];
        wd.dt = o.def.dt / o.ref_substeps;
        wd.damping_mass = o.def.damping_mass;
        wd.damping_stiffness = o.def.damping_stiffness;
        wd.cg_tolerance = o.def.cg_tolerance;
        wd.cg_max_iterations = o.def.cg_max_iterations;
        wd.newton_iterations = o.ref_newton;
        wd.threads = so.threads;
        wd.precond = TW_PRECOND_JACOBI;
        if (!(w = tw_world_create(m, &wd))) {
            cli_error(&a, "reference: %s", tw_last_error());
            goto done;
        }
        for (int k = 0; k < fix_count; k++) tw_world_pin_where(w, fix[k].axis, fix[k].less, fix[k].value);
    }
    if (o.spin != 0 || o.stretch != 0) { /* the initial state, on both */
        double c[3] = {0, 0, 0};
        for (int i = 0; i < nv; i++)
            for (int d = 0; d < 3; d++) c[d] += m->X[3 * (size_t)i + d] / nv;
        double *x0 = tw_hb_x(hb), *v0 = tw_hb_v(hb);
        for (int i = 0; i < nv; i++) {
            const double *X = m->X + 3 * (size_t)i;
            x0[3 * (size_t)i] = c[0] + (1 + o.stretch) * (X[0] - c[0]);
            v0[3 * (size_t)i] = -o.spin * (X[1] - c[1]);
            v0[3 * (size_t)i + 1] = o.spin * (X[0] - c[0]);
        }
        if (w) {
            tw_real *xr = malloc(3 * (size_t)nv * sizeof *xr), *vr = malloc(3 * (size_t)nv * sizeof *vr);
            if (!xr || !vr) {
                free(xr);
                free(vr);
                cli_error(&a, "out of memory");
                goto done;
            }
            for (int k = 0; k < 3 * nv; k++) xr[k] = (tw_real)x0[k], vr[k] = (tw_real)v0[k];
            tw_world_set_positions(w, xr);
            tw_world_set_velocities(w, vr);
            free(xr);
            free(vr);
        }
    }
    double e_start = 0, e_max = -INFINITY;
    {
        double ek, ee, eg;
        tw_hb_energy(hb, &ek, &ee, &eg);
        e_start = o.ref_only ? tw_world_kinetic_energy(w) + tw_world_elastic_energy(w) + tw_world_gravity_energy(w)
                             : ek + ee + eg;
    }
    printf("hierarchical basis: %d level%s:", o.levels, o.levels == 1 ? "" : "s");
    for (int l = 0; l < o.levels; l++) printf(" %d vertices/%d tets", h->level[l]->nv, h->level[l]->nt);
    printf("; %d pinned, %d loaded; dt %g s; coarse strain %s; probe vertex %d\n", pinned, nload, o.def.dt,
           o.def.coarse_green ? "Green" : "corotated", pv);
    if (w)
        printf("reference: the world on the finest level, %s, dt %g s, %d Newton iteration%s\n",
               tw_method_name((tw_method)o.reference), o.def.dt / o.ref_substeps, o.ref_newton,
               o.ref_newton == 1 ? "" : "s");
    if (o.csv) {
        if (!(csv = fopen(o.csv, "w"))) {
            cli_error(&a, "--csv %s: %s", o.csv, strerror(errno));
            goto done;
        }
        fprintf(csv, "step,time,cg_iterations,newton_iterations,residual,step_ms,kinetic_energy,elastic_energy,"
                     "gravity_energy,probe_ux,probe_uy,probe_uz%s\n",
                w ? ",ref_step_ms,ref_cg_iterations,ref_probe_ux,ref_probe_uy,ref_probe_uz,err_probe,err_max" : "");
    }
    double ms = 0, ms_ref = 0, err_max = 0, err_sum = 0, err_last = 0, umax = 0;
    long cg = 0, cg_ref = 0;
    for (int s = 1; s <= o.steps; s++) {
        /* the load at the step's end time, on both */
        const double t = s * o.def.dt, ramp = o.load_ramp > 0 ? fmin(1, t / o.load_ramp) : 1;
        for (int k = 0; k < nload; k++) {
            double f[3];
            for (int c = 0; c < 3; c++) f[c] = ramp * o.load_force[c] / nload;
            tw_hb_set_force(hb, loaded[k], f);
            if (w) tw_world_set_force(w, loaded[k], f);
        }
        tw_hb_stats st;
        memset(&st, 0, sizeof st);
        if (!o.ref_only && tw_hb_step(hb, &st) != TW_OK) {
            cli_error(&a, "step %d: %s", s, tw_last_error());
            goto done;
        }
        ms += st.ms_total;
        cg += st.cg_iterations;
        double ref_ms = 0;
        int ref_cg = 0;
        for (int k = 0; w && k < o.ref_substeps; k++) {
            tw_step_stats ws;
            if (tw_world_step(w, &ws) != TW_OK) {
                cli_error(&a, "reference step %d: %s", s, tw_last_error());
                goto done;
            }
            ref_ms += ws.ms_total;
            ref_cg += ws.cg_iterations;
        }
        ms_ref += ref_ms;
        cg_ref += ref_cg;
        const tw_real *xr = w ? tw_world_positions(w) : NULL;
        if (o.ref_only) { /* the reference's state in the CSV's own columns */
            double *xh = tw_hb_x(hb);
            for (int k = 0; k < 3 * nv; k++) xh[k] = (double)xr[k];
            st.ms_total = ref_ms;
            st.cg_iterations = ref_cg;
            ms += ref_ms;
            cg += ref_cg;
        }
        {
            double ek, ee, eg;
            if (o.ref_only) ek = tw_world_kinetic_energy(w), ee = tw_world_elastic_energy(w), eg = tw_world_gravity_energy(w);
            else tw_hb_energy(hb, &ek, &ee, &eg);
            e_max = fmax(e_max, ek + ee + eg);
        }
        const double *x = tw_hb_x(hb);
        double u[3], eprobe = 0, emax = 0;
        for (int c = 0; c < 3; c++) u[c] = x[3 * (size_t)pv + c] - m->X[3 * (size_t)pv + c];
        umax = fmax(umax, sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
        if (xr) {
            for (int i = 0; i < nv; i++) {
                double d2 = 0;
                for (int c = 0; c < 3; c++) d2 += pow(x[3 * (size_t)i + c] - (double)xr[3 * (size_t)i + c], 2);
                emax = fmax(emax, sqrt(d2) / edge);
                if (i == pv) eprobe = sqrt(d2) / edge;
            }
            err_max = fmax(err_max, emax);
            err_sum += emax;
            err_last = emax;
        }
        if (csv) {
            double ek, ee, eg;
            tw_hb_energy(hb, &ek, &ee, &eg);
            fprintf(csv, "%d,%.9g,%d,%d,%.4g,%.4f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", s, s * o.def.dt, st.cg_iterations,
                    st.newton_iterations, st.residual, st.ms_total, ek, ee, eg, u[0], u[1], u[2]);
            if (xr)
                fprintf(csv, ",%.4f,%d,%.9g,%.9g,%.9g,%.6g,%.6g", ref_ms, ref_cg,
                        (double)xr[3 * (size_t)pv] - m->X[3 * (size_t)pv],
                        (double)xr[3 * (size_t)pv + 1] - m->X[3 * (size_t)pv + 1],
                        (double)xr[3 * (size_t)pv + 2] - m->X[3 * (size_t)pv + 2], eprobe, emax);
            fprintf(csv, "\n");
        }
    }
    printf("%d steps: %.3f ms a step, %.1f CG iterations a step; the probe moved at most %.4g m\n", o.steps,
           ms / o.steps, (double)cg / o.steps, umax);
    if (w)
        printf("reference: %.3f ms a step (%.1f CG iterations); speed-up %.2fx; error over the longest edge "
               "(%.4g m): max %.4g %%, mean %.4g %%, last %.4g %%\n",
               ms_ref / o.steps, (double)cg_ref / o.steps, ms_ref / ms, edge, 100 * err_max, 100 * err_sum / o.steps,
               100 * err_last);
    /* one line for scripts: the figures above, unrounded */
    printf("summary: ms_step=%.6g cg_step=%.6g probe_umax=%.6g ref_ms_step=%.6g ref_cg_step=%.6g err_max=%.6g "
           "err_mean=%.6g err_last=%.6g tets=%d energy_start=%.9g energy_max=%.9g\n", ms / o.steps, (double)cg / o.steps,
           umax, w ? ms_ref / o.steps : 0, w ? (double)cg_ref / o.steps : 0, err_max, err_sum / o.steps, err_last, m->nt,
           e_start, e_max);
    rc = CLI_EXIT_OK;
done:
    if (csv && fclose(csv) != 0) rc = CLI_EXIT_FAIL;
    free(loaded);
    tw_world_destroy(w);
    tw_hb_destroy(hb);
    tw_hier_free(h);
    tw_mesh_destroy(base);
    return rc;
}
