/* The tool of `tetwarp run` (and the viewer): a sphere or capsule collider
 * driven along a scripted path (a line, keyframes from a file, plus an
 * oscillation), moved before each step to where the path is at the step's
 * end (tw_world_move_collider), and the force on it per step
 * (tw_world_collider_force). */
#ifndef TW_CLI_TOOL_H
#define TW_CLI_TOOL_H

#include <stdio.h>

#include "cli_args.h"
#include "tetwarp.h"

typedef struct cli_tool {
    int on;                /* --tool given */
    tw_collider_kind kind; /* TW_COLLIDER_SPHERE or TW_COLLIDER_CAPSULE */
    double radius;         /* m */
    double axis[3];        /* capsule: half its segment, m: the ends at p - axis and p + axis */
    double friction;       /* Coulomb coefficient */
    int has_at;            /* --tool-at given */
    double at[3];          /* the position without a path, m */
    int nkeys;             /* path keyframes (0: none) */
    double *keys;          /* 4 per keyframe: t (s, increasing), x, y, z (m) */
    double osc_amp[3];     /* --tool-osc: amplitude, m, added to the path */
    double osc_freq;       /* Hz */
    int model;             /* --tool-model: the CSV gains the force's stiffness (tw_world_collider_model) */
    int index;             /* the collider's index in the world (cli_tool_add) */
} cli_tool;

cli_tool cli_default_tool(void);
/* Reads a --tool* option: 1 when it was one (read), 0 when it is not a tool
 * option, -1 on a bad value (message printed). */
int cli_tool_option(cli_tool *t, cli_args *a);
/* After the options: -1 with a message when the tool is incomplete (no
 * position) or a tool option came without --tool. */
int cli_tool_check(const cli_tool *t, const char *prog);
/* The tool's centre at time s (m). */
void cli_tool_position(const cli_tool *t, double s, double p[3]);
/* Adds the tool to w at its position at time 0; TW_OK or the library's error. */
tw_status cli_tool_add(cli_tool *t, tw_world *w);
/* Before a step that ends at time s: the tool moved to its path there. */
tw_status cli_tool_drive(const cli_tool *t, tw_world *w, double s);
void cli_tool_free(cli_tool *t);
void cli_tool_help(FILE *f);

#endif
