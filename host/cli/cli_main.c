/* tetwarp: the command-line tool.
 *
 *   tetwarp info MESH        mesh statistics and quality
 *   tetwarp static [scene]   static equilibrium, displacements to CSV
 *   tetwarp run [scene]      time-stepping, per-step CSV and OBJ frames
 *
 *   tetwarp mesh SURFACE     tetrahedralize a closed surface with TetGen
 *
 * One file per command (cli_info.c, cli_static.c, cli_run.c, cli_mesh.c);
 * the option readers (cli_args.c) and the scene options shared with the
 * viewer (cli_scene.c) are the tetwarp_cli library.
 *
 * Every option, its unit and its default are printed by `tetwarp CMD --help`
 * from the same default structs the parsing starts from. Exit status: 0 on
 * success, 1 when the mesh, the solve or a file fails, 2 for a bad command
 * line. */
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "tetwarp.h"

#define CLI_VERSION "0.1"

static void print_usage(FILE *f)
{
    fprintf(f,
            "tetwarp %s: real-time elastic solids on tetrahedral meshes (real type: %s)\n"
            "\n"
            "Usage: tetwarp COMMAND [options]\n"
            "\n"
            "Commands:\n"
            "  info MESH        mesh size, volume, bounding box, element quality (--backend:\n"
            "                   the backend used here and why)\n"
            "  static [scene]   static equilibrium under gravity; displacements to CSV\n"
            "  run [scene]      time-stepping (implicit Euler, BDF2, explicit Newmark); per-step\n"
            "                   CSV, OBJ frames\n"
            "  mesh SURFACE     tetrahedralize a closed surface with TetGen (--tets N or --edge H)\n"
            "  help [COMMAND]   this text, or a command's options\n"
            "\n"
            "`tetwarp COMMAND --help` lists every option with its unit and default.\n"
            "Exit status: 0 success, 1 failure (mesh, solve, file), 2 bad command line.\n",
            CLI_VERSION, tw_real_name());
}

int main(int argc, char **argv)
{
    /* a line at a time also into a pipe: the phases of a long run show as
     * they start, not when a buffer fills */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("tetwarp %s (%s)\n", CLI_VERSION, tw_real_name());
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *topic = argc > 2 ? argv[2] : "";
        if (strcmp(topic, "info") == 0) cli_info_help(stdout);
        else if (strcmp(topic, "static") == 0) cli_static_help(stdout);
        else if (strcmp(topic, "run") == 0) cli_run_help(stdout);
        else if (strcmp(topic, "mesh") == 0) cli_mesh_help(stdout);
        else if (!*topic) print_usage(stdout);
        else {
            fprintf(stderr, "tetwarp help: unknown command '%s' (commands: info, static, run, mesh)\n",
                    topic);
            return CLI_EXIT_USAGE;
        }
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "info") == 0) return cli_cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "static") == 0) return cli_cmd_static(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0) return cli_cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "mesh") == 0) return cli_cmd_mesh(argc - 2, argv + 2);
    fprintf(stderr, "tetwarp: unknown command '%s' (commands: info, static, run, mesh; see tetwarp --help)\n",
            cmd);
    return CLI_EXIT_USAGE;
}
