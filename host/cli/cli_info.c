/* `tetwarp info MESH`: mesh statistics and quality; `--backend`: which
 * backend `auto` picks here and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "cli_scene.h"
#include "tetwarp.h"

void cli_info_help(FILE *f)
{
    fprintf(f,
            "Usage: tetwarp info MESH [--strict]   (or --mesh MESH)\n"
            "       tetwarp info --backend\n"
            "\n"
            "Prints vertices, tets, boundary faces, regions, volume (m^3), bounding box (m),\n"
            "min/max dihedral angle (degrees), max/mean aspect ratio (1 = regular), min/max\n"
            "edge (m), and what loading repaired or found (reoriented elements, unused vertices,\n"
            "folded pairs: two elements on the same side of a face they share, overlapping).\n"
            "\n"
            "  MESH        .node/.ele (TetGen), .msh (Gmsh ASCII v1/v2/v4) or .mesh (MEDIT)\n"
            "  --strict    an inverted element or a folded pair is an error (default: inverted\n"
            "              elements are reoriented, folded pairs kept; both counted)\n"
            "  --backend   the backend `auto` runs on here (a one-cell world is made on CUDA)\n"
            "              and, when it is the CPU, the whole reason; the real type\n");
}

int cli_cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_make(argc, argv, "tetwarp info");
    const char *path = NULL;
    int backend = 0;
    tw_mesh_load_def ld = tw_default_mesh_load_def();
    ld.quiet = 1; /* the report below says what loading repaired */
    while (cli_next(&a)) {
        if (cli_is_help(&a)) {
            cli_info_help(stdout);
            return CLI_EXIT_OK;
        } else if (cli_is(&a, "--strict")) {
            if (cli_flag(&a)) return CLI_EXIT_USAGE;
            ld.strict = 1;
        } else if (cli_is(&a, "--backend")) {
            if (cli_flag(&a)) return CLI_EXIT_USAGE;
            backend = 1;
        } else if (cli_is(&a, "--mesh") && !path) {
            if (!(path = cli_value(&a, "mesh file"))) return CLI_EXIT_USAGE;
        } else if (!cli_is_option(&a) && !path) {
            path = a.arg;
        } else {
            cli_unknown(&a);
            return CLI_EXIT_USAGE;
        }
    }
    if (backend) {
        char why[512];
        const char *short_why;
        int cuda = cli_cuda_probe(why, sizeof why, &short_why);
        printf("backend          %s (what --backend auto runs on)\n", cuda ? "cuda" : "cpu");
        printf("cuda             %s%s\n", cuda ? "usable" : "not used: ", cuda ? "" : why);
        printf("real type        %s\n", tw_real_name());
        if (!path) return CLI_EXIT_OK;
    }
    if (!path) {
        cli_error(&a, "no mesh file given (usage: tetwarp info MESH [--strict], or tetwarp info --backend)");
        return CLI_EXIT_USAGE;
    }
    tw_mesh_report rep;
    memset(&rep, 0, sizeof rep);
    tw_mesh *m = tw_mesh_load(path, &ld, &rep);
    if (!m) {
        cli_error(&a, "cannot load the mesh: %s", tw_last_error());
        return CLI_EXIT_FAIL;
    }
    tw_mesh_stats st = tw_mesh_compute_stats(m);
    printf("mesh             %s\n", path);
    printf("vertices         %d\n", st.vertices);
    printf("tets             %d\n", st.tets);
    printf("boundary faces   %d\n", st.boundary_faces);
    printf("regions          %d\n", st.regions);
    printf("volume           %.6g m^3\n", st.volume);
    printf("bounding box     [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g] m\n", st.bbox_min[0],
           st.bbox_max[0], st.bbox_min[1], st.bbox_max[1], st.bbox_min[2], st.bbox_max[2]);
    printf("dihedral angle   min %.4g, max %.4g degrees\n", st.min_dihedral, st.max_dihedral);
    printf("aspect ratio     max %.4g, mean %.4g (1 = regular)\n", st.max_aspect,
           st.mean_aspect);
    printf("edge length      min %.6g, max %.6g m\n", st.min_edge, st.max_edge);
    printf("element volume   min %.6g, max %.6g m^3\n", st.min_volume, st.max_volume);
    printf("index base       %d\n", rep.first_index);
    printf("reoriented       %d elements\n", rep.reoriented);
    printf("unused vertices  %d (pinned when simulated)\n", rep.unused_vertices);
    printf("folded           %d element pairs (overlapping across a shared face)", rep.folded);
    if (rep.folded)
        printf("; first: elements %d and %d", rep.folded_first[0] + rep.first_index,
               rep.folded_first[1] + rep.first_index);
    printf("\n");
    tw_mesh_destroy(m);
    return CLI_EXIT_OK;
}
