/* The scene options shared by `tetwarp static`, `tetwarp run`, the benchmark
 * and the viewer: which mesh (a file or the generated bar), the material,
 * gravity, the fixed region, the method and backend.
 *
 * Defaults live in cli_default_scene_opts() only; the help text prints them
 * from there. Building a scene validates what the options alone cannot
 * (a --fix that selects no vertex, an --E-region id no element has) and
 * prints messages naming the option and value. */
#ifndef TW_CLI_SCENE_H
#define TW_CLI_SCENE_H

#include "cli_args.h"
#include "tetwarp.h"

#define CLI_MAX_FIX 16
#define CLI_MAX_REGION 64

/* One --fix "x<VALUE": pin vertices whose coordinate `axis` is < (less=1)
 * or > (less=0) value. */
typedef struct cli_fix {
    int axis;
    int less;
    double value; /* m */
    char text[64];
} cli_fix;

typedef struct cli_scene_opts {
    const char *mesh_path;  /* NULL: the generated bar */
    int bar_given;          /* --bar was on the command line */
    double bar_size[3];     /* length, width, height, m */
    int bar_cells[3];       /* cells along x, y, z */
    double youngs;          /* Pa */
    double poisson;
    double density;         /* kg/m^3 */
    double gravity[3];      /* m/s^2 */
    tw_method method;
    tw_backend backend;
    int threads;            /* 0: all */
    int strict;             /* inverted elements are an error */
    int fix_count;
    cli_fix fix[CLI_MAX_FIX];
    int fix_none;           /* --fix none: nothing pinned, not even the bar's end */
    double max_memory_mb;   /* --max-memory: 0 = the machine's available memory */
    int gradient_axis;      /* -1: no --E-gradient */
    double gradient_e[2];   /* Pa at the mesh's min and max along the axis */
    int region_count;
    int region_id[CLI_MAX_REGION];
    double region_e[CLI_MAX_REGION]; /* Pa */
    int verbose;            /* say why the CUDA backend was not used (set by the
                               command's --verbose; not a scene option) */
} cli_scene_opts;

cli_scene_opts cli_default_scene_opts(void);

/* Reads the current option if it is a scene option: returns 1 when read,
 * 0 when it is not a scene option, -1 on a bad value (message printed). */
int cli_scene_option(cli_scene_opts *o, cli_args *a);

/* Prints the scene options, their units and the defaults in `d`. */
void cli_scene_print_help(FILE *f, const cli_scene_opts *d);

typedef struct cli_scene {
    tw_mesh *mesh;
    tw_mesh_report report;
    tw_world *world;
    double *element_youngs; /* per element, or NULL (homogeneous) */
    tw_backend backend;     /* the backend the world runs on */
    unsigned char *fixed;   /* per vertex: 1 where a --fix selects it */
    int pinned;             /* vertices fixed */
    char description[256];  /* "bar 1 x 0.1 x 0.1 m, 20x2x2 cells" or the path */
} cli_scene;

/* Host memory a world of `tets` tets (and `vertices` vertices) takes with
 * `def` while it is built, bytes: the per-tet and per-vertex figures of a
 * small world made with the same def on the CPU (tw_world_memory_bytes),
 * plus the mesh and the precompute's scratch. 0 when the small world
 * cannot be made. */
double cli_estimate_bytes(double tets, double vertices, tw_world_def def);

/* Loads or generates the mesh, creates the world from `def` (the caller sets
 * dt, damping, solver fields; the scene sets material, method, backend,
 * gravity, threads) and applies the fixes. Prints the chosen backend when
 * it was `auto`: one short line ("backend: cpu (no CUDA device)"), the
 * engine's full reason with o->verbose. Before generating or building
 * anything large it estimates the memory and refuses what exceeds
 * --max-memory or the machine's available memory; on a large problem it
 * says each phase as it starts (flushed). On failure prints a message, frees
 * what it made and returns -1. */
int cli_scene_build(const cli_scene_opts *o, tw_world_def def, const char *prog, cli_scene *s);
void cli_scene_destroy(cli_scene *s);

/* Whether a world can run on the CUDA backend here (a one-cell bar is made on
 * it): 1 yes; 0 no, with the engine's reason in why and a short one in
 * *short_why ("no CUDA device", "this build has no CUDA", or NULL when the
 * failure is of another kind and only `why` says what). */
int cli_cuda_probe(char *why, size_t why_size, const char **short_why);

/* The vertex farthest from the fixed vertices' centroid (from the mesh
 * centroid when nothing is fixed); ties go to the lowest index. For the
 * cantilever bar: a tip corner. */
int cli_scene_probe_vertex(const cli_scene *s);

/* For a run on another mesh than the scene's (the finest level of a tetra
 * tree): the options' per-element Young's moduli on m (*out NULL when
 * homogeneous) and the --fix selection on m (the bar's end when no --fix
 * is given for the bar). Return -1 with a message printed on failure. */
int cli_scene_material_on(const cli_scene_opts *o, const tw_mesh *m, const char *prog, double **out);
int cli_scene_fix_on(const cli_scene_opts *o, const tw_mesh *m, const char *prog, unsigned char *fixed,
                     int *pinned);

#endif
