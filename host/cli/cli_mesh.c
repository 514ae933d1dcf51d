/* `tetwarp mesh SURFACE`: tetrahedralize a closed surface with TetGen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "tetwarp.h"

void cli_mesh_help(FILE *f)
{
    tw_mesher_def d = tw_default_mesher_def();
    fprintf(f,
            "Usage: tetwarp mesh SURFACE (--tets N | --edge H) --out PATH [options]\n"
            "\n"
            "Tetrahedralizes a closed triangle surface with TetGen (apt-get install tetgen),\n"
            "keeping its triangles. The surface is checked first: holes, non-manifold edges,\n"
            "inconsistent orientation, degenerate and crossing triangles are errors. Prints\n"
            "the runs, vertices, tets, min dihedral angle, max radius-edge ratio and time.\n"
            "\n"
            "  SURFACE         .obj, .off or .stl (ASCII or binary)\n"
            "  --tets N        aim at N tets, within %g %% (at most %d TetGen runs)\n"
            "  --edge H        target edge length H, m: max tet volume H^3/(6 sqrt 2)\n"
            "  --out PATH      TetGen mesh PATH.node/PATH.ele (PATH may end in .node or .ele)\n"
            "  --quality Q     radius-edge bound, > 1 (default %g); relaxed (to 2, then none)\n"
            "                  when the surface alone needs more than N tets\n"
            "  --cache DIR     cache folder (default $XDG_CACHE_HOME/tetwarp or ~/.cache/tetwarp)\n"
            "  --no-cache      neither read nor write the cache\n"
            "  --verbose       each TetGen run on stderr\n",
            100 * d.tolerance, d.max_tries, d.quality);
}

int cli_cmd_mesh(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp mesh");
    tw_mesher_def def = tw_default_mesher_def();
    const char *surface = NULL, *out = NULL;
    while (cli_next(&a)) {
        int bad = 0;
        if (cli_is_help(&a)) {
            cli_mesh_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--tets")) {
            bad = cli_int(&a, "tet count", &def.target_tets) ||
                  cli_require(&a, def.target_tets >= 1, ">= 1");
        } else if (cli_is(&a, "--edge")) {
            bad = cli_double(&a, "edge length, m", &def.max_edge) ||
                  cli_require(&a, def.max_edge > 0, "> 0 m");
        } else if (cli_is(&a, "--quality")) {
            bad = cli_double(&a, "radius-edge bound", &def.quality) ||
                  cli_require(&a, def.quality > 1, "> 1 (radius-edge bound, e.g. 1.414)");
        } else if (cli_is(&a, "--out")) {
            bad = !(out = cli_value(&a, "mesh path"));
        } else if (cli_is(&a, "--cache")) {
            bad = !(def.cache_dir = cli_value(&a, "folder"));
        } else if (cli_is(&a, "--no-cache")) {
            bad = cli_flag(&a);
            def.use_cache = 0;
        } else if (cli_is(&a, "--verbose")) {
            bad = cli_flag(&a);
            def.verbose = 1;
        } else if (!cli_is_option(&a) && !surface) {
            surface = a.arg;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
        if (bad) return CLI_EXIT_USAGE;
    }
    if (!surface) {
        cli_error(&a, "no surface file given (usage: tetwarp mesh SURFACE --tets N --out PATH)");
        return CLI_EXIT_USAGE;
    }
    if ((def.target_tets > 0) == (def.max_edge > 0)) {
        cli_error(&a, "give --tets N or --edge H (one of them)");
        return CLI_EXIT_USAGE;
    }
    if (!out) {
        cli_error(&a, "no --out PATH given (the mesh is written as PATH.node and PATH.ele)");
        return CLI_EXIT_USAGE;
    }
    char stem[4096];
    snprintf(stem, sizeof stem, "%s", out);
    size_t len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".node") == 0) stem[len - 5] = 0;
    else if (len > 4 && strcmp(stem + len - 4, ".ele") == 0) stem[len - 4] = 0;
    else if ((len > 4 && strcmp(stem + len - 4, ".msh") == 0) ||
             (len > 5 && strcmp(stem + len - 5, ".mesh") == 0)) {
        cli_error(&a, "--out %s: only TetGen .node/.ele is written; give a stem or PATH.node", out);
        return CLI_EXIT_USAGE;
    }
    tw_mesher_report rep;
    tw_mesh *m = tw_mesh_from_surface(surface, &def, &rep);
    if (!m) {
        cli_error(&a, "%s", tw_last_error());
        return CLI_EXIT_FAIL;
    }
    if (rep.cached) printf("cached: %s.node/.ele (%.3f s)\n", rep.cache_path, rep.seconds);
    printf("surface          %s: %d vertices, %d triangles, volume %.6g m^3\n", surface,
           rep.surface_vertices, rep.surface_triangles, rep.surface_volume);
    if (def.target_tets > 0)
        printf("target           %d tets (+-%g %%): %s after %d TetGen run%s\n", def.target_tets,
               100 * def.tolerance, rep.on_target ? "reached" : "NOT reached", rep.tries,
               rep.tries == 1 ? "" : "s");
    else
        printf("target           edge %g m: max tet volume %.6g m^3, %d TetGen run\n", def.max_edge,
               rep.max_volume, rep.tries);
    if (rep.quality_used != def.quality)
        printf("quality          relaxed from %g to %s: the surface alone needs more tets at %g\n",
               def.quality, rep.quality_used > 0 ? "2" : "none", def.quality);
    printf("vertices         %d\n", rep.vertices);
    printf("tets             %d\n", rep.tets);
    printf("volume           %.6g m^3 (%+.3g %% of the surface's)\n", rep.mesh_volume,
           rep.surface_volume > 0 ? 100 * (rep.mesh_volume - rep.surface_volume) / rep.surface_volume : 0.0);
    printf("min dihedral     %.4g degrees\n", rep.min_dihedral);
    printf("max radius-edge  %.4g (circumradius / shortest edge; 0.612 = regular)\n",
           rep.max_radius_edge);
    printf("time             %.3f s (TetGen %.3f s)\n", rep.seconds, rep.tetgen_seconds);
    int rc = CLI_EXIT_OK;
    if (tw_mesh_write_tetgen(m, stem) != TW_OK) {
        cli_error(&a, "--out %s: %s", out, tw_last_error());
        rc = CLI_EXIT_FAIL;
    } else {
        printf("wrote %s.node, %s.ele\n", stem, stem);
    }
    if (!rep.on_target && rc == CLI_EXIT_OK)
        fprintf(stderr, "tetwarp mesh: warning: %d tets is not within %g %% of --tets %d\n", rep.tets,
                100 * def.tolerance, def.target_tets);
    tw_mesh_destroy(m);
    return rc;
}
