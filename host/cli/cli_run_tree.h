/* `tetwarp run --tree-levels L`: the adaptive tetra tree (Imai et al. 2013)
 * instead of the world: the scene's mesh as the base, refined L - 1 times,
 * the material on the finest level, a front that switches levels (--adapt
 * on) or the finest level throughout (--adapt off). */
#ifndef TW_CLI_RUN_TREE_H
#define TW_CLI_RUN_TREE_H

#include "cli_args.h"
#include "cli_scene.h"

typedef struct cli_tree_opts {
    int levels;     /* 0: no tree (the ordinary run) */
    double t1, t2;  /* eq. 4-5 thresholds */
    double t3;      /* sec. 5.2 condition 3 */
    double margin;  /* fine-to-coarse hysteresis */
    int hold;       /* steps a refined tet is held */
    int adapt;      /* 1 on, 0 off */
} cli_tree_opts;

cli_tree_opts cli_default_tree_opts(void);
/* 1 when the current option was a tree option, 0 when not, -1 on a bad value. */
int cli_tree_option(cli_tree_opts *o, cli_args *a);
void cli_tree_help(FILE *f);

/* The run's own parameters that the tree run reads. */
typedef struct cli_tree_run {
    double dt, damping[2], cg_tol;
    int steps, cg_max, probe;
    const char *csv;
    int obj_every;              /* 0: no frames */
    const char *obj_dir;
    const char *render_surface; /* embedded in the finest level, written as the frames */
} cli_tree_run;

/* Builds the tree, steps the front, writes the CSV and a summary. Returns
 * the exit status (messages printed). */
int cli_run_tree(const char *prog, const cli_scene_opts *so, const cli_tree_opts *to, const cli_tree_run *r);
#endif
