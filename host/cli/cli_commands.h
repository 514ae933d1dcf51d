/* The tool's commands, one file each: cli_NAME_help prints the options of
 * `tetwarp NAME` with their units and defaults; cli_cmd_NAME runs it on the
 * arguments after the command name and returns the exit status (CLI_EXIT_*). */
#ifndef TW_CLI_COMMANDS_H
#define TW_CLI_COMMANDS_H

#include <stdio.h>

void cli_info_help(FILE *f);
int cli_cmd_info(int argc, char **argv);
void cli_static_help(FILE *f);
int cli_cmd_static(int argc, char **argv);
void cli_run_help(FILE *f);
int cli_cmd_run(int argc, char **argv);
void cli_mesh_help(FILE *f);
int cli_cmd_mesh(int argc, char **argv);
/* `tetwarp run --multires` (cli_multires.c) */
void cli_multires_help(FILE *f);
int cli_cmd_run_multires(int argc, char **argv);
/* `tetwarp run --hier-basis` (cli_hier_basis.c) */
void cli_hier_basis_help(FILE *f);
int cli_cmd_run_hier_basis(int argc, char **argv);

#endif
