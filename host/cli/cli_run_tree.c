/* `tetwarp run --tree-levels L`: see cli_run_tree.h. CSV columns:
 * step,time,active_tets,free_vertices,hanging_vertices,refined,coarsened,
 * total_energy,cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz.
 * Frames: the finest level's boundary, or a render surface embedded in the
 * finest level's tets (the paper's fig. 9), at the front's interpolated
 * positions. */
#include "cli_run_tree.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

cli_tree_opts cli_default_tree_opts(void)
{
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    tw_front_def fd = tw_default_front_def();
    cli_tree_opts o;
    o.levels = 0;
    o.t1 = td.t1;
    o.t2 = td.t2;
    o.t3 = fd.t3;
    o.margin = fd.coarsen_margin;
    o.hold = fd.hold_steps;
    o.adapt = fd.adapt;
    return o;
}

int cli_tree_option(cli_tree_opts *o, cli_args *a)
{
    int bad;
    if (cli_is(a, "--tree-levels"))
        bad = cli_int(a, "levels", &o->levels) || cli_require(a, o->levels >= 1 && o->levels <= 8, "1 to 8");
    else if (cli_is(a, "--adapt-t1"))
        bad = cli_double(a, "relative threshold", &o->t1) || cli_require(a, o->t1 > 0, "> 0");
    else if (cli_is(a, "--adapt-t2"))
        bad = cli_double(a, "absolute threshold", &o->t2) || cli_require(a, o->t2 >= 0, ">= 0");
    else if (cli_is(a, "--adapt-t3"))
        bad = cli_double(a, "strain", &o->t3) || cli_require(a, o->t3 >= 0, ">= 0");
    else if (cli_is(a, "--adapt-margin"))
        bad = cli_double(a, "fraction", &o->margin) || cli_require(a, o->margin > 0 && o->margin <= 1, "in (0, 1]");
    else if (cli_is(a, "--adapt-hold"))
        bad = cli_int(a, "steps", &o->hold) || cli_require(a, o->hold >= 0, ">= 0");
    else if (cli_is(a, "--adapt")) {
        static const char *const names[2] = {"off", "on"};
        bad = cli_choice(a, "on|off", names, 2, &o->adapt);
    } else
        return 0;
    return bad ? -1 : 1;
}

void cli_tree_help(FILE *f)
{
    cli_tree_opts d = cli_default_tree_opts();
    fprintf(f,
            "\nAdaptive tetra tree (Imai et al. 2013; corot-element, implicit Euler, PCG\n"
            "as --precond auto chooses it):\n"
            "  --tree-levels L         refine the mesh 1:8 L-1 times; the material (--E, --E-gradient,\n"
            "                          --E-region) is set on the finest level and estimated upward;\n"
            "                          the CSV is then step,time,active_tets,free_vertices,\n"
            "                          hanging_vertices,refined,coarsened,total_energy,cg_iterations,\n"
            "                          residual,step_ms,probe_ux,probe_uy,probe_uz (default: no tree)\n"
            "  --adapt on|off          on: the front starts at the base and switches levels; off: the\n"
            "                          finest level of the same tree throughout (default %s)\n"
            "  --adapt-t1 T1           eq. 4: relative deviation from the fitted stress line (default %g)\n"
            "  --adapt-t2 T2           eq. 5: absolute deviation over the tet's largest diagonal\n"
            "                          stiffness (default %g)\n"
            "  --adapt-t3 T3           fine to coarse: children's strains within T3 of the parent's\n"
            "                          (default %g)\n"
            "  --adapt-margin M        fine to coarse: the parent's strain within M of its valid range\n"
            "                          (default %g)\n"
            "  --adapt-hold N          a refined tet stays at least N steps (default %d)\n"
            "  --backend cpu|cuda|auto cuda: the step's block-Jacobi PCG and the front's pattern on the\n"
            "                          device (unverified on a GPU so far); auto: the cpu\n",
            d.adapt ? "on" : "off", d.t1, d.t2, d.t3, d.margin, d.hold);
}

static tw_mesh *load_base(const cli_scene_opts *so, const char *prog, char *desc, size_t desc_size)
{
    if (so->mesh_path && so->bar_given) {
        fprintf(stderr, "%s: give --mesh or --bar, not both\n", prog);
        return NULL;
    }
    tw_mesh *m;
    if (so->mesh_path) {
        tw_mesh_load_def ld = tw_default_mesh_load_def();
        ld.strict = so->strict;
        m = tw_mesh_load(so->mesh_path, &ld, NULL);
        snprintf(desc, desc_size, "%s", so->mesh_path);
    } else {
        const double *s = so->bar_size;
        const int *c = so->bar_cells;
        m = tw_mesh_bar(s[0], s[1], s[2], c[0], c[1], c[2]);
        snprintf(desc, desc_size, "bar %g x %g x %g m, %dx%dx%d cells", s[0], s[1], s[2], c[0], c[1], c[2]);
    }
    if (!m)
        fprintf(stderr, "%s: %s: %s\n", prog, so->mesh_path ? "cannot load --mesh" : "--bar", tw_last_error());
    return m;
}

/* Frame n: the render surface embedded in the finest tets, or the finest
 * level's boundary, at positions x. */
static int write_frame(const char *prog, const cli_tree_run *r, const tw_mesh *fm, const tw_embedding *emb,
                       const double *x, tw_real *xr, float *xyz, int n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/frame_%06d.obj", r->obj_dir, n);
    const int nv = tw_mesh_vertex_count(fm);
    for (int i = 0; i < 3 * nv; i++)
        xr[i] = (tw_real)x[i];
    if (!emb) {
        if (tw_mesh_write_obj(fm, xr, path) != TW_OK) {
            fprintf(stderr, "%s: --obj-dir %s: %s\n", prog, r->obj_dir, tw_last_error());
            return -1;
        }
        return 0;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: --obj-dir %s: cannot write %s: %s\n", prog, r->obj_dir, path, strerror(errno));
        return -1;
    }
    tw_embedding_apply(emb, xr, xyz);
    const int ev = tw_embedding_vertex_count(emb), et = tw_embedding_triangle_count(emb);
    const int *t = tw_embedding_triangles(emb);
    for (int i = 0; i < ev; i++)
        fprintf(f, "v %.7g %.7g %.7g\n", xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
    for (int i = 0; i < et; i++)
        fprintf(f, "f %d %d %d\n", t[3 * i] + 1, t[3 * i + 1] + 1, t[3 * i + 2] + 1);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "%s: --obj-dir %s: write failed\n", prog, path);
    return bad ? -1 : 0;
}

int cli_run_tree(const char *prog, const cli_scene_opts *so, const cli_tree_opts *to, const cli_tree_run *r)
{
    char desc[256];
    int rc = CLI_EXIT_FAIL;
    tw_mesh *base = load_base(so, prog, desc, sizeof desc);
    tw_tetra_tree *t = NULL;
    tw_front *f = NULL;
    double *E = NULL, *x = NULL;
    unsigned char *fixed = NULL;
    FILE *csv = NULL;
    tw_surface *render = NULL;
    tw_embedding *emb = NULL;
    tw_real *xr = NULL;
    float *xyz = NULL;
    if (!base)
        return CLI_EXIT_FAIL;
    double t0 = cli_now_ms();
    t = tw_tetra_tree_create(base, to->levels);
    if (!t) {
        fprintf(stderr, "%s: --tree-levels %d: %s\n", prog, to->levels, tw_last_error());
        goto done;
    }
    const tw_mesh *fm = tw_tetra_tree_mesh(t, to->levels - 1);
    const int nv = tw_mesh_vertex_count(fm);
    fixed = calloc((size_t)nv, 1);
    x = malloc(3 * sizeof *x * (size_t)nv);
    int pinned = 0;
    if (!fixed || !x) {
        fprintf(stderr, "%s: out of memory for %d vertices\n", prog, nv);
        goto done;
    }
    if (cli_scene_material_on(so, fm, prog, &E) || cli_scene_fix_on(so, fm, prog, fixed, &pinned))
        goto done;
    tw_tetra_tree_def td = tw_default_tetra_tree_def();
    td.levels = to->levels;
    td.t1 = to->t1;
    td.t2 = to->t2;
    td.youngs_modulus = so->youngs;
    td.poisson_ratio = so->poisson;
    td.density = so->density;
    td.element_youngs = E;
    if (tw_tetra_tree_estimate(t, &td) != TW_OK) {
        fprintf(stderr, "%s: %s\n", prog, tw_last_error());
        goto done;
    }
    const double ms_tree = cli_now_ms() - t0;
    tw_front_def fd = tw_default_front_def();
    fd.dt = r->dt;
    for (int k = 0; k < 3; k++)
        fd.gravity[k] = so->gravity[k];
    fd.damping_mass = r->damping[0];
    fd.damping_stiffness = r->damping[1];
    fd.cg_tolerance = r->cg_tol;
    fd.cg_max_iterations = r->cg_max;
    fd.adapt = to->adapt;
    fd.t3 = to->t3;
    fd.coarsen_margin = to->margin;
    fd.hold_steps = to->hold;
    fd.threads = so->threads;
    fd.backend = so->backend; /* auto: the cpu, the device front not having run on a GPU yet */
    f = tw_front_create(t, fixed, &fd);
    if (!f) {
        fprintf(stderr, "%s: %s%s\n", prog, so->backend == TW_BACKEND_CUDA ? "--backend cuda: " : "",
                tw_last_error());
        goto done;
    }
    /* the probe: the finest vertex farthest from the fixed vertices' centroid */
    const double *X = tw_mesh_positions(fm);
    int probe = r->probe;
    if (probe >= nv) {
        fprintf(stderr, "%s: --probe %d: no such vertex (the finest level has %d vertices)\n", prog, probe, nv);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    if (probe < 0) {
        double c[3] = {0, 0, 0}, best = -1;
        int n = 0;
        for (int i = 0; i < nv; i++)
            if (!pinned || fixed[i]) {
                for (int k = 0; k < 3; k++)
                    c[k] += X[3 * i + k];
                n++;
            }
        for (int k = 0; k < 3; k++)
            c[k] /= n ? n : 1;
        for (int i = 0; i < nv; i++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += (X[3 * i + k] - c[k]) * (X[3 * i + k] - c[k]);
            if (d > best * (1 + 1e-9) + 1e-300) {
                best = d;
                probe = i;
            }
        }
    }
    printf("%s: tetra tree of %d levels, %d to %d tets (finest %d vertices, %d fixed), built and estimated in "
           "%.1f ms; adapt %s, T1 %g, T2 %g; dt %g s, %d steps; probe vertex %d\n",
           desc, to->levels, tw_mesh_tet_count(base), tw_mesh_tet_count(fm), nv, pinned, ms_tree,
           to->adapt ? "on" : "off", to->t1, to->t2, r->dt, r->steps, probe);
    if (r->csv) {
        csv = fopen(r->csv, "w");
        if (!csv) {
            fprintf(stderr, "%s: --csv %s: cannot open for writing: %s\n", prog, r->csv, strerror(errno));
            goto done;
        }
        fprintf(csv, "step,time,active_tets,free_vertices,hanging_vertices,refined,coarsened,total_energy,"
                     "cg_iterations,residual,step_ms,probe_ux,probe_uy,probe_uz\n");
    }
    if (r->render_surface) {
        tw_embed_report er;
        if (!(render = tw_surface_load(r->render_surface)) || !(emb = tw_embed_surface(fm, render, 0, &er))) {
            fprintf(stderr, "%s: --render-surface %s: %s\n", prog, r->render_surface, tw_last_error());
            goto done;
        }
        xyz = malloc(3 * sizeof *xyz * (size_t)tw_embedding_vertex_count(emb));
        if (!xyz)
            goto done;
        printf("render surface %s: %d vertices embedded in the finest level (%d inside, %d extrapolated)\n",
               r->render_surface, er.vertices, er.inside, er.outside);
    }
    if (r->obj_every > 0) {
        xr = malloc(3 * sizeof *xr * (size_t)nv);
        if (!xr)
            goto done;
        if (mkdir(r->obj_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "%s: --obj-dir %s: cannot create: %s\n", prog, r->obj_dir, strerror(errno));
            goto done;
        }
        tw_front_positions(f, x);
        if (write_frame(prog, r, fm, emb, x, xr, xyz, 0))
            goto done;
    }
    double ms_sum = 0;
    long cg_sum = 0, active_sum = 0;
    int active_min = 1 << 30, active_max = 0;
    for (int n = 1; n <= r->steps; n++) {
        tw_front_stats st;
        const double s0 = cli_now_ms();
        if (tw_front_step(f, &st) != TW_OK) {
            fprintf(stderr, "%s: step %d: %s\n", prog, n, tw_last_error());
            goto done;
        }
        const double ms = cli_now_ms() - s0;
        ms_sum += ms;
        cg_sum += st.cg_iterations;
        active_sum += st.active_tets;
        if (st.active_tets < active_min) active_min = st.active_tets;
        if (st.active_tets > active_max) active_max = st.active_tets;
        if (csv) {
            tw_front_positions(f, x);
            fprintf(csv, "%d,%.9g,%d,%d,%d,%d,%d,%.9g,%d,%.9g,%.6g,%.9g,%.9g,%.9g\n", n, n * r->dt, st.active_tets,
                    st.free_vertices, st.hanging_vertices, st.refined, st.coarsened, tw_front_energy(f),
                    st.cg_iterations, st.cg_residual, ms, x[3 * probe] - X[3 * probe],
                    x[3 * probe + 1] - X[3 * probe + 1], x[3 * probe + 2] - X[3 * probe + 2]);
        }
        if (r->obj_every > 0 && n % r->obj_every == 0) {
            tw_front_positions(f, x);
            if (write_frame(prog, r, fm, emb, x, xr, xyz, n))
                goto done;
        }
    }
    tw_front_positions(f, x);
    printf("%d steps to t = %g s: %.3g ms/step; active tets mean %.1f (min %d, max %d, finest %d); CG iterations "
           "per step mean %.1f\n", r->steps, r->steps * r->dt, ms_sum / r->steps, (double)active_sum / r->steps,
           active_min, active_max, tw_mesh_tet_count(fm), (double)cg_sum / r->steps);
    printf("probe vertex %d displacement (%.6g, %.6g, %.6g) m\n", probe, x[3 * probe] - X[3 * probe],
           x[3 * probe + 1] - X[3 * probe + 1], x[3 * probe + 2] - X[3 * probe + 2]);
    if (csv) {
        int bad = ferror(csv);
        bad |= fclose(csv) != 0;
        csv = NULL;
        if (bad) {
            fprintf(stderr, "%s: --csv %s: write failed\n", prog, r->csv);
            goto done;
        }
        printf("wrote %s (%d rows)\n", r->csv, r->steps);
    }
    rc = CLI_EXIT_OK;
done:
    if (csv)
        fclose(csv);
    tw_front_destroy(f);
    tw_tetra_tree_destroy(t);
    tw_mesh_destroy(base);
    free(E);
    free(x);
    free(fixed);
    free(xr);
    free(xyz);
    tw_embedding_destroy(emb);
    tw_surface_destroy(render);
    return rc;
}
