/* `tetwarp static`: static equilibrium, displacements to CSV. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "cli_scene.h"
#include "tetwarp.h"

typedef struct static_opts {
    const char *out;
    tw_static_def solve;
} static_opts;

static static_opts static_defaults(void)
{
    static_opts o;
    o.out = NULL;
    o.solve = tw_default_static_def();
    return o;
}

void cli_static_help(FILE *f)
{
    static_opts d = static_defaults();
    cli_scene_opts s = cli_default_scene_opts();
    fprintf(f,
            "Usage: tetwarp static [scene options] [--out disp.csv]\n"
            "\n"
            "Static equilibrium under gravity with the fixed vertices held: linear solves\n"
            "K u = f; corot-element, green and hybrid run Newton with load stepping (warp-*\n"
            "have no consistent tangent and are refused). Prints the largest displacement,\n"
            "the iterations and what stopped them. Exit status 1 when the solve fails or\n"
            "stops short of --tol.\n"
            "\n");
    cli_scene_print_help(f, &s);
    fprintf(f,
            "\nStatic options:\n"
            "  --out PATH              CSV `vertex,ux,uy,uz`: one row per mesh vertex in the\n"
            "                          mesh's order, vertex 0-based, displacements in m\n"
            "                          (default: none, summary only)\n"
            "  --load-steps N          load increments for the non-linear methods, >= 1 (default %d)\n"
            "  --tol T                 Newton tolerance, > 0 (default %g): converged when the relative\n"
            "                          residual |r|/|f_ext| or the relative update max|du|/max|u| is\n"
            "                          at most T (the summary says which); where the residual stops\n"
            "                          falling with the update above T, the result is written and\n"
            "                          the exit status is 1\n"
            "  --max-newton N          Newton iterations per load step, >= 1 (default %d)\n"
            "  --verbose               Newton progress on stderr; why the CUDA backend was not used\n",
            d.solve.load_steps, d.solve.tolerance, d.solve.max_newton);
}

static int write_displacements(const char *path, const tw_mesh *m, const tw_real *x)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const double *X = tw_mesh_positions(m);
    int nv = tw_mesh_vertex_count(m);
    fprintf(f, "vertex,ux,uy,uz\n");
    for (int i = 0; i < nv; i++)
        fprintf(f, "%d,%.9g,%.9g,%.9g\n", i, (double)x[3 * i] - X[3 * i],
                (double)x[3 * i + 1] - X[3 * i + 1], (double)x[3 * i + 2] - X[3 * i + 2]);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

int cli_cmd_static(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp static");
    cli_scene_opts so = cli_default_scene_opts();
    static_opts o = static_defaults();
    while (cli_next(&a)) {
        int r = cli_scene_option(&so, &a);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if (cli_is_help(&a)) {
            cli_static_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--out")) {
            if (!(o.out = cli_value(&a, "CSV path"))) return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--load-steps")) {
            if (cli_int(&a, "load increments", &o.solve.load_steps) ||
                cli_require(&a, o.solve.load_steps >= 1, ">= 1"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--tol")) {
            if (cli_double(&a, "relative residual", &o.solve.tolerance) ||
                cli_require(&a, o.solve.tolerance > 0, "> 0 (relative residual)"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--max-newton")) {
            if (cli_int(&a, "Newton iterations", &o.solve.max_newton) ||
                cli_require(&a, o.solve.max_newton >= 1, ">= 1"))
                return CLI_EXIT_USAGE;
        } else if (cli_is(&a, "--verbose")) {
            if (cli_flag(&a)) return CLI_EXIT_USAGE;
            o.solve.verbose = 1;
            so.verbose = 1;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
    }
    cli_scene sc;
    if (cli_scene_build(&so, tw_default_world_def(), a.prog, &sc)) return CLI_EXIT_FAIL;
    if (sc.pinned == 0) {
        cli_error(&a, "nothing is fixed, so there is no equilibrium: give --fix (e.g. \"z<0.01\")");
        cli_scene_destroy(&sc);
        return CLI_EXIT_USAGE;
    }
    int nv = tw_mesh_vertex_count(sc.mesh);
    printf("%s: %d vertices, %d tets, %d fixed; %s\n", sc.description, nv,
           tw_mesh_tet_count(sc.mesh), sc.pinned, tw_method_name(so.method));
    tw_static_stats st;
    memset(&st, 0, sizeof st);
    double t0 = cli_now_ms();
    tw_status s = tw_world_solve_static(sc.world, &o.solve, &st);
    double ms = cli_now_ms() - t0;
    if (s != TW_OK) {
        cli_error(&a, "%s: %s", tw_status_name(s), tw_last_error());
        cli_scene_destroy(&sc);
        return CLI_EXIT_FAIL;
    }
    const tw_real *x = tw_world_positions(sc.world);
    const double *X = tw_mesh_positions(sc.mesh);
    int imax = 0;
    double umax = 0;
    for (int i = 0; i < nv; i++) {
        double u2 = 0;
        for (int k = 0; k < 3; k++) {
            double d = (double)x[3 * i + k] - X[3 * i + k];
            u2 += d * d;
        }
        if (!isfinite(u2)) {
            cli_error(&a, "the solve returned a non-finite displacement at vertex %d", i);
            cli_scene_destroy(&sc);
            return CLI_EXIT_FAIL;
        }
        if (u2 > umax) {
            umax = u2;
            imax = i;
        }
    }
    printf("max displacement %.6g m at vertex %d (rest %g, %g, %g): u = (%.6g, %.6g, %.6g) m\n",
           sqrt(umax), imax, X[3 * imax], X[3 * imax + 1], X[3 * imax + 2],
           (double)x[3 * imax] - X[3 * imax], (double)x[3 * imax + 1] - X[3 * imax + 1],
           (double)x[3 * imax + 2] - X[3 * imax + 2]);
    printf("Newton iterations %d, CG iterations %d, residual %.3g, time %.1f ms\n",
           st.newton_iterations, st.cg_iterations, st.residual, ms);
    double tol = o.solve.tolerance;
    int rc = CLI_EXIT_OK;
    if (st.stop == TW_STATIC_RESIDUAL)
        printf("converged: relative residual %.3g <= --tol %g\n", st.residual, tol);
    else if (st.stop == TW_STATIC_UPDATE)
        printf("converged: Newton update %.3g of |u| <= --tol %g (relative residual %.3g)\n", st.update, tol,
               st.residual);
    else {
        if (sizeof(tw_real) == 4)
            cli_error(&a, "not converged to --tol %g: the relative residual stopped falling at %.3g with a Newton "
                          "update of %.3g of |u|, at the rounding floor of the float forces: a larger --tol, or a "
                          "build with -DTW_DOUBLE=ON",
                      tol, st.residual, st.update);
        else
            cli_error(&a, "not converged to --tol %g: the relative residual stopped falling at %.3g with a Newton "
                          "update of %.3g of |u|; try --load-steps %d or --max-newton %d",
                      tol, st.residual, st.update, 2 * o.solve.load_steps, 2 * o.solve.max_newton);
        rc = CLI_EXIT_FAIL;
    }
    if (o.out) { /* also short of --tol: the exit status says so */
        if (write_displacements(o.out, sc.mesh, x)) {
            cli_error(&a, "--out %s: cannot write: %s", o.out, strerror(errno));
            rc = CLI_EXIT_FAIL;
        } else {
            printf("wrote %s (%d rows)\n", o.out, nv);
        }
    }
    cli_scene_destroy(&sc);
    return rc;
}
